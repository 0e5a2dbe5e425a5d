import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { applyCommand, emptyModel } from '../runtime/model/model-store.ts'
import { restoreModel, snapshotModel } from '../runtime/model/model-snapshot.ts'
import { machineModelView } from '../runtime/model/machine-view.ts'
import type { CommandOf, Entity, ModelCommand, ModelCommandType, ModelContext, StatusHistoryEntry } from '../runtime/model/model-types.ts'
import { withStatusChange } from '../runtime/model/status-history.ts'
import { tableGet } from '../runtime/model/table.ts'

const admin: Entity = { kind: 'user', name: 'admin' }
const history = suite('model: unit status history (show-status-log)')

class Model {
  context: ModelContext = emptyModel()
  index = 0
  ok<T extends ModelCommandType> (type: T, fields: Omit<CommandOf<T>, 'type' | 'requestId' | 'proposer'>, proposer: Entity = admin): void {
    const command = { type, requestId: `req-${this.index}`, proposer, ...fields } as unknown as ModelCommand
    const outcome = applyCommand(this.context, command, { index: ++this.index, term: 1 })
    if (!outcome.result.ok) assert.unreachable(outcome.result.error)
    this.context = outcome.context
  }

  history (unit: string): readonly StatusHistoryEntry[] {
    return tableGet(this.context.units, unit)!.statusHistory
  }
}

function deployed (): Model {
  const model = new Model()
  model.ok('add-charm', { url: 'local:kv-0', hash: '0'.repeat(16), metadata: { name: 'kv' } })
  model.ok('deploy', { application: 'kv', charm: 'local:kv-0', config: {}, constraints: {}, numUnits: 1 })
  return model
}
const kv0: Entity = { kind: 'unit', name: 'kv/0' }
const machine0: Entity = { kind: 'machine', id: '0' }

history('a new unit starts with its first workload and agent statuses; changes are appended in order with their clock readings', () => {
  const model = deployed()
  assert.equal(model.history('kv/0'), [
    { type: 'workload', status: 'waiting', message: 'waiting for machine', since: null },
    { type: 'juju-unit', status: 'allocating', message: '', since: null }
  ])
  model.ok('set-agent-status', { unit: 'kv/0', status: 'executing', message: 'running install hook', now: 10 }, machine0)
  model.ok('set-unit-status', { unit: 'kv/0', status: 'maintenance', message: 'installing', now: 11 }, kv0)
  model.ok('set-unit-status', { unit: 'kv/0', status: 'active', message: 'serving', now: 12 }, kv0)
  model.ok('set-agent-status', { unit: 'kv/0', status: 'idle', message: '', now: 13 }, machine0)
  // The agent's first report also ends "waiting for machine", as Juju's uniter init does (uniter.go).
  assert.equal(model.history('kv/0').slice(2), [
    { type: 'workload', status: 'waiting', message: 'agent initialising', since: 10 },
    { type: 'juju-unit', status: 'executing', message: 'running install hook', since: 10 },
    { type: 'workload', status: 'maintenance', message: 'installing', since: 11 },
    { type: 'workload', status: 'active', message: 'serving', since: 12 },
    { type: 'juju-unit', status: 'idle', message: '', since: 13 }
  ])
})

history('the same status and message again is not a change; the same status with a new message is', () => {
  const model = deployed()
  model.ok('set-unit-status', { unit: 'kv/0', status: 'active', message: 'serving', now: 1 }, kv0)
  model.ok('set-agent-status', { unit: 'kv/0', status: 'idle', message: '', now: 2 }, machine0)
  model.ok('set-unit-status', { unit: 'kv/0', status: 'active', message: 'serving', now: 3 }, kv0)
  model.ok('set-unit-status', { unit: 'kv/0', status: 'active', message: 'serving 2 keys', now: 4 }, kv0)
  assert.equal(model.history('kv/0').slice(2).map(e => `${e.type} ${e.status} ${e.message} ${String(e.since)}`), [
    'workload active serving 1', 'juju-unit idle  2', 'workload active serving 2 keys 4'
  ])
})

history('bounded: the oldest entries go first; every step is deterministic (replicas agree) and survives a snapshot', () => {
  let entries: readonly StatusHistoryEntry[] = []
  for (let i = 0; i < 250; i++) entries = withStatusChange(entries, 'workload', { status: 'active', message: `m${i}`, since: i, data: null }, 100)
  assert.is(entries.length, 100)
  assert.equal([entries[0]!.since, entries[99]!.since], [150, 249])

  const a = deployed()
  const b = deployed()
  for (const model of [a, b]) {
    for (let i = 0; i < 130; i++) model.ok('set-unit-status', { unit: 'kv/0', status: 'maintenance', message: `step ${i}`, now: 100 + i }, kv0)
  }
  assert.is(a.history('kv/0').length, 100, 'limits.modelStatusHistoryPerUnitMax')
  assert.is(a.history('kv/0').at(-1)!.message, 'step 129')
  assert.is(a.history('kv/0')[0]!.message, 'step 30')
  assert.equal(a.history('kv/0'), b.history('kv/0'))
  assert.equal(tableGet(restoreModel(snapshotModel(a.context)).units, 'kv/0')!.statusHistory, a.history('kv/0'))
})

history('machines keep agent (juju-machine) and instance (machine) changes; applications what the leader set', () => {
  const model = deployed()
  assert.equal(tableGet(model.context.machines, '0')!.statusHistory.map(e => `${e.type}:${e.status}`), ['juju-machine:pending', 'machine:pending'])
  model.ok('set-machine-status', { machine: '0', instanceStatus: 'running', message: 'i-1', now: 5 }, { kind: 'controller', id: 'c' })
  model.ok('set-machine-status', { machine: '0', agentStatus: 'started', instanceStatus: 'running', message: 'i-1', now: 6 }, machine0)
  assert.equal(tableGet(model.context.machines, '0')!.statusHistory.slice(2), [
    { type: 'machine', status: 'running', message: 'i-1', since: 5 },
    { type: 'juju-machine', status: 'started', message: 'i-1', since: 6 }
  ], 'the instance status set again unchanged adds nothing')
  assert.equal(tableGet(model.context.applications, 'kv')!.statusHistory, [])
  model.ok('claim-leadership', { application: 'kv', unit: 'kv/0', now: 1, durationMs: 60_000 }, kv0)
  model.ok('set-application-status', { unit: 'kv/0', status: 'active', message: 'ready', now: 7 }, kv0)
  assert.equal(tableGet(model.context.applications, 'kv')!.statusHistory, [{ type: 'application', status: 'active', message: 'ready', since: 7 }])
})

history('a snapshot keeps the histories; machine views carry none (agents never read them)', () => {
  const model = deployed()
  model.ok('set-unit-status', { unit: 'kv/0', status: 'active', message: 'serving', now: 1 }, kv0)
  const restored = restoreModel(snapshotModel(model.context))
  assert.is(tableGet(restored.units, 'kv/0')!.statusHistory.length, 3)
  assert.is(tableGet(restored.machines, '0')!.statusHistory.length, 2)
  const view = machineModelView(model.context, '0')
  assert.equal(tableGet(view.units, 'kv/0')!.statusHistory, [])
  assert.equal(tableGet(view.machines, '0')!.statusHistory, [])
})

history.run()
