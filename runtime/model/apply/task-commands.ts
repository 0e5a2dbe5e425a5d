import { limits } from '../../limits.ts'
import { isPlainRecord } from '../charm-summary.ts'
import { keys } from '../keys.ts'
import type { ModelCommand } from '../model-types.ts'
import { requireAdmin, requireUnitAgent } from './authorisation.ts'
import { clockReading, unitName, text, encodedSize } from './fields.ts'
import { getUnit, charmOf } from './lookups.ts'
import { q, refuse, type HandlerTable } from './refusal.ts'
import { finishAction } from './unit-records.ts'
import { putUnit } from './writes.ts'

/**
 * The task commands: actions and commands run on a unit, queued and completed.
 */

export const taskCommands: HandlerTable<'enqueue-action' | 'start-task' | 'complete-action' | 'enqueue-command' | 'complete-command'> = {
  'enqueue-action': (d, c) => {
    requireAdmin(c)
    const unit = getUnit(d, c, unitName(c, c.unit))
    const charm = charmOf(d, d.application(unit.application)!)
    if (typeof c.name !== 'string' || !Object.hasOwn(charm.metadata.actions, c.name)) refuse(c, `charm ${q(charm.url)} defines no action ${q(c.name)}`)
    if (!isPlainRecord(c.parameters)) refuse(c, 'parameters must be a map')
    if (encodedSize(c, 'parameters', c.parameters) > limits.modelTaskBytesMax) refuse(c, `parameters exceed ${limits.modelTaskBytesMax} bytes`)
    if (unit.actions.length >= limits.pendingActionsMax) refuse(c, `unit already has ${limits.pendingActionsMax} pending actions`)
    const id = String(d.counters.task)
    d.counters = { ...d.counters, task: d.counters.task + 1 }
    d.actions.set(id, {
      id, unit: unit.name, machine: unit.machine, name: c.name, parameters: c.parameters,
      status: 'pending', results: {}, message: '', enqueuedAt: d.revision, completedAt: null
    })
    d.touch(keys.action(id))
    putUnit(d, { ...unit, actions: [...unit.actions, id] })
    return { actionId: id }
  },

  // Juju's ActionBegin (apiserver/facades/agent/uniter): the task is running from now. A
  // repeat (the unit resumed the operation after a restart) or a task already finished
  // changes nothing; a lone command (`enqueue-command`) has no task record to mark.
  'start-task': (d, c) => {
    const name = unitName(c, c.unit)
    requireUnitAgent(d, c, name)
    const unit = getUnit(d, c, name)
    const id = text(c, 'taskId', c.taskId)
    const task = d.action(id)
    if (task === undefined && unit.commands.some(command => command.id === id)) return {}
    if (task === undefined || task.unit !== name) refuse(c, `unit ${q(name)} has no task ${q(id)}`)
    if (task.status !== 'pending') return {}
    const startedAtMs = agentTime(c)
    d.actions.set(task.id, { ...task, status: 'running', ...(startedAtMs === undefined ? {} : { startedAtMs }) })
    d.touch(keys.action(task.id))
    return {}
  },

  'complete-action': (d, c) => {
    const name = unitName(c, c.unit)
    requireUnitAgent(d, c, name)
    const unit = getUnit(d, c, name)
    const action = typeof c.actionId === 'string' ? d.action(c.actionId) : undefined
    if (action === undefined || action.unit !== name) refuse(c, `unit ${q(name)} has no action ${q(c.actionId)}`)
    if (action.status !== 'pending' && action.status !== 'running') refuse(c, `the action is ${action.status} already`)
    if (c.status !== 'completed' && c.status !== 'failed') refuse(c, `status must be "completed" or "failed", got ${q(c.status)}`)
    const results = c.results ?? {}
    if (!isPlainRecord(results)) refuse(c, 'results must be a map')
    if (encodedSize(c, 'results', results) > limits.modelTaskBytesMax) refuse(c, `results exceed ${limits.modelTaskBytesMax} bytes`)
    const message = text(c, 'message', c.message ?? '')
    finishAction(d, action, c.status, results, message, agentTime(c))
    putUnit(d, { ...unit, actions: unit.actions.filter(id => id !== action.id) })
    return {}
  },

  'enqueue-command': (d, c) => {
    requireAdmin(c)
    const unit = getUnit(d, c, unitName(c, c.unit))
    const commands = text(c, 'commands', c.commands, limits.modelTaskBytesMax)
    if (commands.trim() === '') refuse(c, 'no commands given')
    if (unit.commands.length >= limits.pendingCommandsMax) refuse(c, `unit already has ${limits.pendingCommandsMax} pending commands`)
    const id = `cmd-${d.counters.task}`
    d.counters = { ...d.counters, task: d.counters.task + 1 }
    putUnit(d, { ...unit, commands: [...unit.commands, { id, commands }] })
    return { commandId: id }
  },

  'complete-command': (d, c) => {
    const name = unitName(c, c.unit)
    requireUnitAgent(d, c, name)
    const unit = getUnit(d, c, name)
    if (!unit.commands.some(command => command.id === c.commandId)) refuse(c, `unit ${q(name)} has no pending command ${q(c.commandId)}`)
    // An operation's exec task keeps what the commands printed and returned, as Juju's
    // "juju-exec" action does; a command killed at its timeout fails the task.
    const task = d.action(c.commandId)
    if (task !== undefined && (task.status === 'pending' || task.status === 'running')) {
      const outcome = c.outcome ?? { exitCode: 0, stdout: '', stderr: '' }
      if (!Number.isSafeInteger(outcome.exitCode)) refuse(c, `exit code must be a whole number, got ${q(outcome.exitCode)}`)
      const results = { 'return-code': outcome.exitCode, stdout: text(c, 'stdout', outcome.stdout, limits.modelTaskBytesMax), stderr: text(c, 'stderr', outcome.stderr, limits.modelTaskBytesMax) }
      const timedOut = outcome.timedOut === true
      finishAction(d, task, timedOut ? 'failed' : 'completed', results, timedOut ? 'command timed out' : '', agentTime(c))
    }
    putUnit(d, { ...unit, commands: unit.commands.filter(command => command.id !== c.commandId) })
    return {}
  }
}

/** The agent's wall-clock reading sent with the command, if any. */
function agentTime (c: ModelCommand & { now?: unknown }): number | undefined {
  return c.now === undefined ? undefined : clockReading(c, c.now)
}
