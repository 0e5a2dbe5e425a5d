import type { ApplicationName, MachineId, RelationId, StorageId, UnitName } from '../ids.ts'
import { agentVersionCommandTypes, type AgentBinaryRecord, type AgentVersionCommand } from './agent-binaries.ts'
import type { CharmEndpoint, CharmConfigOption, CharmStorage, StorageDirectiveInput, StorageDirective, CharmSummary, CharmResource, ResourceRecord, CharmSummaryInput, CharmRecord } from './charm-types.ts'
import type { ChunkedList } from './chunked-list.ts'
import type { Table } from './table.ts'
import { secretCommandTypes, type SecretCommand, type SecretHookChanges, type SecretRecord } from './secret-types.ts'

/**
 * The desired state of one model (DESIGN.md §4): what the controllers agree on through
 * Raft, applied command by command to an @xstate/store. Everything here is plain data
 * (records keyed by name or id, arrays, strings, numbers, booleans, null) so that the
 * context is a RaftSnapshot as it stands and travels through the msgpackr codec.
 * Absent values are `null`, never `undefined`.
 */

// ---------------------------------------------------------------------------------
// Vocabulary (juju-semantics.md §1.3, §8)

export type Life = 'alive' | 'dying' | 'dead'
export type ResolvedMode = 'none' | 'retry-hooks' | 'no-hooks'

/** Unit workload status; charms may set only the first four (`status-set`). */
export type WorkloadStatus = 'waiting' | 'maintenance' | 'blocked' | 'active' | 'unknown' | 'terminated' | 'error'
export const workloadStatuses: readonly WorkloadStatus[] = ['waiting', 'maintenance', 'blocked', 'active', 'unknown', 'terminated', 'error']

/** Unit agent status (`error` is shown as workload error + agent idle by `status`). */
export type AgentStatus = 'allocating' | 'executing' | 'idle' | 'rebooting' | 'error' | 'failed' | 'lost'
export const agentStatuses: readonly AgentStatus[] = ['allocating', 'executing', 'idle', 'rebooting', 'error', 'failed', 'lost']

/** Machine agent status (the `State` column). */
export type MachineAgentStatus = 'pending' | 'started' | 'stopped' | 'down' | 'error'
export const machineAgentStatuses: readonly MachineAgentStatus[] = ['pending', 'started', 'stopped', 'down', 'error']

/** Instance status (`machine-status`). */
export type MachineInstanceStatus = 'pending' | 'allocating' | 'running' | 'provisioning error' | 'stopped'
export const machineInstanceStatuses: readonly MachineInstanceStatus[] = ['pending', 'allocating', 'running', 'provisioning error', 'stopped']

export type ConfigValue = string | number | boolean
export type ConfigOptionType = 'string' | 'int' | 'float' | 'boolean' | 'secret'
export type Constraints = Readonly<Record<string, string>>

// ---------------------------------------------------------------------------------
// Entities: who proposes a command, who watches

/**
 * An authenticated caller. `user` is a CLI client (the admin); `controller` a worker on
 * the controllers (provisioner, cleanup); `machine` a machine agent, which also acts for
 * the unit agents it hosts; `unit` a unit agent speaking for itself.
 */
export type Entity =
  | { readonly kind: 'user', readonly name: string }
  | { readonly kind: 'controller', readonly id: string }
  | { readonly kind: 'machine', readonly id: MachineId }
  | { readonly kind: 'unit', readonly name: UnitName }

// Charms: charm-types.ts
export type { CharmEndpoint, CharmConfigOption, CharmStorage, StorageDirectiveInput, StorageDirective, CharmSummary, CharmResource, ResourceRecord, CharmSummaryInput, CharmRecord } from './charm-types.ts'

// ---------------------------------------------------------------------------------
// Applications, units, machines

