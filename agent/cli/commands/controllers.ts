/**
 * `cantrip controllers` (the known controllers, the current one starred) and
 * `cantrip show-controller [NAME]` (its Raft members with their leader, term and commit
 * lag, and its version), like Juju's.
 */
import { stringify } from 'yaml'
import type { RegisterCommand } from '../cli-context.ts'
import { controllerEntry, readControllers } from '../cli-home.ts'

export const registerControllers: RegisterCommand = (program, context) => {
  program.command('controllers')
    .description('list the controllers this client knows')
    .action(() => {
      const file = readControllers()
      const names = Object.keys(file.controllers).sort()
      if (names.length === 0) {
        context.out('No controllers registered. Run "cantrip bootstrap" to create one.')
        return
      }
      const rows = [['Controller', 'Members', 'Provider', 'Version'], ...names.map(name => {
        const entry = file.controllers[name]!
        return [`${name}${name === file['current-controller'] ? '*' : ''}`, String(entry.controllers.length), entry.provider, entry.version]
      })]
      const widths = rows[0]!.map((_, i) => Math.max(...rows.map(row => row[i]!.length)))
      for (const row of rows) context.out(row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd())
    })

  program.command('show-controller')
    .description('show a controller\'s members, its Raft leader and term')
    .argument('[name]', 'controller name (default: the current one)')
    .action(async (name: string | undefined) => {
      const { name: chosen, entry } = controllerEntry(name)
      const connection = await context.connect(chosen)
      // The bootstrap group's Raft state: the default model's, whichever model is current.
      connection.useModel('default')
      const full = await connection.model()
      context.out(stringify({
        [chosen]: {
          details: { 'controller-version': entry.version, provider: entry.provider, 'data-dir': entry.dir },
          raft: { leader: full.leader, term: full.term, revision: full.model.revision },
          members: Object.fromEntries(entry.controllers.map((member, i) => [`c${i}`, {
            'peer-id': member['peer-id'],
            addresses: member.addresses,
            pid: member.pid,
            role: member['peer-id'] === full.leader ? 'leader' : 'follower'
          }]))
        }
      }).trimEnd())
    })
}
