/**
 * What the hook tools (juju-semantics §5) see of a unit while one hook, action or
 * `juju exec` command runs: the contract between the tool commands
 * (agent/hook-tools/commands/) and the unit agent that backs them
 * (agent/hook-tools/unit-hook-context.ts).
 *
 * Semantics of §4.3: relation settings, ports and charm state written here are buffered
 * in the context and committed only when the hook exits 0 (the agent flushes them, then
 * commits the hook); status, logs, leader settings, the workload version and action
 * results take effect at once. Reads see the context's own buffered writes (a unit reads
 * its own bag as written so far), and remote data as fetched once per hook.
 *
 * Every method may need the controller, so reads and immediate writes are async. A
 * refusal (not the leader, unknown relation) is thrown as a `HookToolError` carrying the
 * exit code the tool must return and the message after `ERROR `.
 */
import type { GoalState } from '../../runtime/model/goal-state.ts'
import type { ConfigValue } from '../../runtime/model/model-types.ts'
import type { HookSecrets } from './hook-secrets.ts'

export type { GoalState, GoalStatus } from '../../runtime/model/goal-state.ts'

export type ExitCode = 0 | 1 | 2

/** A tool failure: printed as `ERROR <message>` on stderr, exit `code`. */
export class HookToolError extends Error {
  override name = 'HookToolError'
  readonly code: 1 | 2
  constructor (code: 1 | 2, message: string) {
    super(message)
    this.code = code
  }
}

export type WorkloadStatusValue = 'maintenance' | 'blocked' | 'waiting' | 'active' | 'unknown' | 'error' | 'terminated'

export interface StatusInfo {
  status: WorkloadStatusValue
  message: string
  data: Record<string, unknown>
}

/** One relation the unit takes part in and that is not broken. */
export interface ContextRelation {
  id: number
  endpoint: string
  interface: string
  /** The application at the other end (this application for a peer relation). */
  remoteApplication: string
}

/** The relation the current hook is about (relation hooks only). */
export interface CurrentRelation {
  id: number
  endpoint: string
  /** The remote unit of the hook; '' for -created, -broken and application-level -changed. */
  remoteUnit: string
  remoteApplication: string
  /** In -departed: the unit that left. */
  departingUnit?: string
}

/** A port or range, as open-port takes it: `80`, `80/tcp`, `1000-2000/udp`, `icmp`. */
export interface PortRange {
  protocol: 'tcp' | 'udp' | 'icmp'
  /** Absent for icmp. */
  from?: number
  to?: number
}

export interface OpenedPort extends PortRange {
  /** Endpoints the port is opened for; ['*'] for all. */
  endpoints: string[]
}

export interface NetworkInfo {
  bindAddresses: Array<{ macAddress: string, interfaceName: string, addresses: Array<{ hostname: string, value: string, cidr: string }> }>
  egressSubnets: string[]
  ingressAddresses: string[]
}

export interface ActionContext {
  name: string
  id: string
  /** Params with schema defaults filled in. */
  params: Record<string, unknown>
}

/**
 * What `credential-get` prints: the model's cloud, as Juju's CloudSpec params carry it.
 * cantrip's clouds (the local and manual providers) hold no secret, so the credential is
 * Juju's `empty` auth type with no attributes.
 */
export interface CloudSpec {
  type: string
  name: string
  region: string
  credential: { authType: string, attributes: Record<string, string> }
  isControllerCloud: boolean
}

export type LogLevel = 'TRACE' | 'DEBUG' | 'INFO' | 'WARNING' | 'ERROR' | 'CRITICAL'

export interface HookContext {
  readonly unit: string
  readonly application: string
  /** `hook`, `action` or `command` (juju exec); action-* tools exist only in actions. */
  readonly kind: 'hook' | 'action' | 'command'
  /** The hook name (`db-relation-changed`), the action name, or `juju-exec`. */
  readonly name: string
  readonly relation: CurrentRelation | undefined
  /** The storage instance of a storage hook (`data/0`). */
  readonly storageId: string | undefined
  readonly action: ActionContext | undefined
  /** The secret-* tools' view (agent/hook-tools/hook-secrets.ts); absent where secrets are not served. */
  readonly secrets?: HookSecrets

