/**
 * The HookContext of one hook, action or `juju exec` run, backed by the controller
 * (juju-semantics §4.3): reads come from the model this agent last saw, the unit's own
 * relation bags and charm state include what the run has written so far; relation
 * settings, ports and charm state are buffered and go to the controller in ONE
 * `commit-hook-changes` command when the hook exits 0 (`flush`), so they apply together
 * or not at all; status, logs, leader settings, the workload version and action results
 * take effect at once.
 */
import { fetchCharmArchive } from './charm-fetch.ts'
import type { LocalState } from '../../actors/unit/local-state.ts'
import type { ApplicationStatusReply, StatusEntry } from '../../runtime/model/application-status.ts'
import { applicationOf } from '../../runtime/ids.ts'
import { believesLeader } from '../../runtime/model/leases.ts'
import { readerOf } from '../../runtime/model/model-draft.ts'
import { CommandProposer, type ModelCommandBody } from '../../runtime/model/command-proposer.ts'
import type { CommandResult, ConfigValue, ModelCommand, ModelContext, RelationSettingsChange, UnitRecord } from '../../runtime/model/model-types.ts'
import { keys } from '../../runtime/model/keys.ts'
import type { SecretHookChanges } from '../../runtime/model/secret-types.ts'
import { tableGet } from '../../runtime/model/table.ts'
import type { Logger, LogLevel as RuntimeLogLevel } from '../../runtime/logger.ts'
import type { ApiRequests, GoalStateReply, SecretContentReply } from '../../actors/controller/api-requests.ts'
import { UnitHookSecrets } from './unit-hook-secrets.ts'
import { goalStateOf } from '../../runtime/model/goal-state.ts'
import { portsSeenByHook, type PortChange } from '../hook-tools/pending-ports.ts'
import { localCloudSpec } from './local-cloud-spec.ts'
import { unitResourcePath } from './unit-resources.ts'
import {
  HookToolError, type ActionContext, type CloudSpec, type GoalState, type ContextRelation, type CurrentRelation, type HookContext, type LogLevel,
  type NetworkInfo, type OpenedPort, type PortRange, type StatusInfo, type WorkloadStatusValue
} from '../hook-tools/hook-context.ts'

/** What a unit agent needs of the controller. */
export interface UnitControllerApi {
  /** The latest model this agent has seen. */
  model (): ModelContext
  submit (command: ModelCommand): Promise<CommandResult>
  /**
   * `status-get --application` for `unit`, its application's leader: asked of the
   * controller, which checks the lease (the machine's view carries only its own units).
   */
  applicationStatus (unit: string): Promise<ApplicationStatusReply>
  /** This agent's clock, for leadership belief and status stamps. */
  now (): number
  /**
   * `goal-state` for `unit`, from the whole model at a controller (a machine's view holds
   * only its own units). Without it the goal state is read from `model()`, which test
   * controllers serve whole.
   */
  goalState?: (unit: string) => Promise<GoalStateReply>
  /** Content by address from the controllers' chunked store (charms and resources share it). */
  charmManifest?: (hash: string) => Promise<unknown>
  charmChunk?: (hash: string, index: number) => Promise<Uint8Array | undefined>
  /** `secret-get`'s content, from a controller (actors/controller/api-secrets.ts). */
  secretContent?: (request: Omit<ApiRequests['secret-content'], 'op'>) => Promise<SecretContentReply>
}

export interface UnitHookContextOptions {
  controller: UnitControllerApi
  unit: string
  kind: HookContext['kind']
  name: string
  relation?: CurrentRelation
  storageId?: string
  action?: ActionContext
  /** The uniter's state as the run starts: the relation members its hooks have seen. */
  local: LocalState
  logger: Logger
  /** Unique per run: request ids of immediate writes are built from it. */
  contextId: string
  /**
   * A hook run's commit key (operation-steps.ts hookCommitKey), the same each time the
   * same run is started again: the controller applies one commit per key.
   */
  commitKey?: string
  /** `<agent dir>/resources`, where resource-get keeps the unit's copies; default: a `resources` dir beside nothing (resource-get fails). */
  resourcesDir?: string
  /**
   * `juju-reboot --now`: kills the running hook; resolves once it has ended, so the tool
   * never returns to a hook that goes on running (Juju kills the hook under the tool).
   */
  rebootNow?: () => Promise<void>
}

