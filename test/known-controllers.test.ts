/**
 * The controllers an agent remembers across restarts (runtime/known-controllers.ts) and
 * the file it keeps them in (agent/known-controllers-file.ts): the newest membership comes
 * first, each peer once, bounded; the bytes round-trip; a bad file is one clear error and
 * is ignored at start; a write replaces the file whole (no temporary left behind).
 * Juju's agents rewrite agent.conf's apiaddresses the same way (juju/juju
 * worker/apiaddressupdater/apiaddressupdater.go, agent/agent.go SetAPIHostPorts).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { KnownControllersFile, knownControllersFileName } from '../agent/known-controllers-file.ts'
import { decodeKnownControllers, encodeKnownControllers, mergeControllers } from '../runtime/known-controllers.ts'
import { limits } from '../runtime/limits.ts'
import type { Logger, LogLevel } from '../runtime/logger.ts'

const c = (peerId: string, ...addresses: string[]) => ({ peerId, addresses })

function recordingLogger (lines: string[]): Logger {
  const logger: Logger = { module: 'test', log: (level: LogLevel, message: string) => { lines.push(`${level} ${message}`) }, child: () => logger }
  return logger
}

test('merge: learned first, then the bootstrap data; each peer once with its addresses merged', () => {
  const merged = mergeControllers([c('b', '/b1'), c('c', '/c1')], [c('a', '/a1'), c('b', '/b2')])
  assert.equal(merged, [c('b', '/b1', '/b2'), c('c', '/c1'), c('a', '/a1')])
})

test('merge: bounded by limits.knownControllersMax peers and knownControllerAddressesMax addresses', () => {
  const many = Array.from({ length: limits.knownControllersMax + 3 }, (_, i) => c(`p${i}`, ...Array.from({ length: limits.knownControllerAddressesMax + 2 }, (_, j) => `/a${j}`)))
  const merged = mergeControllers(many, [c('boot', '/x')])
  assert.is(merged.length, limits.knownControllersMax)
  assert.is(merged[0]!.addresses.length, limits.knownControllerAddressesMax)
  assert.not.ok(merged.some(m => m.peerId === 'boot'), 'the oldest (the bootstrap data) is what is cut')
})

test('encode and decode round-trip; bad input is one error naming what was expected', () => {
  const set = [c('b', '/b1'), c('a', '/a1', '/a2')]
  assert.equal(decodeKnownControllers(encodeKnownControllers(set)), set)
  assert.throws(() => decodeKnownControllers('{"version":1,'), (e: Error) => e.message === 'known controllers: expected JSON, got "{\\"version\\":1,"')
  assert.throws(() => decodeKnownControllers('{"version":2,"controllers":[]}'), (e: Error) => e.message === 'known controllers: expected version 1, got 2')
  assert.throws(() => decodeKnownControllers('{"version":1,"controllers":[{"peerId":"a"}]}'), (e: Error) => /^known controllers: expected controllers as \{peerId, addresses\[\]\}, got /.test(e.message))
})

test('the file: empty at first, written whole, read back by the next start; a torn file is ignored with a warning', () => {
  const dir = mkdtempSync(join(tmpdir(), 'known-controllers-'))
  try {
    const lines: string[] = []
    const first = new KnownControllersFile(dir, recordingLogger(lines))
    assert.equal(first.remembered, [])
    first.remember([c('b', '/b1')])
    assert.not.ok(existsSync(join(dir, `${knownControllersFileName}.tmp`)))
    assert.equal(new KnownControllersFile(dir, recordingLogger(lines)).remembered, [c('b', '/b1')])
    writeFileSync(join(dir, knownControllersFileName), '{"version":1,"contr')
    assert.equal(new KnownControllersFile(dir, recordingLogger(lines)).remembered, [])
    assert.equal(lines, [`warning ignoring ${join(dir, knownControllersFileName)}: known controllers: expected JSON, got "{\\"version\\":1,\\"contr"`])
    const again = new KnownControllersFile(dir, recordingLogger(lines))
    again.remember([c('a', '/a1')])
    assert.equal(JSON.parse(readFileSync(join(dir, knownControllersFileName), 'utf8')), { version: 1, controllers: [c('a', '/a1')] })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test.run()
