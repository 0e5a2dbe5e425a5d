import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { fixtureLeaseDurationMs, fixtureLeaseRenewEveryMs } from '../sim/fixture-leadership.ts'
import { UnitWorld } from '../sim/unit-world.ts'
import { expectHooks } from './support/hook-order.ts'

async function deployed (count = 2): Promise<UnitWorld> {
  const world = new UnitWorld()
  world.model.deploy({ name: 'kv' }, count)
  await world.settle()
  return world
}

const config = suite('uniter: configuration (§2.8)')

config('a real change runs config-changed once on every unit', async () => {
  const world = await deployed(2)
  const mark = world.mark()
  world.model.setConfig('kv', { setting: 'config-1' })
  await world.settle()
  assert.equal(world.hooksSince('kv/0', mark), ['config-changed'])
  assert.equal(world.hooksSince('kv/1', mark), ['config-changed'])
})

config('setting the same value again runs nothing (hash unchanged)', async () => {
  const world = await deployed(1)
  world.model.setConfig('kv', { setting: 'config-1' })
  await world.settle()
  const mark = world.mark()
  world.model.setConfig('kv', { setting: 'config-1' })
  world.actor('kv/0').send({ type: 'remote.changed', remote: world.model.remoteState('kv/0') })
  await world.settle()
  assert.equal(world.hooksSince('kv/0', mark), [])
})

config('several edits while a hook runs coalesce into one later config-changed', async () => {
  const world = await deployed(1)
  world.model.setConfig('kv', { setting: 'config-1' })
  world.holdHook('kv/0', 'config-changed')
  await world.settle()
  const mark = world.mark()
  world.model.setConfig('kv', { setting: 'config-2' })
  world.model.setConfig('kv', { setting: 'config-3' })
  world.model.setConfig('kv', { setting: 'config-4' })
  await world.settle()
  world.releaseHook('kv/0')
  await world.settle()
  assert.equal(world.hooksSince('kv/0', mark), ['config-changed'], 'one more run for the three edits')
  assert.is(world.durable.get('kv/0')!.configHash, world.model.remoteState('kv/0').configHash, 'the last edit is the one seen')
})

config('a change of machine addresses runs config-changed', async () => {
  const world = await deployed(1)
  const mark = world.mark()
  world.model.setMachineAddresses(world.model.machineOf('kv/0'), ['10.0.0.1'])
  await world.settle()
  assert.equal(world.hooksSince('kv/0', mark), ['config-changed'])
})

const leadership = suite('uniter: leadership (§2.9)')

leadership('leader-set runs leader-settings-changed on non-leaders only', async () => {
  const world = await deployed(3)
  const mark = world.mark()
  world.model.leaderSet('kv')
  await world.settle()
  assert.equal(world.hooksSince('kv/0', mark), [])
  assert.equal(world.hooksSince('kv/1', mark), ['leader-settings-changed'])
  assert.equal(world.hooksSince('kv/2', mark), ['leader-settings-changed'])
})

leadership('leadership moves: the new leader runs leader-elected, the old resigns silently then sees settings', async () => {
  const world = await deployed(2)
  const mark = world.mark()
  world.model.setLeader('kv', 'kv/1')
  await world.settle()
  assert.equal(world.hooksSince('kv/1', mark), ['leader-elected'])
  assert.equal(world.hooksSince('kv/0', mark), ['leader-settings-changed'], 'no leader-deposed; 3.x runs leader-settings-changed')
  assert.is(world.durable.get('kv/0')!.leader, false)
  assert.is(world.durable.get('kv/1')!.leader, true)
})

leadership('becoming leader while in hook error waits until the error is resolved', async () => {
  const world = await deployed(2)
  world.failHook('kv/1', 'config-changed')
  world.model.setConfig('kv', { setting: 'config-1' })
  await world.settle()
  assert.is(world.stateOf('kv/1'), 'hookError')
  const mark = world.mark()
  world.model.setLeader('kv', 'kv/1')
  await world.settle()
  assert.equal(world.hooksSince('kv/1', mark), [], 'no leader-elected while in error')
  world.model.resolved('kv/1', 'retry-hooks')
  await world.settle()
  assert.equal(world.hooksSince('kv/1', mark), ['config-changed', 'leader-elected'])
})

leadership('after the leader is removed another unit is elected; do not assert on the others', async () => {
  const world = await deployed(3)
  const mark = world.mark()
  world.model.removeUnit('kv/0')
  await world.settle()
  // The dying leader resigns at once; its lease is not renewed, so another unit is granted
  // it once it runs out (juju-semantics §2.9) and the fixture's next renewal round claims.
  await world.advance(fixtureLeaseDurationMs + fixtureLeaseRenewEveryMs)
  assert.ok(world.hooksSince('kv/1', mark).includes('leader-elected'))
  assert.not.ok(world.hooksSince('kv/2', mark).includes('leader-elected'))
  assert.not.ok(world.running('kv/0') && world.stateOf('kv/0') !== 'terminated')
})

const updateStatus = suite('uniter: update-status (§2.12)')

updateStatus('runs on the timer when idle, without showing executing', async () => {
  const world = new UnitWorld({ updateStatusIntervalMs: 60_000 })
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  const mark = world.mark()
  const statuses: string[] = []
  world.actor('kv/0').on('unit.status', e => { statuses.push(e.status.agent.status) })
  await world.advance(60_000, 60_000)
  assert.equal(world.hooksSince('kv/0', mark), ['update-status'])
  assert.not.ok(statuses.includes('executing'))
  await world.advance(120_000, 60_000)
  assert.equal(world.hooksSince('kv/0', mark), ['update-status', 'update-status', 'update-status'])
})

updateStatus('a tick that happens while another hook is pending is absorbed by that hook', async () => {
  const world = new UnitWorld({ updateStatusIntervalMs: 60_000 })
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  world.holdHook('kv/0', 'config-changed')
  world.model.setConfig('kv', { setting: 'config-1' })
  await world.settle()
  // The config-changed operation was created before the tick: the tick is not absorbed by it…
  await world.advance(60_000, 60_000)
  const mark = world.mark()
  world.releaseHook('kv/0')
  await world.settle()
  // …so update-status runs once afterwards, when the unit is otherwise idle.
  assert.equal(world.hooksSince('kv/0', mark), ['update-status'])
})

updateStatus('suppressed before install, in error and while dying', async () => {
  const world = new UnitWorld({ updateStatusIntervalMs: 60_000 })
  world.model.deploy({ name: 'pg', storage: { data: 'filesystem' } }, 1)
  await world.settle()
  await world.advance(180_000, 60_000)
  assert.equal(world.hooks('pg/0'), [], 'not before install')
  world.failHook('pg/0', 'config-changed')
  world.model.attachStorage('pg/0')
  await world.settle()
  assert.is(world.stateOf('pg/0'), 'hookError')
  const mark = world.mark()
  await world.advance(180_000, 60_000)
  assert.equal(world.hooksSince('pg/0', mark), [], 'not in error')
  world.model.removeUnit('pg/0')
  await world.advance(180_000, 60_000)
  assert.equal(world.hooksSince('pg/0', mark), [], 'dying in error waits for resolution, no update-status')
  world.model.resolved('pg/0', 'no-hooks')
  await world.settle()
  // The skipped config-changed still queues start (§6), and queued hooks run before teardown.
  expectHooks(world.hooksSince('pg/0', mark), ['start', 'data-storage-detaching data/0', 'stop', 'remove'])
})

config.run()
leadership.run()
updateStatus.run()
