/**
 * An in-memory HookContext for hook-tool tests. It keeps what the controller has
 * (committed relation bags, ports, charm state) apart from what this hook has written
 * but not yet flushed, and records every effect as `buffered` or `immediate`
 * (juju-semantics §4.3). `flush()` commits the buffered effects as a successful hook
 * would; `discard()` drops them as a failed one would.
 */
import type {
  ActionContext, CloudSpec, ContextRelation, CurrentRelation, GoalState, HookContext, LogLevel, NetworkInfo,
  OpenedPort, PortRange, StatusInfo
} from '../../agent/hook-tools/hook-context.ts'
import { HookToolError } from '../../agent/hook-tools/hook-context.ts'
import { portsSeenByHook, type PortChange } from '../../agent/hook-tools/pending-ports.ts'
import type { ConfigValue } from '../../runtime/model/model-types.ts'

export interface FakeRelation {
  id: number
  endpoint: string
  interface?: string
  remoteApplication: string
  /** Remote units as relation-list shows them. */
  units?: string[]
  /** Committed bags by unit or application name (own unit and application included). */
  bags?: Record<string, Record<string, string>>
  /** A broken relation is no longer listed by `relations()`. */
  broken?: boolean
}

export interface FakeHookContextInit {
  unit?: string
  kind?: 'hook' | 'action' | 'command'
  name?: string
  relation?: CurrentRelation
  storageId?: string
  action?: ActionContext
  config?: Record<string, ConfigValue | null>
  relations?: FakeRelation[]
  leader?: boolean
  leaderSettings?: Record<string, string>
  /** Ports committed before the hook. */
  ports?: OpenedPort[]
  status?: StatusInfo
  applicationStatus?: StatusInfo
  unitStatuses?: Record<string, StatusInfo>
  charmState?: Record<string, string>
  storage?: Record<string, { kind: 'filesystem' | 'block', location: string }>
  network?: Record<string, NetworkInfo>
  addresses?: { 'private-address': string, 'public-address': string }
  goalState?: GoalState
  /** The model's cloud; undefined: the application is not trusted. */
  cloudSpec?: CloudSpec
  modelUuid?: string
  /** Resource name → the path resource-get prints; a name left out is not found. */
  resources?: Record<string, string>
}

export type FakeEffect =
  | { kind: 'relation-settings', relationId: number, application: boolean, changes: Record<string, string> }
  | { kind: 'open-port' | 'close-port', port: PortRange, endpoints: string[] }
  | { kind: 'state-set', changes: Record<string, string> }
  | { kind: 'state-delete', keys: string[] }
  | { kind: 'reboot', now: boolean }
  | { kind: 'status', status: string, message: string, application: boolean }
  | { kind: 'log', level: LogLevel, message: string }
  | { kind: 'application-version', version: string }
  | { kind: 'leader-settings', changes: Record<string, string> }
  | { kind: 'action-results', results: Record<string, unknown> }
  | { kind: 'action-fail', message: string }
  | { kind: 'action-log', message: string }

const clone = <T>(value: T): T => structuredClone(value)

/** Applies string changes to a bag; an empty value deletes the key. */
function applyChanges (bag: Record<string, string>, changes: Record<string, string>): void {
  for (const [key, value] of Object.entries(changes)) {
    if (value === '') delete bag[key]
    else bag[key] = value
  }
}

/** Merges action results: maps merge key by key, anything else replaces. */
function mergeResults (into: Record<string, unknown>, from: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(from)) {
    const existing = into[key]
    if (value !== null && typeof value === 'object' && !Array.isArray(value) &&
        existing !== null && typeof existing === 'object' && !Array.isArray(existing)) {
      mergeResults(existing as Record<string, unknown>, value as Record<string, unknown>)
    } else {
      into[key] = clone(value)
    }
  }
}

function samePort (a: PortRange, b: PortRange): boolean {
  return a.protocol === b.protocol && a.from === b.from && a.to === b.to
}

export class FakeHookContext implements HookContext {
  readonly unit: string
  readonly application: string
  readonly kind: 'hook' | 'action' | 'command'
  readonly name: string
  readonly relation: CurrentRelation | undefined
  readonly storageId: string | undefined
  readonly action: ActionContext | undefined

