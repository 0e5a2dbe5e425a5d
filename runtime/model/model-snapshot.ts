import { InvalidInputError } from '../errors.ts'
import { isPlainRecord } from './charm-summary.ts'
import { naturalCompare, type UnitName } from '../ids.ts'
import type { ApplicationRecord, ModelContext, RelationRecord, UnitRecord } from './model-types.ts'
import { TableDraft, emptyTable, tableEntries, tableLevels, tableShapeProblem, type Table } from './table.ts'
import { fromLegacyTable, legacyTableFanout } from './legacy-bucket-table.ts'

/**
 * The model as RaftSnapshot data: the context is plain data already, so the snapshot is
 * the context in a versioned envelope. `restoreModel` checks the envelope and the shape
 * of every table (the bytes came from disk or from the leader) before the store starts
 * from it; records inside tables are trusted as the leader's own applied state.
 */
export interface ModelSnapshotData {
  readonly format: 'cantrip-model'
  /** 2: tables are tries (table.ts); 1, still read: a fixed grid of buckets (legacy-bucket-table.ts). */
  readonly version: 2
  readonly tableLevels: number
  readonly context: ModelContext
}

export function snapshotModel (context: ModelContext): ModelSnapshotData {
  return { format: 'cantrip-model', version: 2, tableLevels, context }
}

const tableNames = ['charms', 'applications', 'units', 'machines', 'relations', 'settings', 'leases', 'controllerLeases', 'actions', 'keyRevisions'] as const
const counterNames = ['relation', 'machine', 'task', 'storage'] as const

export function restoreModel (data: unknown): ModelContext {
  const fail = (expected: string, got: unknown): never => { throw new InvalidInputError('model snapshot', expected, got) }
  if (!isPlainRecord(data) || data.format !== 'cantrip-model') fail('a cantrip model snapshot', data)
  const envelope = data as Record<string, unknown>
  const legacy = envelope.version === 1
  if (legacy ? envelope.tableFanout !== legacyTableFanout : envelope.version !== 2) fail('snapshot version 2, or 1 with tables of fan-out 64', envelope.version)
  if (!legacy && envelope.tableLevels !== tableLevels) fail(`tables of ${tableLevels} levels`, envelope.tableLevels)
  const context = envelope.context
  if (!isPlainRecord(context) || context.format !== 1) fail('a model context of format 1', context)
  const ctx = context as Record<string, unknown>
  for (const field of ['revision', 'term', 'tombstoneFloor'] as const) {
    if (!Number.isSafeInteger(ctx[field]) || (ctx[field] as number) < 0) fail(`a whole number in "${field}"`, ctx[field])
  }
  if (!isPlainRecord(ctx.counters)) fail('counters', ctx.counters)
  for (const name of counterNames) {
    const value = (ctx.counters as Record<string, unknown>)[name]
    if (!Number.isSafeInteger(value) || (value as number) < 0) fail(`a whole number in counters.${name}`, value)
  }
  const cleanFrom = (ctx.counters as Record<string, unknown>)['cleanMachineFrom']
  if (cleanFrom !== undefined && (!Number.isSafeInteger(cleanFrom) || (cleanFrom as number) < 0)) fail('a whole number in counters.cleanMachineFrom', cleanFrom)
  if (legacy) upgradeLegacyTables(ctx, fail)
  const checkTable = (name: string, table: unknown): void => {
    const problem = tableShapeProblem(table)
    if (problem !== undefined) fail(`a table in "${name}" (${problem})`, table)
  }
  for (const name of tableNames) checkTable(name, ctx[name])
  // Snapshots from before the model registry have no "models" table: an empty one.
  if (ctx.models === undefined) ctx.models = emptyTable()
  checkTable('models', ctx.models)
  // Agent binaries and secrets are absent until the first is added (model-types.ts).
  if (ctx.agentBinaries !== undefined) checkTable('agentBinaries', ctx.agentBinaries)
  if (ctx.secrets !== undefined) checkTable('secrets', ctx.secrets)
  // Snapshots from before models had a UUID: none yet (a controller sets one).
  if (ctx.uuid === undefined) ctx.uuid = ''
  if (typeof ctx.uuid !== 'string') fail('a string "uuid"', ctx.uuid)
  // Snapshots from before model configuration: nothing set, every key at its default.
  if (ctx.config === undefined) ctx.config = {}
  if (!isPlainRecord(ctx.config) || !Object.values(ctx.config).every(v => typeof v === 'string' || typeof v === 'boolean' || typeof v === 'number')) fail('a map of model config values in "config"', ctx.config)
  if (!isPlainRecord(ctx.requests)) fail('the request table', ctx.requests)
  checkTable('requests.current', (ctx.requests as Record<string, unknown>).current)
  checkTable('requests.previous', (ctx.requests as Record<string, unknown>).previous)
  for (const name of ['tombstones', 'finishedActions'] as const) {
    const list = ctx[name]
    if (!Array.isArray(list) || !list.every(chunk => Array.isArray(chunk))) fail(`a chunked list in "${name}"`, list)
  }
  return withHookChangeFields(context as unknown as ModelContext)
}

