import { keys, parseKey } from './keys.ts'
import { readerOf, type ModelReader } from './model-draft.ts'
import { listAfter } from './chunked-list.ts'
import type { Entity, ModelContext, Tombstone } from './model-types.ts'
import { tableEntries, tableGet, tableHas, tableKeys } from './table.ts'
import { keyScope, mayView, relationVisibleTo, viewerOf, type Viewer } from './visibility.ts'

/**
 * "What changed since revision R that entity E may see" (DESIGN.md §5: a change notice
 * names keys; the agent fetches what it is entitled to). Answered from the per-key
 * revision index and the bounded tombstone list in the context, with no delta log:
 * a restricted entity's candidate keys are enumerated from its own units, so the cost
 * follows what it can see, not the size of the model.
 */

export interface KeyChange {
  readonly key: string
  readonly revision: number
  readonly removed?: true
}

export interface ChangesSince {
  /** The context's revision: the next call passes this as `sinceRevision`. */
  readonly revision: number
  /**
   * False when removals after `sinceRevision` may have been forgotten (older than the
   * tombstone floor): the watcher must refetch its whole view and drop what is missing.
   */
  readonly complete: boolean
  /** Ordered by revision, then key. */
  readonly changes: readonly KeyChange[]
}

export function changesSince (context: ModelContext, sinceRevision: number, entity: Entity): ChangesSince {
  const reader = readerOf(context)
  const viewer = viewerOf(reader, entity)
  const changes: KeyChange[] = []
  const candidates = viewer.admin ? undefined : visibleKeys(reader, viewer)
  if (candidates === undefined) {
    for (const [key, revision] of tableEntries(context.keyRevisions)) {
      if (revision > sinceRevision) changes.push({ key, revision })
    }
  } else {
    for (const key of candidates) {
      const revision = tableGet(context.keyRevisions, key)
      if (revision !== undefined && revision > sinceRevision) changes.push({ key, revision })
    }
  }
  for (const tombstone of newerTombstones(context, sinceRevision)) {
    // A key removed and later created again is reported as changed (above).
    if (tableHas(context.keyRevisions, tombstone.key)) continue
    if (!mayView(viewer, tombstone.scope)) continue
    changes.push({ key: tombstone.key, revision: tombstone.revision, removed: true })
  }
  changes.sort((a, b) => a.revision - b.revision || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  return { revision: context.revision, complete: sinceRevision >= context.tombstoneFloor, changes: dedupe(changes) }
}

/** May `entity` read `key` now (for the API's scoped fetches)? */
export function mayRead (context: ModelContext, entity: Entity, key: string): boolean {
  const reader = readerOf(context)
  const viewer = viewerOf(reader, entity)
  const parsed = parseKey(key)
  const relationId = parsed?.kind === 'relation' || parsed?.kind === 'unit-settings' || parsed?.kind === 'application-settings' ? parsed.relationId : undefined
  return mayView(viewer, keyScope(reader, key), reader, relationId)
}

/** Tombstones after `sinceRevision` (the list is in revision order). */
function newerTombstones (context: ModelContext, sinceRevision: number): Tombstone[] {
  return listAfter(context.tombstones, tombstone => tombstone.revision, sinceRevision)
}

function dedupe (changes: KeyChange[]): KeyChange[] {
  const seen = new Set<string>()
  const out: KeyChange[] = []
  for (let i = changes.length - 1; i >= 0; i--) {
    const change = changes[i]!
    if (seen.has(change.key)) continue
    seen.add(change.key)
    out.push(change)
  }
  return out.reverse()
}

/** Every existing key a machine agent or unit agent may see. */
function visibleKeys (reader: ModelReader, viewer: Viewer): Set<string> {
  const out = new Set<string>([keys.modelConfig()])
  if (viewer.machine !== null && reader.machine(viewer.machine) !== undefined) {
    out.add(keys.machine(viewer.machine))
    out.add(keys.machineStatus(viewer.machine))
  }
  const applications = new Set<string>()
  for (const u of viewer.units) {
    const unit = reader.unit(u.name)!
    out.add(keys.unit(u.name))
    out.add(keys.unitStatus(u.name))
    out.add(keys.unitPorts(u.name))
    out.add(keys.unitState(u.name))
    out.add(keys.machine(u.machine))
    out.add(keys.machineStatus(u.machine))
    for (const id of unit.actions) out.add(keys.action(id))
    applications.add(u.application)
  }
  for (const name of applications) {
    const app = reader.application(name)
    if (app === undefined) continue
    out.add(keys.application(name))
    out.add(keys.leadership(name))
    out.add(keys.leaderSettings(name))
    out.add(keys.charm(app.charm))
    for (const id of app.relations) {
      const relation = reader.relation(id)
      if (relation === undefined) continue
      const seers = viewer.units.filter(u => u.application === name && relationVisibleTo(reader, relation, u))
      if (seers.length === 0) continue
      out.add(keys.relation(id))
      for (const ep of relation.endpoints) out.add(keys.applicationSettings(id, ep.application))
      for (const member of tableKeys(relation.members)) {
        const key = keys.unitSettings(id, member)
        if (mayView({ ...viewer, units: seers }, keyScope(reader, key))) out.add(key)
      }
    }
  }
  return out
}