  // Configuration
  /** Every option: the value set by the user, else the charm default, else null. */
  config (): Promise<Record<string, ConfigValue | null>>

  // Relations
  relations (): Promise<ContextRelation[]>
  /** Remote units currently in the relation as this hook sees them (§5.3 relation-list), sorted. */
  relationUnits (relationId: number): Promise<string[]>
  /**
   * A settings bag: `unit` names a unit (own unit: the local, possibly uncommitted bag),
   * `application` an application bag (own application: leader only, else exit 1).
   * Undefined when the bag does not exist (an unknown unit).
   */
  relationSettings (relationId: number, target: { unit: string } | { application: string }): Promise<Record<string, string> | undefined>
  /** Buffers changes to the own unit bag, or the own application bag (`application: true`, leader only). An empty value deletes. */
  setRelationSettings (relationId: number, application: boolean, changes: Record<string, string>): Promise<void>

  // Network
  unitAddress (which: 'private-address' | 'public-address'): Promise<string>
  networkInfo (binding: string, relationId: number | undefined): Promise<NetworkInfo>

  /** The model uuid of the application at the other end of the relation (this model's, for a same-model relation). */
  relationModelUuid (relationId: number): Promise<string>

  // Ports (buffered)
  /**
   * The unit's ports as this hook sees them: those committed before it, with this hook's
   * pending opens added and its pending closes taken away (Juju 3's
   * portRangeChangeRecorder.OpenedUnitPortRanges; see pending-ports.ts).
   */
  openedPorts (): Promise<OpenedPort[]>
  openPort (port: PortRange, endpoints: string[]): Promise<void>
  closePort (port: PortRange, endpoints: string[]): Promise<void>

  // Status, log, version (immediate)
  setStatus (status: 'maintenance' | 'blocked' | 'waiting' | 'active', message: string, application: boolean): Promise<void>
  /** The unit's status; `application: true` (leader only) the application's, with `units`. */
  status (application: boolean): Promise<StatusInfo & { units?: Record<string, StatusInfo> }>
  log (level: LogLevel, message: string): Promise<void>
  setApplicationVersion (version: string): Promise<void>

  // Leadership
  isLeader (): Promise<boolean>
  leaderSettings (): Promise<Record<string, string>>
  /** Immediate; leader only (else HookToolError 1). An empty value deletes. */
  setLeaderSettings (changes: Record<string, string>): Promise<void>

  // Actions (action contexts only)
  setActionResults (results: Record<string, unknown>): Promise<void>
  failAction (message: string): Promise<void>
  actionLog (message: string): Promise<void>

  // Charm state (set/delete buffered)
  charmState (): Promise<Record<string, string>>
  setCharmState (changes: Record<string, string>): Promise<void>
  deleteCharmState (keys: string[]): Promise<void>

  // Storage
  /** Storage ids attached to the unit, optionally of one storage name. */
  storageIds (name: string | undefined): Promise<string[]>
  storage (id: string): Promise<{ kind: 'filesystem' | 'block', location: string } | undefined>
  /** `storage-add`: instances to add by storage name, asked for when the hook succeeds. */
  addStorage (counts: Record<string, number>): Promise<void>

  // Model-wide reads
  /** `goal-state`: the units and relations the model intends for this unit's application. */
  goalState (): Promise<GoalState>
  /** `credential-get`: the model's cloud; an application without trust is refused (`permission denied`). */
  cloudSpec (): Promise<CloudSpec>
  /**
   * `resource-get`: the path of the resource's file on the unit, fetched from the
   * controllers when the unit's copy is missing or not the application's current one.
   * Throws an Error whose message follows Juju's (`resource "x" not found`, ...).
   */
  resourcePath (name: string): Promise<string>

  /** `juju-reboot`: after the hook succeeds, or `now` (kill and re-queue the hook). */
  requestReboot (now: boolean): Promise<void>
}