  leader: boolean
  configValues: Record<string, ConfigValue | null>
  relationList: FakeRelation[]
  leaderBag: Record<string, string>
  /** Ports as the controller has them. */
  committedPorts: OpenedPort[]
  unitStatus: StatusInfo
  applicationStatusInfo: StatusInfo
  unitStatuses: Record<string, StatusInfo>
  /** Charm state as the controller has it. */
  committedState: Record<string, string>
  storageInstances: Record<string, { kind: 'filesystem' | 'block', location: string }>
  /** What `storage-add` asked for, by storage name. */
  readonly storageAdds: Record<string, number> = {}
  network: Record<string, NetworkInfo>
  addresses: { 'private-address': string, 'public-address': string }
  workloadVersion = ''
  actionResults: Record<string, unknown> = {}
  actionFailure: string | undefined
  actionMessages: string[] = []
  logs: Array<{ level: LogLevel, message: string }> = []
  reboot: 'none' | 'after-hook' | 'now' = 'none'
  goal: GoalState
  cloud: CloudSpec | undefined
  modelUuid: string
  resources: Record<string, string>

  /** Effects the unit agent would flush only if the hook exits 0. */
  buffered: FakeEffect[] = []
  /** Effects that took place at once. */
  immediate: FakeEffect[] = []
  /** Every method call, in order, for tests that care what was asked. */
  calls: string[] = []

  private pendingState: Record<string, string | null> = {}
  private pendingBags = new Map<string, Record<string, string>>()

  constructor (init: FakeHookContextInit = {}) {
    this.unit = init.unit ?? 'wordpress/0'
    this.application = this.unit.slice(0, this.unit.indexOf('/'))
    this.kind = init.kind ?? (init.action !== undefined ? 'action' : 'hook')
    this.name = init.name ?? init.action?.name ?? 'install'
    this.relation = init.relation
    this.storageId = init.storageId
    this.action = init.action
    this.leader = init.leader ?? false
    this.configValues = clone(init.config ?? {})
    this.relationList = clone(init.relations ?? [])
    this.leaderBag = clone(init.leaderSettings ?? {})
    this.committedPorts = clone(init.ports ?? [])
    this.unitStatus = clone(init.status ?? { status: 'unknown', message: '', data: {} })
    this.applicationStatusInfo = clone(init.applicationStatus ?? { status: 'unknown', message: '', data: {} })
    this.unitStatuses = clone(init.unitStatuses ?? {})
    this.committedState = clone(init.charmState ?? {})
    this.storageInstances = clone(init.storage ?? {})
    this.network = clone(init.network ?? {})
    this.addresses = clone(init.addresses ?? { 'private-address': '10.0.0.1', 'public-address': '203.0.113.1' })
    this.goal = clone(init.goalState ?? { units: {}, relations: {} })
    this.cloud = clone(init.cloudSpec)
    this.modelUuid = init.modelUuid ?? 'deadbeef-0bad-400d-8000-4b1d0d06f00d'
    this.resources = clone(init.resources ?? {})
  }

  // -------------------------------------------------------------------------------
  // Test helpers.

  /** The committed bag of `name` (unit or application) in relation `id`. */
  committedBag (id: number, name: string): Record<string, string> | undefined {
    return this.relationList.find(relation => relation.id === id)?.bags?.[name]
  }

  /** Commits the buffered effects, as the agent does after a hook exits 0. */
  flush (): void {
    for (const effect of this.buffered) {
      switch (effect.kind) {
        case 'relation-settings': {
          const relation = this.relationList.find(r => r.id === effect.relationId)
          if (relation === undefined) break
          const name = effect.application ? this.application : this.unit
          relation.bags ??= {}
          const bag = relation.bags[name] ?? {}
          applyChanges(bag, effect.changes)
          relation.bags[name] = bag
          break
        }
        case 'open-port':
          for (const endpoint of effect.endpoints) {
            const existing = this.committedPorts.find(p => samePort(p, effect.port) && p.endpoints.includes(endpoint))
            if (existing === undefined) this.committedPorts.push({ ...effect.port, endpoints: [endpoint] })
          }
          break
        case 'close-port':
          this.committedPorts = this.committedPorts
            .map(p => samePort(p, effect.port) ? { ...p, endpoints: p.endpoints.filter(e => !effect.endpoints.includes(e)) } : p)
            .filter(p => p.endpoints.length > 0)
          break
        case 'state-set': applyChanges(this.committedState, effect.changes); break
        case 'state-delete': for (const key of effect.keys) delete this.committedState[key]; break
        case 'reboot': break
      }
    }
    this.discard()
  }

  /** Drops the buffered effects, as the agent does after a hook fails. */
  discard (): void {
    this.buffered = []
    this.pendingState = {}
    this.pendingBags.clear()
  }

  private relationById (id: number): FakeRelation {
    const relation = this.relationList.find(r => r.id === id)
    if (relation === undefined) throw new HookToolError(1, 'relation not found')
    return relation
  }

