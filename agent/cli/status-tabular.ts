/**
 * The tabular `cantrip status` (juju-semantics.md §8, Juju 3.x): sections separated by a
 * blank line, each a header row and natural-sorted rows in columns two spaces apart;
 * the leader unit starred, subordinates indented under their principal, integrations
 * only with `--relations`.
 */
import { readerOf } from '../../runtime/model/model-draft.ts'
import { tableValues } from '../../runtime/model/table.ts'
import type { FullModel } from './connection.ts'
import { plainTable } from './plain-table.ts'
import { statusPainter } from './status-colour.ts'
import { naturalCompare, type StatusBase, type StatusDocument, type UnitStatus } from './status-document.ts'

/**
 * What the unit's agent is doing, for the message column: Juju's agentDoing
 * (cmd/juju/status/output_tabular.go) matches the unit hooks by name (a relation hook's
 * name starts with its endpoint, so it never matches) and `running action NAME`.
 */
const unitHookNames = [
  'install', 'start', 'config-changed', 'upgrade-charm', 'stop', 'remove', 'leader-elected', 'leader-settings-changed',
  'update-status', 'collect-metrics', 'meter-status-changed', 'pre-series-upgrade', 'post-series-upgrade'
]
const runningHook = new RegExp(`^running (${unitHookNames.join('|')}) hook`)

export function agentDoing (agent: UnitStatus['juju-status']): string {
  if (agent.current !== 'executing') return ''
  const message = agent.message ?? ''
  return runningHook.exec(message)?.[1] ?? /^running action (.*)$/.exec(message)?.[1] ?? ''
}

/**
 * The Message column: `(install) installing charm software` while a hook runs (juju-semantics §8);
 * while allocating with no workload message, the agent's (Juju's printApplications).
 */
function unitMessage (unit: UnitStatus): string {
  const doing = agentDoing(unit['juju-status'])
  const agent = unit['juju-status']
  const message = unit['workload-status'].message ?? (agent.current === 'allocating' ? agent.message ?? '' : '')
  return truncateMessage(doing === '' ? message : `(${doing}) ${message}`.trimEnd())
}

/** Juju's truncateMessage (output_tabular.go): a message over 120 characters ends in `...`. */
const messageLengthMax = 120
export function truncateMessage (message: string): string {
  return message.length > messageLengthMax ? `${message.slice(0, messageLengthMax - 3)}...` : message
}

/** Juju's DisplayString of a base (core/base): `ubuntu@22.04`; empty while unknown. */
export function baseDisplay (base: StatusBase | undefined): string {
  return base === undefined ? '' : `${base.name}@${base.channel}`
}

/**
 * The Machine section (Juju's printMachines, also `cantrip machines`): State is the agent's,
 * Base the host's, AZ empty (the local provider has none), Message the instance status's
 * message only (or why its agent runs another version than the model's).
 */
export function machinesSection (doc: StatusDocument, paint: (status: string) => string): string {
  return table([
    ['Machine', 'State', 'Address', 'Inst id', 'Base', 'AZ', 'Message'],
    ...Object.entries(doc.machines).map(([id, machine]) => [
      id, paint(machine['juju-status'].current), machine['dns-name'] ?? '', machine['instance-id'], baseDisplay(machine.base), '',
      truncateMessage(machine['agent-version-message'] ?? machine['machine-status'].message ?? '')
    ])
  ])
}

function table (rows: string[][]): string {
  return plainTable(rows)
}

export function formatTabular (doc: StatusDocument, full: FullModel, options: { relations: boolean, colour?: boolean }): string {
  const sections: string[] = []
  const paint = statusPainter(options.colour === true)
  const m = doc.model
  sections.push(table([
    ['Model', 'Controller', 'Cloud/Region', 'Version', 'SLA', 'Timestamp'],
    [m.name, m.controller, `${m.cloud}/${m.region}`, m.version, m.sla, doc.controller.timestamp]
  ]))
  // Juju says so under the model line when there is nothing else to show.
  if (Object.keys(doc.applications).length === 0 && Object.keys(doc.machines).length === 0) {
    sections.push(`Model "admin/${m.name}" is empty.`)
  }

  const apps = Object.entries(doc.applications)
  if (apps.length > 0) {
    sections.push(table([
      ['App', 'Version', 'Status', 'Scale', 'Charm', 'Channel', 'Rev', 'Exposed', 'Message'],
      ...apps.map(([name, app]) => [
        name, app.version ?? '', paint(app['application-status'].current), scaleOf(doc, name), app['charm-name'], '', String(app['charm-rev']),
        app.exposed ? 'yes' : 'no', truncateMessage(app['application-status'].message ?? '')
      ])
    ]))
  }

  const unitRows: string[][] = []
  const addUnit = (name: string, unit: UnitStatus, indent: string): void => {
    unitRows.push([
      `${indent}${name}${unit.leader === true ? '*' : ''}`, paint(unit['workload-status'].current), paint(unit['juju-status'].current), unit.machine,
      unit['public-address'] ?? '', (unit['open-ports'] ?? []).join(','), unitMessage(unit)
    ])
    for (const [sub, status] of Object.entries(unit.subordinates ?? {}).sort(([a], [b]) => naturalCompare(a, b))) addUnit(sub, status, `${indent}  `)
  }
  for (const [name, unit] of apps.flatMap(([, app]) => Object.entries(app.units ?? {})).sort(([a], [b]) => naturalCompare(a, b))) addUnit(name, unit, '')
  if (unitRows.length > 0) sections.push(table([['Unit', 'Workload', 'Agent', 'Machine', 'Public address', 'Ports', 'Message'], ...unitRows]))

  if (Object.keys(doc.machines).length > 0) sections.push(machinesSection(doc, paint))

  if (options.relations) {
    const reader = readerOf(full.model)
    const rows = tableValues(full.model.relations).map(relation => {
      const provider = relation.endpoints.find(e => e.role === 'provider') ?? relation.endpoints[0]!
      const requirer = relation.endpoints.find(e => e !== provider) ?? provider
      const type = relation.peer ? 'peer' : relation.containerScoped || reader.application(requirer.application)?.subordinate === true ? 'subordinate' : 'regular'
      const status = relation.suspended ? 'suspended' : relation.life === 'alive' ? 'joined' : 'broken'
      return [`${provider.application}:${provider.name}`, `${requirer.application}:${requirer.name}`, provider.interface, type, status === 'joined' ? '' : status]
    }).sort((a, b) => naturalCompare(a[0]!, b[0]!) || naturalCompare(a[1]!, b[1]!))
    if (rows.length > 0) sections.push(table([['Integration provider', 'Requirer', 'Interface', 'Type', 'Message'], ...rows]))
  }
  return sections.join('\n\n') + '\n'
}

/**
 * Juju's Scale (cmd/juju/status/output_tabular.go applicationScale): the unit count, or
 * `ready/total` while some units' agents are not yet idle or executing (allocating, lost,
 * failed, rebooting). A subordinate's units are those under its principals.
 */
export function scaleOf (doc: StatusDocument, application: string): string {
  const units: UnitStatus[] = []
  for (const app of Object.values(doc.applications)) {
    for (const [name, unit] of Object.entries(app.units ?? {})) {
      if (name.split('/')[0] === application) units.push(unit)
      for (const [sub, status] of Object.entries(unit.subordinates ?? {})) if (sub.split('/')[0] === application) units.push(status)
    }
  }
  const ready = units.filter(u => u['juju-status'].current === 'idle' || u['juju-status'].current === 'executing').length
  return ready === units.length ? String(units.length) : `${ready}/${units.length}`
}
