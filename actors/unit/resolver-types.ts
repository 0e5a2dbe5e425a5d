import type { UnitName } from '../../runtime/ids.ts'
import type { HookInfo } from './hook-info.ts'
import type { LocalState, UniterMemory } from './local-state.ts'
import type { Operation } from './operation.ts'
import type { RemoteState } from './remote-state.ts'

/** Remote state plus the timer-driven counters the unit's watcher keeps (§1.3). */
export interface RemoteSnapshot extends RemoteState {
  updateStatusVersion: number
  retryHookVersion: number
}

export interface ResolverInput {
  unit: UnitName
  local: LocalState
  memory: UniterMemory
  remote: RemoteSnapshot
  retryTimer: { armed: boolean, attempt: number }
  /** Model config `automatically-retry-hooks`. */
  automaticallyRetryHooks: boolean
}

export type Decision =
  | { kind: 'run', op: Operation }
  /** Nothing to do until something changes. */
  | { kind: 'none' }
  /** In hook error: only actions, commands, resolved, forced upgrades and death move it. */
  | { kind: 'hook-error', hook: HookInfo }
  /** Blocked on something outside the unit (storage not provisioned, subordinates, upgrade conflict). */
  | { kind: 'waiting', reason: string }
  /** A charm upgrade committed: rebuild the loop (fresh in-memory state). */
  | { kind: 'restart' }
  /** Removed or dead: the unit agent stops for good. */
  | { kind: 'terminate' }

/** Requests the resolver makes of the world; the unit actor emits them to its host. */
export type ResolverEffect =
  | { type: 'clear-resolved' }
  | { type: 'start-retry-timer' }
  | { type: 'stop-retry-timer' }
  /** The loop failed (a charm that could not be fetched): restart it after the agent's error delay. */
  | { type: 'start-restart-timer' }
  /** A subordinate with no alive container-scoped relation to its principal destroys itself. */
  | { type: 'destroy-unit' }
  /** Dying storage whose -storage-attached never committed: the attachment goes without a hook. */
  | { type: 'storage-detached', storageId: string }

export interface Resolution {
  decision: Decision
  effects: ResolverEffect[]
}
