import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { plainEqual } from '../runtime/plain-equal.ts'

test('equal plain data, however nested, is equal; key order does not matter', () => {
  assert.ok(plainEqual({ a: [1, { b: 'x', c: null }], d: true }, { d: true, a: [1, { c: null, b: 'x' }] }))
  assert.ok(plainEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2])))
  assert.ok(plainEqual({ u: undefined }, { u: undefined }))
})

test('any difference in a value, a key, a length or a kind is a difference', () => {
  assert.not.ok(plainEqual({ a: 1 }, { a: 2 }))
  assert.not.ok(plainEqual({ a: 1 }, { b: 1 }))
  assert.not.ok(plainEqual({ a: 1 }, { a: 1, b: undefined }))
  assert.not.ok(plainEqual([1, 2], [1, 2, 3]))
  assert.not.ok(plainEqual([1], { 0: 1 }))
  assert.not.ok(plainEqual({ 0: 1, length: 1 }, [1]))
  assert.not.ok(plainEqual(new Uint8Array([1]), [1]))
  assert.not.ok(plainEqual(null, {}))
  assert.not.ok(plainEqual('1', 1))
  assert.not.ok(plainEqual({ relations: { 1: { members: ['a/0'] } } }, { relations: { 1: { members: ['a/1'] } } }))
})

test.run()