interface BufferedPorts { open: OpenedPort[], close: OpenedPort[] }

function samePortChange (a: OpenedPort, b: OpenedPort): boolean {
  return a.protocol === b.protocol && a.from === b.from && a.to === b.to &&
    [...a.endpoints].sort().join(',') === [...b.endpoints].sort().join(',')
}

const logLevels: Record<LogLevel, RuntimeLogLevel> = {
  TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARNING: 'warning', ERROR: 'error', CRITICAL: 'critical'
}

export class UnitHookContext implements HookContext {
  readonly unit: string
  readonly application: string
  readonly kind: HookContext['kind']
  readonly name: string
  readonly relation: CurrentRelation | undefined
  readonly storageId: string | undefined
  readonly action: ActionContext | undefined
  readonly secrets: UnitHookSecrets
  readonly #o: UnitHookContextOptions
  /** relation id → own unit or application bag changes; '' deletes. */
  readonly #unitSettings = new Map<number, Record<string, string>>()
  readonly #appSettings = new Map<number, Record<string, string>>()
  #ports: BufferedPorts = { open: [], close: [] }
  /** Every open-port and close-port call in order: what opened-ports shows on top of the committed ports. */
  readonly #portCalls: PortChange[] = []
  #unitStatusSet = false
  /**
   * The unit status this run set: status-get answers with it at once, as Juju's does (its
   * status-set and status-get are both API calls on the controller's state), rather than
   * with this machine's view of the model, which the change reaches only later.
   */
  #ownStatus: StatusInfo | undefined
  readonly #state: { set: Record<string, string>, deleted: Set<string> } = { set: {}, deleted: new Set() }
  /** `storage-add` counts by storage name, asked for at flush. */
  readonly #storageAdds = new Map<string, number>()
  /** Immediate writes (status, leader settings) and the commit: request ids `<contextId>/<n>`. */
  readonly #proposer: CommandProposer
  /** Remote bags as first read in this run (settings key → values): later reads see the same (§5.3). */
  readonly #remoteBags = new Map<string, Record<string, string> | undefined>()
  /** Action results and failure, reported when the action ends. */
  readonly actionResults: Record<string, unknown> = {}
  actionFailure: string | undefined
  rebootRequested: 'after' | 'now' | undefined

  constructor (options: UnitHookContextOptions) {
    this.#o = options
    this.unit = options.unit
    this.#proposer = new CommandProposer({ proposer: { kind: 'unit', name: options.unit }, requestPrefix: options.contextId })
    this.application = applicationOf(options.unit)
    this.kind = options.kind
    this.name = options.name
    this.relation = options.relation
    this.storageId = options.storageId
    this.action = options.action
    const controller = options.controller
    this.secrets = new UnitHookSecrets({
      unit: options.unit,
      application: this.application,
      model: () => controller.model(),
      isLeader: async () => await this.isLeader(),
      ...(controller.secretContent === undefined ? {} : { secretContent: controller.secretContent.bind(controller) })
    })
  }

  // -------------------------------------------------------------------------------
  // Reads

  async config (): Promise<Record<string, ConfigValue | null>> {
    const model = this.#model()
    const app = readerOf(model).application(this.application)
    const charm = app === undefined ? undefined : readerOf(model).charm(app.charm)
    const out: Record<string, ConfigValue | null> = {}
    for (const [name, option] of Object.entries(charm?.metadata.config ?? {})) out[name] = option.default
    for (const [name, value] of Object.entries(app?.config ?? {})) out[name] = value
    return out
  }

