/**
 * The part of the model one machine agent is entitled to (DESIGN.md §5, §10), as a model
 * context of its own: its machine; every unit the model puts on it, their applications
 * (listing only the units on this machine), charms, leases and pending actions; the
 * relations those applications take part in, the other side's applications, and the
 * databags of those relations. No other machine's unit is in it, not even for the
 * application's leader: nothing on an agent reads one from the view (related units come
 * from relation members and bags; `status-get --application` asks the controller,
 * runtime/model/application-status.ts), so a view stays the size of the machine's own
 * share, not of its applications. A machine hosting the leaders of five 1,000-unit
 * applications once carried all 5,000 units (1.5 MB, over the transport's message
 * limit): its fetches failed and its units never saw their lease extensions. A unit agent reads hook-tool data
 * and projects its remote state (`remoteStateFor`) from it exactly as it would from the
 * whole model; what other machines keep private (their units' charm state, their
 * actions, unrelated applications) is not in it.
 *
 * Nor are the model's counters (ids are the controllers' to allocate), so an added
 * machine, an action or a relation elsewhere reaches no other machine's agent. What
 * reaches every agent is what every Juju agent watches: the model's config (the
 * ModelWatcher facade every agent facade embeds), its uuid, agent binaries and secrets.
 *
 * Nor are its units' agent statuses (`executing`, `idle`, …): only `status` shows them,
 * from the controllers' model, and nothing on an agent reads them back. Carried in the
 * view, each unit's own report before and after every hook — two thirds of all commits
 * on a busy machine — changed its machine's view, so the agent fetched and re-projected
 * it for every unit after each of them. Every unit in a view shows `agentStatusNotInView`.
 */
import { plainEqual } from '../plain-equal.ts'
import { emptyModel, type ModelReader } from './model-draft.ts'
import { footprintReader, viewWholeParts, type ViewReads, type ViewReadTable } from './view-footprint.ts'
import type { ActionRecord, AgentStatus, ApplicationRecord, CharmRecord, LeaseRecord, MachineRecord, ModelContext, RelationRecord, SettingsRecord, StatusRecord, UnitRecord } from './model-types.ts'
import { keys } from './keys.ts'
import { readableBy } from './apply/secret-records.ts'
import type { SecretRecord } from './secret-types.ts'
import { forEachTableEntry, tableFrom, tableGet, tableKeys, type Table } from './table.ts'

/** What a view leaves empty, shared by every view (tables are immutable values). */
const emptyView: ModelContext = emptyModel()

/** The agent status every unit in a machine's view shows: the real one is not in views (see above). */
export const agentStatusNotInView: StatusRecord<AgentStatus> = Object.freeze({ status: 'idle', message: '', since: null, data: null })

