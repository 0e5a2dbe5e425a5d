import { isApplicationName, type ApplicationName, type MachineId, type UnitName } from '../../ids.ts'
import { limits } from '../../limits.ts'
import { charmEndpoints, type EndpointInfo } from '../charm-summary.ts'
import { keys } from '../keys.ts'
import type { ModelCommand, RelationEndpoint } from '../model-types.ts'
import { tableGet, tableWith } from '../table.ts'
import { requireAdmin, requireUnitAgent } from './authorisation.ts'
import { writableBagKey, writeBag } from './bags.ts'
import { unitName, relationId, optionalBoolean, stringRecord, sortedRecord } from './fields.ts'
import { getApplication, getRelation, unitInRelation, charmOf } from './lookups.ts'
import { q, refuse, type HandlerTable } from './refusal.ts'
import { subordinatePair, leaveScope, createRelation, maybeRemoveRelation, dyingRelation } from './relation-records.ts'
import { ensureSubordinate } from './unit-records.ts'
import { putRelation, putSettings } from './writes.ts'

/**
 * The relation commands: integrating, removing, entering and leaving scope, and databag writes.
 */

function parseEndpointRef (c: ModelCommand, value: unknown): { application: ApplicationName, endpoint: string | undefined } {
  if (typeof value !== 'string') refuse(c, `${q(value)} is not an endpoint like "app" or "app:endpoint"`)
  const colon = value.indexOf(':')
  const application = colon < 0 ? value : value.slice(0, colon)
  const endpoint = colon < 0 ? undefined : value.slice(colon + 1)
  if (!isApplicationName(application) || endpoint === '') refuse(c, `${q(value)} is not an endpoint like "app" or "app:endpoint"`)
  return { application, endpoint }
}

function endpointOf (application: ApplicationName, info: EndpointInfo): RelationEndpoint {
  return { application, name: info.name, interface: info.interface, role: info.role, scope: info.scope, implicit: info.implicit }
}

