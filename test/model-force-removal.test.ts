/**
 * `remove-unit --force` and `remove-application --force` in the model: a unit whose agent
 * is gone leaves at once — out of its relation scopes, off its machine, its lease and
 * pending actions dropped, its subordinates with it — whether it was alive or already
 * dying; only admins may force. Juju: cmd/juju/application/removeunit.go (--force) and
 * state's forced unit removal, which does not wait for the agent.
 */
import '../runtime/polyfill.ts'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { tableGet } from '../runtime/model/table.ts'
import { MemoryController } from './support/model-controller.ts'

function model (): MemoryController {
  const c = new MemoryController()
  c.run('add-charm', { url: 'local:kv-0', hash: '1'.repeat(16), metadata: { name: 'kv', peers: { ring: 'ring' }, actions: { hello: {} } } })
  c.run('deploy', { application: 'kv', charm: 'local:kv-0', config: {}, constraints: {}, numUnits: 2 })
  for (const unit of ['kv/0', 'kv/1']) {
    c.runAs(unit, 'set-agent-status', { unit, status: 'idle', message: '', now: 1 })
    c.runAs(unit, 'enter-scope', { unit, relationId: 0 })
  }
  c.runAs('kv/1', 'claim-leadership', { application: 'kv', unit: 'kv/1', now: 1, durationMs: 300_000 })
  return c
}

const force = suite('forced removal')

force('a started unit stays dying without its agent; --force removes it, alive or dying, with its scope, lease and actions', () => {
  const c = model()
  c.run('enqueue-operation', { units: ['kv/1'], task: { kind: 'action', name: 'hello', parameters: {} } })
  c.run('remove-unit', { unit: 'kv/1' })
  assert.is(tableGet(c.context.units, 'kv/1')!.life, 'dying')
  c.run('remove-unit', { unit: 'kv/1', force: true })
  assert.is(tableGet(c.context.units, 'kv/1'), undefined)
  assert.is(tableGet(c.context.leases, 'kv'), undefined, 'its lease is released')
  assert.equal(tableGet(c.context.machines, '1')!.units, [])
  assert.is(tableGet(tableGet(c.context.relations, '0')!.members, 'kv/1')?.inScope ?? false, false, 'out of the peer relation\'s scope')
  assert.is(tableGet(c.context.actions, '2')!.status, 'cancelled')
  assert.equal(tableGet(c.context.applications, 'kv')!.units, ['kv/0'])
  c.run('remove-unit', { unit: 'kv/0', force: true })
  assert.is(tableGet(c.context.units, 'kv/0'), undefined, 'an alive unit too')
})

force('remove-application --force takes every unit and the application at once; a unit agent may not force', () => {
  const c = model()
  const refused = c.apply({ type: 'remove-unit', requestId: 'f', proposer: { kind: 'unit', name: 'kv/0' }, unit: 'kv/0', force: true })
  assert.ok(!refused.ok && /permission denied/.test(refused.error), JSON.stringify(refused))
  c.run('remove-application', { application: 'kv' })
  assert.is(tableGet(c.context.units, 'kv/0')!.life, 'dying')
  c.run('remove-application', { application: 'kv', force: true })
  assert.is(tableGet(c.context.applications, 'kv'), undefined)
  assert.is(c.context.units.size, 0)
})

force.run()