/** `reads`, when given, is told every record the view reads (view-footprint.ts). */
export function machineModelView (context: ModelContext, machineId: string, reads?: ViewReads): ModelContext {
  const reader = footprintReader(context, reads)
  const machine = reader.machine(machineId)
  // The registration secret is for the controllers to check, not for anyone to read back.
  const machines: Array<[string, MachineRecord]> = machine === undefined
    ? []
    : [[machineId, { ...machine, provisioning: machine.provisioning === null ? null : { token: machine.provisioning.token, secret: '' }, statusHistory: [] }]]
  const applications = new Map<string, ApplicationRecord>()
  const relations = new Map<string, RelationRecord>()
  const ownApplications = new Set<string>()
  for (const name of machine?.units ?? []) {
    const unit = reader.unit(name)
    if (unit !== undefined) ownApplications.add(unit.application)
  }
  // The units on this machine by application, in creation order (as in the application's
  // own list): read from the machine's list, so a view costs the machine's units and not
  // every unit of every application it touches (every machine fetches its view after
  // every change notice, so a scan of all units would make a round cost N² at N machines).
  const hostedByApplication = new Map<string, string[]>()
  for (const name of machine?.units ?? []) {
    const unit = reader.unit(name)
    if (unit === undefined || unit.machine !== machineId) continue
    const list = hostedByApplication.get(unit.application)
    if (list === undefined) hostedByApplication.set(unit.application, [name])
    else list.push(name)
  }
  /** An application as this machine sees it: only its units on this machine. */
  const applicationView = (app: ApplicationRecord): ApplicationRecord => ({
    ...app,
    units: hostedByApplication.get(app.name) ?? [],
    statusHistory: []
  })
  for (const name of ownApplications) {
    const app = reader.application(name)
    if (app === undefined) continue
    applications.set(name, applicationView(app))
    for (const id of app.relations) {
      const relation = reader.relation(id)
      if (relation === undefined) continue
      relations.set(String(id), relation)
      for (const endpoint of relation.endpoints) {
        const other = reader.application(endpoint.application)
        if (other !== undefined && !applications.has(other.name)) applications.set(other.name, applicationView(other))
      }
    }
  }
  const units: Array<[string, UnitRecord]> = []
  for (const name of ownApplications) {
    for (const unitName of applications.get(name)?.units ?? []) {
      const unit = reader.unit(unitName)
      // No unit's status history or agent status: agents never read them, and they would ride in every view.
      if (unit !== undefined && unit.machine === machineId) units.push([unitName, { ...unit, agent: agentStatusNotInView, statusHistory: [] }])
    }
  }
  const charms: Array<[string, CharmRecord]> = []
  for (const app of applications.values()) {
    const charm = reader.charm(app.charm)
    if (charm !== undefined) charms.push([charm.url, charm])
  }
  const leases: Array<[string, LeaseRecord]> = []
  for (const name of ownApplications) {
    const lease = reader.lease(name)
    if (lease !== undefined) leases.push([name, lease])
  }
  // The databags of the relations in view: their members' and their applications' (the
  // only settings under relation/<id>/), looked up rather than found by scanning them all.
  // Members include the departed (bounded per relation), whose last settings hooks may
  // still read with relation-get (juju-semantics §2.4) after they left the model.
  const settings: Array<[string, SettingsRecord]> = []
  for (const relation of relations.values()) {
    const bagKeys = [
      ...tableKeys(relation.members).map(unit => keys.unitSettings(relation.id, unit)),
      ...relation.endpoints.map(endpoint => keys.applicationSettings(relation.id, endpoint.application))
    ]
    for (const key of new Set(bagKeys)) {
      const record = reader.settings(key)
      if (record !== undefined) settings.push([key, record])
    }
  }
  const actions: Array<[string, ActionRecord]> = []
  for (const [, unit] of units) {
    if (unit.machine !== machineId) continue
    for (const id of unit.actions) {
      const action = reader.action(id)
      if (action !== undefined) actions.push([id, action])
    }
  }
  return {
    ...emptyView,
    secrets: secretsInView(context, reader, units.map(([, unit]) => unit)),
    revision: context.revision,
    term: context.term,
    // Not the model's counters (the next machine, task, relation and storage numbers):
    // only the controllers allocate ids, and nothing on an agent reads them. Carried in
    // every view, each add-machine, action or relation moved every agent's view, so every
    // agent in the model took a change (and the provisioner's follow-up commit) for
    // another machine's business (issue 28). Views show emptyView's, one constant object.
    // Hooks see it as JUJU_MODEL_UUID.
    uuid: context.uuid,
    config: context.config,
    // The binaries the agent may upgrade to (a few records), beside the config's agent-version.
    ...(context.agentBinaries === undefined ? {} : { agentBinaries: context.agentBinaries }),
    machines: tableFrom(machines),
    applications: tableFrom(applications),
    relations: tableFrom(relations),
    units: tableFrom(units),
    charms: tableFrom(charms),
    leases: tableFrom(leases),
    settings: tableFrom(settings),
    actions: tableFrom(actions)
  }
}

/**
 * What the view of one machine was built from, kept without the model it came from: the
 * parts it reads whole (`viewWholeParts`, each the model's own object) and every record
 * it read by key, found or not (its footprint, view-footprint.ts), each as the model held
 * it. A controller keeps one of these per machine (machine-view-cache.ts); keeping the
 * whole model instead pinned a model version per machine, each with its own copies of
 * the leaves that every commit replaces (units, key revisions, request ids): at 1,000
 * simulated agents the controllers' heap held about as many model versions as machines.
 *
 * Records, not whole tables: any machine's change replaces the machines table, so with
 * the tables as sources a busy model proved almost no view unchanged (300 simulated
 * agents: 5,843 of 14,105 answers built a view only to find it the same, 8,336 times
 * because the machines table had moved) and each of those built and compared a view.
 */
export interface ViewSources {
  readonly parts: ReadonlyArray<ModelContext[typeof viewWholeParts[number]]>
  /** The units read, and each unit's record then (brought forward by `sameViewSourcesAs`). */
  readonly unitNames: readonly string[]
  readonly units: Array<UnitRecord | undefined>
  /** Every other record read: its table, its key, and the record then. */
  readonly tables: ReadonlyArray<Exclude<ViewReadTable, 'units'>>
  readonly keys: readonly string[]
  readonly records: readonly unknown[]
}

