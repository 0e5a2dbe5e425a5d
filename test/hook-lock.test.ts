import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { HookLock } from '../runtime/hook-lock.ts'
import { limits } from '../runtime/limits.ts'
import { anyOrder, hooksMatch, oneOf } from './support/hook-order.ts'

test('hook lock: one holder at a time, served in arrival order, cancellable while waiting', () => {
  const lock = new HookLock('machine-0')
  const granted: string[] = []
  const releaseA = lock.acquire('a/0', () => granted.push('a/0'))
  const releaseB = lock.acquire('b/0', () => granted.push('b/0'))
  const releaseC = lock.acquire('c/0', () => granted.push('c/0'))
  assert.equal(granted, ['a/0'])
  releaseB()
  releaseA()
  assert.equal(granted, ['a/0', 'c/0'], 'b/0 gave up before its turn')
  releaseA()
  assert.is(lock.holder, 'c/0', 'a second release is a no-op')
  releaseC()
  assert.is(lock.holder, undefined)
})

test('hook lock: the waiter limit is enforced', () => {
  const lock = new HookLock('machine-1')
  lock.acquire('holder', () => {})
  for (let i = 0; i < limits.hookLockWaitersMax; i++) lock.acquire(`w/${i}`, () => {})
  assert.throws(() => lock.acquire('one-too-many', () => {}), /more than 4096 waiters/)
})

test('hook order patterns accept every allowed order and nothing else', () => {
  const pattern = ['install', anyOrder('a-relation-created', 'b-relation-created'), oneOf('leader-elected', 'leader-settings-changed'), 'start']
  assert.ok(hooksMatch(['install', 'b-relation-created', 'a-relation-created', 'leader-elected', 'start'], pattern))
  assert.ok(hooksMatch(['install', 'a-relation-created', 'b-relation-created', 'leader-settings-changed', 'start'], pattern))
  assert.not.ok(hooksMatch(['install', 'a-relation-created', 'leader-elected', 'b-relation-created', 'start'], pattern))
  assert.not.ok(hooksMatch(['install', 'a-relation-created', 'b-relation-created', 'start'], pattern))
  const pairs = [anyOrder(['j A', 'c A'], ['j B', 'c B'])]
  assert.ok(hooksMatch(['j B', 'c B', 'j A', 'c A'], pairs))
  assert.not.ok(hooksMatch(['j A', 'j B', 'c A', 'c B'], pairs), 'joined→changed adjacency within the relation')
})

test.run()
