/**
 * The `cantrip status` schema pinned against juju-semantics.md §8 and, where §8 is silent,
 * Juju 3.6 itself: cmd/juju/status/formatted.go (the YAML/JSON keys and their order:
 * modelStatus, machineStatus, applicationStatus, unitStatus, statusInfoContents and
 * the 3.x formattedBase `{name, channel}`), cmd/juju/status/output_tabular.go (sections,
 * headers, leader `*`, subordinates indented two spaces, Scale `ready/total`
 * (applicationScale), Base as `ubuntu@22.04` (printMachine), relation Message only when
 * not joined, messages over 120 characters truncated). In process: a model built with
 * the real command handlers, rendered by agent/cli/status-document.ts + status-tabular.ts;
 * the real `cantrip status --format yaml|json` on a cluster is checked in cli-exec.test.ts.
 * Also the machine agent's edge: /etc/os-release read into the base it reports, and the
 * model's check of a reported base.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { parse } from 'yaml'
import { render } from '../agent/cli/commands/status-command.ts'
import type { FullModel } from '../agent/cli/connection.ts'
import { statusDocument } from '../agent/cli/status-document.ts'
import { formatTabular, truncateMessage } from '../agent/cli/status-tabular.ts'
import { parseOsRelease } from '../agent/tools/host-base.ts'
import type { UnitRecord } from '../runtime/model/model-types.ts'
import { tableGet, tableWith } from '../runtime/model/table.ts'
import { MemoryController } from './support/model-controller.ts'

const at = Date.UTC(2026, 10, 27, 1, 0, 0)
const machineActor = (id: string): { kind: 'machine', id: string } => ({ kind: 'machine', id })

/** web (3 units, web/1 the leader, one still allocating) related to db; logging subordinate to web; machines with addresses and bases. */
function fixture (): FullModel {
  const c = new MemoryController()
  c.run('add-charm', { url: 'local:web-7', hash: 'a'.repeat(16), metadata: { name: 'web', requires: { db: 'pgsql' }, peers: { cluster: 'web-peer' } } })
  c.run('add-charm', { url: 'local:db-2', hash: 'b'.repeat(16), metadata: { name: 'db', provides: { db: 'pgsql' } } })
  c.run('add-charm', { url: 'local:logging-1', hash: 'c'.repeat(16), metadata: { name: 'logging', subordinate: true, requires: { 'juju-info': { interface: 'juju-info', scope: 'container' } } } })
  c.run('deploy', { application: 'web', charm: 'local:web-7', config: {}, constraints: {}, numUnits: 3 })
  c.run('deploy', { application: 'db', charm: 'local:db-2', config: {}, constraints: {}, numUnits: 1 })
  c.run('deploy', { application: 'logging', charm: 'local:logging-1', config: {}, constraints: {}, numUnits: 0 })
  c.run('integrate', { a: 'web:db', b: 'db:db' })
  c.run('integrate', { a: 'logging:juju-info', b: 'web:juju-info' })
  c.run('expose', { application: 'web' })
  c.runAs('web/1', 'claim-leadership', { application: 'web', unit: 'web/1', now: at, durationMs: 60_000 })
  for (const [unit, machine] of [['web/0', '0'], ['web/1', '1'], ['db/0', '3'], ['logging/0', '0'], ['logging/1', '1']] as const) {
    c.run('set-agent-status', { unit, status: 'idle', message: '', now: at }, machineActor(machine))
  }
  c.runAs('web/0', 'set-unit-status', { unit: 'web/0', status: 'active', message: 'serving', now: at })
  c.runAs('db/0', 'set-unit-status', { unit: 'db/0', status: 'active', message: 'x'.repeat(130), now: at })
  for (const id of ['0', '1', '2', '3']) {
    c.run('set-machine-instance', { machine: id, instanceId: `local:machine-${id}`, addresses: [`10.0.0.${id}`] }, { kind: 'controller', id: 'c0' })
    if (id !== '2') c.run('set-machine-agent-version', { machine: id, version: '0.1.0', upgradeError: '', base: 'ubuntu@22.04', hostname: `node-${id}` }, machineActor(id))
  }
  let model = c.model()
  // web/0 has a port open (what a hook's open-port leaves on the unit record).
  const web0 = tableGet(model.units, 'web/0') as UnitRecord
  model = { ...model, units: tableWith(model.units, 'web/0', { ...web0, openedPorts: [{ protocol: 'tcp', from: 80, to: 80, endpoints: [] }] }) }
  return {
    ok: true,
    model,
    presence: Object.fromEntries(['0', '1', '2', '3'].map(id => [id, { status: 'alive' as const, since: at, heardBy: 'c0' }])),
    leader: 'c0',
    term: 1
  }
}

