import type { RelationId } from '../../runtime/ids.ts'
import type { HookInfo } from './hook-info.ts'
import type { ActionOutcome, CommandOutcome } from './operation.ts'

/** Workload and agent status as the uniter sets them (juju-semantics §8). */
export type WorkloadStatus = 'waiting' | 'maintenance' | 'blocked' | 'active' | 'unknown' | 'terminated' | 'error'
export type AgentStatus = 'allocating' | 'executing' | 'idle' | 'error' | 'failed' | 'lost'

export interface UnitStatus {
  agent: { status: AgentStatus, message: string, data?: Record<string, string | number> }
  workload: { status: WorkloadStatus, message: string }
}

/**
 * What the unit actor tells its host, as XState emitted events. The host (agent/ or sim/)
 * turns them into controller calls; tests read them to check hook order.
 */
export type UnitEmitted =
  | { type: 'unit.status', status: UnitStatus }
  /** The uniter itself set the workload status (install, start, stop, remove: unit-status.ts). */
  | { type: 'unit.workloadStatus', workload: UnitStatus['workload'] }
  | { type: 'hook.started', hook: HookInfo }
  /** The resolver waits before install (for storage): why, logged by the unit host once per wait. */
  | { type: 'uniter.waiting', reason: string }
  | { type: 'hook.committed', hook: HookInfo, ran: boolean }
  | { type: 'hook.failed', hook: HookInfo, reason: string }
  /** A deploy could not fetch or unpack the charm: why, logged by the unit host (Juju logs "resolver loop error: …"). */
  | { type: 'uniter.loopError', reason: string }
  | { type: 'hook.requeued', hook: HookInfo }
  | { type: 'relation.enterScope', relationId: RelationId }
  | { type: 'relation.leaveScope', relationId: RelationId }
  /** `-storage-detaching` committed: the attachment may leave the model. */
  | { type: 'storage.detached', storageId: string }
  /** `secret-rotate` committed: the controllers schedule the next rotation. */
  | { type: 'secret.rotated', id: string, originalRevision: number }
  | { type: 'controller.clearResolved' }
  | { type: 'unit.destroy' }
  | { type: 'unit.terminated' }
  | { type: 'leadership.changed', leader: boolean }
  /** The uniter began a queued action or command (Juju's ActionBegin): its task is running. */
  | { type: 'task.started', taskId: string }
  | { type: 'action.completed', actionId: string, outcome: ActionOutcome }
  | { type: 'command.completed', commandId: string, outcome: CommandOutcome }
  | { type: 'charm.deployed', url: string, modifiedVersion: number }
  /**
   * A hook asked for the machine to reboot (`juju-reboot`): after it committed, or
   * (`now`) killed and re-queued. The unit actor has stopped; the machine agent reboots.
   */
  | { type: 'machine.reboot', hook: HookInfo, now: boolean }
