import { validateActionParams } from '../../charm/action-params.ts'
import type { UnitName } from '../../ids.ts'
import { limits } from '../../limits.ts'
import { keys } from '../keys.ts'
import type { ModelDraft } from '../model-draft.ts'
import type { ActionRecord, CommandOf, OperationTask, UnitRecord } from '../model-types.ts'
import { requireAdmin } from './authorisation.ts'
import { clockReading, encodedSize, text, unitName } from './fields.ts'
import { charmOf, getUnit } from './lookups.ts'
import { q, refuse, type HandlerTable } from './refusal.ts'
import { isPlainRecord } from '../charm-summary.ts'
import { putUnit } from './writes.ts'

/**
 * Operations, as Juju 3's: `run` and `exec` enqueue one operation with one task per unit,
 * ids from the model's one task sequence (operation 1, tasks 2 and 3). Every unit and the
 * action's parameters (against the charm's schema, defaults filled in) are checked before
 * anything is queued, so a refused operation leaves no task behind. An exec task is Juju's
 * "juju-exec" action: its record carries the command, the unit runs it from its command
 * queue, and `complete-command` writes its return code and output into the record.
 */

type EnqueueOperation = CommandOf<'enqueue-operation'>

export const operationCommands: HandlerTable<'enqueue-operation'> = {
  'enqueue-operation': (d, c) => {
    requireAdmin(c)
    if (!Array.isArray(c.units) || c.units.length === 0) refuse(c, 'no units given')
    if (c.units.length > limits.operationUnitsMax) refuse(c, `more than ${limits.operationUnitsMax} units`)
    const names = c.units.map(u => unitName(c, u))
    if (new Set(names).size !== names.length) refuse(c, 'a unit is named twice')
    const enqueuedAtMs = c.now === undefined ? undefined : clockReading(c, c.now)
    const units = names.map(name => getUnit(d, c, name))
    const planned = units.map(unit => ({ unit, parameters: checkTask(d, c, unit, c.task) }))
    const operation = nextTaskId(d)
    const tasks = planned.map(({ unit, parameters }) => ({ unit: unit.name, id: queueTask(d, c.task, unit, parameters, operation, enqueuedAtMs) }))
    return { operationId: operation, tasks }
  }
}

/** The task's parameters for this unit (an action's with defaults filled in), or a refusal. */
function checkTask (d: ModelDraft, c: EnqueueOperation, unit: UnitRecord, task: OperationTask): Readonly<Record<string, unknown>> {
  if (!isPlainRecord(task)) refuse(c, 'task must be a map')
  if (unit.life !== 'alive') refuse(c, `unit ${q(unit.name)} is ${unit.life}`)
  if (task.kind === 'exec') {
    const commands = text(c, 'commands', task.commands, limits.modelTaskBytesMax)
    if (commands.trim() === '') refuse(c, 'no commands given')
    if (task.timeoutMs !== undefined && (!Number.isSafeInteger(task.timeoutMs) || task.timeoutMs <= 0 || task.timeoutMs > limits.execTimeoutMsMax)) {
      refuse(c, `timeout must be whole milliseconds from 1 to ${limits.execTimeoutMsMax}, got ${q(task.timeoutMs)}`)
    }
    if (unit.commands.length >= limits.pendingCommandsMax) refuse(c, `unit ${q(unit.name)} already has ${limits.pendingCommandsMax} pending commands`)
    return { command: commands, ...(task.timeoutMs === undefined ? {} : { timeout: task.timeoutMs }) }
  }
  if (task.kind !== 'action') refuse(c, `task kind must be "action" or "exec", got ${q((task as { kind?: unknown }).kind)}`)
  const charm = charmOf(d, d.application(unit.application)!)
  const spec = typeof task.name === 'string' && Object.hasOwn(charm.metadata.actions, task.name) ? charm.metadata.actions[task.name] : undefined
  if (spec === undefined) refuse(c, `charm ${q(charm.url)} defines no action ${q(task.name)}`)
  if (!isPlainRecord(task.parameters)) refuse(c, 'parameters must be a map')
  if (encodedSize(c, 'parameters', task.parameters) > limits.modelTaskBytesMax) refuse(c, `parameters exceed ${limits.modelTaskBytesMax} bytes`)
  if (unit.actions.length >= limits.pendingActionsMax) refuse(c, `unit ${q(unit.name)} already has ${limits.pendingActionsMax} pending actions`)
  // Charms recorded before schemas were kept are checked by the unit's agent instead.
  if (spec.schema === undefined) return task.parameters
  const checked = validateActionParams(task.name, spec.schema, task.parameters)
  if (!checked.ok) refuse(c, checked.error.replace(/^cannot run "[^"]*" action: /, ''))
  return checked.params
}

function nextTaskId (d: ModelDraft): string {
  const id = String(d.counters.task)
  d.counters = { ...d.counters, task: d.counters.task + 1 }
  return id
}

function queueTask (d: ModelDraft, task: OperationTask, unit: UnitRecord, parameters: Readonly<Record<string, unknown>>, operation: string, enqueuedAtMs: number | undefined): string {
  const id = nextTaskId(d)
  const name = task.kind === 'action' ? task.name : 'juju-exec'
  const record: ActionRecord = {
    id, unit: unit.name as UnitName, machine: unit.machine, name, parameters,
    status: 'pending', results: {}, message: '', enqueuedAt: d.revision, completedAt: null, operation,
    ...(enqueuedAtMs === undefined ? {} : { enqueuedAtMs })
  }
  d.actions.set(id, record)
  d.touch(keys.action(id))
  const current = d.unit(unit.name)!
  if (task.kind === 'action') putUnit(d, { ...current, actions: [...current.actions, id] })
  else putUnit(d, { ...current, commands: [...current.commands, { id, commands: task.commands, ...(task.timeoutMs === undefined ? {} : { timeoutMs: task.timeoutMs }) }] })
  return id
}
