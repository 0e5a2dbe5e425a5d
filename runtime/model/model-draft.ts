import { limits } from '../limits.ts'
import type { ApplicationName, MachineId, RelationId, UnitName } from '../ids.ts'
import type { AgentBinaryRecord } from './agent-binaries.ts'
import { listAppend, type ChunkedList } from './chunked-list.ts'
import { TableDraft, emptyTable, tableGet, tableHas } from './table.ts'
import type {
  ActionRecord, ApplicationRecord, CharmRecord, ControllerLeaseRecord, Delta, KeyScope, LeaseRecord, MachineRecord, ModelContext,
  ModelCounters, ModelRegistryRecord, RelationRecord, RequestRecord, SettingsRecord, Tombstone, UnitRecord
} from './model-types.ts'
import type { SecretRecord } from './secret-types.ts'

/** Read access shared by a committed context and a command's draft. */
export interface ModelReader {
  charm (url: string): CharmRecord | undefined
  application (name: ApplicationName): ApplicationRecord | undefined
  unit (name: UnitName): UnitRecord | undefined
  machine (id: MachineId): MachineRecord | undefined
  relation (id: RelationId): RelationRecord | undefined
  settings (key: string): SettingsRecord | undefined
  lease (application: ApplicationName): LeaseRecord | undefined
  controllerLease (name: string): ControllerLeaseRecord | undefined
  action (id: string): ActionRecord | undefined
  secret (id: string): SecretRecord | undefined
}

/** A context being put together by `finish`, before it is handed out as immutable. */
type Mutable<T> = { -readonly [K in keyof T]: T[K] }

export function readerOf (context: ModelContext): ModelReader {
  return new ContextReader(context)
}

/**
 * Reads of a committed context. A class, not an object of arrow functions: readers are
 * made on every view, remote-state projection and status read, and nine closures per
 * reader (each named by the bundler's keepNames) cost more than the reads themselves.
 */
