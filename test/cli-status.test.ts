/**
 * `cantrip status` rendering (agent/cli/status-document.ts, status-tabular.ts): the JSON
 * keys Juju's `status --format json` has, pinned at every level by a schema test; the
 * tabular sections and header rows of juju-semantics §8; natural sorting, the leader
 * star, subordinates under their principal, a failed hook shown as workload error with
 * agent idle, a lost machine's units shown lost, the application status derived by
 * severity; selectors; `--format` refused before connecting.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { parseDuration } from '../agent/cli/commands/model-common.ts'
import { parseFormat, render, selectStatus } from '../agent/cli/commands/status-command.ts'
import type { FullModel } from '../agent/cli/connection.ts'
import { statusDocument } from '../agent/cli/status-document.ts'
import { formatTabular, scaleOf } from '../agent/cli/status-tabular.ts'
import { waitForTarget } from '../agent/cli/wait-for-scopes.ts'
import { emptyModel } from '../runtime/model/model-store.ts'
import { MemoryController } from './support/model-controller.ts'

const at = Date.UTC(2026, 10, 22, 10, 0, 0)

function world (): { c: MemoryController, full: () => FullModel, lost: Set<string> } {
  const c = new MemoryController()
  c.run('add-charm', { url: 'local:web-3', hash: 'a'.repeat(16), metadata: { name: 'web', requires: { db: 'mysql' }, peers: { cluster: 'web-peer' } } })
  c.run('add-charm', { url: 'local:mysql-0', hash: 'b'.repeat(16), metadata: { name: 'mysql', provides: { db: 'mysql' } } })
  c.run('add-charm', { url: 'local:logging-0', hash: 'c'.repeat(16), metadata: { name: 'logging', subordinate: true, requires: { 'juju-info': { interface: 'juju-info', scope: 'container' } } } })
  c.run('deploy', { application: 'web', charm: 'local:web-3', config: {}, constraints: {}, numUnits: 11 })
  c.run('deploy', { application: 'mysql', charm: 'local:mysql-0', config: {}, constraints: {}, numUnits: 1 })
  c.run('deploy', { application: 'logging', charm: 'local:logging-0', config: {}, constraints: {}, numUnits: 0 })
  c.run('integrate', { a: 'web:db', b: 'mysql:db' })
  c.run('integrate', { a: 'logging:juju-info', b: 'web:juju-info' })
  c.runAs('web/2', 'claim-leadership', { application: 'web', unit: 'web/2', now: at, durationMs: 60_000 })
  for (let i = 0; i < 11; i++) c.runAs(`web/${i}`, 'set-unit-status', { unit: `web/${i}`, status: 'active', message: 'ready', now: at })
  c.runAs('mysql/0', 'set-unit-status', { unit: 'mysql/0', status: 'blocked', message: 'no storage', now: at })
  c.run('set-agent-status', { unit: 'web/1', status: 'error', message: 'hook failed: "install"', now: at }, { kind: 'machine', id: '1' })
  const lost = new Set<string>()
  return {
    c,
    lost,
    full: () => ({
      ok: true,
      model: c.model(),
      presence: Object.fromEntries([...Array(12).keys()].map(i => [String(i), { status: lost.has(String(i)) ? 'lost' as const : 'alive' as const, since: at, heardBy: 'c0' }])),
      leader: 'c0',
      term: 2
    })
  }
}

test('JSON keys match juju status at every level (schema pinned)', () => {
  const { full } = world()
  const doc = statusDocument(full(), 'local', at)
  assert.equal(Object.keys(doc), ['model', 'machines', 'applications', 'controller'])
  assert.equal(Object.keys(doc.model), ['name', 'type', 'controller', 'cloud', 'region', 'version', 'model-status', 'sla'])
  assert.equal(Object.keys(doc.machines['0']!), ['juju-status', 'instance-id', 'machine-status'])
  assert.equal(Object.keys(doc.applications['web']!), ['charm', 'charm-origin', 'charm-name', 'charm-rev', 'exposed', 'application-status', 'relations', 'units'])
  assert.equal(Object.keys(doc.applications['web']!.units!['web/2']!).sort(), ['juju-status', 'leader', 'machine', 'subordinates', 'workload-status'].sort())
  assert.equal(Object.keys(doc.applications['web']!.units!['web/2']!['workload-status']), ['current', 'message', 'since'])
  assert.is(doc.applications['web']!['charm-rev'], 3)
  assert.equal(doc.applications['web']!.relations, { cluster: ['web'], db: ['mysql'], 'juju-info': ['logging'] })
  assert.is(doc.applications['logging']!.units, undefined, 'subordinate units are listed under their principals')
  assert.ok(doc.applications['web']!.units!['web/0']!.subordinates!['logging/0'] !== undefined)
  assert.equal(Object.keys(doc.controller), ['timestamp'])
})

test('a failed hook shows as workload error with agent idle; a lost machine\'s units show lost; app status by severity', () => {
  const { c, full, lost } = world()
  lost.add('3')
  lost.add('4')
  // web/3 is past install (its agent reported idle); web/4's agent has never reported.
  c.run('set-agent-status', { unit: 'web/3', status: 'idle', message: '', now: at }, { kind: 'machine', id: '3' })
  const doc = statusDocument(full(), 'local', at)
  const web1 = doc.applications['web']!.units!['web/1']!
  assert.equal([web1['workload-status'].current, web1['workload-status'].message, web1['juju-status'].current], ['error', 'hook failed: "install"', 'idle'])
  // Juju's lost unit (apiserver/common/unitstatus.go): unknown / lost, the message naming show-status-log.
  const web3 = doc.applications['web']!.units!['web/3']!
  assert.equal([web3['workload-status'].current, web3['workload-status'].message, web3['juju-status'].current, web3['juju-status'].message],
    ['unknown', 'agent lost, see \'cantrip show-status-log web/3\'', 'lost', 'agent is not communicating with the server'])
  assert.is(doc.applications['web']!.units!['web/4']!['juju-status'].current, 'allocating', 'a unit not yet installed is not judged lost (canBeLost)')
  assert.is(doc.applications['web']!['application-status'].current, 'error', 'error outranks active')
  assert.is(doc.applications['mysql']!['application-status'].current, 'blocked')
  // wait-for reads the same displayed statuses (agent/cli/wait-for-scopes.ts).
  const waited = waitForTarget('unit', full(), 'web/1')!.scope.values
  assert.equal([waited['workload-status'], waited['workload-message'], waited['agent-status']], ['error', 'hook failed: "install"', 'idle'])
  assert.is(waitForTarget('application', full(), 'nope'), undefined)
})

test('tabular: Juju\'s sections and header rows, natural order, leader star, subordinates indented, integrations on request', () => {
  const { full } = world()
  const text = formatTabular(statusDocument(full(), 'local', at), full(), { relations: true })
  const sections = text.trimEnd().split('\n\n')
  assert.equal(sections.map(s => s.split('\n')[0]!.split(/\s{2,}/)), [
    ['Model', 'Controller', 'Cloud/Region', 'Version', 'SLA', 'Timestamp'],
    ['App', 'Version', 'Status', 'Scale', 'Charm', 'Channel', 'Rev', 'Exposed', 'Message'],
    ['Unit', 'Workload', 'Agent', 'Machine', 'Public address', 'Ports', 'Message'],
    ['Machine', 'State', 'Address', 'Inst id', 'Base', 'AZ', 'Message'],
    ['Integration provider', 'Requirer', 'Interface', 'Type', 'Message']
  ])
  const units = sections[2]!.split('\n').slice(1).map(line => /^\s*\S+/.exec(line)![0])
  assert.equal(units.filter(u => !u.startsWith(' ')).slice(0, 4), ['mysql/0', 'web/0', 'web/1', 'web/2*'])
  assert.ok(units.indexOf('web/10') > units.indexOf('web/9'), 'web/10 after web/9')
  assert.is(units[units.indexOf('web/0') + 1], '  logging/0', 'the subordinate is indented under its principal')
  assert.match(sections[4]!, /mysql:db\s+web:db\s+mysql\s+regular/)
  assert.match(sections[4]!, /web:cluster\s+web:cluster\s+web-peer\s+peer/)
  assert.match(sections[4]!, /web:juju-info\s+logging:juju-info\s+juju-info\s+subordinate/)
  assert.not.match(formatTabular(statusDocument(full(), 'local', at), full(), { relations: false }), 'Integration provider')
})

test('tabular: while a unit hook or an action runs, the message says so, as Juju\'s agentDoing does; a relation hook does not', () => {
  const { c, full } = world()
  const agent = (unit: string, message: string): void => { c.run('set-agent-status', { unit, status: 'executing', message, now: at }, { kind: 'machine', id: unit.split('/')[1]! }) }
  c.runAs('web/5', 'set-unit-status', { unit: 'web/5', status: 'maintenance', message: 'installing charm software', now: at })
  agent('web/5', 'running install hook')
  agent('web/6', 'running action backup')
  agent('web/7', 'running db-relation-changed hook for mysql/0')
  const rows = formatTabular(statusDocument(full(), 'local', at), full(), { relations: false }).split('\n')
  const row = (unit: string): string => rows.find(line => line.startsWith(`${unit} `))!.trimEnd()
  assert.match(row('web/5'), / \(install\) installing charm software$/)
  assert.match(row('web/6'), / \(backup\) ready$/)
  assert.match(row('web/7'), /executing .* ready$/)
  assert.not.match(row('web/7'), /\(/)
})

test('Juju 3.6\'s model line (§8): SLA unsupported, Cloud/Region as controllers shows it; Scale ready/total while units settle; an empty model says so', () => {
  const { c, full } = world()
  const doc = statusDocument(full(), 'local', at)
  assert.equal([doc.model.cloud, doc.model.region, doc.model.sla], ['localhost', 'localhost', 'unsupported'])
  const text = formatTabular(doc, full(), { relations: false })
  assert.match(text.split('\n')[1]!, /^default\s+local\s+localhost\/localhost\s+0\.1\.0\s+unsupported\s+\d\d:\d\d:\d\dZ$/)
  // Juju's applicationScale: units whose agent is idle or executing over all units.
  const agents = (app: string): string[] => Object.values(doc.applications[app]!.units ?? {}).map(u => u['juju-status'].current)
  const ready = agents('web').filter(a => a === 'idle' || a === 'executing').length
  assert.ok(ready < agents('web').length, 'some web units are still allocating')
  assert.is(scaleOf(doc, 'web'), `${ready}/${agents('web').length}`)
  const appRow = text.split('\n').find(line => line.startsWith('web '))!
  assert.match(appRow, new RegExp(` ${ready}/${agents('web').length} `))
  for (const unit of Object.keys(doc.applications['web']!.units!)) c.run('set-agent-status', { unit, status: 'idle', message: '', now: at }, { kind: 'machine', id: doc.applications['web']!.units![unit]!.machine })
  assert.is(scaleOf(statusDocument(full(), 'local', at), 'web'), String(agents('web').length), 'all ready: the count alone')
  const empty = formatTabular(statusDocument({ ...full(), model: emptyModel() }, 'local', at), full(), { relations: false })
  assert.match(empty, /^Model +Controller +Cloud\/Region +Version +SLA +Timestamp\ndefault +local +localhost\/localhost +0\.1\.0 +unsupported +\S+\n\nModel "admin\/default" is empty\.\n$/)
})

test('colour for status words on a terminal only (cli-table3 keeps the columns aligned); plain otherwise', () => {
  const { full } = world()
  const doc = statusDocument(full(), 'local', at)
  const plain = formatTabular(doc, full(), { relations: false })
  const coloured = formatTabular(doc, full(), { relations: false, colour: true })
  assert.not.match(plain, /\x1b\[/)
  assert.match(coloured, /\x1b\[31merror\x1b\[39m/, 'error in red')
  assert.match(coloured, /\x1b\[32mactive\x1b\[39m/, 'active in green')
  // eslint-disable-next-line no-control-regex
  assert.is(coloured.replace(/\x1b\[\d+m/g, ''), plain, 'the same table once the colour codes are taken out')
})

test('selectors keep what they name; formats and durations are checked before anything is sent', () => {
  const { full } = world()
  const doc = statusDocument(full(), 'local', at)
  const one = selectStatus(doc, ['web/1'])
  assert.equal(Object.keys(one.applications), ['web'])
  assert.equal(Object.keys(one.applications['web']!.units!), ['web/1'])
  assert.equal(Object.keys(one.machines), ['1'])
  assert.equal(Object.keys(selectStatus(doc, ['my*']).applications), ['mysql'])
  assert.equal(JSON.parse(render(full(), 'local', { format: 'json', relations: false, selectors: [] }, at)).model.controller, 'local')
  assert.throws(() => parseFormat('xml'), /^cantrip status: expected --format tabular, yaml, json, got "xml"$/)
  assert.is(parseDuration('cantrip wait-for', '--timeout', '10m'), 600_000)
  assert.throws(() => parseDuration('cantrip wait-for', '--timeout', 'soon'), /^cantrip wait-for: expected --timeout to be a duration like 30s, 1m or 1h, got "soon"$/)
})

test.run()