test('YAML and JSON: Juju 3.6\'s keys at every level, in formatted.go\'s order, the same document in both', () => {
  const full = fixture()
  const json = JSON.parse(render(full, 'local', { format: 'json', relations: false, selectors: [] }, at)) as Record<string, any>
  const yaml = parse(render(full, 'local', { format: 'yaml', relations: false, selectors: [] }, at)) as Record<string, any>
  assert.equal(yaml, json, 'YAML and JSON carry the same document')
  assert.equal(Object.keys(json), ['model', 'machines', 'applications', 'controller'])
  // modelStatus: name, (type), controller, cloud, region, version, model-status, sla.
  assert.equal(Object.keys(json['model']), ['name', 'type', 'controller', 'cloud', 'region', 'version', 'model-status', 'sla'])
  assert.equal([json['model'].cloud, json['model'].region, json['model'].sla, json['model']['model-status']], ['localhost', 'localhost', 'unsupported', { current: 'available' }])
  // machineStatus: juju-status, hostname (as the agent reported it), dns-name, ip-addresses, instance-id, machine-status, base {name, channel}.
  assert.equal(Object.keys(json['machines']), ['0', '1', '2', '3'])
  assert.equal(Object.keys(json['machines']['0']), ['juju-status', 'hostname', 'dns-name', 'ip-addresses', 'instance-id', 'machine-status', 'base'])
  assert.equal([json['machines']['0'].hostname, json['machines']['2'].hostname], ['node-0', undefined])
  assert.equal(json['machines']['0'].base, { name: 'ubuntu', channel: '22.04' })
  assert.equal([json['machines']['0']['dns-name'], json['machines']['0']['instance-id']], ['10.0.0.0', 'local:machine-0'])
  assert.is(json['machines']['2'].base, undefined, 'no base until the machine\'s agent reports one (omitempty)')
  assert.equal(Object.keys(json['machines']['0']['juju-status']), ['current', 'version'], 'version: what its agent runs')
  // applicationStatus: charm, base, charm-origin, charm-name, charm-rev, exposed, application-status, relations, units, (version).
  const web = json['applications']['web']
  assert.equal(Object.keys(web), ['charm', 'base', 'charm-origin', 'charm-name', 'charm-rev', 'exposed', 'application-status', 'relations', 'units'])
  assert.equal([web.charm, web['charm-name'], web['charm-rev'], web.exposed, web.base], ['web', 'web', 7, true, { name: 'ubuntu', channel: '22.04' }])
  // charm-channel is omitempty and a local charm has none (formatter.go sets it from the charm origin's channel); life only when not alive.
  assert.equal(web.relations, { cluster: ['web'], db: ['db'], 'juju-info': ['logging'] })
  assert.equal(Object.keys(json['applications']['logging']), ['charm', 'base', 'charm-origin', 'charm-name', 'charm-rev', 'exposed', 'application-status', 'relations', 'subordinate-to'], 'a subordinate lists no units of its own')
  assert.equal(json['applications']['logging']['subordinate-to'], ['web'])
  // unitStatus: workload-status, juju-status, leader, machine, open-ports, public-address, subordinates.
  assert.equal(Object.keys(web.units['web/0']), ['workload-status', 'juju-status', 'machine', 'open-ports', 'public-address', 'subordinates'])
  assert.equal(Object.keys(web.units['web/1']), ['workload-status', 'juju-status', 'leader', 'machine', 'public-address', 'subordinates'])
  assert.equal([web.units['web/1'].leader, web.units['web/0']['open-ports'], web.units['web/0']['public-address'], web.units['web/0'].machine], [true, ['80/tcp'], '10.0.0.0', '0'])
  assert.equal(Object.keys(web.units['web/0'].subordinates), ['logging/0'])
  assert.equal(Object.keys(web.units['web/0'].subordinates['logging/0']), ['workload-status', 'juju-status', 'machine', 'public-address'])
  // statusInfoContents: current, message, since (omitempty).
  assert.equal(web.units['web/0']['workload-status'], { current: 'active', message: 'serving', since: new Date(at).toISOString() })
  assert.equal(Object.keys(json['controller']), ['timestamp'])
})