/** The sources of a view of `model` that read `reads` (as `machineModelView` reported them; repeats are kept once). */
export function viewSourcesOf (model: ModelContext, reads: ReadonlyArray<readonly [ViewReadTable, string]>): ViewSources {
  const unitNames: string[] = []
  const units: Array<UnitRecord | undefined> = []
  const tables: Array<Exclude<ViewReadTable, 'units'>> = []
  const keys: string[] = []
  const records: unknown[] = []
  const seen = new Set<string>()
  for (const [table, key] of reads) {
    const read = `${table} ${key}`
    if (seen.has(read)) continue
    seen.add(read)
    if (table === 'units') {
      unitNames.push(key)
      units.push(tableGet(model.units, key))
      continue
    }
    tables.push(table)
    keys.push(key)
    records.push(tableGet<unknown>(model[table], key))
  }
  return { parts: viewWholeParts.map(part => model[part]), unitNames, units, tables, keys, records }
}

/** The sources of `machineId`'s view of `model`, read by building it. */
export function viewSourcesFor (model: ModelContext, machineId: string): ViewSources {
  const reads: Array<readonly [ViewReadTable, string]> = []
  machineModelView(model, machineId, (table, key) => { reads.push([table, key]) })
  return viewSourcesOf(model, reads)
}

/**
 * The parts a view takes verbatim from the model (machineModelView: the same object), so
 * that a view whose tables did not move needs only these replaced, not rebuilt.
 * `agentBinaries` is among them only while the model has some (a view leaves the key out
 * otherwise). Secrets are not: each view filters them for its own units.
 */
const verbatimParts = ['config', 'uuid', 'agentBinaries'] as const

/**
 * The changes of a view whose sources moved only in parts it takes verbatim (a
 * model-config set, which every machine's view carries): each such part that differs
 * from the view's, with the new revision and term. Undefined when anything else the view
 * reads moved (a table, a unit, secrets) or agent binaries came or went: build the view.
 * A controller so answers every held watch of a model-config change with one comparison
 * per part instead of building and comparing a view per machine (issue 28).
 */
export function verbatimViewChanges (view: ModelContext, before: ViewSources, after: ModelContext): ViewChanges | undefined {
  for (let i = 0; i < viewWholeParts.length; i++) {
    const part = viewWholeParts[i]!
    if (before.parts[i] !== after[part] && !(verbatimParts as readonly string[]).includes(part)) return undefined
  }
  if ((view.agentBinaries === undefined) !== (after.agentBinaries === undefined)) return undefined
  if (unitsMovedIfRecordsStand(before, after) === undefined) return undefined
  const changes: Record<string, unknown> = { revision: after.revision, term: after.term }
  for (const part of verbatimParts) if (after[part] !== undefined && !samePart(view[part], after[part])) changes[part] = after[part]
  return changes as ViewChanges
}

/** `sources` with the parts read whole taken from `model` (the records read stay: verbatimViewChanges found them standing). */
export function withWholeParts (sources: ViewSources, model: ModelContext): ViewSources {
  return { ...sources, parts: viewWholeParts.map(part => model[part]) }
}

/**
 * Whether the view of `machineId` taken from `after` is the one taken from `before`,
 * decided without building it from `after`: see `sameViewSourcesAs`.
 */
export function sameViewSources (before: ModelContext, after: ModelContext, machineId: string): boolean {
  return sameViewSourcesAs(viewSourcesFor(before, machineId), after)
}

/**
 * Whether a view with `sources` is the view `after` gives, decided without building it:
 * every part read whole is the same object, and every record read is the same object
 * (records are immutable, so an apply that did not touch one hands it on as it was) or,
 * for a unit, differs only in what views leave out, its agent status and status history.
 * The view is a function of what it read, so the same reads give the same view. A
 * unit's report of its own agent status — most commits on a busy machine — so costs its
 * controller a few lookups, not a view. When true, the unit records that moved only so
 * are brought forward in `sources`, so the next look finds them identical. False means
 * only "not proven": build the view and compare (`sameViewContent`).
 */
export function sameViewSourcesAs (sources: ViewSources, after: ModelContext): boolean {
  for (let i = 0; i < viewWholeParts.length; i++) if (sources.parts[i] !== after[viewWholeParts[i]!]) return false
  const moved = unitsMovedIfRecordsStand(sources, after)
  if (moved === undefined) return false
  for (const [i, record] of moved) sources.units[i] = record
  return true
}

/**
 * Whether every record `sources` read stands in `after` (the same object; a unit's may
 * differ only in its agent status and status history): the units that moved only so (their
 * index in `sources.units` and their record now), or undefined when a record moved.
 */
