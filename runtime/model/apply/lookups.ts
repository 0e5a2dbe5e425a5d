import { assert } from '../../assert.ts'
import type { ApplicationName, MachineId, RelationId, UnitName } from '../../ids.ts'
import type { ModelDraft } from '../model-draft.ts'
import type { ApplicationRecord, CharmRecord, MachineRecord, ModelCommand, RelationEndpoint, RelationRecord, UnitRecord } from '../model-types.ts'
import { requireUnitAgent } from './authorisation.ts'
import { unitName, relationId } from './fields.ts'
import { q, refuse } from './refusal.ts'

/**
 * Lookups of the records a command names, refusing when one is missing.
 */

export function getApplication (d: ModelDraft, c: ModelCommand, name: ApplicationName): ApplicationRecord {
  const app = d.application(name)
  if (app === undefined) refuse(c, `application ${q(name)} not found`)
  return app
}

export function getUnit (d: ModelDraft, c: ModelCommand, name: UnitName): UnitRecord {
  const unit = d.unit(name)
  if (unit === undefined) refuse(c, `unit ${q(name)} not found`)
  return unit
}

export function getMachine (d: ModelDraft, c: ModelCommand, id: MachineId): MachineRecord {
  const machine = d.machine(id)
  if (machine === undefined) refuse(c, `machine ${q(id)} not found`)
  return machine
}

export function getRelation (d: ModelDraft, c: ModelCommand, id: RelationId): RelationRecord {
  const relation = d.relation(id)
  if (relation === undefined) refuse(c, `relation ${id} not found`)
  return relation
}

/** The unit a unit-agent command names, checked to be the caller's and part of the relation it names. */
export function unitInRelation (d: ModelDraft, c: ModelCommand & { unit: unknown, relationId: unknown }): { name: UnitName, unit: UnitRecord, relation: RelationRecord } {
  const name = unitName(c, c.unit)
  requireUnitAgent(d, c, name)
  const unit = getUnit(d, c, name)
  const relation = relationOfUnit(d, c, unit, c.relationId)
  return { name, unit, relation }
}

/** The relation `id` names, checked to be one `unit`'s application takes part in. */
export function relationOfUnit (d: ModelDraft, c: ModelCommand, unit: UnitRecord, id: unknown): RelationRecord {
  const relation = getRelation(d, c, relationId(c, id))
  if (ownEndpoint(relation, unit.application) === undefined) refuse(c, `unit ${q(unit.name)} is not part of relation ${relation.id}`)
  return relation
}

export function getCharm (d: ModelDraft, c: ModelCommand, url: string): CharmRecord {
  const charm = d.charm(url)
  if (charm === undefined) refuse(c, `charm ${q(url)} not found; add it first`)
  return charm
}

export function charmOf (d: ModelDraft, app: ApplicationRecord): CharmRecord {
  const charm = d.charm(app.charm)
  assert(charm !== undefined, `model: application "${app.name}" uses missing charm "${app.charm}"`)
  return charm
}

export function ownEndpoint (relation: RelationRecord, application: ApplicationName): RelationEndpoint | undefined {
  return relation.endpoints.find(ep => ep.application === application)
}

export function unitOfApplication (d: ModelDraft, c: ModelCommand, unit: UnitName, application: ApplicationName): UnitRecord {
  const record = getUnit(d, c, unit)
  if (record.application !== application) refuse(c, `unit ${q(unit)} is not a unit of ${q(application)}`)
  return record
}
