/**
 * What `goal-state` tells a unit (juju-semantics §5.3): the units and relations the model
 * intends for the unit's application, each with a status and, when known, the time it was
 * set. The rules are Juju's uniter facade (apiserver/facades/agent/uniter/uniter.go,
 * `oneGoalState`, `goalStateUnits`, `goalStateRelations`):
 *
 * - `units`: every unit of the application that is not dead, with its workload status
 *   (`error` while its agent is in hook error, as Juju's Unit.Status reads it) or `dying`;
 *   a subordinate unit is listed only when its principal is the asking unit — so a
 *   subordinate application lists none of its own units, exactly as Juju does.
 * - `relations`: keyed by this application's endpoint, for every relation that is not a
 *   peer relation: the remote application with the relation's status, and the remote
 *   application's units by the same rule as above.
 *
 * Relation status follows Juju's life cycle: `joining` until a unit has entered scope,
 * `joined` after, `suspended`, and `broken` once the relation is dying.
 *
 * Juju always gives a `since`, and ops' parser requires one. cantrip keeps no time for a
 * relation's status, nor for a unit status the model set itself (`waiting for machine`):
 * those entries say `since` = `now`, the time of the answer — a statement that the status
 * holds at least from then, never a claim about when it began.
 */
import { limits } from '../limits.ts'
import { readerOf, type ModelReader } from './model-draft.ts'
import type { ApplicationRecord, ModelContext, RelationRecord } from './model-types.ts'
import { displayedUnit } from './status-display.ts'

export interface GoalStatus {
  readonly status: string
  /** The clock reading (ms) when the status was set; when unknown, the time of the answer. */
  readonly since: number
}

export interface GoalState {
  readonly units: Readonly<Record<string, GoalStatus>>
  readonly relations: Readonly<Record<string, Readonly<Record<string, GoalStatus>>>>
}

/** The goal state for `unit`, or undefined when the unit is not in the model. */
export function goalStateOf (context: ModelContext, unit: string, now: number): GoalState | undefined {
  const reader = readerOf(context)
  const record = reader.unit(unit)
  const app = record === undefined ? undefined : reader.application(record.application)
  if (record === undefined || app === undefined) return undefined
  const budget = { left: limits.goalStateEntriesMax }
  const units = unitsOf(reader, app, unit, budget, now)
  const relations: Record<string, Record<string, GoalStatus>> = {}
  for (const id of app.relations) {
    const relation = reader.relation(id)
    if (relation === undefined || relation.peer) continue
    const local = relation.endpoints.find(endpoint => endpoint.application === app.name)
    if (local === undefined) continue
    for (const endpoint of relation.endpoints) {
      // Juju never lists the asking application under its own relations.
      if (endpoint.application === app.name) continue
      const remote = reader.application(endpoint.application)
      const entries = relations[local.name] ?? {}
      if (take(budget)) entries[endpoint.application] = { status: relationStatus(relation), since: now }
      if (remote !== undefined) Object.assign(entries, unitsOf(reader, remote, unit, budget, now))
      relations[local.name] = entries
    }
  }
  return { units, relations }
}

function take (budget: { left: number }): boolean {
  if (budget.left <= 0) return false
  budget.left--
  return true
}

function unitsOf (reader: ModelReader, app: ApplicationRecord, principal: string, budget: { left: number }, now: number): Record<string, GoalStatus> {
  const out: Record<string, GoalStatus> = {}
  for (const name of app.units) {
    const unit = reader.unit(name)
    if (unit === undefined || unit.life === 'dead') continue
    if (unit.principal !== null && unit.principal !== principal) continue
    if (!take(budget)) break
    const workload = displayedUnit(unit, false).workload
    const since = workload.since ?? now
    out[name] = { status: unit.life === 'dying' ? 'dying' : workload.status, since }
  }
  return out
}

function relationStatus (relation: RelationRecord): string {
  if (relation.suspended) return 'suspended'
  if (relation.life !== 'alive') return 'broken'
  return relation.inScope > 0 || relation.departed.length > 0 ? 'joined' : 'joining'
}
