import type { MachineId } from '../../ids.ts'
import type { ModelDraft } from '../model-draft.ts'
import { keys } from '../keys.ts'
import type { CommandOf, StatusHistoryEntry, StatusRecord, UnitRecord } from '../model-types.ts'
import { lostAgentMessage, notCommunicatingMessage, unitCanBeLost } from '../status-display.ts'
import { withStatusChange } from '../status-history.ts'
import { requireAnyController } from './authorisation.ts'
import { clockReading, machineId } from './fields.ts'
import { getMachine } from './lookups.ts'
import type { HandlerTable } from './refusal.ts'

/**
 * The lost and down periods of an agent in the status history (`show-status-log`).
 * Status itself shows them from presence when it is read (runtime/model/status-display.ts);
 * the history is replicated, so the leader's provisioner proposes this command when its
 * machine actor calls a machine agent down (`present: false`) and when it hears it again.
 *
 * Lost: the machine's `juju-machine` history gets `down`, and each unit on it that Juju
 * would show lost (`unitCanBeLost`) gets `juju-unit` `lost` and, unless it is in error,
 * `workload` `unknown` "agent lost, see …" — what status showed meanwhile. Back: whatever
 * the agents last reported, now current again, is written after those entries, so the
 * period has an end. Both are idempotent: the history adds no entry that repeats the
 * last of its type, and a machine never recorded lost gets nothing on its return.
 */
export const presenceCommands: HandlerTable<'record-agent-presence'> = {
  'record-agent-presence': (d, c) => {
    requireAnyController(c)
    const id = machineId(c, c.machine)
    const now = clockReading(c, c.now)
    if (c.present) recordBack(d, c, id, now)
    else recordLost(d, c, id, now)
    return {}
  }
}

type Command = CommandOf<'record-agent-presence'>

function recordLost (d: ModelDraft, c: Command, id: MachineId, now: number): void {
  const machine = getMachine(d, c, id)
  if (machine.agent.status === 'started') {
    const down: StatusRecord<string> = { status: 'down', message: notCommunicatingMessage, since: now, data: null }
    putHistory(d, id, withStatusChange(machine.statusHistory, 'juju-machine', down))
  }
  for (const unit of unitsOn(d, id)) {
    if (!unitCanBeLost(unit)) continue
    let history = withStatusChange(unit.statusHistory, 'juju-unit', { status: 'lost', message: notCommunicatingMessage, since: now, data: null })
    if (unit.agent.status !== 'error') history = withStatusChange(history, 'workload', { status: 'unknown', message: lostAgentMessage(unit.name), since: now, data: null })
    putUnitHistory(d, unit, history)
  }
}

function recordBack (d: ModelDraft, c: Command, id: MachineId, now: number): void {
  const machine = getMachine(d, c, id)
  if (lastOf(machine.statusHistory, 'juju-machine')?.status === 'down') {
    putHistory(d, id, withStatusChange(machine.statusHistory, 'juju-machine', { ...machine.agent, since: now }))
  }
  for (const unit of unitsOn(d, id)) {
    let history = unit.statusHistory
    if (lastOf(history, 'juju-unit')?.status === 'lost') history = withStatusChange(history, 'juju-unit', { ...unit.agent, since: now })
    if (lastOf(history, 'workload')?.message === lostAgentMessage(unit.name)) history = withStatusChange(history, 'workload', { ...unit.workload, since: now })
    if (history !== unit.statusHistory) putUnitHistory(d, unit, history)
  }
}

function unitsOn (d: ModelDraft, id: MachineId): UnitRecord[] {
  return (d.machine(id)?.units ?? []).map(name => d.unit(name)).filter((u): u is UnitRecord => u !== undefined)
}

function lastOf (history: readonly StatusHistoryEntry[], type: StatusHistoryEntry['type']): StatusHistoryEntry | undefined {
  for (let i = history.length - 1; i >= 0; i--) if (history[i]!.type === type) return history[i]
  return undefined
}

function putHistory (d: ModelDraft, id: MachineId, statusHistory: readonly StatusHistoryEntry[]): void {
  const machine = d.machine(id)!
  if (statusHistory === machine.statusHistory) return
  d.machines.set(id, { ...machine, statusHistory })
  d.touch(keys.machineStatus(id))
}

function putUnitHistory (d: ModelDraft, unit: UnitRecord, statusHistory: readonly StatusHistoryEntry[]): void {
  if (statusHistory === unit.statusHistory) return
  d.units.set(unit.name, { ...unit, statusHistory })
  d.touch(keys.unitStatus(unit.name))
}