test('tabular: every §8 section and header, the model line, Scale ready/total, leader star, Base, relations', () => {
  const full = fixture()
  const text = formatTabular(statusDocument(full, 'local', at), full, { relations: true })
  const sections = text.trimEnd().split('\n\n').map(s => s.split('\n'))
  const cells = (line: string): string[] => line.trim().split(/\s{2,}/)
  assert.equal(sections.map(s => cells(s[0]!)), [
    ['Model', 'Controller', 'Cloud/Region', 'Version', 'SLA', 'Timestamp'],
    ['App', 'Version', 'Status', 'Scale', 'Charm', 'Channel', 'Rev', 'Exposed', 'Message'],
    ['Unit', 'Workload', 'Agent', 'Machine', 'Public address', 'Ports', 'Message'],
    ['Machine', 'State', 'Address', 'Inst id', 'Base', 'AZ', 'Message'],
    ['Integration provider', 'Requirer', 'Interface', 'Type', 'Message']
  ])
  assert.equal(cells(sections[0]![1]!), ['default', 'local', 'localhost/localhost', '0.1.0', 'unsupported', '01:00:00Z'])
  // Apps: natural order; Scale is ready/total while web/2 allocates (applicationScale); Channel empty (local charms).
  const apps = sections[1]!.slice(1)
  assert.equal(apps.map(line => cells(line)[0]), ['db', 'logging', 'web'])
  // web's status derived by severity (§8): waiting (web/1, web/2) outranks active (web/0). web/1's
  // agent has reported, so its "waiting for machine" became "agent initialising" (Juju's uniter init).
  assert.match(apps[2]!, /^web +waiting +2\/3 +web +7 +yes +agent initialising$/)
  assert.match(apps[1]!, /^logging +waiting +2\/3 +logging +1 +no +agent initialising$/, 'a subordinate\'s scale counts its units under the principals')
  assert.match(apps[0]!, new RegExp(`^db +active +1 +db +2 +no +${'x'.repeat(117)}\\.\\.\\.$`), 'a message over 120 characters truncated as Juju does')
  assert.is(truncateMessage('y'.repeat(120)), 'y'.repeat(120))
  // Units: leader starred, subordinates indented two spaces under their principal, ports, address.
  const units = sections[2]!.slice(1)
  assert.equal(units.map(line => /^\s*\S+/.exec(line)![0]), ['db/0', 'web/0', '  logging/0', 'web/1*', '  logging/1', 'web/2', '  logging/2'])
  assert.match(units[1]!, /^web\/0 +active +idle +0 +10\.0\.0\.0 +80\/tcp +serving$/)
  assert.match(units[3]!, /^web\/1\* +waiting +idle +1 +10\.0\.0\.1 +agent initialising$/)
  assert.match(units[5]!, /^web\/2 +waiting +allocating +2 +10\.0\.0\.2 +waiting for machine$/)
  // Machines: State (agent), Address, Inst id, Base as ubuntu@22.04, AZ empty, Message the instance's.
  const machines = sections[3]!.slice(1)
  assert.equal(machines.map(line => cells(line)[0]), ['0', '1', '2', '3'])
  assert.match(machines[0]!, /^0 +\S+ +10\.0\.0\.0 +local:machine-0 +ubuntu@22\.04$/)
  assert.match(machines[2]!, /^2 +\S+ +10\.0\.0\.2 +local:machine-2$/, 'no base reported: the column is empty')
  // Integrations (--relations): provider, requirer, interface, Type regular/peer/subordinate; no Message while joined.
  assert.equal(sections[4]!.slice(1).map(cells), [
    ['db:db', 'web:db', 'pgsql', 'regular'],
    ['web:cluster', 'web:cluster', 'web-peer', 'peer'],
    ['web:juju-info', 'logging:juju-info', 'juju-info', 'subordinate']
  ])
})

