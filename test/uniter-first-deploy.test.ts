import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { UnitWorld } from '../sim/unit-world.ts'
import { anyOrder, expectHooks, startupHooks } from './support/hook-order.ts'

const firstDeploy = suite('uniter: first deploy (§2.1)')

firstDeploy('leader runs install, leader-elected, config-changed, start', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  expectHooks(world.hooks('kv/0'), startupHooks(true))
  assert.is(world.stateOf('kv/0'), 'idle')
  assert.equal(world.errors(), [])
})

firstDeploy('non-leader runs leader-settings-changed instead of leader-elected', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'kv' }, 3)
  await world.settle()
  expectHooks(world.hooks('kv/0'), startupHooks(true))
  expectHooks(world.hooks('kv/1'), startupHooks(false))
  expectHooks(world.hooks('kv/2'), startupHooks(false))
})

firstDeploy('peer relation: created after install, then joins only after start', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'kv', peers: ['cluster'] }, 2)
  await world.settle()
  expectHooks(world.hooks('kv/0'), [...startupHooks(true, ['cluster-relation-created']), 'cluster-relation-joined kv/1', 'cluster-relation-changed kv/1'])
  expectHooks(world.hooks('kv/1'), [...startupHooks(false, ['cluster-relation-created']), 'cluster-relation-joined kv/0', 'cluster-relation-changed kv/0'])
})

firstDeploy('a single unit never sees its peer relation joined', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'kv', peers: ['cluster'] }, 1)
  await world.settle()
  expectHooks(world.hooks('kv/0'), startupHooks(true, ['cluster-relation-created']))
})

firstDeploy('several existing relations: every -created before leadership hooks, in any order', async () => {
  const world = new UnitWorld()
  world.autoStart = false
  world.model.deploy({ name: 'db', provides: { server: 'db' } }, 1)
  world.model.deploy({ name: 'cache', provides: { client: 'cache' } }, 1)
  world.model.deploy({ name: 'web', requires: { db: 'db', cache: 'cache', kv: 'kv' }, peers: ['ring'] }, 1)
  world.model.relate('web:db', 'db:server')
  world.model.relate('web:cache', 'cache:client')
  world.start('web/0')
  await world.settle()
  expectHooks(world.hooks('web/0'), startupHooks(true, ['db-relation-created', 'cache-relation-created', 'ring-relation-created']))
})

firstDeploy('joined/changed of units already in scope come after start, in either pair order', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'db', provides: { server: 'db' } }, 2)
  await world.settle()
  world.model.deploy({ name: 'web', requires: { db: 'db', cache: 'cache', kv: 'kv' } }, 1)
  world.model.relate('web:db', 'db:server')
  await world.settle()
  expectHooks(world.hooks('web/0'), [
    ...startupHooks(true, ['db-relation-created']),
    anyOrder(['db-relation-joined db/0', 'db-relation-changed db/0'], ['db-relation-joined db/1', 'db-relation-changed db/1'])
  ])
})

firstDeploy('storage-attached runs before install, and install waits for storage', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'pg', storage: { data: 'filesystem', logs: 'filesystem' } }, 1)
  await world.settle()
  assert.equal(world.hooks('pg/0'), [], 'no hook before the storage is provisioned')
  assert.is(world.stateOf('pg/0'), 'waiting')
  world.model.attachStorage('pg/0', 'data/0')
  await world.settle()
  assert.equal(world.hooks('pg/0'), ['data-storage-attached data/0'], 'install still waits for logs/1')
  world.model.attachStorage('pg/0', 'logs/1')
  await world.settle()
  expectHooks(world.hooks('pg/0'), ['data-storage-attached data/0', 'logs-storage-attached logs/1', ...startupHooks(true)])
})

firstDeploy('workload status: installing charm software during install, unknown after a silent start', async () => {
  const world = new UnitWorld()
  world.holdHook('kv/0', 'install')
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  const during = world.actor('kv/0').getSnapshot().context.status
  assert.equal(during.workload, { status: 'maintenance', message: 'installing charm software' })
  assert.equal(during.agent, { status: 'executing', message: 'running install hook' })
  world.releaseHook('kv/0')
  await world.settle()
  const after = world.actor('kv/0').getSnapshot().context.status
  assert.equal(after.workload, { status: 'unknown', message: '' })
  assert.equal(after.agent, { status: 'idle', message: '' })
})

firstDeploy('a charm that set its status keeps it through start', async () => {
  const world = new UnitWorld()
  world.holdHook('kv/0', 'start')
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  world.actor('kv/0').send({ type: 'workload.statusSet', status: 'active', message: 'serving' })
  world.releaseHook('kv/0')
  await world.settle()
  assert.equal(world.actor('kv/0').getSnapshot().context.status.workload, { status: 'active', message: 'serving' })
})

firstDeploy('actions queued at deploy wait for install, and may run before config-changed', async () => {
  const world = new UnitWorld()
  world.autoStart = false
  world.model.deploy({ name: 'kv' }, 1)
  const id = world.model.enqueueAction('kv/0', 'backup')
  world.start('kv/0')
  await world.settle()
  const completed = world.emitted.filter(e => e.event.type === 'action.completed')
  assert.is(completed.length, 1)
  assert.is((completed[0]!.event as { actionId: string }).actionId, id)
  expectHooks(world.hooks('kv/0'), startupHooks(true))
  const order = world.emitted.map(e => e.event.type === 'hook.started' ? (e.event as { hook: { kind: string } }).hook.kind : e.event.type)
  assert.ok(order.indexOf('action.completed') > order.indexOf('install'), 'the action runs after install')
})

firstDeploy('subordinate: deployed beside its principal, container relation joined with it only', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'web', requires: { db: 'db', cache: 'cache', kv: 'kv' } }, 2)
  world.model.deploy({ name: 'logship', subordinate: true, requires: { host: { interface: 'juju-info', scope: 'container' } } }, 0)
  world.model.relate('web:juju-info', 'logship:host')
  await world.settle()
  expectHooks(world.hooks('logship/0'), [...startupHooks(true, ['host-relation-created']), 'host-relation-joined web/0', 'host-relation-changed web/0'])
  expectHooks(world.hooks('logship/1'), [...startupHooks(false, ['host-relation-created']), 'host-relation-joined web/1', 'host-relation-changed web/1'])
  // The principal's juju-info side is implicit: it runs no hooks for it.
  expectHooks(world.hooks('web/0'), startupHooks(true))
  assert.is(world.maxConcurrentHooksPerMachine, 1, 'principal and subordinate share the machine hook lock')
})

firstDeploy.run()
