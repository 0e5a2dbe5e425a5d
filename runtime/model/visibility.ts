import type { ApplicationName, MachineId, UnitName } from '../ids.ts'
import { parseKey } from './keys.ts'
import type { ModelReader } from './model-draft.ts'
import type { Entity, KeyScope, RelationRecord } from './model-types.ts'
import { tableGet } from './table.ts'
import { secretScope } from './apply/secret-records.ts'

/**
 * Who may see what (DESIGN.md §10). A machine agent sees its machine, its units, their
 * applications (config, charm, leadership, leader settings), the relations its units'
 * applications take part in, and in those the databags of the units its units relate
 * to (for container-scoped relations only units on the same machine) — never another
 * application's config. A unit sees the same restricted to itself. Users and controller
 * workers see everything, and they alone see controller leases.
 */

export interface ViewerUnit {
  readonly name: UnitName
  readonly application: ApplicationName
  readonly machine: MachineId
}

export interface Viewer {
  readonly admin: boolean
  /** The machine agent's own machine (also for units removed from it); null for others. */
  readonly machine: MachineId | null
  readonly units: readonly ViewerUnit[]
}

export function viewerOf (reader: ModelReader, entity: Entity): Viewer {
  switch (entity.kind) {
    case 'user':
    case 'controller':
      return { admin: true, machine: null, units: [] }
    case 'machine': {
      const machine = reader.machine(entity.id)
      const units: ViewerUnit[] = []
      for (const name of machine?.units ?? []) {
        const unit = reader.unit(name)
        if (unit !== undefined) units.push({ name, application: unit.application, machine: unit.machine })
      }
      return { admin: false, machine: entity.id, units }
    }
    case 'unit': {
      const unit = reader.unit(entity.name)
      return { admin: false, machine: null, units: unit === undefined ? [] : [{ name: unit.name, application: unit.application, machine: unit.machine }] }
    }
  }
}

/** Who may see `key`, from the current state; `model` (admins only) for keys naming nothing that exists. */
export function keyScope (reader: ModelReader, key: string): KeyScope {
  const parsed = parseKey(key)
  if (parsed === undefined) return { kind: 'model' }
  switch (parsed.kind) {
    case 'application':
    case 'leadership':
    case 'leader-settings':
      return { kind: 'application', application: parsed.application }
    case 'charm':
      return { kind: 'charm', url: parsed.url }
    case 'unit':
    case 'unit-status':
    // Ports are seen like status; charm state is the unit's own, and the 'unit' scope
    // admits only the unit itself, its machine agent and admins.
    case 'unit-ports':
    case 'unit-state': {
      const unit = reader.unit(parsed.unit)
      return unit === undefined ? { kind: 'model' } : { kind: 'unit', unit: unit.name, machine: unit.machine }
    }
    case 'machine':
    case 'machine-status':
      return { kind: 'machine', machine: parsed.machine }
    case 'action': {
      const action = reader.action(parsed.actionId)
      return action === undefined ? { kind: 'model' } : { kind: 'unit', unit: action.unit, machine: action.machine }
    }
    case 'relation': {
      const relation = reader.relation(parsed.relationId)
      return relation === undefined ? { kind: 'model' } : { kind: 'relation', applications: relationApplications(relation) }
    }
    case 'unit-settings': {
      const relation = reader.relation(parsed.relationId)
      if (relation === undefined) return { kind: 'model' }
      const machine = tableGet(relation.members, parsed.unit)?.machine ?? reader.unit(parsed.unit)?.machine
      if (machine === undefined) return { kind: 'model' }
      return {
        kind: 'relation-unit',
        applications: relationApplications(relation),
        peer: relation.peer,
        containerScoped: relation.containerScoped,
        unit: parsed.unit,
        machine
      }
    }
    case 'application-settings': {
      const relation = reader.relation(parsed.relationId)
      return relation === undefined ? { kind: 'model' } : { kind: 'relation-application', applications: relationApplications(relation) }
    }
    case 'model-config':
      return { kind: 'model-agents' }
    case 'controller-lease':
      // Which controller runs the singular workers is the controllers' business: admins only.
      return { kind: 'model' }
    case 'secret': {
      // The secret's owner, grantees and consumers: agents that never touch it do not learn of it.
      const secret = reader.secret(parsed.id)
      return secret === undefined ? { kind: 'model' } : secretScope(secret)
    }
  }
}

export function relationApplications (relation: RelationRecord): ApplicationName[] {
  return [...new Set(relation.endpoints.map(ep => ep.application))]
}

function applicationOfUnit (unit: UnitName): ApplicationName {
  const slash = unit.lastIndexOf('/')
  return slash < 0 ? unit : unit.slice(0, slash)
}

/**
 * May `viewer` see a key with this scope? `reader` and `relationId`, given for keys of a
 * relation that still exists, refine them with the container-scope rule the remote-state
 * view applies: only the viewer's units that see the relation count (a subordinate sees a
 * container-scoped relation only beside a unit of the other side).
 */
export function mayView (viewer: Viewer, scope: KeyScope, reader?: ModelReader, relationId?: number): boolean {
  if (viewer.admin) return true
  const relation = reader !== undefined && relationId !== undefined ? reader.relation(relationId) : undefined
  if (relation !== undefined) {
    viewer = { ...viewer, units: viewer.units.filter(u => relationVisibleTo(reader!, relation, u)) }
  }
  switch (scope.kind) {
    case 'model':
      return false
    case 'model-agents':
      return true
    case 'application':
      return viewer.units.some(u => u.application === scope.application)
    case 'charm':
      return reader !== undefined && viewer.units.some(u => reader.application(u.application)?.charm === scope.url)
    case 'machine':
      return viewer.machine === scope.machine || viewer.units.some(u => u.machine === scope.machine)
    case 'unit':
      return viewer.units.some(u => u.name === scope.unit) || viewer.machine === scope.machine
    case 'relation':
    case 'relation-application':
      return viewer.units.some(u => scope.applications.includes(u.application))
    case 'relation-unit': {
      const owner = applicationOfUnit(scope.unit)
      return viewer.units.some(u =>
        u.name === scope.unit ||
        (scope.applications.includes(u.application) &&
          (scope.peer ? owner === u.application : owner !== u.application) &&
          (!scope.containerScoped || scope.machine === u.machine)))
    }
  }
}

/**
 * Whether `unit` sees `relation` at all: always for its own application's relations,
 * except a container-scoped one with no unit of the other application on its machine.
 */
export function relationVisibleTo (reader: ModelReader, relation: RelationRecord, unit: ViewerUnit): boolean {
  if (!relation.endpoints.some(ep => ep.application === unit.application)) return false
  if (!relation.containerScoped) return true
  const other = relation.endpoints.find(ep => ep.application !== unit.application)
  if (other === undefined) return true
  const machine = reader.machine(unit.machine)
  return (machine?.units ?? []).some(name => applicationOfUnit(name) === other.application)
}
