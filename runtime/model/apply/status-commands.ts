import type { UnitName } from '../../ids.ts'
import { limits } from '../../limits.ts'
import { isPlainRecord } from '../charm-summary.ts'
import { keys } from '../keys.ts'
import { leaseHeld } from '../leases.ts'
import type { ModelDraft } from '../model-draft.ts'
import { agentStatuses, workloadStatuses, type CommandOf, type UnitRecord, type StatusRecord, type WorkloadStatus } from '../model-types.ts'
import { withStatusChange } from '../status-history.ts'
import { requireUnitAgent } from './authorisation.ts'
import { unitName, text, clockReading, encodedSize, sortedRecord } from './fields.ts'
import { getUnit } from './lookups.ts'
import { q, textFieldLengthMax, refuse, type HandlerTable } from './refusal.ts'
import { putApplication } from './writes.ts'

/**
 * The status commands: a unit's workload and agent status, the application's, and the workload version.
 */

/** The unit agent's own request, checked, and the workload status record it sets (for the unit or, by the leader, the application). */
function workloadStatusOf (d: ModelDraft, c: CommandOf<'set-unit-status'> | CommandOf<'set-application-status'>): { name: UnitName, unit: UnitRecord, status: StatusRecord<WorkloadStatus> } {
  const name = unitName(c, c.unit)
  requireUnitAgent(d, c, name)
  const unit = getUnit(d, c, name)
  if (!workloadStatuses.includes(c.status)) refuse(c, `${q(c.status)} is not a workload status (${workloadStatuses.join(', ')})`)
  const message = text(c, 'message', c.message)
  return { name, unit, status: { status: c.status, message, since: clockReading(c, c.now), data: null } }
}

/** Juju's MessageInitializingAgent. */
const agentInitialisingMessage = 'agent initialising'

/**
 * The uniter's first report (its agent leaves `allocating`) while the workload still says
 * what the model set before any agent ran: Juju's uniter sets `waiting` "agent
 * initialising" in its init when it finds "waiting for machine" or "installing agent"
 * (worker/uniter/uniter.go). Folded into that first report rather than sent as a command
 * of its own, so a unit whose charm takes a while to fetch does not claim to wait for a
 * machine that is up and running its agent.
 */
function uniterStarting (unit: UnitRecord, next: string): boolean {
  return unit.agent.status === 'allocating' && next !== 'allocating' && unit.workload.status === 'waiting' &&
    (unit.workload.message === 'waiting for machine' || unit.workload.message === 'installing agent')
}

export const statusCommands: HandlerTable<'set-unit-status' | 'set-agent-status' | 'set-application-status' | 'set-workload-version'> = {
  'set-unit-status': (d, c) => {
    const { name, unit, status } = workloadStatusOf(d, c)
    d.units.set(name, { ...unit, workload: status, statusHistory: withStatusChange(unit.statusHistory, 'workload', status) })
    d.touch(keys.unitStatus(name))
    return {}
  },

  'set-agent-status': (d, c) => {
    const name = unitName(c, c.unit)
    requireUnitAgent(d, c, name)
    const unit = getUnit(d, c, name)
    if (!agentStatuses.includes(c.status)) refuse(c, `${q(c.status)} is not an agent status (${agentStatuses.join(', ')})`)
    const message = text(c, 'message', c.message)
    const now = clockReading(c, c.now)
    let data: Record<string, string | number> | null = null
    if (c.data !== undefined) {
      if (!isPlainRecord(c.data)) refuse(c, 'data must be a map of strings and numbers')
      for (const [key, value] of Object.entries(c.data)) {
        if (typeof value !== 'string' && !Number.isFinite(value)) refuse(c, `data value of ${q(key)} must be a string or a number`)
      }
      if (encodedSize(c, 'data', c.data) > textFieldLengthMax * 4) refuse(c, `data exceeds ${textFieldLengthMax * 4} bytes`)
      data = sortedRecord(c.data)
    }
    const agent = { status: c.status, message, since: now, data }
    let statusHistory = unit.statusHistory
    let workload = unit.workload
    if (uniterStarting(unit, c.status)) {
      // Before the agent's own change, as init comes before the uniter's first operation.
      workload = { status: 'waiting', message: agentInitialisingMessage, since: now, data: null }
      statusHistory = withStatusChange(statusHistory, 'workload', workload)
    }
    statusHistory = withStatusChange(statusHistory, 'juju-unit', agent)
    d.units.set(name, { ...unit, agent, workload, statusHistory })
    d.touch(keys.unitStatus(name))
    return {}
  },

  'set-application-status': (d, c) => {
    const { name, unit, status } = workloadStatusOf(d, c)
    const lease = d.lease(unit.application)
    if (lease === undefined || lease.holder !== name || !leaseHeld(lease, status.since!)) refuse(c, `unit ${q(name)} is not the leader of ${q(unit.application)}`)
    const app = d.application(unit.application)!
    putApplication(d, { ...app, status, statusHistory: withStatusChange(app.statusHistory, 'application', status) })
    return {}
  },

  'set-workload-version': (d, c) => {
    const name = unitName(c, c.unit)
    requireUnitAgent(d, c, name)
    const unit = getUnit(d, c, name)
    const version = text(c, 'version', c.version, limits.modelWorkloadVersionLengthMax)
    const app = d.application(unit.application)!
    if (app.workloadVersion === version) return {}
    putApplication(d, { ...app, workloadVersion: version })
    return {}
  }
}