function unitsMovedIfRecordsStand (sources: ViewSources, after: ModelContext): Array<[number, UnitRecord]> | undefined {
  for (let i = 0; i < sources.keys.length; i++) {
    if (sources.records[i] !== tableGet<unknown>(after[sources.tables[i]!], sources.keys[i]!)) return undefined
  }
  const moved: Array<[number, UnitRecord]> = []
  for (let i = 0; i < sources.unitNames.length; i++) {
    const a = sources.units[i]
    const b = tableGet(after.units, sources.unitNames[i]!)
    if (a === b) continue
    if (a === undefined || b === undefined || !sameButAgentStatus(a, b)) return undefined
    moved.push([i, b])
  }
  return moved
}

/** Two records of one unit that differ at most in its agent status and status history. */
function sameButAgentStatus (a: UnitRecord, b: UnitRecord): boolean {
  const keys = Object.keys(a) as Array<keyof UnitRecord>
  if (keys.length !== Object.keys(b).length) return false
  for (const key of keys) {
    if (key !== 'agent' && key !== 'statusHistory' && a[key] !== b[key]) return false
  }
  return true
}

/** A view's revision and term, and those of its top-level parts (tables, config, …) that changed. */
export type ViewChanges = Partial<ModelContext> & Pick<ModelContext, 'revision' | 'term'>

/**
 * What `after` holds that differs from `before`, two views of one machine: its revision
 * and term, and each part whose content changed (compared as `sameViewContent` does).
 * `{ ...before, ...changes }` has the content of `after`. A fetch after a change sends
 * these, not the whole view: most changes touch one or two of a view's dozen tables.
 */
export function viewChanges (before: ModelContext, after: ModelContext): ViewChanges {
  const changes: Record<string, unknown> = { revision: after.revision, term: after.term }
  for (const key of Object.keys(after) as Array<keyof ModelContext>) {
    if (key === 'revision' || key === 'term') continue
    if (!samePart(before[key], after[key])) changes[key] = after[key]
  }
  return changes as ViewChanges
}

/** Whether changes hold nothing but a revision and term. */
export function noViewChanges (changes: ViewChanges): boolean {
  return Object.keys(changes).length === 2
}

function samePart (x: unknown, y: unknown): boolean {
  return x === y || (isTable(x) && isTable(y) ? sameTable(x, y) : plainEqual(x, y))
}

/**
 * The secrets the machine's units own, were granted or consume: metadata only. Content
 * stays with the controllers (a unit reads it through `secret-content`), and other
 * machines' consumers are left out.
 */
function secretsInView (context: ModelContext, reader: ModelReader, units: readonly UnitRecord[]): Table<SecretRecord> {
  if (context.secrets === undefined || context.secrets.size === 0 || units.length === 0) return emptyView.secrets ?? tableFrom([])
  const names = new Set(units.map(unit => unit.name))
  const out: Array<[string, SecretRecord]> = []
  forEachTableEntry(context.secrets, (id, secret) => {
    const seen = units.some(unit => readableBy(reader, secret, unit) || secret.consumers[unit.name] !== undefined)
    if (!seen) return
    const consumers = Object.fromEntries(Object.entries(secret.consumers).filter(([name]) => names.has(name)))
    out.push([id, { ...secret, consumers, revisions: secret.revisions.map(r => ({ ...r, sealed: '' })) }])
  })
  return tableFrom(out)
}

/**
 * Whether two views of one machine hold the same content: everything but the revision and
 * term they were taken at. Records taken from the model as they are compare by identity;
 * those a view rebuilds (its machine, applications and units) field by field.
 */
export function sameViewContent (a: ModelContext, b: ModelContext): boolean {
  const keys = Object.keys(a) as Array<keyof ModelContext>
  if (keys.length !== Object.keys(b).length) return false
  for (const key of keys) {
    if (key === 'revision' || key === 'term') continue
    if (!samePart(a[key], b[key])) return false
  }
  return true
}

function isTable (value: unknown): value is Table<unknown> {
  return typeof value === 'object' && value !== null && 'root' in value && 'size' in value
}

/** Same keys, and under each the same record (identical, or equal as plain data). */
function sameTable (a: Table<unknown>, b: Table<unknown>): boolean {
  if (a.size !== b.size) return false
  let same = true
  forEachTableEntry(a, (key, value) => {
    if (!same) return
    const other = tableGet(b, key)
    same = other !== undefined && (other === value || plainEqual(value, other))
  })
  return same
}
