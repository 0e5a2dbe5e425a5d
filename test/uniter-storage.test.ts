/**
 * The uniter's storage hooks by the hooks the unit actor runs against the real model
 * (juju-semantics §2.13), following Juju's internal/worker/uniter/storage/resolver.go
 * (storage-attached for provisioned storage not yet seen, before install on machines;
 * storage-detaching for dying attachments that were attached, all of them when the unit
 * dies) and attachments.go (a committed storage-detaching removes the attachment).
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readerOf } from '../runtime/model/model-draft.ts'
import { UnitWorld } from '../sim/unit-world.ts'
import { expectHooks, startupHooks } from './support/hook-order.ts'

const storage = suite('uniter: storage hooks (§2.13)')

function storageIds (world: UnitWorld, unit: string): string[] {
  return Object.keys(readerOf(world.model.context).unit(unit)?.storage ?? {}).sort()
}

async function deployedWithData (): Promise<UnitWorld> {
  const world = new UnitWorld()
  world.model.deploy({ name: 'pg', storage: { data: 'filesystem' }, storageMax: 3 }, 1)
  world.model.attachStorage('pg/0')
  await world.settle()
  expectHooks(world.hooks('pg/0'), ['data-storage-attached data/0', ...startupHooks(true)])
  return world
}

storage('storage added after install attaches when idle, once provisioned', async () => {
  const world = await deployedWithData()
  const mark = world.mark()
  assert.equal(world.model.addStorage('pg/0', 'data', 2), ['data/1', 'data/2'])
  await world.settle()
  assert.equal(world.hooksSince('pg/0', mark), [], 'unprovisioned storage runs no hook and blocks nothing')
  assert.is(world.stateOf('pg/0'), 'idle')
  world.model.attachStorage('pg/0', 'data/2')
  await world.settle()
  assert.equal(world.hooksSince('pg/0', mark), ['data-storage-attached data/2'])
})

storage('detach-storage runs storage-detaching, then the attachment leaves the model', async () => {
  const world = await deployedWithData()
  world.model.addStorage('pg/0', 'data')
  world.model.attachStorage('pg/0', 'data/1')
  await world.settle()
  const mark = world.mark()
  world.model.detachStorage('pg/0', 'data/1')
  await world.settle()
  assert.equal(world.hooksSince('pg/0', mark), ['data-storage-detaching data/1'])
  assert.equal(storageIds(world, 'pg/0'), ['data/0'])
  assert.is(world.stateOf('pg/0'), 'idle')
})

storage('detaching storage that was never provisioned runs no hook', async () => {
  const world = await deployedWithData()
  world.model.addStorage('pg/0', 'data')
  await world.settle()
  const mark = world.mark()
  world.model.detachStorage('pg/0', 'data/1')
  await world.settle()
  assert.equal(world.hooksSince('pg/0', mark), [])
  assert.equal(storageIds(world, 'pg/0'), ['data/0'])
})

storage('remove-unit: storage-detaching for every attached instance before stop', async () => {
  const world = await deployedWithData()
  world.model.addStorage('pg/0', 'data', 2)
  world.model.attachStorage('pg/0', 'data/1')
  await world.settle()
  const mark = world.mark()
  world.model.removeUnit('pg/0')
  await world.settle()
  // data/2 was never provisioned: no hook for it, and it does not hold up the teardown.
  expectHooks(world.hooksSince('pg/0', mark), ['data-storage-detaching data/0', 'data-storage-detaching data/1', 'stop', 'remove'])
  assert.is(readerOf(world.model.context).unit('pg/0'), undefined)
})

storage('provisioned storage detached before its attached hook ran leaves without a hook', async () => {
  const world = await deployedWithData()
  world.failHook('pg/0', 'config-changed')
  world.model.setConfig('pg', { setting: 'config-1' })
  await world.settle()
  assert.is(world.stateOf('pg/0'), 'hookError')
  world.model.addStorage('pg/0', 'data')
  world.model.attachStorage('pg/0', 'data/1')
  await world.settle()
  const mark = world.mark()
  world.model.detachStorage('pg/0', 'data/1')
  await world.settle()
  // Juju's maybeShortCircuitRemoval: not attached in the uniter's state, so no hook, the attachment goes.
  assert.equal(storageIds(world, 'pg/0'), ['data/0'])
  world.model.resolved('pg/0', 'no-hooks')
  await world.settle()
  assert.ok(!world.hooksSince('pg/0', mark).some(hook => hook.includes('data/1')), world.hooksSince('pg/0', mark).join(', '))
  assert.is(world.stateOf('pg/0'), 'idle')
})

// Juju's storage resolver (internal/worker/uniter/storage/resolver.go) returns ErrWaiting
// while storage the unit was deployed with is pending and install has not run; the loop
// (resolver/loop.go) then neither runs anything nor calls OnIdle, so the agent does not
// turn idle: `juju status` shows the unit `waiting` / `allocating` / `agent initialising`
// (the message the uniter's init sets) until the storage is attached.
storage('waiting for storage before install: no hook, agent allocating, workload waiting "agent initialising"', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'pg', storage: { data: 'filesystem' } }, 1)
  await world.settle()
  assert.equal(world.hooks('pg/0'), [], 'nothing runs before the storage is attached')
  assert.is(world.stateOf('pg/0'), 'waiting')
  const unit = readerOf(world.model.context).unit('pg/0')!
  assert.equal([unit.agent.status, unit.agent.message], ['allocating', ''])
  assert.equal([unit.workload.status, unit.workload.message], ['waiting', 'agent initialising'])
  // show-status-log: the workload's change is recorded, and the agent's last word is allocating, not idle.
  assert.ok(unit.statusHistory.some(e => e.type === 'workload' && e.status === 'waiting' && e.message === 'agent initialising'), JSON.stringify(unit.statusHistory))
  assert.is(unit.statusHistory.filter(e => e.type === 'juju-unit').at(-1)?.status, 'allocating', JSON.stringify(unit.statusHistory))
  // The reason, once, for the unit host to log (`waiting for storage data/0 before install`).
  const reasons = world.emitted.filter(e => e.unit === 'pg/0' && e.event.type === 'uniter.waiting').map(e => e.event)
  assert.equal(reasons, [{ type: 'uniter.waiting', reason: 'waiting for storage data/0' }])
  world.model.attachStorage('pg/0')
  await world.settle()
  expectHooks(world.hooks('pg/0'), ['data-storage-attached data/0', ...startupHooks(true)])
  assert.is(readerOf(world.model.context).unit('pg/0')!.agent.status, 'idle')
})

// `multiple: {range: 0-}`: the store is optional and Juju creates no instance for it unless
// asked (state/storage.go takes the range's minimum as the default count), so the unit
// installs at once with no storage.
storage('an optional store (range 0-) gets no instance and the unit installs without waiting', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'pg', storage: { data: 'filesystem' }, storageMin: 0, storageMax: -1 }, 1)
  await world.settle()
  assert.equal(storageIds(world, 'pg/0'), [])
  expectHooks(world.hooks('pg/0'), startupHooks(true))
  assert.is(world.stateOf('pg/0'), 'idle')
})

storage.run()