  async relations (): Promise<ContextRelation[]> {
    const reader = readerOf(this.#model())
    const out: ContextRelation[] = []
    for (const local of Object.values(this.#o.local.relations)) {
      if (local.implicit) continue
      const record = reader.relation(local.id)
      if (relationBroken(local, record)) continue
      const endpoint = record?.endpoints.find(e => e.application === this.application && e.name === local.endpoint)
      out.push({ id: local.id, endpoint: local.endpoint, interface: endpoint?.interface ?? '', remoteApplication: local.remoteApplication })
    }
    return out.sort((a, b) => a.id - b.id)
  }

  async relationUnits (relationId: number): Promise<string[]> {
    const local = this.#localRelation(relationId)
    const members = new Set(Object.keys(local.members))
    // In -joined U the hook already sees U; in -departed U it no longer does (§5.3). The
    // unit removed is the hook's remote unit, not JUJU_DEPARTING_UNIT, which names this
    // unit when it is the one leaving (Juju's contextfactory.go: RemoveMember(RemoteUnit)).
    if (this.relation?.id === relationId && this.relation.remoteUnit !== '') {
      if (this.name.endsWith('-relation-joined')) members.add(this.relation.remoteUnit)
      if (this.name.endsWith('-relation-departed')) members.delete(this.relation.remoteUnit)
    }
    return [...members].sort(unitOrder)
  }

  async relationSettings (relationId: number, target: { unit: string } | { application: string }): Promise<Record<string, string> | undefined> {
    const local = this.#localRelation(relationId)
    const model = this.#model()
    if ('unit' in target) {
      const key = keys.unitSettings(relationId, target.unit)
      const stored = tableGet(model.settings, key)?.values
      if (target.unit !== this.unit) return this.#remoteBag(key, stored)
      return applyChanges(stored ?? {}, this.#unitSettings.get(relationId))
    }
    const key = keys.applicationSettings(relationId, target.application)
    const stored = tableGet(model.settings, key)?.values ?? {}
    if (target.application !== this.application) return this.#remoteBag(key, stored)
    // Juju's readLocalApplicationSettings (apiserver/facades/agent/uniter): in a peer
    // relation every unit reads its own application's bag; otherwise only the leader.
    if (!local.peer && !await this.isLeader()) throw new HookToolError(1, 'permission denied')
    return applyChanges(stored, this.#appSettings.get(relationId))
  }

  async setRelationSettings (relationId: number, application: boolean, changes: Record<string, string>): Promise<void> {
    this.#localRelation(relationId)
    if (application && !await this.isLeader()) throw new HookToolError(1, 'cannot write relation settings')
    const buffers = application ? this.#appSettings : this.#unitSettings
    buffers.set(relationId, { ...(buffers.get(relationId) ?? {}), ...changes })
  }

  async unitAddress (which: 'private-address' | 'public-address'): Promise<string> {
    const reader = readerOf(this.#model())
    const machine = reader.machine(this.#unitRecord().machine)
    const addresses = machine?.addresses ?? []
    const isPrivate = (a: string): boolean => /^(10\.|127\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.)/.test(a)
    const pick = which === 'private-address' ? addresses.find(isPrivate) : addresses.find(a => !isPrivate(a))
    return pick ?? addresses[0] ?? '127.0.0.1'
  }

  async networkInfo (binding: string, relationId: number | undefined): Promise<NetworkInfo> {
    if (relationId !== undefined) this.#localRelation(relationId)
    const address = await this.unitAddress('private-address')
    return {
      bindAddresses: [{ macAddress: '', interfaceName: 'lo', addresses: [{ hostname: '', value: address, cidr: `${address}/32` }] }],
      egressSubnets: [`${address}/32`],
      ingressAddresses: [address]
    }
  }

  async openedPorts (): Promise<OpenedPort[]> {
    const committed = (this.#unitRecord().openedPorts ?? []).map(port => ({ ...port, endpoints: [...port.endpoints] }))
    return portsSeenByHook(committed, this.#portCalls)
  }

  async relationModelUuid (relationId: number): Promise<string> {
    this.#localRelation(relationId)
    // No cross-model relations: the other end is always in this model.
    return this.#model().uuid
  }

  async goalState (): Promise<GoalState> {
    const controller = this.#o.controller
    if (controller.goalState === undefined) {
      const state = goalStateOf(this.#model(), this.unit, Math.floor(this.#o.controller.now()))
      if (state === undefined) throw new HookToolError(1, `unit "${this.unit}" not found`)
      return state
    }
    const reply = await controller.goalState(this.unit)
    if (!reply.ok) throw new HookToolError(1, reply.error)
    return reply.goalState
  }

  async cloudSpec (): Promise<CloudSpec> {
    const app = readerOf(this.#model()).application(this.application)
    // The uniter facade's CloudSpec answers ErrPerm to an application without trust.
    if (app?.trust !== true) throw new Error('permission denied')
    return localCloudSpec()
  }

  /** A resource's bytes from the chunked store, each chunk and the whole checked (agent/uniter/charm-fetch.ts). */
  #resourceFetch (name: string): ((hash: string) => Promise<Uint8Array | undefined>) | undefined {
    const { charmManifest, charmChunk } = this.#o.controller
    if (charmManifest === undefined || charmChunk === undefined) return undefined
    const source = { charmManifest: charmManifest.bind(this.#o.controller), charmChunk: charmChunk.bind(this.#o.controller) }
    return async hash => await fetchCharmArchive(source, hash, `resource ${name}`)
  }

  async resourcePath (name: string): Promise<string> {
    if (this.#o.resourcesDir === undefined) throw new Error(`resource ${JSON.stringify(name)}: this unit agent keeps no resources`)
    return await unitResourcePath({ model: this.#model(), application: this.application, dir: this.#o.resourcesDir, fetch: this.#resourceFetch(name) }, name)
  }

  /**
   * The model applies a commit's opens before its closes, so a later call must cancel an
   * earlier opposite one for the same range, or close-then-open would end up closed.
   */
  async openPort (port: PortRange, endpoints: string[]): Promise<void> {
    const change = { ...port, endpoints }
    this.#ports.close = this.#ports.close.filter(other => !samePortChange(other, change))
    this.#ports.open.push(change)
    this.#portCalls.push({ op: 'open', port, endpoints })
  }

  async closePort (port: PortRange, endpoints: string[]): Promise<void> {
    const change = { ...port, endpoints }
    this.#ports.open = this.#ports.open.filter(other => !samePortChange(other, change))
    this.#ports.close.push(change)
    this.#portCalls.push({ op: 'close', port, endpoints })
  }

  // -------------------------------------------------------------------------------
  // Immediate effects

  async setStatus (status: 'maintenance' | 'blocked' | 'waiting' | 'active', message: string, application: boolean): Promise<void> {
    const now = Math.floor(this.#o.controller.now())
    if (application) {
      if (!await this.isLeader()) throw new HookToolError(1, 'cannot set application status: this unit is not the leader')
      await this.#submit({ type: 'set-application-status', unit: this.unit, status, message, now })
      return
    }
    await this.#submit({ type: 'set-unit-status', unit: this.unit, status, message, now })
    this.#unitStatusSet = true
    this.#ownStatus = { status, message, data: {} }
  }

  /** The run set the unit's own status (Juju's HasExecutionSetUnitStatus; not the application's). */
  get unitStatusSet (): boolean {
    return this.#unitStatusSet
  }

  async status (application: boolean): Promise<StatusInfo & { units?: Record<string, StatusInfo> }> {
    if (application && !await this.isLeader()) throw new HookToolError(1, 'finding application status: this unit is not the leader')
    const unitStatus = (record: UnitRecord): StatusInfo => ({
      status: record.workload.status as WorkloadStatusValue,
      message: record.workload.message,
      data: { ...(record.workload.data ?? {}) }
    })
    const own = this.#ownStatus ?? unitStatus(this.#unitRecord())
    if (!application) return own
    // From the controller, as in Juju: this machine's view holds only its own units.
    const reply = await this.#o.controller.applicationStatus(this.unit)
    if (!reply.ok) throw new HookToolError(1, `finding application status: ${reply.error}`)
    if (reply.omitted > 0) {
      this.#o.logger.log('warning', `status-get --application: ${reply.omitted} units of "${this.application}" left off, the answer is bounded by limits.applicationStatusReplyBytesMax`)
    }
    const entryInfo = (entry: StatusEntry): StatusInfo => ({ status: entry.status as WorkloadStatusValue, message: entry.message, data: { ...entry.data } })
    // Not set by a leader yet: Juju reports it unknown (and `juju status` derives one).
    const app: StatusInfo = reply.application === null ? { status: 'unknown', message: '', data: {} } : entryInfo(reply.application)
    const units: Record<string, StatusInfo> = {}
    for (const [name, entry] of Object.entries(reply.units)) units[name] = entryInfo(entry)
    return { ...app, units }
  }

  async log (level: LogLevel, message: string): Promise<void> {
    this.#o.logger.child('juju-log').log(logLevels[level], message)
  }

  async setApplicationVersion (version: string): Promise<void> {
    await this.#submit({ type: 'set-workload-version', unit: this.unit, version })
  }

  async isLeader (): Promise<boolean> {
    return believesLeader(tableGet(this.#model().leases, this.application), this.unit, this.#o.controller.now())
  }

  async leaderSettings (): Promise<Record<string, string>> {
    return { ...(readerOf(this.#model()).application(this.application)?.leaderSettings ?? {}) }
  }

  async setLeaderSettings (changes: Record<string, string>): Promise<void> {
    if (!await this.isLeader()) throw new HookToolError(1, 'cannot write leadership settings: this unit is not the leader')
    await this.#submit({ type: 'leader-settings', application: this.application, unit: this.unit, settings: changes })
  }

  async setActionResults (results: Record<string, unknown>): Promise<void> {
    mergeDeep(this.actionResults, results)
  }

  async failAction (message: string): Promise<void> {
    this.actionFailure = message
  }

  async actionLog (message: string): Promise<void> {
    this.#o.logger.child('action').log('info', message)
  }

  async charmState (): Promise<Record<string, string>> {
    const state = { ...(this.#unitRecord().charmState ?? {}) }
    for (const key of this.#state.deleted) delete state[key]
    return { ...state, ...this.#state.set }
  }

  async setCharmState (changes: Record<string, string>): Promise<void> {
    for (const [key, value] of Object.entries(changes)) {
      if (value === '') {
        delete this.#state.set[key]
        this.#state.deleted.add(key)
      } else {
        this.#state.deleted.delete(key)
        this.#state.set[key] = value
      }
    }
  }

  async deleteCharmState (stateKeys: string[]): Promise<void> {
    await this.setCharmState(Object.fromEntries(stateKeys.map(key => [key, ''])))
  }

  async storageIds (name: string | undefined): Promise<string[]> {
    return Object.values(this.#unitRecord().storage)
      .filter(s => s.attached && (name === undefined || s.name === name))
      .map(s => s.id)
      .sort(unitOrder)
  }

  async storage (id: string): Promise<{ kind: 'filesystem' | 'block', location: string } | undefined> {
    const record = this.#unitRecord().storage[id]
    return record === undefined ? undefined : { kind: record.kind, location: record.location }
  }

  async addStorage (counts: Record<string, number>): Promise<void> {
    for (const [name, count] of Object.entries(counts)) this.#storageAdds.set(name, (this.#storageAdds.get(name) ?? 0) + count)
  }

  async requestReboot (now: boolean): Promise<void> {
    this.rebootRequested = now ? 'now' : 'after'
    if (now) await this.#o.rebootNow?.()
  }

  // -------------------------------------------------------------------------------

  /**
   * The hook exited 0: commit the buffered relation settings, ports and charm state in
   * one command. A refusal (e.g. leadership lost before an application bag was written)
   * makes the hook fail, as a failed flush does in Juju.
   */
  async flush (): Promise<void> {
    const relationSettings = [
      ...[...this.#unitSettings].map(([relationId, settings]) => ({ relationId, settings })),
      ...[...this.#appSettings].map(([relationId, settings]) => ({ relationId, application: true, settings }))
    ]
    const hasState = Object.keys(this.#state.set).length > 0 || this.#state.deleted.size > 0
    const secrets = this.secrets.changes(Math.floor(this.#o.controller.now()))
    if (relationSettings.length > 0 || this.#ports.open.length > 0 || this.#ports.close.length > 0 || hasState || secrets !== undefined) await this.#commitChanges(relationSettings, hasState, secrets)
    // storage-add: after the hook's other changes, one request per storage name; a refusal fails the hook.
    for (const [name, count] of [...this.#storageAdds].sort(([a], [b]) => a < b ? -1 : 1)) await this.#submit({ type: 'add-storage', unit: this.unit, name, count })
  }

  async #commitChanges (relationSettings: RelationSettingsChange[], hasState: boolean, secrets: SecretHookChanges | undefined): Promise<void> {
    await this.#submit({
      type: 'commit-hook-changes',
      unit: this.unit,
      ...(relationSettings.length === 0 ? {} : { relationSettings }),
      ...(this.#ports.open.length === 0 ? {} : { openPorts: this.#ports.open }),
      ...(this.#ports.close.length === 0 ? {} : { closePorts: this.#ports.close }),
      ...(hasState ? { charmState: { set: this.#state.set, delete: [...this.#state.deleted] } } : {}),
      ...(secrets === undefined ? {} : { secrets }),
      ...(this.#o.commitKey === undefined ? {} : { hookRun: this.#o.commitKey })
    })
  }

  #model (): ModelContext {
    return this.#o.controller.model()
  }

  #unitRecord (): UnitRecord {
    const record = readerOf(this.#model()).unit(this.unit)
    if (record === undefined) throw new HookToolError(1, `unit "${this.unit}" not found`)
    return record
  }

  /** A remote bag is fetched once per run and cached, as Juju's relation cache does (§5.3). */
  #remoteBag (key: string, stored: Readonly<Record<string, string>> | undefined): Record<string, string> | undefined {
    if (!this.#remoteBags.has(key)) this.#remoteBags.set(key, stored === undefined ? undefined : { ...stored })
    const cached = this.#remoteBags.get(key)
    return cached === undefined ? undefined : { ...cached }
  }

  #localRelation (relationId: number): LocalState['relations'][string] {
    const local = this.#o.local.relations[String(relationId)]
    if (local === undefined) throw new HookToolError(2, `invalid value "${relationId}" for option -r: relation not found`)
    return local
  }

  async #submit (body: ModelCommandBody): Promise<void> {
    const result = await this.#proposer.submit(this.#o.controller, body)
    if (!result.ok) throw new HookToolError(1, result.error)
  }
}

function applyChanges (stored: Readonly<Record<string, string>>, changes: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = { ...stored }
  for (const [key, value] of Object.entries(changes ?? {})) {
    if (value === '') delete out[key]
    else out[key] = value
  }
  return out
}

function mergeDeep (target: Record<string, unknown>, source: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(source)) {
    const existing = target[key]
    if (isMap(value) && isMap(existing)) mergeDeep(existing, value)
    else target[key] = value
  }
}

function isMap (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** `web/2` before `web/10`. */
function unitOrder (a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true })
}

/**
 * Whether relation-ids must leave the relation out, by Juju's rules: the context factory
 * (internal/worker/uniter/runner/context/contextfactory.go, getContextRelations) calls a
 * relation broken when it is not a peer relation, is dying or suspended, and has no
 * members left; relation-ids.go also skips a dead one (here: gone from the model). So
 * inside `-relation-broken` after remove-relation the relation is no longer listed.
 */
function relationBroken (local: LocalState['relations'][string], record: { life: string, suspended: boolean } | undefined): boolean {
  if (record === undefined || record.life === 'dead') return true
  const inactive = record.life !== 'alive' || record.suspended
  return !local.peer && inactive && Object.keys(local.members).length === 0
}