export interface ApplicationRecord {
  readonly name: ApplicationName
  readonly life: Life
  readonly charm: string
  /** Bumped by every refresh (and, later, by attaching a resource). */
  readonly charmModifiedVersion: number
  /** The last refresh was `--force`: units may upgrade while in hook error. */
  readonly forceUpgrade: boolean
  readonly subordinate: boolean
  /** Options the user set; defaults come from the charm. */
  readonly config: Readonly<Record<string, ConfigValue>>
  /** Hash of the effective configuration (defaults merged with user values). */
  readonly configHash: string
  readonly trust: boolean
  readonly trustHash: string
  readonly constraints: Constraints
  /** `deploy --storage` directives, by storage name; new units get these (else the charm's minimum). */
  readonly storage?: Readonly<Record<string, StorageDirective>>
  /** Resource content the operator supplied, by resource name; left out while there is none. */
  readonly resources?: Readonly<Record<string, ResourceRecord>>
  readonly exposed: boolean
  /** Alive units (the `Scale` column). */
  readonly scale: number
  readonly nextUnitNumber: number
  /** Every unit of the application in the model, in creation order. */
  readonly units: readonly UnitName[]
  /** Relations the application takes part in, ascending. */
  readonly relations: readonly RelationId[]
  readonly leaderSettings: Readonly<Record<string, string>>
  /** Starts at 1 (the watcher's initial event) and counts every change of the leader settings. */
  readonly leaderSettingsVersion: number
  /**
   * What `application-version-set` last reported, from any unit ('' until then). Juju shows
   * the leader's; here the last writer wins, which is the same while units agree.
   */
  readonly workloadVersion: string
  /**
   * What the leader set with `status-set --application`; null until then, when `juju
   * status` derives the application's status from its units.
   */
  readonly status: StatusRecord<WorkloadStatus> | null
  /** Changes of `status`, oldest first, bounded like a unit's (runtime/model/status-history.ts). */
  readonly statusHistory: readonly StatusHistoryEntry[]
}

export interface StatusRecord<S extends string> {
  readonly status: S
  readonly message: string
  /** Proposer's clock reading when the status was set; null for statuses the model set itself. */
  readonly since: number | null
  readonly data: Readonly<Record<string, string | number>> | null
}

export interface StorageRecord {
  readonly id: StorageId
  readonly name: string
  readonly kind: 'filesystem' | 'block'
  readonly life: Life
  readonly attached: boolean
  readonly location: string
  /** Provisioned size in MiB (Juju's default is 1024). Absent in records from before sizes. */
  readonly sizeMiB?: number
  /** The pool it came from: `rootfs` for filesystems, `loop` for block devices, as on Juju's local clouds. */
  readonly pool?: string
}

export type PortProtocol = 'tcp' | 'udp' | 'icmp'
export const portProtocols: readonly PortProtocol[] = ['icmp', 'tcp', 'udp']

/**
 * A port range one unit opened (`open-port`), and the endpoints it is open for: `['*']`
 * for all of them (Juju's wildcard), else endpoint names, sorted. icmp has no numbers:
 * `from` and `to` are left out, not null, so a record reads like the command that opened it.
 */
export interface OpenedPortRange {
  readonly protocol: PortProtocol
  readonly from?: number
  readonly to?: number
  readonly endpoints: readonly string[]
}

/** A range as `commit-hook-changes` opens or closes it; `to` defaults to `from`, `endpoints` to `['*']`. */
export interface PortRangeChange {
  readonly protocol: PortProtocol
  readonly from?: number
  readonly to?: number
  readonly endpoints?: readonly string[]
}

export interface PendingCommand {
  readonly id: string
  readonly commands: string
  /** `exec --timeout`: the command is killed after this long (absent: the hook timeout). */
  readonly timeoutMs?: number
}

export interface UnitRecord {
  readonly name: UnitName
  readonly application: ApplicationName
  readonly machine: MachineId
  readonly life: Life
  readonly resolvedMode: ResolvedMode
  /** The principal unit of a subordinate; null for principals. */
  readonly principal: UnitName | null
  /** Subordinate units deployed beside this principal, in creation order. */
  readonly subordinates: readonly UnitName[]
  readonly storage: Readonly<Record<StorageId, StorageRecord>>
  /** Storage the unit was deployed with: install waits until it is attached. */
  readonly storageRequired: readonly StorageId[]
  /** Pending action ids, in the order they were enqueued. */
  readonly actions: readonly string[]
  readonly commands: readonly PendingCommand[]
  readonly workload: StatusRecord<WorkloadStatus>
  readonly agent: StatusRecord<AgentStatus>
  /**
   * Ports the unit opened, one entry per distinct range, sorted as Juju sorts them
   * (protocol, then from, then to). Changed only by `commit-hook-changes`.
   */
  readonly openedPorts: readonly OpenedPortRange[]
  /** The charm's own key/value state (`state-get`/`state-set`), keys sorted; bounded by the charm-state limits. */
  readonly charmState: Readonly<Record<string, string>>
  /** The key of the last hook commit applied (commit-hook-changes' hookRun), if it had one. */
  readonly lastHookRun?: string
  /** Workload and agent status changes, oldest first, at most limits.modelStatusHistoryPerUnitMax (runtime/model/status-history.ts). */
  readonly statusHistory: readonly StatusHistoryEntry[]
}

