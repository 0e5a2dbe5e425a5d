import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { UnitWorld } from '../sim/unit-world.ts'
import { startupHooks, expectHooks } from './support/hook-order.ts'

async function deployed (count: number): Promise<UnitWorld> {
  const world = new UnitWorld()
  world.model.deploy({ name: 'kv' }, count)
  await world.settle()
  return world
}

const restart = suite('uniter: agent restart (§2.11)')

restart('idle leader: nothing runs', async () => {
  const world = await deployed(2)
  const mark = world.mark()
  world.restart('kv/0')
  await world.settle()
  assert.equal(world.hooksSince('kv/0', mark), [])
})

restart('idle non-leader: leader-settings-changed (in-memory version is reset)', async () => {
  const world = await deployed(2)
  const mark = world.mark()
  world.restart('kv/1')
  await world.settle()
  assert.equal(world.hooksSince('kv/1', mark), ['leader-settings-changed'])
})

restart('machine rebooted and unit had started: start once, plus the non-leader case', async () => {
  const world = await deployed(2)
  const mark = world.mark()
  world.restart('kv/0', { rebooted: true })
  world.restart('kv/1', { rebooted: true })
  await world.settle()
  assert.equal(world.hooksSince('kv/0', mark), ['start'])
  assert.equal(world.hooksSince('kv/1', mark), ['start', 'leader-settings-changed'])
  const again = world.mark()
  world.model.setConfig('kv', { setting: 'config-1' })
  await world.settle()
  assert.equal(world.hooksSince('kv/0', again), ['config-changed'], 'start ran once only')
})

restart('config changed while the agent was down: config-changed (hashes are persisted)', async () => {
  const world = await deployed(1)
  world.crash('kv/0')
  world.model.setConfig('kv', { setting: 'config-1' })
  await world.settle()
  const mark = world.mark()
  world.start('kv/0')
  await world.settle()
  assert.equal(world.hooksSince('kv/0', mark), ['config-changed'])
})

restart('a hook was queued (leader-elected after accepting leadership): the chain continues', async () => {
  const world = new UnitWorld()
  world.holdHook('kv/0', 'leader-elected')
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  // Crash while leader-elected is still queued: the accept-leadership commit is durable.
  world.crash('kv/0')
  const durable = world.durable.get('kv/0')!
  assert.is(durable.operation.kind, 'run-hook')
  assert.is(durable.operation.hook?.kind, 'leader-elected')
  assert.is(durable.operation.step, 'pending', 'leader-elected was started when held')
  const mark = world.mark()
  world.start('kv/0')
  await world.settle()
  // A started hook that never finished is a failed hook after a crash.
  assert.is(world.stateOf('kv/0'), 'hookError')
  assert.equal(world.hooksSince('kv/0', mark), [])
})

restart('a queued hook found at start runs first, then the chain continues', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'kv' }, 1)
  // Stop exactly when install is queued (the deploy commit) and before it starts.
  world.crashAtPersist(3, true, 'kv/0')
  await world.settle()
  assert.is(world.running('kv/0'), false)
  assert.equal(world.durable.get('kv/0')!.operation, { kind: 'run-hook', step: 'queued', hook: { kind: 'install' } })
  world.start('kv/0')
  await world.settle()
  expectHooks(world.hooks('kv/0'), startupHooks(true))
})

restart('graceful stop while a hook runs: the hook is killed, re-queued and re-run without error', async () => {
  const world = new UnitWorld()
  world.holdHook('kv/0', 'config-changed')
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  await world.stop('kv/0')
  assert.equal(world.durable.get('kv/0')!.operation, { kind: 'run-hook', step: 'queued', hook: { kind: 'config-changed' } })
  assert.ok(world.emitted.some(e => e.event.type === 'hook.requeued'))
  const mark = world.mark()
  world.start('kv/0')
  await world.settle()
  assert.equal(world.hooksSince('kv/0', mark), ['config-changed', 'start'])
  assert.is(world.stateOf('kv/0'), 'idle')
})

