/**
 * What a unit agent asks of the controllers for each event its unit actor emits: the
 * body of the model command (without request id and proposer, which the unit host's
 * CommandProposer adds), or undefined for events that stay on the machine (hook
 * progress, logs). Used by the one unit host (unit-host.ts) of both worlds.
 */
import type { ModelCommandBody } from '../../runtime/model/command-proposer.ts'
import type { UnitEmitted } from './unit-effects.ts'

export function commandForEmitted (unit: string, event: UnitEmitted, now: number): ModelCommandBody | undefined {
  switch (event.type) {
    case 'relation.enterScope': return { type: 'enter-scope', unit, relationId: event.relationId }
    case 'relation.leaveScope': return { type: 'leave-scope', unit, relationId: event.relationId }
    case 'storage.detached': return { type: 'storage-detached', unit, storageId: event.storageId }
    case 'secret.rotated': return { type: 'secret-rotated', unit, id: event.id, originalRevision: event.originalRevision, now }
    case 'controller.clearResolved': return { type: 'clear-resolved', unit }
    case 'unit.destroy': return { type: 'remove-unit', unit }
    case 'unit.terminated': return { type: 'unit-dead', unit }
    case 'task.started': return { type: 'start-task', unit, taskId: event.taskId, now }
    case 'action.completed': return {
      type: 'complete-action', unit, actionId: event.actionId, status: event.outcome.status, results: event.outcome.results,
      ...(event.outcome.message === undefined ? {} : { message: event.outcome.message }), now
    }
    case 'command.completed': return { type: 'complete-command', unit, commandId: event.commandId, outcome: event.outcome, now }
    // Juju's uniter sets these through the same API as the charm's status-set.
    case 'unit.workloadStatus': return { type: 'set-unit-status', unit, status: event.workload.status, message: event.workload.message, now }
    case 'unit.status': return {
      type: 'set-agent-status', unit, status: event.status.agent.status, message: event.status.agent.message,
      ...(event.status.agent.data === undefined ? {} : { data: event.status.agent.data }), now
    }
    default: return undefined
  }
}