/**
 * One status change, as `juju show-status-log` lists it: a unit's `workload` or agent
 * (`juju-unit`), a machine's agent (`juju-machine`) or instance (`machine`), an `application`'s.
 */
export interface StatusHistoryEntry {
  readonly type: 'workload' | 'juju-unit' | 'juju-machine' | 'machine' | 'application'
  readonly status: string
  readonly message: string
  /** The proposer's clock reading (ms); null for statuses the model set itself. */
  readonly since: number | null
  /** The status's data when it has any (a hook error's hook, relation id and remote unit). */
  readonly data?: Readonly<Record<string, string | number>>
}

export interface MachineRecord {
  readonly id: MachineId
  readonly life: Life
  readonly constraints: Constraints
  readonly instanceId: string | null
  readonly addresses: readonly string[]
  readonly agent: StatusRecord<MachineAgentStatus>
  readonly instance: StatusRecord<MachineInstanceStatus>
  /** Units assigned to this machine (principals and their subordinates), in assignment order. */
  readonly units: readonly UnitName[]
  /** Never hosted a unit: a unit deployed without placement takes a clean, empty machine first. */
  readonly clean: boolean
  /** Where the machine must run, for the provider (`ssh:user@host` for manual); null: anywhere. */
  readonly placement: string | null
  /** With an ssh placement: the private key file the controllers reach the host with; absent: ssh's own. */
  readonly privateKey?: string
  /** Where its agent listens (`HOST[:PORT]`) and the address it advertises (`add-machine --listen/--advertise`); absent: the provider's default. */
  readonly listen?: string
  readonly advertise?: string
  /**
   * Recorded by the provisioner before the first start: the instance idempotency token
   * (the same token never makes a second instance) and the one-time registration secret
   * in the bootstrap data, emptied once an agent has registered with it.
   */
  readonly provisioning: { readonly token: string, readonly secret: string } | null
  /** How often `retry-provisioning` asked for a new start after a provisioning error (absent: never). */
  readonly provisioningRetries?: number
  /** The peer id of the machine agent that registered for this machine. */
  readonly agentPeer: string | null
  /**
   * Its agent is also a controller (`cantripd --role both`; Juju's JobManageModel), as its
   * machiner reported: removing its last unit leaves it alive. Absent: it is not.
   */
  readonly controller?: true
  /** Agent (`juju-machine`) and instance (`machine`) status changes, oldest first, bounded like a unit's. */
  readonly statusHistory: readonly StatusHistoryEntry[]
  /** The version its agent reported running, its host's Juju base (`ubuntu@22.04`) and hostname, absent until it does; why its last upgrade failed (absent when none did). */
  readonly agentVersion?: string
  readonly agentUpgradeError?: string
  readonly base?: string
  readonly hostname?: string
}

// ---------------------------------------------------------------------------------
// Relations

export interface RelationEndpoint {
  readonly application: ApplicationName
  readonly name: string
  readonly interface: string
  readonly role: 'provider' | 'requirer' | 'peer'
  readonly scope: 'global' | 'container'
  /** The `juju-info` provider every charm has without declaring it: no hooks run for it. */
  readonly implicit: boolean
}

export interface RelationMember {
  /** The member's machine, kept after it leaves (container-scoped visibility of its settings). */
  readonly machine: MachineId
  readonly inScope: boolean
}

export interface RelationRecord {
  readonly id: RelationId
  /** Juju's relation key: endpoints as `app:ep`, sorted, space-separated. */
  readonly key: string
  readonly endpoints: readonly RelationEndpoint[]
  readonly life: Life
  readonly suspended: boolean
  readonly peer: boolean
  readonly containerScoped: boolean
  /**
   * Units that entered scope. Those that left stay, out of scope, with their databags
   * (juju-semantics §2.4: a departed unit's last settings remain readable for the life
   * of the relation), even after they leave the model; see `departed`. A table: big
   * relations change one member per command.
   */
  readonly members: Table<RelationMember>
  /** Members in scope now. */
  readonly inScope: number
  /**
   * The members out of scope, oldest departure first: at most
   * limits.relationDepartedMembersMax, the oldest (member and bag) dropped beyond it.
   */
  readonly departed: readonly UnitName[]
}

/** A unit's or an application's databag in one relation. */
export interface SettingsRecord {
  /** 1 when first written (entering scope writes the address keys); bumped on each change. */
  readonly version: number
  readonly values: Readonly<Record<string, string>>
}

// ---------------------------------------------------------------------------------
// Leadership, actions, requests

