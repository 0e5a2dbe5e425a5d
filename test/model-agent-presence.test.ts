/**
 * A lost agent as status shows it and as the status history keeps it (juju-semantics §8).
 * Display follows Juju's ModelPresenceContext.UnitStatus and canBeLost (juju/juju
 * apiserver/common/unitstatus.go): a unit past install whose agent is not heard from shows
 * workload `unknown` "agent lost, see 'juju show-status-log <unit>'" (our CLI's name here)
 * and agent `lost` "agent is not communicating with the server", an error is kept, a unit
 * still allocating or installing is not judged; its machine shows `down`. The history gets
 * the period through `record-agent-presence` (runtime/model/apply/presence-commands.ts).
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { applyCommand, emptyModel } from '../runtime/model/model-store.ts'
import type { CommandOf, Entity, ModelCommand, ModelCommandType, ModelContext, StatusHistoryEntry, UnitRecord } from '../runtime/model/model-types.ts'
import { displayedMachineAgent, displayedUnit, unitCanBeLost } from '../runtime/model/status-display.ts'
import { tableGet } from '../runtime/model/table.ts'

const admin: Entity = { kind: 'user', name: 'admin' }
const controller: Entity = { kind: 'controller', id: 'c0' }
const presence = suite('model: lost agents in status and the status history')

class Model {
  context: ModelContext = emptyModel()
  index = 0
  run<T extends ModelCommandType> (type: T, fields: Omit<CommandOf<T>, 'type' | 'requestId' | 'proposer'>, proposer: Entity = admin): { ok: boolean, error?: string } {
    const command = { type, requestId: `req-${this.index}`, proposer, ...fields } as unknown as ModelCommand
    const outcome = applyCommand(this.context, command, { index: ++this.index, term: 1 })
    if (outcome.result.ok) this.context = outcome.context
    return outcome.result.ok ? { ok: true } : { ok: false, error: outcome.result.error }
  }

  ok<T extends ModelCommandType> (type: T, fields: Omit<CommandOf<T>, 'type' | 'requestId' | 'proposer'>, proposer: Entity = admin): void {
    const result = this.run(type, fields, proposer)
    if (!result.ok) assert.unreachable(result.error)
  }

  unit (name: string): UnitRecord {
    return tableGet(this.context.units, name)!
  }

  history (name: string): string[] {
    return this.unit(name).statusHistory.slice(2).map(show)
  }

  machineHistory (id: string): string[] {
    return tableGet(this.context.machines, id)!.statusHistory.filter(e => e.type === 'juju-machine').map(show)
  }
}

function show (e: StatusHistoryEntry): string {
  return `${e.type} ${e.status} ${e.message}`.trimEnd()
}

/** kv/0 started and active on machine 0 (an agent that reported in), kv/1 still installing on machine 1. */
function world (): Model {
  const model = new Model()
  model.ok('add-charm', { url: 'local:kv-0', hash: '0'.repeat(16), metadata: { name: 'kv' } })
  model.ok('deploy', { application: 'kv', charm: 'local:kv-0', config: {}, constraints: {}, numUnits: 2 })
  model.ok('set-machine-status', { machine: '0', agentStatus: 'started', message: '', now: 1 }, { kind: 'machine', id: '0' })
  model.ok('set-machine-status', { machine: '1', agentStatus: 'started', message: '', now: 1 }, { kind: 'machine', id: '1' })
  const kv0: Entity = { kind: 'unit', name: 'kv/0' }
  model.ok('set-unit-status', { unit: 'kv/0', status: 'active', message: 'ready', now: 2 }, kv0)
  model.ok('set-agent-status', { unit: 'kv/0', status: 'idle', message: '', now: 2 }, kv0)
  const kv1: Entity = { kind: 'unit', name: 'kv/1' }
  model.ok('set-unit-status', { unit: 'kv/1', status: 'maintenance', message: 'installing charm software', now: 2 }, kv1)
  model.ok('set-agent-status', { unit: 'kv/1', status: 'executing', message: 'running install hook', now: 2 }, kv1)
  return model
}