restart('graceful stop while waiting for the machine hook lock stops at once (found by the simulator, seed 1)', async () => {
  const world = new UnitWorld()
  world.holdHook('kv/0', 'install')
  world.model.deploy({ name: 'kv' }, 1, ['0'])
  world.model.deploy({ name: 'web', requires: { db: 'db', cache: 'cache', kv: 'kv' } }, 1, ['0'])
  await world.settle()
  assert.equal(world.heldHooks(), [{ unit: 'kv/0', hook: 'install' }])
  assert.equal(world.hooks('web/0'), [], 'web/0 waits for the lock kv/0 holds')
  await world.stop('web/0')
  assert.is(world.running('web/0'), false)
  world.releaseHook('kv/0')
  await world.settle()
  world.start('web/0')
  await world.settle()
  expectHooks(world.hooks('web/0'), startupHooks(true))
})

restart('graceful stop while the prepared step is being saved: the hook never starts and is re-queued', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  world.model.setConfig('kv', { setting: 'config-1' })
  // remote.changed has been handled synchronously: the unit is saving the prepared step now.
  const value = JSON.stringify(world.actor('kv/0').getSnapshot().value)
  assert.match(value, 'preparing')
  const mark = world.mark()
  await world.stop('kv/0')
  assert.equal(world.hooksSince('kv/0', mark), [], 'the hook did not run')
  assert.equal(world.durable.get('kv/0')!.operation, { kind: 'run-hook', step: 'queued', hook: { kind: 'config-changed' } })
  world.start('kv/0')
  await world.settle()
  assert.equal(world.hooksSince('kv/0', mark), ['config-changed'])
})

restart('crash mid-hook: the hook is left pending and the unit comes back in error', async () => {
  const world = new UnitWorld()
  world.holdHook('kv/0', 'config-changed')
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  world.crash('kv/0')
  const mark = world.mark()
  world.start('kv/0')
  await world.settle()
  assert.is(world.stateOf('kv/0'), 'hookError')
  assert.equal(world.hooksSince('kv/0', mark), [])
  assert.is(world.actor('kv/0').getSnapshot().context.status.agent.message, 'hook failed: "config-changed"')
  world.model.resolved('kv/0')
  await world.settle()
  assert.equal(world.hooksSince('kv/0', mark), ['config-changed', 'start'])
})

restart('in hook error before restart: still in error, nothing runs', async () => {
  const world = new UnitWorld()
  world.failHook('kv/0', 'start')
  world.model.deploy({ name: 'kv' }, 2)
  await world.settle()
  const mark = world.mark()
  world.restart('kv/0')
  await world.settle()
  assert.is(world.stateOf('kv/0'), 'hookError')
  assert.equal(world.hooksSince('kv/0', mark), [])
})

restart('crash mid-action: the action is failed on restart, not re-run', async () => {
  const world = await deployed(1)
  let actionStarted = false
  world.crashAtPersist(1, true, 'kv/0')
  const actionId = world.model.enqueueAction('kv/0', 'backup')
  await world.settle()
  actionStarted = world.durable.get('kv/0')!.operation.kind === 'run-action'
  assert.ok(actionStarted, 'the crash came with the action pending')
  world.start('kv/0')
  await world.settle()
  const completed = world.emitted.filter(e => e.event.type === 'action.completed')
  assert.is(completed.length, 1)
  assert.equal((completed[0]!.event as { actionId: string, outcome: { status: string } }).outcome.status, 'failed')
  assert.is((completed[0]!.event as { actionId: string }).actionId, actionId)
  assert.is(world.stateOf('kv/0'), 'idle')
})

restart('crash after an action finished but before its commit: committed, neither re-run nor failed', async () => {
  const world = await deployed(1)
  world.crashAtPersist(2, true, 'kv/0')
  world.model.enqueueAction('kv/0', 'backup')
  await world.settle()
  assert.is(world.durable.get('kv/0')!.operation.step, 'done')
  world.start('kv/0')
  await world.settle()
  const completed = world.emitted.filter(e => e.event.type === 'action.completed')
  assert.equal(completed.map(e => (e.event as { outcome: { status: string } }).outcome.status), ['completed'])
  assert.is(world.stateOf('kv/0'), 'idle')
})

restart.run()
