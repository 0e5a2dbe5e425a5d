import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { RemoteStorage } from '../actors/unit/remote-state.ts'
import { UnitWorld } from '../sim/unit-world.ts'
import { anyOrder, expectHooks } from './support/hook-order.ts'

const teardown = suite('uniter: unit removal (§2.6, §2.13)')

teardown('removal while related: storage detaching, then departed/broken per relation, then stop, remove', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'db', provides: { server: 'db' } }, 2)
  world.model.deploy({ name: 'cache', provides: { client: 'cache' } }, 1)
  world.model.deploy({ name: 'web', requires: { db: 'db', cache: 'cache', kv: 'kv' }, peers: ['ring'], storage: { data: 'filesystem' } }, 2)
  world.model.attachStorage('web/0')
  world.model.attachStorage('web/1')
  world.model.relate('web:db', 'db:server')
  world.model.relate('web:cache', 'cache:client')
  await world.settle()
  const mark = world.mark()
  world.model.removeUnit('web/1')
  await world.settle()
  // Storage ids are numbered across the model, as Juju's are: web/0 has data/0, web/1 data/1.
  expectHooks(world.hooksSince('web/1', mark), [
    'data-storage-detaching data/1',
    anyOrder(
      ['db-relation-departed db/0', 'db-relation-departed db/1', 'db-relation-broken'],
      ['cache-relation-departed cache/0', 'cache-relation-broken']
    ),
    'ring-relation-departed web/0',
    'stop',
    'remove'
  ])
  for (const run of world.runs.slice(mark).filter(r => r.unit === 'web/1' && r.hook.includes('-departed'))) {
    assert.is(run.info.departee, 'web/1')
  }
  // The other side sees the removed unit depart.
  assert.equal(world.hooksSince('db/0', mark), ['server-relation-departed web/1'])
  assert.equal(world.hooksSince('cache/0', mark), ['client-relation-departed web/1'])
  assert.equal(world.hooksSince('web/0', mark), ['ring-relation-departed web/1'])
  assert.ok(world.model.removedUnits.includes('web/1'))
  assert.equal(world.actor('web/1').getSnapshot().context.status.workload, { status: 'terminated', message: '' })
})

teardown('a dying leader resigns silently: no hook for it, no leader-settings-changed while dying', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'kv' }, 2)
  await world.settle()
  const mark = world.mark()
  world.model.removeUnit('kv/0')
  await world.settle()
  assert.equal(world.hooksSince('kv/0', mark), ['stop', 'remove'])
  assert.equal(world.hooksSince('kv/1', mark), ['leader-elected'])
})

teardown('a unit that dies before it installed runs no hooks at all', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'pg', storage: { data: 'filesystem' } }, 1)
  await world.settle()
  world.model.removeUnit('pg/0')
  await world.settle()
  assert.equal(world.hooks('pg/0'), [])
  assert.ok(world.model.removedUnits.includes('pg/0'))
})

teardown('a unit that installed but never started runs remove but not stop', async () => {
  const world = new UnitWorld()
  world.failHook('kv/0', 'config-changed')
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  world.model.removeUnit('kv/0')
  world.model.resolved('kv/0', 'no-hooks')
  await world.settle()
  // --no-retry commits config-changed, which queues start; the queued hook runs before teardown.
  assert.equal(world.hooks('kv/0').slice(-3), ['start', 'stop', 'remove'])
})

teardown('storage added later is attached when idle; detaching runs only for attached storage', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  const mark = world.mark()
  // The model has no add-storage or detach-storage command yet: the remote state each
  // would produce is sent to the actor directly (no model change comes in between).
  const id = 'cache/7'
  const remote = world.model.remoteState('kv/0')
  const cache: RemoteStorage = { id, name: 'cache', kind: 'filesystem', life: 'alive', attached: true, location: '/srv/cache/7' }
  world.actor('kv/0').send({ type: 'remote.changed', remote: { ...remote, storage: { ...remote.storage, [id]: cache } } })
  await world.settle()
  assert.equal(world.hooksSince('kv/0', mark), [`cache-storage-attached ${id}`])
  world.actor('kv/0').send({ type: 'remote.changed', remote: { ...remote, storage: { ...remote.storage, [id]: { ...cache, life: 'dying' } } } })
  await world.settle()
  assert.equal(world.hooksSince('kv/0', mark), [`cache-storage-attached ${id}`, `cache-storage-detaching ${id}`])
})

teardown('a dying principal takes its subordinate and cannot terminate before it is gone', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'web', requires: { db: 'db', cache: 'cache', kv: 'kv' } }, 1)
  world.model.deploy({ name: 'logship', subordinate: true, requires: { host: { interface: 'juju-info', scope: 'container' } } }, 0)
  world.model.relate('web:juju-info', 'logship:host')
  await world.settle()
  world.holdHook('logship/0', 'stop')
  const mark = world.mark()
  world.model.removeUnit('web/0')
  await world.settle()
  assert.equal(world.hooksSince('logship/0', mark), ['host-relation-departed web/0', 'host-relation-broken', 'stop'])
  assert.equal(world.hooksSince('web/0', mark), ['stop', 'remove'])
  assert.is(world.stateOf('web/0'), 'waiting', 'the principal waits for its subordinate')
  assert.not.ok(world.model.removedUnits.includes('web/0'))
  world.releaseHook('logship/0')
  await world.settle()
  assert.equal(world.model.removedUnits, ['logship/0', 'web/0'])
})

teardown('a subordinate whose container relation is removed destroys itself', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'web', requires: { db: 'db', cache: 'cache', kv: 'kv' } }, 1)
  world.model.deploy({ name: 'logship', subordinate: true, requires: { host: { interface: 'juju-info', scope: 'container' } } }, 0)
  const id = world.model.relate('web:juju-info', 'logship:host')
  await world.settle()
  const mark = world.mark()
  world.model.removeRelation(id)
  await world.settle()
  assert.equal(world.hooksSince('logship/0', mark), ['host-relation-departed web/0', 'host-relation-broken', 'stop', 'remove'])
  assert.ok(world.emitted.some(e => e.unit === 'logship/0' && e.event.type === 'unit.destroy'))
  assert.ok(world.model.removedUnits.includes('logship/0'))
  assert.equal(world.hooksSince('web/0', mark), [], 'the implicit juju-info side runs no hooks')
})

teardown('removing an application breaks its relations on the remote side', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'web', requires: { db: 'db', cache: 'cache', kv: 'kv' } }, 1)
  world.model.deploy({ name: 'db', provides: { server: 'db' } }, 2)
  world.model.relate('web:db', 'db:server')
  await world.settle()
  const mark = world.mark()
  world.model.removeApplication('db')
  await world.settle()
  assert.equal(world.hooksSince('web/0', mark), ['db-relation-departed db/0', 'db-relation-departed db/1', 'db-relation-broken'])
  for (const unit of ['db/0', 'db/1']) {
    assert.equal(world.hooksSince(unit, mark), ['server-relation-departed web/0', 'server-relation-broken', 'stop', 'remove'], unit)
  }
})

teardown.run()
