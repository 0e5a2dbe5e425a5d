/**
 * `cantrip controllers` (the known controllers, the current one starred, with Juju's
 * columns) and `cantrip show-controller [NAME]` (each member's Raft state — role, term,
 * commit and applied index, and its **commit lag** from the leader's progress tracker —
 * and its version), like Juju's. Both take `--format`; show-controller warns on stderr
 * about a member whose version differs from the client's, and lists a member that does not
 * answer as `unreachable` with why.
 *
 * `controllers` asks the members of every group of more than one (in parallel, bounded)
 * which of them answer: with some down, HA shows `ACTIVE/TOTAL` (as Juju's
 * cmd/juju/controller/listcontrollersformatters.go shows its controller machines) and
 * `controller-machines` says the same in yaml and json.
 */
import type { RegisterCommand } from '../cli-context.ts'
import { controllerEntry, controllerMemberName, readControllers, type ControllerEntry } from '../cli-home.ts'
import type { Connection } from '../connection.ts'
import { openConnection } from '../open-connection.ts'
import { groupStatus, type GroupStatus } from '../group-status.ts'
import { formatDocument, formatTable, parseFormat } from '../output-format.ts'
import { versionSkewWarnings } from '../version-skew.ts'

export const registerControllers: RegisterCommand = (program, context) => {
  program.command('controllers')
    .description('list the controllers this client knows')
    .option('--format <format>', 'tabular, yaml or json', 'tabular')
    .action(async (options: { format: string }) => {
      const format = parseFormat('cantrip controllers', options.format, ['tabular', 'yaml', 'json'])
      const file = readControllers()
      const names = Object.keys(file.controllers).sort()
      const active = new Map(await Promise.all(names.map(async name => [name, await activeMembers(file.controllers[name]!)] as const)))
      if (format !== 'tabular') {
        context.out(formatDocument(format, {
          controllers: Object.fromEntries(names.map(name => [name, controllerSummary(file.controllers[name]!, active.get(name))])),
          'current-controller': file['current-controller']
        }))
        return
      }
      if (names.length === 0) {
        context.out('No controllers registered. Run "cantrip bootstrap" to create one.')
        return
      }
      context.out(formatTable(['Controller', 'Model', 'User', 'Access', 'Cloud/Region', 'Models', 'Nodes', 'HA', 'Version'], names.map(name => {
        const s = controllerSummary(file.controllers[name]!, active.get(name))
        return [`${name}${name === file['current-controller'] ? '*' : ''}`, s.model, s.user, s.access, s['cloud-region'], String(s.models), String(s.nodes), s.ha, s.version]
      })))
    })

  program.command('show-controller')
    .description('show a controller\'s members: Raft role, term, commit lag, version')
    .argument('[name]', 'controller name (default: the current one)')
    .option('--format <format>', 'yaml or json', 'yaml')
    .action(async (name: string | undefined, options: { format: string }) => {
      const format = parseFormat('cantrip show-controller', options.format, ['yaml', 'json'])
      const { name: chosen, entry } = controllerEntry(name)
      const connection = await context.connect(chosen)
      // The bootstrap group's Raft state: the default model's, whichever model is current.
      connection.useModel('default')
      const group = await groupStatus(connection, entry)
      const warnings = versionSkewWarnings(group.members.map((m, i) => ({ who: `controller ${controllerMemberName(entry.controllers[i]!)} (${m.peer.slice(-8)})`, version: m.status?.version ?? null })))
      for (const warning of warnings) context.err(warning)
      context.out(formatDocument(format as 'yaml' | 'json', { [chosen]: showController(entry, group) }))
    })
}

/** Members of a group of more than one that answer `controller-status` (each asked once, in parallel); undefined for a lone controller. */
async function activeMembers (entry: ControllerEntry): Promise<number | undefined> {
  if (entry.controllers.length < 2) return undefined
  let connection: Connection | undefined
  try {
    connection = await openConnection(entry)
    const answers = await connection.controllerStatuses(entry.controllers.map(m => ({ peer: m['peer-id'], ...(m.addresses[0] === undefined ? {} : { address: m.addresses[0] }) })), probeTimeoutMs)
    return [...answers.values()].filter(reply => reply.ok).length
  } catch {
    return 0
  } finally {
    await connection?.close().catch(() => {})
  }
}

/** Per member while `controllers` asks which members answer. */
const probeTimeoutMs = 2_000

/** The `controllers` columns that this client can know: one model (`default`), the admin user, the local provider. */
function controllerSummary (entry: ControllerEntry, active: number | undefined): { model: string, user: string, access: string, 'cloud-region': string, models: number, nodes: number, ha: string, 'controller-machines'?: { active: number, total: number }, version: string } {
  const nodes = entry.controllers.length
  const degraded = active !== undefined && active < nodes
  return {
    model: 'default',
    user: 'admin',
    access: 'superuser',
    'cloud-region': entry.provider === 'local' ? 'localhost/localhost' : entry.provider,
    models: 1,
    nodes,
    ha: nodes > 1 ? (degraded ? `${active}/${nodes}` : String(nodes)) : 'none',
    ...(active === undefined ? {} : { 'controller-machines': { active, total: nodes } }),
    version: entry.version
  }
}

function showController (entry: ControllerEntry, group: GroupStatus): Record<string, unknown> {
  const leader = group.leader
  return {
    details: { 'controller-version': entry.version, provider: entry.provider, 'data-dir': entry.dir },
    raft: {
      leader: leader?.id ?? '',
      term: leader?.term ?? Math.max(0, ...group.members.map(m => m.status?.term ?? 0)),
      commit: leader?.commit ?? null,
      revision: leader?.applied ?? null,
      voters: leader?.voters ?? []
    },
    members: Object.fromEntries(entry.controllers.map((member, i) => {
      const status = group.members[i]?.status
      const progress = leader?.progress[member['peer-id']]
      return [controllerMemberName(member), {
        'peer-id': member['peer-id'],
        addresses: member.addresses,
        ...(member.host === undefined ? {} : { host: member.host.slice('ssh:'.length) }),
        pid: member.pid,
        role: status?.role ?? 'unreachable',
        ...(status === undefined
          ? { error: group.members[i]?.error ?? 'no answer' }
          : { term: status.term, commit: status.commit, applied: status.applied, version: status.version }),
        voter: leader?.voters.includes(member['peer-id']) ?? null,
        // From the leader's progress tracker: its commit index minus this member's match index.
        'commit-lag': progress?.lag ?? null,
        'match-index': progress?.match ?? null,
        replication: progress?.state ?? null
      }]
    })),
    // Members enable-ha replaced because they were down (Juju's enable-ha lists them as removed).
    ...(entry['removed-controllers'] === undefined || entry['removed-controllers'].length === 0
      ? {}
      : {
          removed: Object.fromEntries(entry['removed-controllers'].map(member => [controllerMemberName(member), {
            'peer-id': member['peer-id'], 'data-dir': member['data-dir'], 'removed-at': member['removed-at']
          }]))
        })
  }
}