/**
 * A leadership lease: granted by a committed claim, at the proposer-stamped `now` of that
 * command, for an explicit duration. The holder believes it leads only while its clock
 * reads earlier than `expiry` minus the clock-drift margin; nobody else can be granted
 * the lease before `expiry` on the granting controller's clock.
 */
export interface LeaseRecord {
  readonly application: ApplicationName
  readonly holder: UnitName
  readonly start: number
  readonly expiry: number
  /** Raft index of the claim that granted it (extensions keep it). */
  readonly grantedAt: number
}

/**
 * A controller lease: which controller may run the singular workers (provisioner,
 * cleanup) named by `lease`. The same two rules as leadership keep two controllers from
 * running them at once: another controller is granted the lease only once the proposer's
 * `now` has reached `expiry`, and the holder believes it holds the lease only while its
 * clock reads earlier than `expiry` minus `limits.controllerLeaseClockDriftMarginMs`.
 */
export interface ControllerLeaseRecord {
  readonly lease: string
  /** The holding controller's id (the `id` of its `controller` entity). */
  readonly holder: string
  readonly start: number
  readonly expiry: number
  /** Raft index of the claim that granted it (extensions keep it). */
  readonly grantedAt: number
}

/**
 * One model of the registry. `dying` once destroy-model began: its applications and
 * machines are being removed; `remove-model` then drops it, and the controllers stop
 * its Raft group and delete its data.
 */
export interface ModelRegistryRecord {
  readonly name: string
  readonly life: 'alive' | 'dying'
  /** Raft index of the add-model that created it. */
  readonly createdAt: number
  /** The model's RFC 4122 v4 UUID, chosen by whoever proposed add-model ('' in records from before). */
  readonly uuid: string
}

export type ActionStatus = 'pending' | 'running' | 'completed' | 'failed' | 'cancelled' // Juju's task lifecycle, in order

export interface ActionRecord {
  readonly id: string
  readonly unit: UnitName
  readonly machine: MachineId
  readonly name: string
  readonly parameters: Readonly<Record<string, unknown>>
  readonly status: ActionStatus
  readonly results: Readonly<Record<string, unknown>>
  readonly message: string
  readonly enqueuedAt: number
  readonly completedAt: number | null
  /** The operation (`enqueue-operation`) this task belongs to; absent for a lone `enqueue-action`. */
  readonly operation?: string
  /** Wall-clock times (epoch ms) the enqueuing client, the starting (`start-task`) and completing agent stamped. */
  readonly enqueuedAtMs?: number
  readonly startedAtMs?: number
  readonly completedAtMs?: number
}

/** What an operation runs on each of its units: a charm action, or commands (`juju exec`, Juju's action "juju-exec"). */
export type OperationTask =
  | { readonly kind: 'action', readonly name: string, readonly parameters: Readonly<Record<string, unknown>> }
  | { readonly kind: 'exec', readonly commands: string, readonly timeoutMs?: number }

export interface CommandSucceeded {
  readonly ok: true
  /** Raft index at which the command was applied. */
  readonly index: number
  readonly units?: readonly UnitName[]
  readonly machines?: readonly MachineId[]
  readonly relationId?: RelationId
  readonly actionId?: string
  readonly commandId?: string
  /** `enqueue-operation`: the operation's id and its tasks, one per unit, in the order given. */
  readonly operationId?: string
  readonly tasks?: ReadonlyArray<{ readonly unit: UnitName, readonly id: string }>
  /** `add-storage`: the storage instances added. */
  readonly storage?: readonly StorageId[]
  /** `attach-resource`: the resource's new revision. */
  readonly revision?: number
  /** Leadership claims: the holding unit; controller-lease claims: the holding controller's id. */
  readonly lease?: { readonly holder: string, readonly expiry: number }
  /** `apply-batch`: each command's own result, in the batch's order. */
  readonly results?: readonly CommandResult[]
}

export interface CommandFailed {
  readonly ok: false
  readonly index: number
  /** One line naming the component and what failed and why: `controller: cannot deploy "web": …`. */
  readonly error: string
}

export type CommandResult = CommandSucceeded | CommandFailed

export interface RequestRecord {
  readonly type: ModelCommand['type']
  readonly result: CommandResult
}

/**
 * Who may see a key, captured when it is removed (the entities it named are gone by then,
 * so visibility cannot be derived from the context any more).
 */