  // -------------------------------------------------------------------------------
  // HookContext.

  async config (): Promise<Record<string, ConfigValue | null>> {
    this.calls.push('config')
    return clone(this.configValues)
  }

  async relations (): Promise<ContextRelation[]> {
    this.calls.push('relations')
    return this.relationList
      .filter(relation => relation.broken !== true)
      .map(({ id, endpoint, remoteApplication, interface: iface }) => ({ id, endpoint, remoteApplication, interface: iface ?? endpoint }))
  }

  async relationUnits (relationId: number): Promise<string[]> {
    this.calls.push(`relationUnits ${relationId}`)
    return [...this.relationById(relationId).units ?? []].sort()
  }

  async relationSettings (relationId: number, target: { unit: string } | { application: string }): Promise<Record<string, string> | undefined> {
    this.calls.push(`relationSettings ${relationId} ${'unit' in target ? target.unit : target.application}`)
    const relation = this.relationById(relationId)
    const name = 'unit' in target ? target.unit : target.application
    if ('application' in target && name === this.application && !this.leader) throw new HookToolError(1, 'permission denied')
    const committed = relation.bags?.[name]
    const own = name === this.unit || name === this.application
    if (!own) return committed === undefined ? undefined : clone(committed)
    const bag = clone(committed ?? {})
    applyChanges(bag, this.pendingBags.get(`${relationId} ${name}`) ?? {})
    return bag
  }

  async setRelationSettings (relationId: number, application: boolean, changes: Record<string, string>): Promise<void> {
    this.calls.push(`setRelationSettings ${relationId} ${application}`)
    this.relationById(relationId)
    if (application && !this.leader) throw new HookToolError(1, 'cannot write relation settings')
    const key = `${relationId} ${application ? this.application : this.unit}`
    this.pendingBags.set(key, { ...this.pendingBags.get(key), ...changes })
    this.buffered.push({ kind: 'relation-settings', relationId, application, changes: { ...changes } })
  }

  async unitAddress (which: 'private-address' | 'public-address'): Promise<string> {
    this.calls.push(`unitAddress ${which}`)
    return this.addresses[which]
  }

  async networkInfo (binding: string, relationId: number | undefined): Promise<NetworkInfo> {
    this.calls.push(`networkInfo ${binding} ${relationId ?? '-'}`)
    const info = this.network[binding]
    if (info === undefined) throw new HookToolError(1, `no network config found for binding "${binding}"`)
    return clone(info)
  }

  async openedPorts (): Promise<OpenedPort[]> {
    this.calls.push('openedPorts')
    const changes: PortChange[] = []
    for (const effect of this.buffered) {
      if (effect.kind === 'open-port' || effect.kind === 'close-port') changes.push({ op: effect.kind === 'open-port' ? 'open' : 'close', port: effect.port, endpoints: effect.endpoints })
    }
    return portsSeenByHook(this.committedPorts, changes)
  }

  async relationModelUuid (relationId: number): Promise<string> {
    this.calls.push(`relationModelUuid ${relationId}`)
    this.relationById(relationId)
    return this.modelUuid
  }

  async goalState (): Promise<GoalState> {
    this.calls.push('goalState')
    return clone(this.goal)
  }

  async cloudSpec (): Promise<CloudSpec> {
    this.calls.push('cloudSpec')
    if (this.cloud === undefined) throw new Error('permission denied')
    return clone(this.cloud)
  }

  async resourcePath (name: string): Promise<string> {
    this.calls.push(`resourcePath ${name}`)
    const path = this.resources[name]
    if (path === undefined) throw new Error(`resource ${JSON.stringify(name)} not found`)
    return path
  }

  async openPort (port: PortRange, endpoints: string[]): Promise<void> {
    this.calls.push('openPort')
    this.buffered.push({ kind: 'open-port', port: { ...port }, endpoints: [...endpoints] })
  }

  async closePort (port: PortRange, endpoints: string[]): Promise<void> {
    this.calls.push('closePort')
    this.buffered.push({ kind: 'close-port', port: { ...port }, endpoints: [...endpoints] })
  }

  async setStatus (status: 'maintenance' | 'blocked' | 'waiting' | 'active', message: string, application: boolean): Promise<void> {
    this.calls.push(`setStatus ${status}`)
    if (application && !this.leader) throw new HookToolError(1, 'this unit is not the leader')
    const info = { status, message, data: {} }
    if (application) this.applicationStatusInfo = info
    else this.unitStatus = info
    this.immediate.push({ kind: 'status', status, message, application })
  }

