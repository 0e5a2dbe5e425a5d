import type { ApplicationName, RelationId, UnitName } from '../../ids.ts'
import { limits } from '../../limits.ts'
import { keys } from '../keys.ts'
import type { ModelDraft } from '../model-draft.ts'
import type { ApplicationRecord, CharmRecord, RelationEndpoint, RelationRecord } from '../model-types.ts'
import { emptyTable, tableGet, tableKeys, tableWith, tableWithout } from '../table.ts'
import { putRelation, removeKey } from './writes.ts'

/**
 * Relations coming and going, and units entering and leaving their scope.
 */

/** For container-scoped `relation` between a principal and a subordinate application: [principal, subordinate]. */
export function subordinatePair (d: ModelDraft, relation: RelationRecord): [ApplicationName, ApplicationName] | undefined {
  if (!relation.containerScoped || relation.life !== 'alive' || relation.peer) return undefined
  const [a, b] = relation.endpoints as [RelationEndpoint, RelationEndpoint]
  const appA = d.application(a.application)
  const appB = d.application(b.application)
  if (appA === undefined || appB === undefined || appA.life !== 'alive' || appB.life !== 'alive') return undefined
  if (appA.subordinate && !appB.subordinate) return [appB.name, appA.name]
  if (appB.subordinate && !appA.subordinate) return [appA.name, appB.name]
  return undefined
}

/**
 * `relation` with `name` (a member in scope) out of scope: it stays a member, with its
 * bag, as the newest departure; departures beyond limits.relationDepartedMembersMax
 * lose their member record and bag, oldest first. The caller puts the result.
 */
export function leaveScope (d: ModelDraft, relation: RelationRecord, name: UnitName): RelationRecord {
  const member = tableGet(relation.members, name)!
  const departed = [...relation.departed, name]
  const excess = departed.length - limits.relationDepartedMembersMax
  let members = tableWith(relation.members, name, { ...member, inScope: false })
  for (const unit of departed.slice(0, Math.max(0, excess))) {
    // Removed while the relation (and the member, which gives the bag's scope) is unchanged in the draft.
    const key = keys.unitSettings(relation.id, unit)
    if (d.settings(key) !== undefined) {
      removeKey(d, key)
      d.settingsTable.delete(key)
    }
    members = tableWithout(members, unit)
  }
  return { ...relation, members, inScope: relation.inScope - 1, departed: excess > 0 ? departed.slice(excess) : departed }
}

function addRelationToApplication (d: ModelDraft, application: ApplicationName, id: RelationId): void {
  const app = d.application(application)
  if (app === undefined || app.relations.includes(id)) return
  // Only an index: the application's own key does not change.
  d.applications.set(application, { ...app, relations: [...app.relations, id].sort((x, y) => x - y) })
}

export function createRelation (d: ModelDraft, endpoints: RelationEndpoint[], peer: boolean): RelationRecord {
  const id = d.counters.relation
  d.counters = { ...d.counters, relation: id + 1 }
  const relation: RelationRecord = {
    id,
    key: endpoints.map(ep => `${ep.application}:${ep.name}`).join(' '),
    endpoints,
    life: 'alive',
    suspended: false,
    peer,
    containerScoped: endpoints.some(ep => ep.scope === 'container'),
    members: emptyTable(),
    inScope: 0,
    departed: []
  }
  putRelation(d, relation)
  for (const ep of endpoints) addRelationToApplication(d, ep.application, id)
  return relation
}

export function createPeerRelations (d: ModelDraft, app: ApplicationRecord, charm: CharmRecord): void {
  const existing = new Set(app.relations.map(id => d.relation(id)).filter(r => r?.peer === true).map(r => r!.endpoints[0]!.name))
  for (const [name, ep] of Object.entries(charm.metadata.peers).sort(([x], [y]) => x < y ? -1 : x > y ? 1 : 0)) {
    if (existing.has(name)) continue
    createRelation(d, [{ application: app.name, name, interface: ep.interface, role: 'peer', scope: 'global', implicit: false }], true)
  }
}

/** Removes a relation and its databags, telling watchers. */
export function removeRelation (d: ModelDraft, relation: RelationRecord): void {
  const gone: string[] = [keys.relation(relation.id)]
  for (const unit of tableKeys(relation.members)) {
    const key = keys.unitSettings(relation.id, unit)
    if (d.settings(key) !== undefined) gone.push(key)
  }
  for (const ep of relation.endpoints) {
    const key = keys.applicationSettings(relation.id, ep.application)
    if (d.settings(key) !== undefined && !gone.includes(key)) gone.push(key)
  }
  // Scopes are computed while the relation still exists.
  for (const key of gone) removeKey(d, key)
  for (const key of gone.slice(1)) d.settingsTable.delete(key)
  d.relations.delete(String(relation.id))
  for (const application of new Set(relation.endpoints.map(ep => ep.application))) {
    const app = d.application(application)
    if (app !== undefined) d.applications.set(application, { ...app, relations: app.relations.filter(id => id !== relation.id) })
  }
}

export function maybeRemoveRelation (d: ModelDraft, relation: RelationRecord): void {
  if (relation.life !== 'alive' && relation.inScope === 0) removeRelation(d, relation)
}

export function dyingRelation (d: ModelDraft, relation: RelationRecord): void {
  if (relation.life !== 'alive') return
  const dying = { ...relation, life: 'dying' as const }
  putRelation(d, dying)
  maybeRemoveRelation(d, dying)
}