presence('a lost unit past install shows unknown / lost / "agent lost, see …"; its machine shows down', () => {
  const model = world()
  const shown = displayedUnit(model.unit('kv/0'), true)
  assert.equal([shown.workload.status, shown.workload.message], ['unknown', 'agent lost, see \'cantrip show-status-log kv/0\''])
  assert.equal([shown.agent.status, shown.agent.message], ['lost', 'agent is not communicating with the server'])
  const heard = displayedUnit(model.unit('kv/0'), false)
  assert.equal([heard.workload.status, heard.workload.message, heard.agent.status], ['active', 'ready', 'idle'], 'heard again: what the agent reported')
  const machine = displayedMachineAgent(tableGet(model.context.machines, '0')!, true)
  assert.equal([machine.status, machine.message], ['down', 'agent is not communicating with the server'])
})

presence('a unit still installing or allocating is not judged lost (canBeLost)', () => {
  const model = world()
  assert.is(unitCanBeLost(model.unit('kv/1')), false)
  const shown = displayedUnit(model.unit('kv/1'), true)
  assert.equal([shown.workload.status, shown.agent.status], ['maintenance', 'executing'])
  const fresh = new Model()
  fresh.ok('add-charm', { url: 'local:kv-0', hash: '0'.repeat(16), metadata: { name: 'kv' } })
  fresh.ok('deploy', { application: 'kv', charm: 'local:kv-0', config: {}, constraints: {}, numUnits: 1 })
  assert.equal(displayedUnit(fresh.unit('kv/0'), true).agent.status, 'allocating')
})

presence('a lost unit in error keeps its error, with the agent lost', () => {
  const model = world()
  model.ok('set-agent-status', { unit: 'kv/0', status: 'error', message: 'hook failed: "config-changed"', now: 3 }, { kind: 'unit', name: 'kv/0' })
  const shown = displayedUnit(model.unit('kv/0'), true)
  assert.equal([shown.workload.status, shown.workload.message, shown.agent.status], ['error', 'hook failed: "config-changed"', 'lost'])
})

presence('record-agent-presence writes the lost and down period into the history, then its end', () => {
  const model = world()
  model.ok('record-agent-presence', { machine: '0', present: false, now: 10 }, controller)
  assert.equal(model.machineHistory('0'), ['juju-machine pending', 'juju-machine started', 'juju-machine down agent is not communicating with the server'])
  assert.equal(model.history('kv/0').slice(-2), ['juju-unit lost agent is not communicating with the server', 'workload unknown agent lost, see \'cantrip show-status-log kv/0\''])
  assert.equal(model.unit('kv/0').workload.status, 'active', 'the recorded status stays what the agent reported')
  const before = model.context
  model.ok('record-agent-presence', { machine: '0', present: false, now: 11 }, controller)
  assert.equal(tableGet(model.context.units, 'kv/0')!.statusHistory, tableGet(before.units, 'kv/0')!.statusHistory, 'again: nothing more')
  model.ok('record-agent-presence', { machine: '0', present: true, now: 20 }, controller)
  assert.equal(model.machineHistory('0').at(-1), 'juju-machine started')
  assert.equal(model.history('kv/0').slice(-2), ['juju-unit idle', 'workload active ready'])
  assert.equal(model.unit('kv/0').statusHistory.at(-1)!.since, 20)
})

presence('a unit still installing gets no lost entries; a machine never lost gets nothing on return', () => {
  const model = world()
  const kv1 = model.history('kv/1')
  model.ok('record-agent-presence', { machine: '1', present: false, now: 10 }, controller)
  assert.equal(model.history('kv/1'), kv1)
  const kv0 = model.history('kv/0')
  model.ok('record-agent-presence', { machine: '0', present: true, now: 10 }, controller)
  assert.equal(model.history('kv/0'), kv0)
  assert.equal(model.machineHistory('0').at(-1), 'juju-machine started')
})

presence('only a controller records presence; an unknown machine is refused by name', () => {
  const model = world()
  const byUnit = model.run('record-agent-presence', { machine: '0', present: false, now: 10 }, { kind: 'unit', name: 'kv/0' })
  assert.is(byUnit.error, 'controller: cannot record the presence of machine "0"\'s agent: permission denied for unit-kv-0')
  const byMachine = model.run('record-agent-presence', { machine: '0', present: false, now: 10 }, { kind: 'machine', id: '0' })
  assert.is(byMachine.ok, false)
  const missing = model.run('record-agent-presence', { machine: '9', present: false, now: 10 }, controller)
  assert.match(missing.error ?? '', /machine "9"/)
})

presence.run()
