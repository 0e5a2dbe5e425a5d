/**
 * `cantrip version [--all] [--format tabular|yaml|json]`: the client's version (the one in
 * package.json); with `--all` also every controller's (its `controller-status`) and every
 * agent's (the version its presence heartbeats carry, as a controller heard them), with a
 * warning line on stderr for each that differs from the client's.
 */
import { cantripVersion, type RegisterCommand } from '../cli-context.ts'
import { controllerEntry, controllerMemberName } from '../cli-home.ts'
import { groupStatus } from '../group-status.ts'
import { formatDocument, formatTable, parseFormat } from '../output-format.ts'
import { versionSkewWarnings, type ReportedVersion } from '../version-skew.ts'

const component = 'cantrip version'

export type VersionRow = ReportedVersion & { kind: string, peer: string, name?: string }

/**
 * The order `version --all` lists them in: controllers first, by member name (`c0`, `c1`,
 * `c10`), then machine agents by machine id numerically (`machine-2` before `machine-10`),
 * so the output does not depend on which peer answered first.
 */
export function sortedVersionRows (rows: readonly VersionRow[]): VersionRow[] {
  const rank = (r: VersionRow): number => r.kind === 'controller' ? 0 : 1
  const key = (r: VersionRow): string => r.kind === 'controller' ? r.name ?? r.peer : r.kind
  return [...rows].sort((a, b) => rank(a) - rank(b) || key(a).localeCompare(key(b), 'en', { numeric: true }) || (a.peer < b.peer ? -1 : a.peer > b.peer ? 1 : 0))
}

export const registerVersion: RegisterCommand = (program, context) => {
  program.command('version')
    .description('print the client version; with --all, the controllers\' and agents\' too')
    .option('--all', 'also the versions of the controllers and agents, warning on a skew')
    .option('--format <format>', 'tabular, yaml or json', 'tabular')
    .option('-c, --controller <name>', 'controller (default: the current one)')
    .action(async (options: { all?: boolean, format: string, controller?: string }) => {
      const format = parseFormat(component, options.format, ['tabular', 'yaml', 'json'])
      if (options.all !== true) {
        context.out(format === 'tabular' ? cantripVersion : formatDocument(format, { client: cantripVersion }))
        return
      }
      const { name, entry } = controllerEntry(options.controller)
      const connection = await context.connect(name)
      const group = await groupStatus(connection, entry)
      const members = await connection.api({ op: 'members' })
      const rows: VersionRow[] = sortedVersionRows([
        ...group.members.map((m, i) => ({ kind: 'controller', peer: m.peer, name: controllerMemberName(entry.controllers[i]!), who: `controller ${controllerMemberName(entry.controllers[i]!)} (${m.peer.slice(-8)})`, version: m.status?.version ?? null })),
        ...members.members.filter(m => m.role === 'machine').map(m => ({ kind: m.entity, peer: m.id, who: `${m.entity} (${m.id.slice(-8)})`, version: m.version }))
      ])
      for (const warning of versionSkewWarnings(rows)) context.err(warning)
      if (format !== 'tabular') {
        context.out(formatDocument(format, { client: cantripVersion, controllers: rows.filter(r => r.kind === 'controller').map(r => ({ peer: r.peer, version: r.version })), agents: rows.filter(r => r.kind !== 'controller').map(r => ({ entity: r.kind, peer: r.peer, version: r.version })) }))
        return
      }
      context.out(formatTable(['Component', 'Peer', 'Version'], [
        ['client', '', cantripVersion],
        ...rows.map(r => [r.kind === 'controller' ? `controller ${r.name ?? ''}` : r.kind, r.peer, r.version ?? (r.kind === 'controller' ? 'unreachable' : 'unknown')])
      ]))
    })
}