test('life (apiserver status processLife, formatted.go): `dying`/`dead` shown in juju-status and on the application, `alive` left out', () => {
  const c = new MemoryController()
  c.run('add-charm', { url: 'local:db-2', hash: 'b'.repeat(16), metadata: { name: 'db' } })
  c.run('deploy', { application: 'db', charm: 'local:db-2', config: {}, constraints: {}, numUnits: 2 })
  c.run('add-machine', {})
  for (const unit of ['db/0', 'db/1']) c.run('set-agent-status', { unit, status: 'idle', message: '', now: at }, machineActor(unit === 'db/0' ? '0' : '1'))
  const doc = (): Record<string, any> => {
    const full: FullModel = { ok: true, model: c.model(), presence: {}, leader: 'c0', term: 1 }
    return JSON.parse(render(full, 'local', { format: 'json', relations: false, selectors: [] }, at)) as Record<string, any>
  }
  const before = doc()
  assert.is(before['applications']['db'].life, undefined)
  assert.is(before['applications']['db'].units['db/0']['juju-status'].life, undefined)
  assert.is(before['machines']['2']['juju-status'].life, undefined)
  c.run('remove-unit', { unit: 'db/0' })
  c.run('remove-machine', { machine: '2' })
  const after = doc()
  assert.is(after['applications']['db'].units['db/0']['juju-status'].life, 'dying')
  assert.is(after['applications']['db'].units['db/1']['juju-status'].life, undefined)
  assert.equal(Object.keys(after['applications']['db'].units['db/0']['juju-status']).at(-1), 'life', 'statusInfoContents order: life last')
  assert.is(after['machines']['2']['juju-status'].life, 'dying')
  c.run('remove-application', { application: 'db' })
  const gone = doc()
  assert.is(gone['applications']['db'].life, 'dying')
  const keys = Object.keys(gone['applications']['db'])
  assert.equal(keys.slice(keys.indexOf('exposed'), keys.indexOf('exposed') + 3), ['exposed', 'life', 'application-status'])
})

test('the machine agent\'s base: /etc/os-release ID@VERSION_ID, nothing when it says neither; the model refuses a malformed one', () => {
  assert.is(parseOsRelease('NAME="Ubuntu"\nVERSION_ID="22.04"\nID=ubuntu\nID_LIKE=debian\n'), 'ubuntu@22.04')
  assert.is(parseOsRelease('ID=debian\nVERSION_ID="12"\n'), 'debian@12')
  assert.is(parseOsRelease('ID=arch\n'), undefined, 'a rolling release has no VERSION_ID')
  assert.is(parseOsRelease(''), undefined)
  const c = new MemoryController()
  c.run('add-machine', {})
  assert.throws(() => c.run('set-machine-agent-version', { machine: '0', version: '0.1.0', upgradeError: '', base: 'Ubuntu 22.04' }, machineActor('0')),
    /refused: .*expected a base like "ubuntu@22\.04", got "Ubuntu 22\.04"$/)
  c.run('set-machine-agent-version', { machine: '0', version: '0.1.0', upgradeError: '', base: 'ubuntu@24.04' }, machineActor('0'))
  c.run('set-machine-agent-version', { machine: '0', version: '0.1.0', upgradeError: 'it broke' }, machineActor('0'))
  assert.is((tableGet(c.model().machines, '0') as { base?: string }).base, 'ubuntu@24.04', 'a report without a base keeps the last one')
  assert.throws(() => c.run('set-machine-agent-version', { machine: '0', version: '0.1.0', upgradeError: '', hostname: 'bad host' }, machineActor('0')),
    /refused: .*expected a host name like "node-1\.example\.com", got "bad host"$/)
  c.run('set-machine-agent-version', { machine: '0', version: '0.1.0', upgradeError: '', hostname: 'node-0.lan' }, machineActor('0'))
  assert.is(tableGet(c.model().machines, '0')!.hostname, 'node-0.lan')
})

test.run()
