/**
 * `juju status` in its tabular form (juju-semantics.md §8), rendered from the model the
 * controllers agree on: Model, App, Unit, Machine and Integration sections separated by
 * a blank line, each a header row and natural-sorted rows in plain padded columns.
 *
 * Columns kept from §8: App (Version, Status, Scale, Charm, Rev, Exposed, Message), Unit
 * (Workload, Agent, Machine, Public address, Ports, Message), Machine (State, Address,
 * Inst id, Message), Integration (provider, Requirer, Interface, Type, Message). Left
 * out because this runtime has nothing to put there yet: Channel (local charms only),
 * Base and AZ (no provider), SLA.
 */
import { naturalCompare } from '../runtime/ids.ts'
import { readerOf } from '../runtime/model/model-draft.ts'
import { tableValues } from '../runtime/model/table.ts'
import type { ApplicationRecord, ModelContext, OpenedPortRange, RelationRecord, UnitRecord, WorkloadStatus } from '../runtime/model/model-types.ts'

export interface StatusHeader {
  model: string
  controller: string
  cloud: string
  version: string
  /** When the status was taken (the Timestamp column, UTC `HH:MM:SSZ`). */
  at: Date
}

/** Application status derived from its units, most severe first (§8). */
const severity: readonly WorkloadStatus[] = ['error', 'blocked', 'maintenance', 'waiting', 'active', 'terminated', 'unknown']

/** What a unit shows: an agent in `error` is displayed as workload error + agent idle (§8). */
export function displayedUnitStatus (unit: UnitRecord): { workload: string, agent: string, message: string } {
  if (unit.agent.status === 'error') return { workload: 'error', agent: 'idle', message: unit.agent.message }
  // While a hook runs the message is prefixed with its name: `(install) installing charm software`.
  const hook = unit.agent.status === 'executing' ? /^running (.+) hook$/.exec(unit.agent.message)?.[1] : undefined
  const message = hook === undefined ? unit.workload.message : `(${hook}) ${unit.workload.message}`.trimEnd()
  return { workload: unit.workload.status, agent: unit.agent.status, message }
}

/** `18000/tcp`, `8000-8010/tcp`, `icmp`; several joined with commas, as Juju lists them. */
export function formatPorts (ports: readonly OpenedPortRange[]): string {
  return ports.map(range => {
    if (range.protocol === 'icmp' || range.from === undefined) return range.protocol
    const to = range.to ?? range.from
    return `${to === range.from ? String(range.from) : `${range.from}-${to}`}/${range.protocol}`
  }).join(',')
}

/** The charm's revision from its URL (`local:kv-0` → 0); empty when the URL carries none. */
export function charmRevision (url: string): string {
  return /-(\d+)$/.exec(url)?.[1] ?? ''
}

