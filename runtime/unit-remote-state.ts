import type { ApplicationName, RelationId, StorageId, UnitName } from './ids.ts'

/**
 * What the controllers say should be true for one unit: the uniter's "remote state"
 * (juju-semantics §1.3). Declared in runtime/ because both sides use it: the model
 * projects it (runtime/model/remote-state-view.ts) and the unit actor consumes it. The host's remote-state watcher builds it; the unit actor
 * receives it whole with `remote.changed` and the resolver compares it with local state.
 * Timer-driven counters (update-status, hook retry) are not here: the unit actor keeps
 * them itself, as Juju's watcher does.
 */
export type Life = 'alive' | 'dying' | 'dead'
export type ResolvedMode = 'none' | 'retry-hooks' | 'no-hooks'

export interface RemoteCharm {
  url: string
  /** Bumped by refresh and by attaching a new resource. */
  modifiedVersion: number
  /** `juju refresh --force-units`: may interrupt a hook error. */
  forceUpgrade: boolean
}

export interface RemoteRelation {
  id: RelationId
  /** This unit's endpoint name. */
  endpoint: string
  remoteApplication: ApplicationName
  life: Life
  suspended: boolean
  peer: boolean
  /** The implicit `juju-info` provider side: no hooks run for it. */
  implicit: boolean
  /** Container-scoped (subordinate) relation. */
  containerScoped: boolean
  /** Remote units in scope → their settings version. */
  members: Readonly<Record<UnitName, number>>
  /** Version of the remote application's databag; 0 = never written. */
  applicationVersion: number
  /**
   * Whether the controllers have this unit itself in the relation's scope (undefined when
   * the source does not say). A unit that created the relation but is not in scope lost
   * its enter-scope request (its agent was killed before the request committed) and asks
   * again.
   */
  selfInScope?: boolean
}

export interface RemoteStorage {
  id: StorageId
  name: string
  kind: 'filesystem' | 'block'
  life: Life
  /** Provisioned and attached to the machine: `-storage-attached` may run. */
  attached: boolean
  location: string
}

export interface RemoteAction {
  id: string
  name: string
  parameters: Readonly<Record<string, unknown>>
}

export interface RemoteCommand {
  id: string
  commands: string
  /** `exec --timeout`: killed after this long (absent: the hook timeout). */
  timeoutMs?: number
}

export interface RemoteState {
  life: Life
  resolvedMode: ResolvedMode
  charm: RemoteCharm
  configHash: string
  trustHash: string
  addressesHash: string
  leader: boolean
  /** Incremented on every change of the application's leader settings (and the watcher's initial event). */
  leaderSettingsVersion: number
  relations: Readonly<Record<string, RemoteRelation>>
  storage: Readonly<Record<StorageId, RemoteStorage>>
  /** Storage the unit was deployed with: install waits until it is attached. */
  storageRequiredForInstall: readonly StorageId[]
  actions: readonly RemoteAction[]
  commands: readonly RemoteCommand[]
  /** Subordinate units still on this principal: it cannot become dead until they are gone. */
  subordinates: readonly UnitName[]
  /** This unit is a subordinate of this principal application (for self-destruction rules). */
  principalApplication?: ApplicationName
  /**
   * Secrets this unit consumes (has read), by id: the latest revision, the revision it
   * tracks and its label for the secret. Absent when it consumes none.
   */
  secretsConsumed?: Readonly<Record<string, { latest: number, tracked: number, label: string }>>
  /**
   * Secrets this unit manages (its own; its application's while it leads) whose rotation
   * the controllers found due, by id: the deadline, the owner's label and the latest
   * revision when it fell due (what the rotation is measured against). Absent when none.
   */
  secretRotations?: Readonly<Record<string, SecretRotationDue>>
  /** Revisions of secrets this unit manages whose expiry fell due, by `<id>/<revision>`. Absent when none. */
  secretExpirations?: Readonly<Record<string, SecretExpiryDue>>
  /** Obsolete revisions of secrets this unit manages, by id (ascending). Absent when none. */
  secretObsolete?: Readonly<Record<string, { label: string, revisions: readonly number[] }>>
}

export interface SecretRotationDue { due: number, label: string, revision: number }
export interface SecretExpiryDue { id: string, revision: number, due: number, label: string }
