import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { UnitWorld } from '../sim/unit-world.ts'
import { anyOrder, expectHooks } from './support/hook-order.ts'

async function twoApps (webUnits = 1, dbUnits = 1): Promise<{ world: UnitWorld, id: number }> {
  const world = new UnitWorld()
  world.model.deploy({ name: 'web', requires: { db: 'db', cache: 'cache', kv: 'kv' } }, webUnits)
  world.model.deploy({ name: 'db', provides: { server: 'db' } }, dbUnits)
  await world.settle()
  const id = world.model.relate('web:db', 'db:server')
  await world.settle()
  return { world, id }
}

const relations = suite('uniter: relations between running applications (§2.2–§2.5)')

relations('integrate: created, then joined → changed for each remote unit on both sides', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'web', requires: { db: 'db', cache: 'cache', kv: 'kv' } }, 2)
  world.model.deploy({ name: 'db', provides: { server: 'db' } }, 2)
  await world.settle()
  const mark = world.mark()
  world.model.relate('web:db', 'db:server')
  await world.settle()
  const pairs = (ep: string, a: string, b: string) => anyOrder([`${ep}-relation-joined ${a}`, `${ep}-relation-changed ${a}`], [`${ep}-relation-joined ${b}`, `${ep}-relation-changed ${b}`])
  for (const unit of ['web/0', 'web/1']) expectHooks(world.hooksSince(unit, mark), ['db-relation-created', pairs('db', 'db/0', 'db/1')], unit)
  for (const unit of ['db/0', 'db/1']) expectHooks(world.hooksSince(unit, mark), ['server-relation-created', pairs('server', 'web/0', 'web/1')], unit)
})

relations('created runs even when the other side has no units yet; joins follow when they appear', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'web', requires: { db: 'db', cache: 'cache', kv: 'kv' } }, 1)
  world.model.deploy({ name: 'db', provides: { server: 'db' } }, 0)
  await world.settle()
  const mark = world.mark()
  world.model.relate('web:db', 'db:server')
  await world.settle()
  assert.equal(world.hooksSince('web/0', mark), ['db-relation-created'])
  world.model.addUnit('db')
  await world.settle()
  assert.equal(world.hooksSince('web/0', mark), ['db-relation-created', 'db-relation-joined db/0', 'db-relation-changed db/0'])
})

relations('scale up: the new remote unit is joined then changed on every related unit', async () => {
  const { world } = await twoApps(2, 1)
  const mark = world.mark()
  world.model.addUnit('db')
  await world.settle()
  assert.equal(world.hooksSince('web/0', mark), ['db-relation-joined db/1', 'db-relation-changed db/1'])
  assert.equal(world.hooksSince('web/1', mark), ['db-relation-joined db/1', 'db-relation-changed db/1'])
  expectHooks(world.hooksSince('db/1', mark), [
    'install', 'server-relation-created', 'leader-settings-changed', 'config-changed', 'start',
    anyOrder(['server-relation-joined web/0', 'server-relation-changed web/0'], ['server-relation-joined web/1', 'server-relation-changed web/1'])
  ])
})

relations('remote settings change: -changed once on the other side, never for own writes', async () => {
  const { world, id } = await twoApps(1, 2)
  const mark = world.mark()
  world.model.relationSet('db/0', id)
  await world.settle()
  assert.equal(world.hooksSince('web/0', mark), ['db-relation-changed db/0'])
  assert.equal(world.hooksSince('db/0', mark), [], 'no -changed for its own write')
  assert.equal(world.hooksSince('db/1', mark), [], 'db/1 is not related to db/0 in a non-peer relation')
  // Writes made while the unit is busy coalesce into one later -changed.
  world.holdHook('web/0', 'config-changed')
  world.model.setConfig('web', { setting: 'config-1' })
  await world.settle()
  const busy = world.mark()
  world.model.relationSet('db/0', id)
  world.model.relationSet('db/0', id)
  world.model.relationSet('db/1', id)
  await world.settle()
  world.releaseHook('web/0')
  await world.settle()
  assert.equal(world.hooksSince('web/0', busy), ['db-relation-changed db/0', 'db-relation-changed db/1'])
})

relations('remote app databag: app-level -changed with no remote unit on every unit; version 0 gives none', async () => {
  const { world, id } = await twoApps(2, 1)
  const mark = world.mark()
  world.model.relationSet('db/0', id, { application: true })
  await world.settle()
  assert.equal(world.hooksSince('web/0', mark), ['db-relation-changed app db'])
  assert.equal(world.hooksSince('web/1', mark), ['db-relation-changed app db'])
  const run = world.runs.slice(mark).find(r => r.unit === 'web/0')!
  assert.is(run.info.remoteUnit, undefined)
  assert.is(run.info.remoteApplication, 'db')
})

relations('remote unit removed: departed on the remaining side, no broken', async () => {
  const { world } = await twoApps(1, 2)
  const mark = world.mark()
  world.model.removeUnit('db/1')
  await world.settle()
  assert.equal(world.hooksSince('web/0', mark), ['db-relation-departed db/1'])
  const run = world.runs.slice(mark).find(r => r.unit === 'web/0')!
  assert.is(run.info.departee, 'db/1')
})