  async status (application: boolean): Promise<StatusInfo & { units?: Record<string, StatusInfo> }> {
    this.calls.push(`status ${application}`)
    if (!application) return clone(this.unitStatus)
    if (!this.leader) throw new HookToolError(1, 'finding application status: this unit is not the leader')
    return { ...clone(this.applicationStatusInfo), units: clone(this.unitStatuses) }
  }

  async log (level: LogLevel, message: string): Promise<void> {
    this.calls.push('log')
    this.logs.push({ level, message })
    this.immediate.push({ kind: 'log', level, message })
  }

  async setApplicationVersion (version: string): Promise<void> {
    this.calls.push('setApplicationVersion')
    this.workloadVersion = version
    this.immediate.push({ kind: 'application-version', version })
  }

  async isLeader (): Promise<boolean> {
    this.calls.push('isLeader')
    return this.leader
  }

  async leaderSettings (): Promise<Record<string, string>> {
    this.calls.push('leaderSettings')
    return clone(this.leaderBag)
  }

  async setLeaderSettings (changes: Record<string, string>): Promise<void> {
    this.calls.push('setLeaderSettings')
    if (!this.leader) throw new HookToolError(1, 'cannot write leadership settings: cannot write settings: not the leader')
    applyChanges(this.leaderBag, changes)
    this.immediate.push({ kind: 'leader-settings', changes: { ...changes } })
  }

  private requireAction (): void {
    if (this.action === undefined) throw new HookToolError(1, 'not running an action')
  }

  async setActionResults (results: Record<string, unknown>): Promise<void> {
    this.calls.push('setActionResults')
    this.requireAction()
    mergeResults(this.actionResults, results)
    this.immediate.push({ kind: 'action-results', results: clone(results) })
  }

  async failAction (message: string): Promise<void> {
    this.calls.push('failAction')
    this.requireAction()
    this.actionFailure = message
    this.immediate.push({ kind: 'action-fail', message })
  }

  async actionLog (message: string): Promise<void> {
    this.calls.push('actionLog')
    this.requireAction()
    this.actionMessages.push(message)
    this.immediate.push({ kind: 'action-log', message })
  }

  async charmState (): Promise<Record<string, string>> {
    this.calls.push('charmState')
    const state = clone(this.committedState)
    for (const [key, value] of Object.entries(this.pendingState)) {
      if (value === null || value === '') delete state[key]
      else state[key] = value
    }
    return state
  }

  async setCharmState (changes: Record<string, string>): Promise<void> {
    this.calls.push('setCharmState')
    Object.assign(this.pendingState, changes)
    this.buffered.push({ kind: 'state-set', changes: { ...changes } })
  }

  async deleteCharmState (keys: string[]): Promise<void> {
    this.calls.push('deleteCharmState')
    for (const key of keys) this.pendingState[key] = null
    this.buffered.push({ kind: 'state-delete', keys: [...keys] })
  }

  async storageIds (name: string | undefined): Promise<string[]> {
    this.calls.push('storageIds')
    return Object.keys(this.storageInstances)
      .filter(id => name === undefined || id.slice(0, id.lastIndexOf('/')) === name)
      .sort()
  }

  async addStorage (counts: Record<string, number>): Promise<void> {
    this.calls.push('addStorage')
    for (const [name, count] of Object.entries(counts)) this.storageAdds[name] = (this.storageAdds[name] ?? 0) + count
  }

  async storage (id: string): Promise<{ kind: 'filesystem' | 'block', location: string } | undefined> {
    this.calls.push(`storage ${id}`)
    const instance = this.storageInstances[id]
    return instance === undefined ? undefined : { ...instance }
  }

  async requestReboot (now: boolean): Promise<void> {
    this.calls.push('requestReboot')
    this.reboot = now ? 'now' : 'after-hook'
    this.buffered.push({ kind: 'reboot', now })
  }
}

/**
 * Runs a tool against `context` and returns its result, failing the test if the tool
 * asked for stdin (pass `stdin` for tools that read it).
 */
export async function runFake (
  context: HookContext, tool: string, args: readonly string[] = [], io: { cwd?: string, stdin?: string } = {}
): Promise<{ code: number, stdout: string, stderr: string }> {
  const { runTool } = await import('../../agent/hook-tools/run-tool.ts')
  const result = await runTool(context, tool, args, {
    cwd: io.cwd ?? '/var/lib/juju/agents/unit-wordpress-0/charm',
    ...(io.stdin === undefined ? {} : { stdin: new TextEncoder().encode(io.stdin) })
  })
  if ('needsStdin' in result) throw new Error(`${tool} asked for stdin`)
  return result
}