export type KeyScope =
  | { readonly kind: 'model' }
  /** Every agent of the model (its configuration). */
  | { readonly kind: 'model-agents' }
  | { readonly kind: 'application', readonly application: ApplicationName }
  | { readonly kind: 'charm', readonly url: string }
  | { readonly kind: 'machine', readonly machine: MachineId }
  | { readonly kind: 'unit', readonly unit: UnitName, readonly machine: MachineId }
  | { readonly kind: 'relation', readonly applications: readonly ApplicationName[] }
  | {
    readonly kind: 'relation-unit'
    readonly applications: readonly ApplicationName[]
    readonly peer: boolean
    readonly containerScoped: boolean
    readonly unit: UnitName
    readonly machine: MachineId
  }
  | { readonly kind: 'relation-application', readonly applications: readonly ApplicationName[] }

export interface Tombstone {
  readonly key: string
  readonly revision: number
  readonly scope: KeyScope
}

export interface ModelCounters {
  readonly relation: number
  readonly machine: number
  /** Actions and `juju exec` commands share one sequence: action ids `N`, command ids `cmd-N`. */
  readonly task: number
  readonly storage: number
  /**
   * Below this machine id no machine can be a clean, empty one again (see cleanEmptyMachine):
   * where its scan starts, so adding units stays O(1) in the number of machines. Absent in
   * snapshots written before it existed, which means 0.
   */
  readonly cleanMachineFrom?: number
}

export interface ModelContext {
  readonly format: 1
  /** Raft index of the last applied entry. */
  readonly revision: number
  /** Raft term of the last applied entry (0 when unknown). */
  readonly term: number
  readonly counters: ModelCounters
  readonly charms: Table<CharmRecord>
  readonly applications: Table<ApplicationRecord>
  readonly units: Table<UnitRecord>
  readonly machines: Table<MachineRecord>
  /** Keyed by `String(id)`. */
  readonly relations: Table<RelationRecord>
  /** Keyed by the settings key (`relation/3/settings/web/0`, `relation/3/app-settings/web`). */
  readonly settings: Table<SettingsRecord>
  /** Keyed by application. */
  readonly leases: Table<LeaseRecord>
  /** Keyed by lease name. */
  readonly controllerLeases: Table<ControllerLeaseRecord>
  readonly actions: Table<ActionRecord>
  /** Finished action ids, oldest first; records beyond the limit are forgotten. */
  readonly finishedActions: ChunkedList<string>
  /** Delta key → revision that last changed it: "what changed since R" without a delta log. */
  readonly keyRevisions: Table<number>
  /** Removed keys, oldest first, bounded; see `tombstoneFloor`. */
  readonly tombstones: ChunkedList<Tombstone>
  /** Removals at or before this revision may have been forgotten: watchers older than it resync. */
  readonly tombstoneFloor: number
  /**
   * The controller group's other models, keyed by name (only the "default" model's
   * context, which the bootstrap group holds, has entries): each is a Raft group of its
   * own hosted by the same controllers (agent/roles/model-hosts.ts).
   */
  readonly models: Table<ModelRegistryRecord>
  /** The model's v4 UUID (JUJU_MODEL_UUID), '' until set-model-uuid: the registry's for a hosted model, random for "default". */
  readonly uuid: string
  /**
   * Model configuration the user set (`model-config KEY=VALUE`), keys sorted; a key not
   * here reads as its default (runtime/model/model-config.ts). Every agent of the model sees it.
   */
  readonly config: Readonly<Record<string, ConfigValue>>
  /**
   * The agent binaries this model knows (runtime/model/agent-binaries.ts), keyed by
   * `agentBinaryKey`; absent, not empty, until the first is added, so a model without
   * any is the same value (and RaftSnapshot) it always was.
   */
  readonly agentBinaries?: Table<AgentBinaryRecord>
  /** Juju 3 secrets by id (runtime/model/secret-types.ts); absent in snapshots from before them. */
  readonly secrets?: Table<SecretRecord>
  /** Recent request ids (two generations, bounded) → the result they got. */
  readonly requests: { readonly current: Table<RequestRecord>, readonly previous: Table<RequestRecord> }
}

// ---------------------------------------------------------------------------------
// Deltas

/**
 * What one apply changed: an entity key and the revision. Keys:
 * `application/web`, `leadership/web`, `leader-settings/web`, `charm/<url>`,
 * `unit/web/0`, `unit/web/0/status`, `machine/1`, `machine/1/status`, `relation/3`,
 * `relation/3/settings/web/0`, `relation/3/app-settings/web`, `action/7`,
 * `controller-lease/singular`, `unit/web/0/ports`, `unit/web/0/state`, `model/config`.
 */
