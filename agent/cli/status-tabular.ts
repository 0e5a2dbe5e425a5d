/**
 * The tabular `cantrip status` (juju-semantics.md §8, Juju 3.x): sections separated by a
 * blank line, each a header row and natural-sorted rows in columns two spaces apart;
 * the leader unit starred, subordinates indented under their principal, integrations
 * only with `--relations`.
 */
import { readerOf } from '../../runtime/model/model-draft.ts'
import { tableValues } from '../../runtime/model/table.ts'
import type { FullModel } from './connection.ts'
import { naturalCompare, type StatusDocument, type UnitStatus } from './status-document.ts'

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

/** The Message column: `(install) installing charm software` while a hook runs (juju-semantics §8). */
function unitMessage (unit: UnitStatus): string {
  const doing = agentDoing(unit['juju-status'])
  const message = unit['workload-status'].message ?? ''
  return doing === '' ? message : `(${doing}) ${message}`.trimEnd()
}

function table (rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map(row => (row[i] ?? '').length)))
  return rows.map(row => row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n')
}

export function formatTabular (doc: StatusDocument, full: FullModel, options: { relations: boolean }): string {
  const sections: string[] = []
  const m = doc.model
  sections.push(table([
    ['Model', 'Controller', 'Cloud/Region', 'Version', 'Timestamp'],
    [m.name, m.controller, `${m.cloud}/${m.region}`, m.version, doc.controller.timestamp]
  ]))

  const apps = Object.entries(doc.applications)
  if (apps.length > 0) {
    sections.push(table([
      ['App', 'Version', 'Status', 'Scale', 'Charm', 'Channel', 'Rev', 'Exposed', 'Message'],
      ...apps.map(([name, app]) => [
        name, app.version ?? '', app['application-status'].current, String(scaleOf(full, name)), app['charm-name'], '', String(app['charm-rev']),
        app.exposed ? 'yes' : 'no', app['application-status'].message ?? ''
      ])
    ]))
  }

  const unitRows: string[][] = []
  const addUnit = (name: string, unit: UnitStatus, indent: string): void => {
    unitRows.push([
      `${indent}${name}${unit.leader === true ? '*' : ''}`, unit['workload-status'].current, unit['juju-status'].current, unit.machine,
      unit['public-address'] ?? '', (unit['open-ports'] ?? []).join(','), unitMessage(unit)
    ])
    for (const [sub, status] of Object.entries(unit.subordinates ?? {}).sort(([a], [b]) => naturalCompare(a, b))) addUnit(sub, status, `${indent}  `)
  }
  for (const [name, unit] of apps.flatMap(([, app]) => Object.entries(app.units ?? {})).sort(([a], [b]) => naturalCompare(a, b))) addUnit(name, unit, '')
  if (unitRows.length > 0) sections.push(table([['Unit', 'Workload', 'Agent', 'Machine', 'Public address', 'Ports', 'Message'], ...unitRows]))

  const machines = Object.entries(doc.machines)
  if (machines.length > 0) {
    sections.push(table([
      ['Machine', 'State', 'Address', 'Inst id', 'Base', 'AZ', 'Message'],
      ...machines.map(([id, machine]) => [
        id, machine['juju-status'].current, machine['dns-name'] ?? '', machine['instance-id'], '', '',
        machine['agent-version-message'] ?? machine['machine-status'].message ?? machine['machine-status'].current
      ])
    ]))
  }

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

function scaleOf (full: FullModel, application: string): number {
  return readerOf(full.model).application(application)?.units.length ?? 0
}