function charmName (url: string): string {
  return url.replace(/^[a-z]+:/, '').replace(/-\d+$/, '').replace(/^.*\//, '')
}

function applicationStatus (model: ModelContext, app: ApplicationRecord): { status: string, message: string } {
  // Set by the leader with `status-set --application`: shown as it is.
  if (app.status !== null && app.status.status !== 'unknown') return { status: app.status.status, message: app.status.message }
  const reader = readerOf(model)
  const units = app.units.map(name => reader.unit(name)).filter((u): u is UnitRecord => u !== undefined)
  if (units.length === 0) return { status: app.life === 'alive' ? 'waiting' : 'terminated', message: app.life === 'alive' ? 'waiting for units' : '' }
  let best: { status: string, message: string, rank: number } | undefined
  for (const unit of [...units].sort((a, b) => naturalCompare(a.name, b.name))) {
    const shown = displayedUnitStatus(unit)
    const rank = severity.indexOf(shown.workload as WorkloadStatus)
    if (best === undefined || rank < best.rank) best = { status: shown.workload, message: unit.agent.status === 'error' ? shown.message : unit.workload.message, rank }
  }
  return { status: best!.status, message: best!.message }
}

/** Plain padded columns, two spaces apart, trailing blanks trimmed. */
export function columns (rows: readonly (readonly string[])[]): string {
  const widths: number[] = []
  for (const row of rows) row.forEach((cell, i) => { widths[i] = Math.max(widths[i] ?? 0, cell.length) })
  return rows.map(row => row.map((cell, i) => i === row.length - 1 ? cell : cell.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n')
}

function timestamp (at: Date): string {
  return at.toISOString().slice(11, 19) + 'Z'
}

export function formatStatus (model: ModelContext, header: StatusHeader): string {
  const sections: string[] = []
  sections.push(columns([
    ['Model', 'Controller', 'Cloud/Region', 'Version', 'Timestamp'],
    [header.model, header.controller, header.cloud, header.version, timestamp(header.at)]
  ]))

  const applications = tableValues(model.applications).sort((a, b) => naturalCompare(a.name, b.name))
  if (applications.length > 0) {
    const rows = [['App', 'Version', 'Status', 'Scale', 'Charm', 'Rev', 'Exposed', 'Message']]
    for (const app of applications) {
      const { status, message } = applicationStatus(model, app)
      rows.push([app.name, app.workloadVersion, status, String(app.scale), charmName(app.charm), charmRevision(app.charm), app.exposed ? 'yes' : 'no', message])
    }
    sections.push(columns(rows))
  }

  const units = new Map(tableValues(model.units).map(unit => [unit.name, unit]))
  if (units.size > 0) {
    const leaders = new Set(tableValues(model.leases).map(lease => lease.holder))
    const rows = [['Unit', 'Workload', 'Agent', 'Machine', 'Public address', 'Ports', 'Message']]
    const row = (unit: UnitRecord, indent: string): void => {
      const shown = displayedUnitStatus(unit)
      const machine = readerOf(model).machine(unit.machine)
      rows.push([
        indent + unit.name + (leaders.has(unit.name) ? '*' : ''),
        shown.workload, shown.agent, unit.machine, machine?.addresses[0] ?? '', formatPorts(unit.openedPorts), shown.message
      ])
    }
    // Subordinates are listed indented two spaces under their principal.
    for (const unit of [...units.values()].filter(u => u.principal === null).sort((a, b) => naturalCompare(a.name, b.name))) {
      row(unit, '')
      for (const sub of [...unit.subordinates].sort(naturalCompare)) {
        const record = units.get(sub)
        if (record !== undefined) row(record, '  ')
      }
    }
    sections.push(columns(rows))
  }

  const machines = tableValues(model.machines).sort((a, b) => naturalCompare(a.id, b.id))
  if (machines.length > 0) {
    const rows = [['Machine', 'State', 'Address', 'Inst id', 'Message']]
    for (const m of machines) rows.push([m.id, m.agent.status, m.addresses[0] ?? '', m.instanceId ?? 'pending', m.agent.message || m.instance.message])
    sections.push(columns(rows))
  }

  const relations = tableValues(model.relations)
  if (relations.length > 0) {
    const rows = relations.map(integrationRow).sort((a, b) => naturalCompare(a[0]!, b[0]!) || naturalCompare(a[1]!, b[1]!))
    sections.push(columns([['Integration provider', 'Requirer', 'Interface', 'Type', 'Message'], ...rows]))
  }
  return sections.join('\n\n')
}

function integrationRow (relation: RelationRecord): string[] {
  const name = (i: number): string => `${relation.endpoints[i]!.application}:${relation.endpoints[i]!.name}`
  if (relation.peer) return [name(0), name(0), relation.endpoints[0]!.interface, 'peer', relation.life === 'alive' ? '' : relation.life]
  const provider = relation.endpoints.findIndex(ep => ep.role === 'provider')
  const requirer = provider === 0 ? 1 : 0
  return [
    name(provider < 0 ? 0 : provider), name(requirer), relation.endpoints[0]!.interface,
    relation.containerScoped ? 'subordinate' : 'regular',
    relation.suspended ? 'suspended' : relation.life === 'alive' ? '' : relation.life
  ]
}