relations('remove-relation: departed for every remote unit (sorted), then broken, on both sides', async () => {
  const { world, id } = await twoApps(2, 2)
  const mark = world.mark()
  world.model.removeRelation(id)
  await world.settle()
  for (const unit of ['web/0', 'web/1']) assert.equal(world.hooksSince(unit, mark), ['db-relation-departed db/0', 'db-relation-departed db/1', 'db-relation-broken'], unit)
  for (const unit of ['db/0', 'db/1']) assert.equal(world.hooksSince(unit, mark), ['server-relation-departed web/0', 'server-relation-departed web/1', 'server-relation-broken'], unit)
  assert.not.ok(world.model.relationIds().includes(id), 'the relation is gone once every unit left scope')
})

relations('remove-relation before any unit joined: broken is the only hook', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'web', requires: { db: 'db', cache: 'cache', kv: 'kv' } }, 1)
  world.model.deploy({ name: 'db', provides: { server: 'db' } }, 0)
  await world.settle()
  const id = world.model.relate('web:db', 'db:server')
  await world.settle()
  const mark = world.mark()
  world.model.removeRelation(id)
  await world.settle()
  assert.equal(world.hooksSince('web/0', mark), ['db-relation-broken'])
})

relations('plain string order of departures: db/10 before db/2', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'web', requires: { db: 'db', cache: 'cache', kv: 'kv' } }, 1)
  world.model.deploy({ name: 'db', provides: { server: 'db' } }, 11)
  await world.settle()
  const id = world.model.relate('web:db', 'db:server')
  await world.settle()
  const joined = world.hooks('web/0').filter(h => h.startsWith('db-relation-joined'))
  assert.is(joined.length, 11)
  const mark = world.mark()
  world.model.removeRelation(id)
  await world.settle()
  const departed = world.hooksSince('web/0', mark).filter(h => h.startsWith('db-relation-departed')).map(h => h.split(' ')[1])
  assert.equal(departed, ['db/0', 'db/1', 'db/10', 'db/2', 'db/3', 'db/4', 'db/5', 'db/6', 'db/7', 'db/8', 'db/9'])
})

const peers = suite('uniter: peer relations (§2.7)')

peers('scale up: the newcomer joins each existing peer after its start; existing peers join the newcomer', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'kv', peers: ['cluster'] }, 2)
  await world.settle()
  const mark = world.mark()
  world.model.addUnit('kv')
  await world.settle()
  expectHooks(world.hooksSince('kv/2', mark), [
    'install', 'cluster-relation-created', 'leader-settings-changed', 'config-changed', 'start',
    anyOrder(['cluster-relation-joined kv/0', 'cluster-relation-changed kv/0'], ['cluster-relation-joined kv/1', 'cluster-relation-changed kv/1'])
  ])
  assert.equal(world.hooksSince('kv/0', mark), ['cluster-relation-joined kv/2', 'cluster-relation-changed kv/2'])
  assert.equal(world.hooksSince('kv/1', mark), ['cluster-relation-joined kv/2', 'cluster-relation-changed kv/2'])
})

peers('scale down: remaining peers see departed; the leaving unit departs each peer and is never broken', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'kv', peers: ['cluster'] }, 3)
  await world.settle()
  const mark = world.mark()
  world.model.removeUnit('kv/2')
  await world.settle()
  assert.equal(world.hooksSince('kv/2', mark), ['cluster-relation-departed kv/0', 'cluster-relation-departed kv/1', 'stop', 'remove'])
  for (const run of world.runs.slice(mark).filter(r => r.unit === 'kv/2' && r.hook.includes('departed'))) {
    assert.is(run.info.departee, 'kv/2', 'JUJU_DEPARTING_UNIT is the leaving unit itself')
  }
  assert.equal(world.hooksSince('kv/0', mark), ['cluster-relation-departed kv/2'])
  assert.equal(world.hooksSince('kv/1', mark), ['cluster-relation-departed kv/2'])
})

peers('peer app databag written by the leader: non-leaders run -changed, the leader does not (3.4+)', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'kv', peers: ['cluster'] }, 2)
  await world.settle()
  const id = world.model.relationIds()[0]!
  const mark = world.mark()
  world.model.relationSet('kv/0', id, { application: true })
  await world.settle()
  assert.equal(world.hooksSince('kv/0', mark), [])
  assert.equal(world.hooksSince('kv/1', mark), ['cluster-relation-changed app kv'])
})

peers('a unit whose enter-scope request was lost (kill -9 before it committed) asks again, and its peers see it join', async () => {
  const world = new UnitWorld({ seed: 1 })
  world.model.deploy({ name: 'kv', peers: ['cluster'] }, 2)
  await world.settle()
  const id = String(world.model.relationIds()[0]!)
  assert.ok(world.model.remoteState('kv/1').relations[id]!.members['kv/0'] !== undefined)
  // The controllers no longer have kv/0 in scope, while kv/0 keeps the relation it created.
  world.model.propose('kv/0', { type: 'leave-scope', unit: 'kv/0', relationId: Number(id) })
  assert.ok(world.durable.get('kv/0')!.relations[id] !== undefined)
  await world.settle()
  assert.ok(world.model.remoteState('kv/1').relations[id]!.members['kv/0'] !== undefined, 'kv/0 is back in scope')
  assert.is(world.model.remoteState('kv/0').relations[id]!.selfInScope, true)
  assert.is(world.stateOf('kv/0'), 'idle')
})

relations.run()
peers.run()