/**
 * A version 1 context's tables, each rebuilt as a trie in place (the context was decoded
 * for this restore alone): the model's own, the request generations and each relation's
 * members, the only table inside a record.
 */
function upgradeLegacyTables (ctx: Record<string, unknown>, fail: (expected: string, got: unknown) => never): void {
  const upgrade = (name: string, value: unknown): Table<unknown> => fromLegacyTable(value, (expected, got) => fail(`${expected} in "${name}"`, got))
  for (const name of [...tableNames, 'models', 'agentBinaries', 'secrets'] as const) {
    if (ctx[name] !== undefined) ctx[name] = upgrade(name, ctx[name])
  }
  if (isPlainRecord(ctx.requests)) {
    ctx.requests = { ...ctx.requests, current: upgrade('requests.current', ctx.requests.current), previous: upgrade('requests.previous', ctx.requests.previous) }
  }
  const relations = new TableDraft(ctx.relations as Table<unknown>)
  for (const [id, relation] of tableEntries(ctx.relations as Table<unknown>)) {
    if (!isPlainRecord(relation)) fail(`a relation record in "relations"`, relation)
    const record = relation as Record<string, unknown>
    relations.set(id, { ...record, members: upgrade(`relations.${id}.members`, record.members) })
  }
  ctx.relations = relations.finish()
}

/**
 * Records written before units had opened ports, charm state and a status history,
 * applications a workload version, and relations a list of departed members, get the empty values a new record starts with, so every reader
 * can rely on the fields. Records that have them come back as they were.
 */
function withHookChangeFields (context: ModelContext): ModelContext {
  const units = backfilled(context.units, unit => unit.openedPorts !== undefined && unit.charmState !== undefined && unit.statusHistory !== undefined
    ? undefined
    : { ...unit, openedPorts: unit.openedPorts ?? [], charmState: unit.charmState ?? {}, statusHistory: unit.statusHistory ?? [] })
  const applications = backfilled(context.applications, app => app.workloadVersion !== undefined && app.status !== undefined && app.statusHistory !== undefined
    ? undefined
    : { ...app, workloadVersion: app.workloadVersion ?? '', status: app.status ?? null, statusHistory: app.statusHistory ?? [] })
  const machines = backfilled(context.machines, machine => machine.statusHistory !== undefined ? undefined : { ...machine, statusHistory: [] })
  const relations = backfilled(context.relations, relation => relation.departed !== undefined ? undefined : { ...relation, departed: departedMembersOf(relation) })
  const same = units === context.units && applications === context.applications && machines === context.machines && relations === context.relations
  return same ? context : { ...context, units, applications, machines, relations }
}

/**
 * A relation recorded before departures were listed: its members out of scope, in
 * name order (when they left is not known). Members of units that had left the model
 * were deleted with them then, so this is at most the application's units.
 */
function departedMembersOf (relation: RelationRecord): UnitName[] {
  const departed: UnitName[] = []
  for (const [name, member] of tableEntries(relation.members)) if (!member.inScope) departed.push(name)
  return departed.sort(naturalCompare)
}

function backfilled<T> (table: Table<T>, upgrade: (record: T) => T | undefined): Table<T> {
  let draft: TableDraft<T> | undefined
  for (const [key, record] of tableEntries(table)) {
    const upgraded = upgrade(record)
    if (upgraded === undefined) continue
    draft ??= new TableDraft(table)
    draft.set(key, upgraded)
  }
  return draft === undefined ? table : draft.finish()
}
