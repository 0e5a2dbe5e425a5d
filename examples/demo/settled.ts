/**
 * When the demo deployment is settled, read from the status document: every unit and
 * subordinate active and idle, and each charm seeing what its relations give it — web
 * as many backends as there are kv units, every cluster unit all its peers, kv's leader
 * having shared its write token. Pure: the caller fetches the model.
 */
import type { StatusDocument, UnitStatus } from '../../agent/cli/status-document.ts'

export const demoApplications = ['kv', 'web', 'logship', 'cluster'] as const

export interface Settling {
  /** What still keeps the deployment from being settled; empty when it is. */
  readonly problems: string[]
  readonly active: number
  readonly total: number
}

/** Every unit of the document with its subordinates, by name. */
export function allUnits (doc: StatusDocument): Array<[string, UnitStatus]> {
  return Object.values(doc.applications).flatMap(app => Object.entries(app.units ?? {}).flatMap(([name, unit]) => [
    [name, unit] as [string, UnitStatus],
    ...Object.entries(unit.subordinates ?? {})
  ]))
}

function describe (name: string, unit: UnitStatus): string {
  const message = unit['workload-status'].message
  return `${name} ${unit['workload-status'].current}${message === undefined ? '' : ` "${message}"`} (agent ${unit['juju-status'].current})`
}

export function settling (doc: StatusDocument, kvToken: string | undefined): Settling {
  const problems: string[] = []
  for (const app of demoApplications) if (doc.applications[app] === undefined) problems.push(`${app} not in the model yet`)
  const units = allUnits(doc)
  let active = 0
  for (const [name, unit] of units) {
    if (unit['workload-status'].current === 'active' && unit['juju-status'].current === 'idle') active++
    else problems.push(describe(name, unit))
  }
  const kvUnits = Object.keys(doc.applications['kv']?.units ?? {}).length
  const web = doc.applications['web']
  if (web !== undefined && kvUnits > 0 && web['application-status'].message !== `${kvUnits} backends`) {
    problems.push(`web sees "${web['application-status'].message ?? ''}", waiting for ${kvUnits} backends`)
  }
  const cluster = Object.entries(doc.applications['cluster']?.units ?? {})
  for (const [name, unit] of cluster) {
    if (!(unit['workload-status'].message ?? '').startsWith(`member of ${cluster.length},`)) problems.push(`${name} waiting for ${cluster.length} members`)
  }
  for (const [name, app] of Object.entries(doc.applications)) {
    const principals = Object.values(app.units ?? {})
    if (principals.length > 0 && !principals.some(u => u.leader === true)) problems.push(`${name}: no leader yet`)
  }
  if (kvUnits > 0 && (kvToken ?? '') === '') problems.push('kv: the leader has not shared its write token yet')
  return { problems, active, total: units.length }
}
