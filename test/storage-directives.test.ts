/**
 * Storage directives and sizes as Juju parses and shows them: internal/storage/constraints.go
 * (ParseConstraints, ParseConstraintsMap: pool, count and size parts in any order, count 1
 * by default, sizes need a suffix) and `juju storage`'s IEC sizes (humanize.IBytes).
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { formatSizeMiB, parseMinimumSizeMiB, parseSizeMiB, parseStorageDirective, parseStorageDirectives } from '../runtime/model/storage-directives.ts'

test('directives: count, size and pool in any order; count 1 by default', () => {
  assert.equal(parseStorageDirective('data=1G'), { name: 'data', directive: { count: 1, sizeMiB: 1024 } })
  assert.equal(parseStorageDirective('data=2,1G'), { name: 'data', directive: { count: 2, sizeMiB: 1024 } })
  assert.equal(parseStorageDirective('data=10G,3'), { name: 'data', directive: { count: 3, sizeMiB: 10240 } })
  assert.equal(parseStorageDirective('data=rootfs,512M'), { name: 'data', directive: { count: 1, sizeMiB: 512 } })
  assert.equal(parseStorageDirective('data=1.5GiB'), { name: 'data', directive: { count: 1, sizeMiB: 1536 } })
  assert.equal(parseStorageDirective('data'), { name: 'data', directive: { count: 1 } })
  assert.equal(parseStorageDirective('data=4'), { name: 'data', directive: { count: 4 } })
})

test('directives: Juju\'s refusals', () => {
  assert.equal(parseStorageDirective('data=0'), { error: 'cannot parse constraints for storage "data": cannot parse count: count must be greater than zero, got "0"' })
  assert.equal(parseStorageDirective('data=-1'), { error: 'cannot parse constraints for storage "data": cannot parse count: count must be greater than zero, got "-1"' })
  assert.equal(parseStorageDirective('data=1G,!'), { error: 'cannot parse constraints for storage "data": unrecognized storage constraint "!" not valid' })
  assert.equal(parseStorageDirective('data=ebs'), { error: 'cannot parse constraints for storage "data": pool "ebs" not found: the local provider has the pools "rootfs" and "loop"' })
  assert.equal(parseStorageDirective('data='), { error: 'cannot parse constraints for storage "data": storage constraints require at least one field to be specified' })
  assert.equal(parseStorageDirective('a=b=c'), { error: 'expected "name=constraints" or "name", got "a=b=c"' })
  assert.equal(parseStorageDirectives(['data=1G', 'data=2G']), { error: 'storage "data" specified more than once' })
  assert.equal(parseStorageDirectives(['data=1G', 'logs']), { directives: { data: { count: 1, sizeMiB: 1024 }, logs: { count: 1 } } })
})

test('sizes: MiB from suffixed sizes; minimum-size also takes bare MiB', () => {
  assert.is(parseSizeMiB('10G'), 10240)
  assert.is(parseSizeMiB('1T'), 1024 * 1024)
  assert.is(parseSizeMiB('100'), undefined)
  assert.is(parseMinimumSizeMiB('100'), 100)
  assert.is(parseMinimumSizeMiB('2G'), 2048)
})

test('sizes are shown as juju storage shows them', () => {
  assert.is(formatSizeMiB(1024), '1.0 GiB')
  assert.is(formatSizeMiB(512), '512 MiB')
  assert.is(formatSizeMiB(99328), '97 GiB')
  assert.is(formatSizeMiB(8 * 1024), '8.0 GiB')
  assert.is(formatSizeMiB(1.7 * 1024 * 1024), '1.7 TiB')
})

test.run()