class ContextReader implements ModelReader {
  readonly #context: ModelContext
  constructor (context: ModelContext) { this.#context = context }
  charm (url: string): CharmRecord | undefined { return tableGet(this.#context.charms, url) }
  application (name: ApplicationName): ApplicationRecord | undefined { return tableGet(this.#context.applications, name) }
  unit (name: UnitName): UnitRecord | undefined { return tableGet(this.#context.units, name) }
  machine (id: MachineId): MachineRecord | undefined { return tableGet(this.#context.machines, id) }
  relation (id: RelationId): RelationRecord | undefined { return tableGet(this.#context.relations, String(id)) }
  settings (key: string): SettingsRecord | undefined { return tableGet(this.#context.settings, key) }
  lease (application: ApplicationName): LeaseRecord | undefined { return tableGet(this.#context.leases, application) }
  controllerLease (name: string): ControllerLeaseRecord | undefined { return tableGet(this.#context.controllerLeases, name) }
  action (id: string): ActionRecord | undefined { return tableGet(this.#context.actions, id) }
  secret (id: string): SecretRecord | undefined { return this.#context.secrets === undefined ? undefined : tableGet(this.#context.secrets, id) }
}

export function emptyModel (): ModelContext {
  return {
    format: 1,
    revision: 0,
    term: 0,
    counters: { relation: 0, machine: 0, task: 1, storage: 0 },
    charms: emptyTable(),
    applications: emptyTable(),
    units: emptyTable(),
    machines: emptyTable(),
    relations: emptyTable(),
    settings: emptyTable(),
    leases: emptyTable(),
    controllerLeases: emptyTable(),
    actions: emptyTable(),
    models: emptyTable(),
    secrets: emptyTable(),
    uuid: '',
    config: {},
    finishedActions: [],
    keyRevisions: emptyTable(),
    tombstones: [],
    tombstoneFloor: 0,
    requests: { current: emptyTable(), previous: emptyTable() }
  }
}

/**
 * One command's copy-on-write view of the context. Handlers read and write through it;
 * `touch`/`remove` record the delta keys. Nothing of the base context is modified, so a
 * refused command simply drops its draft.
 */
export class ModelDraft implements ModelReader {
  readonly base: ModelContext
  readonly revision: number
  readonly charms: TableDraft<CharmRecord>
  readonly applications: TableDraft<ApplicationRecord>
  readonly units: TableDraft<UnitRecord>
  readonly machines: TableDraft<MachineRecord>
  readonly relations: TableDraft<RelationRecord>
  readonly settingsTable: TableDraft<SettingsRecord>
  readonly leases: TableDraft<LeaseRecord>
  readonly controllerLeases: TableDraft<ControllerLeaseRecord>
  readonly actions: TableDraft<ActionRecord>
  readonly models: TableDraft<ModelRegistryRecord>
  readonly agentBinaries: TableDraft<AgentBinaryRecord>
  readonly secrets: TableDraft<SecretRecord>
  counters: ModelCounters
  uuid: string
  config: ModelContext['config']
  finishedActions: ChunkedList<string>
  /** Key → removed? in the order first touched. */
  readonly #touched = new Map<string, KeyScope | null>()

  constructor (base: ModelContext, revision: number) {
    this.base = base
    this.revision = revision
    this.charms = new TableDraft(base.charms)
    this.applications = new TableDraft(base.applications)
    this.units = new TableDraft(base.units)
    this.machines = new TableDraft(base.machines)
    this.relations = new TableDraft(base.relations)
    this.settingsTable = new TableDraft(base.settings)
    this.leases = new TableDraft(base.leases)
    this.controllerLeases = new TableDraft(base.controllerLeases)
    this.actions = new TableDraft(base.actions)
    this.models = new TableDraft(base.models)
    this.agentBinaries = new TableDraft(base.agentBinaries ?? emptyTable())
    this.secrets = new TableDraft(base.secrets ?? emptyTable())
    this.counters = base.counters
    this.uuid = base.uuid
    this.config = base.config
    this.finishedActions = base.finishedActions
  }

  charm (url: string): CharmRecord | undefined { return this.charms.get(url) }
  application (name: ApplicationName): ApplicationRecord | undefined { return this.applications.get(name) }
  unit (name: UnitName): UnitRecord | undefined { return this.units.get(name) }
  machine (id: MachineId): MachineRecord | undefined { return this.machines.get(id) }
  relation (id: RelationId): RelationRecord | undefined { return this.relations.get(String(id)) }
  settings (key: string): SettingsRecord | undefined { return this.settingsTable.get(key) }
  lease (application: ApplicationName): LeaseRecord | undefined { return this.leases.get(application) }
  controllerLease (name: string): ControllerLeaseRecord | undefined { return this.controllerLeases.get(name) }
  action (id: string): ActionRecord | undefined { return this.actions.get(id) }
  secret (id: string): SecretRecord | undefined { return this.secrets.get(id) }

  /** The key changed (or was created) at this revision. */
  touch (key: string): void {
    this.#touched.delete(key)
    this.#touched.set(key, null)
  }

  /** Whether watchers know `key` as existing: changed in this command, or at some earlier revision and not removed since. */
  known (key: string): boolean {
    const touched = this.#touched.get(key)
    if (touched !== undefined) return touched === null
    return tableHas(this.base.keyRevisions, key)
  }

  /** The key is gone; `scope` says who may learn that (computed before the removal). */
  remove (key: string, scope: KeyScope): void {
    this.#touched.delete(key)
    this.#touched.set(key, scope)
  }

  /** The new context and the deltas of this command; `request`, the result it remembers (rememberRequest). */
  finish (term: number, request?: { key: string, record: RequestRecord }): { context: ModelContext, deltas: Delta[] } {
    const deltas: Delta[] = []
    const revisions = new TableDraft(this.base.keyRevisions)
    const removed: Tombstone[] = []
    for (const [key, scope] of this.#touched) {
      if (scope === null) {
        revisions.set(key, this.revision)
        deltas.push({ revision: this.revision, key })
      } else {
        // Removing a key that never existed (created and removed within one command) still tells watchers.
        revisions.delete(key)
        removed.push({ key, revision: this.revision, scope })
        deltas.push({ revision: this.revision, key, removed: true })
      }
    }
    const { list: tombstones, dropped } = listAppend(this.base.tombstones, removed, limits.modelTombstonesMax)
    let tombstoneFloor = this.base.tombstoneFloor
    for (const forgotten of dropped) tombstoneFloor = Math.max(tombstoneFloor, forgotten.revision)
    // One clone of the base and plain stores, not a literal with a spread in its middle:
    // V8 built that literal through its slow define path, a fifth of a command's apply
    // (issue 28). The keys keep the base's order, a new one (agentBinaries) going last, as
    // the literal had them, so encodings and RaftSnapshots stay byte for byte the same.
    const context: Mutable<ModelContext> = { ...this.base }
    context.revision = this.revision
    context.term = term
    context.counters = this.counters
    context.charms = this.charms.finish()
    context.applications = this.applications.finish()
    context.units = this.units.finish()
    context.machines = this.machines.finish()
    context.relations = this.relations.finish()
    context.settings = this.settingsTable.finish()
    context.leases = this.leases.finish()
    context.controllerLeases = this.controllerLeases.finish()
    context.actions = this.actions.finish()
    context.models = this.models.finish()
    // Agent binaries only once there are any (model-types.ts: a model without them stays the value it was).
    const agentBinaries = this.agentBinaries.finish()
    if (agentBinaries.size !== 0 || this.base.agentBinaries !== undefined) context.agentBinaries = agentBinaries
    context.secrets = this.secrets.finish()
    context.uuid = this.uuid
    context.config = this.config
    context.finishedActions = this.finishedActions
    context.keyRevisions = revisions.finish()
    context.tombstones = tombstones
    context.tombstoneFloor = tombstoneFloor
    if (request !== undefined) context.requests = rememberRequest(this.base.requests, request.key, request.record)
    return { context, deltas }
  }
}

/** Records a request's result, rotating generations so at most `modelRequestIdsMax` are kept. */
export function rememberRequest (
  requests: ModelContext['requests'], key: string, record: RequestRecord
): ModelContext['requests'] {
  let { current, previous } = requests
  if (current.size >= limits.modelRequestIdsMax / 2) {
    previous = current
    current = emptyTable()
  }
  const draft = new TableDraft(current)
  draft.set(key, record)
  return { current: draft.finish(), previous }
}

export function recallRequest (requests: ModelContext['requests'], key: string): RequestRecord | undefined {
  return tableGet(requests.current, key) ?? tableGet(requests.previous, key)
}
