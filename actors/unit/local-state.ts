import type { ApplicationName, RelationId, StorageId, UnitName } from '../../runtime/ids.ts'
import type { HookInfo } from './hook-info.ts'

/**
 * What this unit has already done: Juju's persisted "uniter state" plus relation and
 * storage state (juju-semantics §1.2). Saved whole, as one value, before each step of
 * each operation, so relation and uniter state can never disagree after a crash.
 */
export type PersistedOperationKind = 'install' | 'upgrade' | 'run-hook' | 'run-action' | 'continue'
export type OperationStep = 'queued' | 'pending' | 'done'

export interface PersistedOperation {
  kind: PersistedOperationKind
  step: OperationStep
  /**
   * The current hook; also kept while an action or a forced upgrade interrupts a hook
   * error, so the error comes back when they finish.
   */
  hook?: HookInfo
  actionId?: string
  /**
   * A run-hook operation's run number (LocalState.hookRuns when it was first prepared):
   * kept while the same hook is pending, through crashes and retries, so its commit
   * carries the same key every time and the controller applies it at most once.
   */
  run?: number
  /** Charm being deployed by an install or upgrade operation. */
  charm?: DeployedCharm
}

export interface DeployedCharm {
  url: string
  modifiedVersion: number
}

/** One relation as this unit has seen it through committed hooks (Juju's relation state file). */
export interface LocalRelation {
  id: RelationId
  endpoint: string
  remoteApplication: ApplicationName
  peer: boolean
  implicit: boolean
  containerScoped: boolean
  /** Remote unit → the settings version a committed hook saw. */
  members: Record<UnitName, number>
  /** Remote application → the databag version a committed hook saw. */
  applicationMembers: Record<ApplicationName, number>
  /** `-joined U` ran; `-changed U` must be this relation's next hook. */
  changedPending?: UnitName
}

export interface LocalState {
  installed: boolean
  started: boolean
  stopped: boolean
  removed: boolean
  /** A leader-elected hook has been queued and not superseded. */
  leader: boolean
  /** The charm has called status-set at least once. */
  statusSet: boolean
  operation: PersistedOperation
  /** The charm on disk; undefined until the install deploy ran. */
  charm?: DeployedCharm
  configHash: string
  trustHash: string
  addressesHash: string
  relations: Record<string, LocalRelation>
  /** Storage whose `-storage-attached` has been committed. */
  storageAttached: Record<StorageId, { name: string }>
  /** The charm's own state-set key/values (committed by successful hooks). */
  charmState: Record<string, string>
  /** Secret id → the latest revision a committed secret-changed told the charm of (Juju's ConsumedSecretInfo). */
  secretRevisions?: Record<string, number>
  /** Secret id → the rotation deadline whose `secret-rotate` committed (Juju's rotatedSecrets callback). */
  secretRotated?: Record<string, number>
  /** `<id>/<revision>` → the expiry trigger whose `secret-expired` committed. */
  secretExpired?: Record<string, number>
  /** Secret id → obsolete revisions whose `secret-remove` committed (Juju's SecretObsoleteRevisions). */
  secretRemoved?: Record<string, number[]>
  /** Hook runs prepared so far: the last one's number (PersistedOperation.run). */
  hookRuns?: number
  /**
   * Chosen by the unit host when this state is first created (unit-host.ts, UnitEffects.newStateId):
   * with `run`, it makes a hook commit's key unique even if the state were lost and the
   * runs counted from 1 again.
   */
  stateId?: string
}

/** Reset on every agent restart and after every charm upgrade, as Juju rebuilds its loop. */
export interface UniterMemory {
  leaderSettingsVersion: number
  updateStatusVersion: number
  retryHookVersion: number
  completedActions: string[]
  completedCommands: string[]
  /** The last charm upgrade could not be deployed; wait for resolved or a forced refresh. */
  conflicted: boolean
  /** The last deploy could not fetch or unpack the charm: the loop waits for its restart (unit-machine.ts `loopRestart`). */
  loopFailed: boolean
  /** A charm upgrade was just committed: rebuild the loop before anything else. */
  restart: boolean
  /** The machine rebooted since the agent last ran: one `start` is owed. */
  rebootPending: boolean
  /** We asked the controller to clear the resolved flag and are waiting to see it cleared. */
  resolvedConsumed: boolean
}

export function initialLocalState (): LocalState {
  return {
    installed: false,
    started: false,
    stopped: false,
    removed: false,
    leader: false,
    statusSet: false,
    operation: { kind: 'continue', step: 'pending' },
    configHash: '',
    trustHash: '',
    addressesHash: '',
    relations: {},
    storageAttached: {},
    charmState: {}
  }
}

export function initialMemory (rebooted: boolean): UniterMemory {
  return {
    leaderSettingsVersion: 0,
    updateStatusVersion: 0,
    retryHookVersion: 0,
    completedActions: [],
    completedCommands: [],
    conflicted: false,
    loopFailed: false,
    restart: false,
    rebootPending: rebooted,
    resolvedConsumed: false
  }
}

/** The unit is in hook error: a hook started and did not finish successfully. */
export function inHookError (local: LocalState): boolean {
  return local.operation.kind === 'run-hook' && local.operation.step === 'pending'
}

export function isIdle (local: LocalState): boolean {
  return local.operation.kind === 'continue'
}