export interface Delta {
  readonly revision: number
  readonly key: string
  readonly removed?: true
}

// ---------------------------------------------------------------------------------
// Commands

export interface CommandBase {
  /** Chosen by the client; a retry with the same id (from the same proposer) applies once. */
  readonly requestId: string
  readonly proposer: Entity
}

export type ConfigSettings = Readonly<Record<string, ConfigValue>>
export type ConfigChanges = Readonly<Record<string, ConfigValue | null>>
/** Databag changes from one hook context: an empty value deletes the key (relation-set k=). */
export type SettingsChanges = Readonly<Record<string, string>>

/** One databag a hook wrote: the unit's own, or (`application: true`, leader only) its application's. */
export interface RelationSettingsChange {
  readonly relationId: RelationId
  readonly application?: boolean
  readonly settings: SettingsChanges
}

/** Charm state a hook changed: `set` (an empty value deletes, as `state-set k=` does) and `delete`; a key in both is refused. */
export interface CharmStateChanges {
  readonly set?: Readonly<Record<string, string>>
  readonly delete?: readonly string[]
}

export type ModelCommand = CommandBase & (
  | { readonly type: 'add-charm', readonly url: string, readonly hash: string, readonly metadata: CharmSummaryInput }
  | {
    readonly type: 'deploy'
    readonly application: ApplicationName
    readonly charm: string
    readonly config: ConfigSettings
    readonly constraints: Constraints
    readonly numUnits: number
    /** Machine for each unit in turn; units beyond the list get new machines. */
    readonly placement?: readonly MachineId[]
    readonly trust?: boolean
    /** `--storage NAME=[COUNT,][SIZE]`: sizes in MiB; a part left out takes the charm's default. */
    readonly storage?: Readonly<Record<string, StorageDirectiveInput>>
    /** `--resource NAME=PATH`: the content already in the controllers' store, by resource name. */
    readonly resources?: Readonly<Record<string, { readonly hash: string, readonly size: number }>>
  }
  /** `attach-resource`: new content for one of the application's file resources (in the store already). */
  | { readonly type: 'attach-resource', readonly application: ApplicationName, readonly resource: string, readonly hash: string, readonly size: number }
  | { readonly type: 'add-unit', readonly application: ApplicationName, readonly numUnits: number, readonly placement?: readonly MachineId[] }
  /** `force`: the unit leaves the model now, whether or not its agent answers (Juju's --force --no-wait). */
  | { readonly type: 'remove-unit', readonly unit: UnitName, readonly force?: boolean }
  | { readonly type: 'remove-application', readonly application: ApplicationName, readonly force?: boolean }
  | { readonly type: 'set-config', readonly application: ApplicationName, readonly config: ConfigChanges, readonly trust?: boolean }
  /** `app:endpoint` or `app` (the endpoint is inferred when exactly one pair matches). */
  | { readonly type: 'integrate', readonly a: string, readonly b: string }
  | { readonly type: 'remove-relation', readonly relationId: RelationId }
  | { readonly type: 'enter-scope', readonly unit: UnitName, readonly relationId: RelationId }
  | { readonly type: 'leave-scope', readonly unit: UnitName, readonly relationId: RelationId }
  | { readonly type: 'relation-settings', readonly unit: UnitName, readonly relationId: RelationId, readonly application?: boolean, readonly settings: SettingsChanges }
  | { readonly type: 'leader-settings', readonly application: ApplicationName, readonly unit: UnitName, readonly settings: SettingsChanges }
  /** `now` is stamped by the controller that proposes it, so replay decides the same way. */
  | { readonly type: 'claim-leadership', readonly application: ApplicationName, readonly unit: UnitName, readonly now: number, readonly durationMs: number }
  | { readonly type: 'extend-leadership', readonly application: ApplicationName, readonly unit: UnitName, readonly now: number, readonly durationMs: number }
  | { readonly type: 'release-leadership', readonly application: ApplicationName, readonly unit: UnitName }
  /** Only the controller named may propose these; `now` is its own clock reading. */
  | { readonly type: 'claim-controller-lease', readonly lease: string, readonly controller: string, readonly now: number, readonly durationMs: number }
  | { readonly type: 'release-controller-lease', readonly lease: string, readonly controller: string }
  /** The unit agent terminated (removed or dead): the unit leaves every scope and the model. */
  | { readonly type: 'unit-dead', readonly unit: UnitName }
  | { readonly type: 'set-unit-status', readonly unit: UnitName, readonly status: WorkloadStatus, readonly message: string, readonly now: number }
  | {
    readonly type: 'set-agent-status'
    readonly unit: UnitName
    readonly status: AgentStatus
    readonly message: string
    readonly data?: Readonly<Record<string, string | number>>
    readonly now: number
  }
  | { readonly type: 'resolved', readonly unit: UnitName, readonly mode: Exclude<ResolvedMode, 'none'> }
  | { readonly type: 'clear-resolved', readonly unit: UnitName }
  | { readonly type: 'enqueue-action', readonly unit: UnitName, readonly name: string, readonly parameters: Readonly<Record<string, unknown>> }
  | {
    readonly type: 'complete-action'
    readonly unit: UnitName
    readonly actionId: string
    readonly status: 'completed' | 'failed'
    readonly results?: Readonly<Record<string, unknown>>
    readonly message?: string
    readonly now?: number
  }
  | { readonly type: 'enqueue-command', readonly unit: UnitName, readonly commands: string }
  | { readonly type: 'start-task', readonly unit: UnitName, readonly taskId: string, readonly now?: number } // running from `now`
  /** The commands' outcome (absent from agents of before operations); `now` stamps the task's completion. */
  | {
    readonly type: 'complete-command'
    readonly unit: UnitName
    readonly commandId: string
    readonly outcome?: { readonly exitCode: number, readonly stdout: string, readonly stderr: string, readonly timedOut?: boolean }
    readonly now?: number
  }
  /** `run`/`exec`: one operation, a task per unit, every unit and parameter checked before any is queued (admins). */
  | { readonly type: 'enqueue-operation', readonly units: readonly UnitName[], readonly task: OperationTask, readonly now?: number }
  | { readonly type: 'storage-attached', readonly unit: UnitName, readonly storageId: StorageId, readonly location?: string }
  /** `add-storage UNIT NAME=COUNT` (admins) and `storage-add` (the unit's own agent). */
  | { readonly type: 'add-storage', readonly unit: UnitName, readonly name: string, readonly count: number, readonly sizeMiB?: number }
  /** `detach-storage ID`: the attachment becomes dying; the unit runs `-storage-detaching`. */
  | { readonly type: 'detach-storage', readonly unit: UnitName, readonly storageId: StorageId }
  /** The unit committed `-storage-detaching` (or never attached it): the attachment leaves the model. */
  | { readonly type: 'storage-detached', readonly unit: UnitName, readonly storageId: StorageId }
  /**
   * `privateKey`: with an ssh placement, the key file the controllers' ssh uses (Juju's
   * `add-machine --private-key`); `listen`/`advertise`: where its agent binds and what it
   * gives out (runtime/agent-network.ts), the provider's default when absent.
   */
  | { readonly type: 'add-machine', readonly constraints?: Constraints, readonly placement?: string, readonly privateKey?: string, readonly listen?: string, readonly advertise?: string }
  /**
   * The provisioner records how it will start the machine's instance (controllers only).
   * `renew`: a new start attempt after one whose agent registered but whose instance
   * failed and was released: a fresh secret for the same token, and the released agent's
   * binding dropped (Juju gives every StartInstance a fresh nonce for the same reason).
   */
  | { readonly type: 'set-machine-provisioning', readonly machine: MachineId, readonly token: string, readonly secret: string, readonly renew?: boolean }
  /** A new agent proved the machine's one-time secret: its peer id is now the machine's agent (controllers only). */
  | { readonly type: 'register-machine-agent', readonly machine: MachineId, readonly peer: string, readonly secret: string }
  | { readonly type: 'set-machine-instance', readonly machine: MachineId, readonly instanceId: string, readonly addresses: readonly string[] }
  | {
    readonly type: 'set-machine-status'
    readonly machine: MachineId
    readonly agentStatus?: MachineAgentStatus
    readonly instanceStatus?: MachineInstanceStatus
    readonly message: string
    readonly now: number
    /** The reporting agent is also a controller (`--role both`); once said it stays (MachineRecord.controller). */
    readonly controller?: true
  }
  /**
   * The leader's provisioner heard a machine's agent go silent (`present: false`) or come
   * back: the lost and down periods go into the status history (presence-commands.ts).
   */
  | { readonly type: 'record-agent-presence', readonly machine: MachineId, readonly present: boolean, readonly now: number }
  | { readonly type: 'remove-machine', readonly machine: MachineId, readonly force?: boolean }
  /** `retry-provisioning`: a machine in provisioning error gets a new start, whatever the error was (admins). */
  | { readonly type: 'retry-provisioning', readonly machine: MachineId }
  /** The provisioner stopped the instance of a dying machine with no units: it leaves the model. */
  | { readonly type: 'machine-dead', readonly machine: MachineId }
  | { readonly type: 'refresh', readonly application: ApplicationName, readonly charm: string, readonly force?: boolean }
  | { readonly type: 'expose', readonly application: ApplicationName }
  | { readonly type: 'unexpose', readonly application: ApplicationName }
  /** The model registry (only in the "default" model, which the bootstrap group holds). */
  | { readonly type: 'add-model', readonly name: string, readonly uuid: string }
  /** The model's own UUID, chosen by a controller (randomness stays out of the pure core); the first one applied stays. */
  | { readonly type: 'set-model-uuid', readonly uuid: string }
  | { readonly type: 'destroy-model', readonly name: string }
  | { readonly type: 'remove-model', readonly name: string }
  /**
   * The buffered effects of one hook that exited 0 (Juju's CommitHookChanges): all of
   * them apply or, if any is refused, none. Ports are opened first, then closed, as
   * Juju's state applies a unit's pending changes.
   */
  | {
    readonly type: 'commit-hook-changes'
    readonly unit: UnitName
    readonly relationSettings?: readonly RelationSettingsChange[]
    readonly openPorts?: readonly PortRangeChange[]
    readonly closePorts?: readonly PortRangeChange[]
    readonly charmState?: CharmStateChanges
    /** secret-add, secret-set, secret-grant, secret-revoke and secret-remove of the hook. */
    readonly secrets?: SecretHookChanges
    /**
     * The hook run's key (operation-steps.ts hookCommitKey): a commit whose key equals the
     * unit's last applied one is that run's commit again (the hook ran again after a crash
     * before its `done` was saved) and changes nothing.
     */
    readonly hookRun?: string
  }
  /** `application-version-set`: immediate, not buffered with the hook's other changes. */
  | { readonly type: 'set-workload-version', readonly unit: UnitName, readonly version: string }
  /** `status-set --application`: only the unit holding the application's lease may set it. */
  | { readonly type: 'set-application-status', readonly unit: UnitName, readonly status: WorkloadStatus, readonly message: string, readonly now: number }
  /** `model-config KEY=VALUE … --reset KEY`: a null value resets the key to its default. */
  | { readonly type: 'set-model-config', readonly config: ConfigChanges }
  /**
   * Several commands in one Raft entry (apply/batch-commands.ts): a controller proposes a
   * machine agent's batch this way so that it pays one entry, one apply pass and one
   * change notice. Each command is applied in order with its own request id, dedup and
   * result; one refused changes nothing of the others.
   */
  | { readonly type: 'apply-batch', readonly commands: readonly ModelCommand[] }
  | AgentVersionCommand
  | SecretCommand
)