export const relationCommands: HandlerTable<'integrate' | 'remove-relation' | 'enter-scope' | 'leave-scope' | 'relation-settings'> = {
  integrate: (d, c) => {
    requireAdmin(c)
    const refA = parseEndpointRef(c, c.a)
    const refB = parseEndpointRef(c, c.b)
    if (refA.application === refB.application) refuse(c, 'an application cannot be integrated with itself; peer relations come with the charm')
    const appA = getApplication(d, c, refA.application)
    const appB = getApplication(d, c, refB.application)
    for (const app of [appA, appB]) if (app.life !== 'alive') refuse(c, `application ${q(app.name)} is ${app.life}`)
    const endpointsA = charmEndpoints(charmOf(d, appA).metadata).filter(ep => ep.role !== 'peer' && (refA.endpoint === undefined || ep.name === refA.endpoint))
    const endpointsB = charmEndpoints(charmOf(d, appB).metadata).filter(ep => ep.role !== 'peer' && (refB.endpoint === undefined || ep.name === refB.endpoint))
    if (refA.endpoint !== undefined && endpointsA.length === 0) refuse(c, `application ${q(appA.name)} has no endpoint ${q(refA.endpoint)}`)
    if (refB.endpoint !== undefined && endpointsB.length === 0) refuse(c, `application ${q(appB.name)} has no endpoint ${q(refB.endpoint)}`)
    let pairs: Array<[EndpointInfo, EndpointInfo]> = []
    for (const a of endpointsA) {
      for (const b of endpointsB) {
        const roles = (a.role === 'provider' && b.role === 'requirer') || (a.role === 'requirer' && b.role === 'provider')
        if (roles && a.interface === b.interface) pairs.push([a, b])
      }
    }
    // The implicit juju-info provider is used only when nothing explicit matches (as Juju does).
    const explicit = pairs.filter(([a, b]) => !a.implicit && !b.implicit)
    if (explicit.length > 0) pairs = explicit
    if (pairs.length === 0) refuse(c, 'no matching endpoints (same interface, one provider and one requirer)')
    if (pairs.length > 1) {
      const options = pairs.map(([a, b]) => `${appA.name}:${a.name} ${appB.name}:${b.name}`).join(', ')
      refuse(c, `ambiguous: name the endpoints, one of ${options}`)
    }
    const [a, b] = pairs[0]!
    // Juju's relation key order: the requirer first.
    const endpoints = a.role === 'requirer'
      ? [endpointOf(appA.name, a), endpointOf(appB.name, b)]
      : [endpointOf(appB.name, b), endpointOf(appA.name, a)]
    const key = endpoints.map(ep => `${ep.application}:${ep.name}`).join(' ')
    for (const id of appA.relations) {
      if (d.relation(id)?.key === key) refuse(c, `relation ${q(key)} already exists`)
    }
    for (const app of [appA, appB]) {
      if (app.relations.length >= limits.relationsPerUnitMax) refuse(c, `application ${q(app.name)} already has ${limits.relationsPerUnitMax} relations`)
    }
    const relation = createRelation(d, endpoints, false)
    const created = { machines: [] as MachineId[], units: [] as UnitName[] }
    const pair = subordinatePair(d, relation)
    if (pair !== undefined) {
      for (const principal of d.application(pair[0])!.units) ensureSubordinate(d, pair[1], principal, created)
    }
    return { relationId: relation.id, units: created.units }
  },

  'remove-relation': (d, c) => {
    requireAdmin(c)
    const relation = getRelation(d, c, relationId(c, c.relationId))
    if (relation.peer) refuse(c, 'a peer relation is removed with its application')
    dyingRelation(d, relation)
    return {}
  },

  'enter-scope': (d, c) => {
    const { name, unit, relation } = unitInRelation(d, c)
    if (tableGet(relation.members, name)?.inScope === true) return {}
    if (relation.life !== 'alive') refuse(c, `relation ${relation.id} is ${relation.life}`)
    if (unit.life !== 'alive') refuse(c, `unit ${q(name)} is ${unit.life}`)
    if (relation.inScope >= limits.relationMembersMax) refuse(c, `relation ${relation.id} already has ${limits.relationMembersMax} units in scope`)
    // Re-entering after leaving: no longer a departure.
    const departed = relation.departed.includes(name) ? relation.departed.filter(u => u !== name) : relation.departed
    putRelation(d, { ...relation, members: tableWith(relation.members, name, { machine: unit.machine, inScope: true }), inScope: relation.inScope + 1, departed })
    // Entering scope writes the address keys (juju-semantics §2.2): version 1, or a new version on re-entry.
    const address = d.machine(unit.machine)?.addresses[0]
    const key = keys.unitSettings(relation.id, name)
    const previous = d.settings(key)
    const values: Record<string, string> = { ...previous?.values }
    if (address !== undefined) {
      values['egress-subnets'] = address.includes(':') ? `${address}/128` : `${address}/32`
      values['ingress-address'] = address
      values['private-address'] = address
    }
    putSettings(d, key, { version: (previous?.version ?? 0) + 1, values: sortedRecord(values) })
    return {}
  },

  'leave-scope': (d, c) => {
    const name = unitName(c, c.unit)
    requireUnitAgent(d, c, name)
    const relation = d.relation(relationId(c, c.relationId))
    // Idempotent: the relation may be gone already, and leaving twice is not an error (as in Juju).
    const member = relation === undefined ? undefined : tableGet(relation.members, name)
    if (relation === undefined || member?.inScope !== true) return {}
    const left = leaveScope(d, relation, name)
    putRelation(d, left)
    maybeRemoveRelation(d, left)
    return {}
  },

  'relation-settings': (d, c) => {
    const { unit, relation } = unitInRelation(d, c)
    const changes = stringRecord(c, 'settings', c.settings)
    const application = optionalBoolean(c, 'application', c.application) ?? false
    writeBag(d, c, writableBagKey(d, c, unit, relation, application), changes)
    return {}
  }
}
