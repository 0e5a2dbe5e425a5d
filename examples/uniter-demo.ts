import { naturalCompare } from '../runtime/ids.ts'
import { UnitWorld } from '../sim/unit-world.ts'

/**
 * `npm start` for now: the real uniter statecharts run a small model — a peer-replicated
 * key-value service, a web front end related to it, and a log-shipping subordinate — in
 * the deterministic world, with one failing hook resolved on the way. Hooks are scripted
 * outcomes here; real processes, the mesh and the CLI arrive with the later issues.
 */
const world = new UnitWorld({ seed: 42 })
const say = (line: string): void => { process.stdout.write(line + '\n') }

world.failHook('web/1', 'install')
world.model.deploy({ name: 'kv', peers: ['cluster'], provides: { api: 'kv' } }, 3)
world.model.deploy({ name: 'web', requires: { kv: 'kv' } }, 2)
world.model.deploy({ name: 'logship', subordinate: true, requires: { host: { interface: 'juju-info', scope: 'container' } } }, 0)
world.model.relate('web:kv', 'kv:api')
world.model.relate('web:juju-info', 'logship:host')
await world.settle()
say('deployed kv (3 units, peer relation "cluster"), web (2 units) related to kv, logship on each web unit')
say(`web/1's install hook failed: ${world.actor('web/1').getSnapshot().context.status.agent.message}; running "resolved web/1"`)
world.model.resolved('web/1')
await world.settle()
world.model.setConfig('kv', { setting: 'config-1' })
world.model.removeUnit('kv/2')
await world.settle()
say('changed kv config and removed kv/2\n')

const rows: string[][] = [['Unit', 'Workload', 'Agent', 'Machine', 'Message']]
for (const unit of world.model.units().sort(naturalCompare)) {
  const { status } = world.actor(unit).getSnapshot().context
  const leader = world.model.leaderOf(unit.split('/')[0]!) === unit ? '*' : ''
  rows.push([unit + leader, status.workload.status, status.agent.status, world.model.machineOf(unit), status.workload.message])
}
const widths = rows[0]!.map((_, column) => Math.max(...rows.map(row => row[column]!.length)))
for (const row of rows) say(row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd())

say('\nHooks run per unit:')
for (const unit of [...new Set(world.runs.map(run => run.unit))].sort(naturalCompare)) {
  say(`  ${unit}: ${world.hooks(unit).join(', ')}`)
}
const errors = world.errors()
if (errors.length > 0) {
  say(`demo: ${errors.length} actor error(s): ${String(errors[0])}`)
  process.exit(1)
}
say('\nRun "npm test" for the scenario, model-based and crash tests behind this.')