export type ModelCommandType = ModelCommand['type']
export type CommandOf<T extends ModelCommandType> = Extract<ModelCommand, { type: T }>

/** Every command type, in a fixed order (the store has one event per type). */
export const modelCommandTypes = [
  'add-charm', 'deploy', 'add-unit', 'remove-unit', 'remove-application', 'set-config',
  'integrate', 'remove-relation', 'enter-scope', 'leave-scope', 'relation-settings',
  'leader-settings', 'claim-leadership', 'extend-leadership', 'release-leadership',
  'unit-dead', 'set-unit-status', 'set-agent-status', 'resolved', 'clear-resolved',
  'enqueue-action', 'complete-action', 'enqueue-command', 'complete-command',
  'storage-attached', 'add-storage', 'detach-storage', 'storage-detached', 'add-machine', 'set-machine-provisioning', 'register-machine-agent', 'set-machine-instance', 'set-machine-status',
  'record-agent-presence',
  'remove-machine', 'machine-dead', 'refresh', 'expose', 'unexpose', 'add-model', 'destroy-model', 'remove-model',
  'set-model-uuid', 'claim-controller-lease', 'release-controller-lease', 'commit-hook-changes', 'set-workload-version', 'set-application-status',
  'set-model-config', 'attach-resource', 'enqueue-operation', 'retry-provisioning', ...agentVersionCommandTypes, ...secretCommandTypes, 'start-task',
  'apply-batch'
] as const satisfies readonly ModelCommandType[]

/** Where a command sits in the Raft log. */
export interface ApplyMeta {
  readonly index: number
  readonly term?: number
}

export interface ApplyOutcome {
  readonly context: ModelContext
  readonly deltas: readonly Delta[]
  readonly result: CommandResult
  /** The request id was seen before: the original result is returned and nothing changed. */
  readonly duplicate: boolean
}
