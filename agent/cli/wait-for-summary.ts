/**
 * What `cantrip wait-for` prints when the goal is reached, as Juju's outputXSummary
 * (cmd/juju/waitfor/application.go, unit.go, machine.go, model.go): a line on stderr
 * (`Application "kv" is running`; `… is being removed` or `… has been removed` for a
 * dying or dead one, with no summary) and, on stdout, YAML of every value the query read:
 * the target's own under `properties`, then those of the units, machines or
 * applications it walked, by name.
 */
import { stringify } from 'yaml'
import type { QueryRead } from '../../runtime/query/query-evaluator.ts'
import type { WaitForKind } from './wait-for-scopes.ts'

/** Juju capitalises only these two kinds in its summary line. */
const label: Record<WaitForKind, string> = { application: 'Application', model: 'Model', unit: 'unit', machine: 'machine' }

/** The collections each kind's summary lists, in Juju's struct order. */
const collections: Record<WaitForKind, readonly string[]> = {
  application: ['units', 'machines'],
  unit: ['machines'],
  machine: [],
  model: ['applications', 'machines', 'units']
}

export function summaryLine (kind: WaitForKind, name: string, life: string): string {
  const state = life === 'dead' ? 'has been removed' : life === 'dying' ? 'is being removed' : 'is running'
  return `${label[kind]} ${JSON.stringify(name)} ${state}`
}

export function summaryYaml (kind: WaitForKind, reads: readonly QueryRead[]): string {
  const properties: Record<string, unknown> = {}
  const nested: Record<string, Record<string, Record<string, unknown>>> = {}
  for (const read of reads) {
    const entry = read.scope.entry
    if (entry === undefined) { properties[read.name] = read.value; continue }
    const byKey = nested[entry.collection] ??= {}
    ;(byKey[entry.key] ??= {})[read.name] = read.value
  }
  const out: Record<string, unknown> = { properties: sorted(properties) }
  for (const collection of collections[kind]) {
    const byKey = nested[collection]
    if (byKey !== undefined) out[collection] = Object.fromEntries(Object.keys(byKey).sort().map(key => [key, sorted(byKey[key]!)]))
  }
  return stringify(out)
}

function sorted (values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.keys(values).sort().map(key => [key, values[key]]))
}
