/**
 * `cantrip members [--format tabular|yaml|json]`: the gossip membership (presence) as a
 * controller sees it — every agent's peer id, which entity it is (controller, machine-N),
 * alive/suspect/failed/left, its incarnation, when it was last heard and by whom, and the
 * version it reports. Asked of any controller that answers.
 */
import type { RegisterCommand } from '../cli-context.ts'
import { formatDocument, formatTable, parseFormat } from '../output-format.ts'

const component = 'cantrip members'

export const registerMembers: RegisterCommand = (program, context) => {
  program.command('members')
    .description('show the gossip membership (presence) as a controller sees it')
    .option('--format <format>', 'tabular, yaml or json', 'tabular')
    .option('-c, --controller <name>', 'controller (default: the current one)')
    .action(async (options: { format: string, controller?: string }) => {
      const format = parseFormat(component, options.format, ['tabular', 'yaml', 'json'])
      const connection = await context.connect(options.controller)
      const reply = await connection.api({ op: 'members' })
      const now = Date.now()
      if (format !== 'tabular') {
        context.out(formatDocument(format, { observer: reply.observer, members: reply.members }))
        return
      }
      context.out(formatTable(
        ['Peer', 'Entity', 'Status', 'Incarnation', 'Last heard', 'Heard by', 'Version'],
        reply.members.map(m => [
          m.id, m.entity, m.state, String(m.incarnation), `${Math.max(0, (now - m.lastHeardAt) / 1000).toFixed(1)}s ago`,
          m.heardBy === m.id ? 'self' : m.heardBy.slice(-8), m.version ?? 'unknown'
        ])))
    })
}
