/**
 * `show-unit` and `show-status-log` without processes: their documents from a model
 * built with the model's own commands (MemoryController), in Juju's shapes, and their
 * argument checks (refused before anything is sent).
 */
import '../runtime/polyfill.ts'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { parse } from 'yaml'
import { checkShowUnit, renderShowUnit, runShowUnit, showUnitDocument } from '../agent/cli/commands/show-unit.ts'
import { renderStatusLog, runShowStatusLog, statusLogPlan, statusLogRows, statusTime } from '../agent/cli/commands/show-status-log.ts'
import type { ModelClient } from '../agent/cli/commands/model-common.ts'
import { MemoryController } from './support/model-controller.ts'

/** kv (2 units, peers) related to web (1 unit); kv/0 leads, opened a port and wrote databags. */
function model (): MemoryController {
  const c = new MemoryController()
  c.run('add-charm', { url: 'local:kv-0', hash: '1'.repeat(16), metadata: { name: 'kv', provides: { website: 'http' }, peers: { cluster: 'kv-cluster' } } })
  c.run('add-charm', { url: 'local:web-0', hash: '2'.repeat(16), metadata: { name: 'web', requires: { backend: 'http' } } })
  c.run('deploy', { application: 'kv', charm: 'local:kv-0', config: {}, constraints: {}, numUnits: 2 })
  c.run('deploy', { application: 'web', charm: 'local:web-0', config: {}, constraints: {}, numUnits: 1 })
  c.run('set-machine-instance', { machine: '0', instanceId: 'i-0', addresses: ['10.0.0.5'] }, { kind: 'controller', id: 'c' })
  c.run('integrate', { a: 'web:backend', b: 'kv:website' })
  c.runAs('kv/0', 'claim-leadership', { application: 'kv', unit: 'kv/0', now: 1, durationMs: 300_000 })
  for (const unit of ['kv/0', 'kv/1']) c.runAs(unit, 'enter-scope', { unit, relationId: 0 })
  for (const unit of ['kv/0', 'web/0']) c.runAs(unit, 'enter-scope', { unit, relationId: 1 })
  c.runAs('kv/0', 'commit-hook-changes', {
    unit: 'kv/0',
    openPorts: [{ protocol: 'tcp', from: 8080 }],
    relationSettings: [{ relationId: 1, settings: { hostname: 'h0', port: '8080' } }, { relationId: 1, application: true, settings: { token: 'abc' } }]
  })
  c.runAs('web/0', 'commit-hook-changes', { unit: 'web/0', relationSettings: [{ relationId: 1, settings: { wanted: 'yes' } }] })
  c.runAs('kv/0', 'set-workload-version', { unit: 'kv/0', version: '1.2' })
  return c
}

const showUnit = suite('show-unit')

showUnit('Juju\'s shape: ports, charm, leader, life, relation-info with the related application\'s data and each unit\'s databag, machine, address, version', () => {
  const c = model()
  const doc = showUnitDocument(c.context, ['kv/0', 'web/0'], {})
  const kv0 = doc['kv/0']!
  assert.equal(Object.keys(kv0), ['opened-ports', 'charm', 'leader', 'life', 'relation-info', 'machine', 'public-address', 'workload-version'])
  assert.equal([kv0['opened-ports'], kv0.charm, kv0.leader, kv0.life, kv0.machine, kv0['public-address'], kv0['workload-version']], [['8080/tcp'], 'local:kv-0', true, 'alive', '0', '10.0.0.5', '1.2'])
  const info = kv0['relation-info'] as Array<Record<string, unknown>>
  assert.equal(info.map(r => [r['relation-id'], r.endpoint, r['related-endpoint']]), [[0, 'cluster', 'cluster'], [1, 'website', 'backend']])
  const website = info[1]!
  assert.equal(website['application-data'], {}, 'web wrote no application data')
  assert.equal((website['local-unit'] as { data: Record<string, string> }).data.hostname, 'h0')
  assert.equal(Object.keys(website['related-units'] as object), ['web/0'])
  assert.equal((website['related-units'] as Record<string, { 'in-scope': boolean, data: Record<string, string> }>)['web/0']!['in-scope'], true)
  assert.is((website['related-units'] as Record<string, { data: Record<string, string> }>)['web/0']!.data.wanted, 'yes')
  assert.equal(Object.keys(info[0]!['related-units'] as object), ['kv/1'], 'a peer relation lists the other peers')
  const web0 = doc['web/0']!
  assert.not.ok('leader' in web0, 'only the leader says so')
  const backend = (web0['relation-info'] as Array<Record<string, unknown>>)[0]!
  assert.equal(backend['application-data'], { token: 'abc' }, 'the related application\'s databag')
  assert.is((backend['related-units'] as Record<string, { data: Record<string, string> }>)['kv/0']!.data.port, '8080')
})

showUnit('a departed peer: listed out of scope while it is in the model, not once it has left (its kept bag is for hooks)', () => {
  const c = model()
  c.run('remove-unit', { unit: 'kv/1' })
  c.runAs('kv/1', 'leave-scope', { unit: 'kv/1', relationId: 0 })
  const peers = (): Record<string, { 'in-scope': boolean }> => ((showUnitDocument(c.context, ['kv/0'], {})['kv/0']!['relation-info'] as Array<Record<string, unknown>>)[0]!['related-units']) as Record<string, { 'in-scope': boolean }>
  assert.equal(peers()['kv/1']!['in-scope'], false)
  c.runAs('kv/1', 'unit-dead', { unit: 'kv/1' })
  assert.equal(peers(), {})
})

showUnit('--endpoint, --related-unit and --app narrow it; yaml and json render the same document', () => {
  const c = model()
  const only = (options: Parameters<typeof showUnitDocument>[2]): Array<Record<string, unknown>> => showUnitDocument(c.context, ['kv/0'], options)['kv/0']!['relation-info'] as Array<Record<string, unknown>>
  assert.equal(only({ endpoint: 'website' }).map(r => r.endpoint), ['website'])
  assert.equal(only({ relatedUnit: 'kv/1' }).map(r => Object.keys(r['related-units'] as object)), [['kv/1']])
  const app = only({ app: true })
  assert.ok(app.every(r => !('related-units' in r) && !('local-unit' in r)))
  assert.equal(app[1]!['application-data'], {})
  const yaml = parse(renderShowUnit(c.context, ['kv/0'], {})) as unknown
  const json = JSON.parse(renderShowUnit(c.context, ['kv/0'], { format: 'json' })) as unknown
  assert.equal(yaml, json)
  assert.equal(json, showUnitDocument(c.context, ['kv/0'], {}))
})

showUnit('bad input: refused before connecting; a unit not in the model: one line', async () => {
  assert.throws(() => checkShowUnit(['kv'], {}), /^cantrip show-unit: expected a unit name like "web\/0", got "kv"$/)
  assert.throws(() => checkShowUnit(['kv/0'], { format: 'xml' }), /expected --format yaml or json, got "xml"/)
  assert.throws(() => checkShowUnit(['kv/0'], { relatedUnit: 'x' }), /expected a unit name/)
  let connected = false
  await runShowUnit(async () => { connected = true; return {} as ModelClient }, ['nope'], {}, () => {}).then(() => assert.unreachable(), () => {})
  assert.not.ok(connected)
  assert.throws(() => showUnitDocument(model().context, ['kv/9'], {}), /^cantrip show-unit: expected a unit in the model, got "kv\/9"$/)
})

const statusLog = suite('show-status-log')

// Juju's cmd/juju/status/history.go: each entry's DetailedStatus.Data is shown as `data`
// in yaml and json (omitted when empty); a hook error's data names the hook, relation and
// remote unit (uniter: "hook", "relation-id", "remote-unit").
statusLog('a hook error\'s data is in the yaml and json rows; entries without data have none', () => {
  const c = model()
  const at = Date.UTC(2026, 10, 24, 11, 2, 3)
  c.run('set-agent-status', { unit: 'kv/0', status: 'error', message: 'hook failed: "website-relation-changed"', data: { hook: 'website-relation-changed', 'relation-id': 1, 'remote-unit': 'web/0' }, now: at }, { kind: 'machine', id: '0' })
  c.run('set-agent-status', { unit: 'kv/0', status: 'idle', message: '', now: at + 1000 }, { kind: 'machine', id: '0' })
  const rows = statusLogRows(c.context, 'kv/0', { type: 'juju-unit' })
  const failed = rows.find(r => r.status === 'error')!
  assert.equal(failed.data, { hook: 'website-relation-changed', 'relation-id': 1, 'remote-unit': 'web/0' })
  assert.not.ok('data' in rows.at(-1)!, 'idle has no data')
  const yaml = parse(renderStatusLog(rows, 'yaml')) as Array<Record<string, unknown>>
  assert.equal(yaml.find(r => r.status === 'error')!.data, failed.data)
  assert.match(renderStatusLog(rows, 'yaml'), /data:\n {4}hook: website-relation-changed\n {4}relation-id: 1\n {4}remote-unit: web\/0\n/)
  assert.match(renderStatusLog(rows, 'tabular'), /juju-unit +error +hook failed: "website-relation-changed"\n/)
})

statusLog('the unit\'s history, oldest first, both types by default, -n the last N, Juju\'s table and time format', async () => {
  const c = model()
  const at = Date.UTC(2026, 10, 24, 11, 2, 3)
  c.run('set-agent-status', { unit: 'kv/0', status: 'executing', message: 'running install hook', now: at }, { kind: 'machine', id: '0' })
  c.runAs('kv/0', 'set-unit-status', { unit: 'kv/0', status: 'maintenance', message: 'installing', now: at + 1000 })
  c.runAs('kv/0', 'set-unit-status', { unit: 'kv/0', status: 'active', message: 'serving', now: at + 2000 })
  c.run('set-agent-status', { unit: 'kv/0', status: 'idle', message: '', now: at + 3000 }, { kind: 'machine', id: '0' })
  const rows = statusLogRows(c.context, 'kv/0', {})
  // The agent's first report ends "waiting for machine" with "agent initialising", as Juju's uniter init does.
  assert.equal(rows.map(r => `${r.type}:${r.status}`), ['workload:waiting', 'juju-unit:allocating', 'workload:waiting', 'juju-unit:executing', 'workload:maintenance', 'workload:active', 'juju-unit:idle'])
  assert.equal([rows[0]!.message, rows[2]!.message], ['waiting for machine', 'agent initialising'])
  assert.is(rows[3]!.time, '24 Nov 2026 11:02:03Z')
  assert.is(statusTime(null), '')
  assert.equal(statusLogRows(c.context, 'kv/0', { type: 'workload' }).map(r => r.status), ['waiting', 'waiting', 'maintenance', 'active'])
  assert.equal(statusLogRows(c.context, 'kv/0', { type: 'juju-unit', n: '2' }).map(r => r.status), ['executing', 'idle'])
  const table = renderStatusLog(rows, 'tabular').split('\n')
  assert.match(table[0]!, /^Time +Type +Status +Message$/)
  assert.match(table[5]!, /^24 Nov 2026 11:02:04Z +workload +maintenance +installing$/)
  assert.equal(JSON.parse(renderStatusLog(rows, 'json')), rows)
  assert.equal(parse(renderStatusLog(rows, 'yaml')), rows)
  const out: string[] = []
  const client = { model: async () => ({ ok: true as const, model: c.context, presence: {}, leader: 'x', term: 1 }) } as unknown as ModelClient
  await runShowStatusLog(async () => client, 'kv/0', { format: 'json', n: '1' }, text => out.push(text))
  assert.equal(JSON.parse(out[0]!).map((r: { status: string }) => r.status), ['idle'])
})

statusLog('machines (instance and agent) and applications have their own histories', () => {
  const c = model()
  const at = Date.UTC(2026, 0, 2, 3, 4, 5)
  c.run('set-machine-status', { machine: '0', instanceStatus: 'running', message: 'i-0', now: at }, { kind: 'controller', id: 'c' })
  c.run('set-machine-status', { machine: '0', agentStatus: 'started', message: '', now: at + 1 }, { kind: 'machine', id: '0' })
  c.runAs('kv/0', 'set-application-status', { unit: 'kv/0', status: 'active', message: '2 units', now: 2 })
  assert.equal(statusLogRows(c.context, '0', { type: 'machine' }).map(r => [r.type, r.status, r.message, r.time]), [['machine', 'pending', '', ''], ['machine', 'running', 'i-0', '02 Jan 2026 03:04:05Z']])
  assert.equal(statusLogRows(c.context, '0', { type: 'juju-machine' }).map(r => r.status), ['pending', 'started'])
  assert.equal(statusLogRows(c.context, 'kv', { type: 'application' }).map(r => [r.status, r.message]), [['active', '2 units']])
  assert.throws(() => statusLogRows(c.context, '7', { type: 'machine' }), /^cantrip show-status-log: expected a machine in the model, got "7"$/)
  assert.throws(() => statusLogRows(c.context, 'kv/0', { type: 'application' }), /expected an application name/)
})

statusLog('bad input is refused before connecting', () => {
  assert.throws(() => statusLogPlan('kv', {}), /^cantrip show-status-log: expected a unit name like "web\/0", got "kv"$/)
  assert.throws(() => statusLogPlan('kv/0', { type: 'model' }), /expected --type unit, workload, juju-unit, machine, juju-machine, application, got "model"/)
  assert.throws(() => statusLogPlan('kv/0', { type: 'machine' }), /expected a machine id/)
  assert.throws(() => statusLogPlan('kv/0', { format: 'xml' }), /expected --format tabular, json, yaml/)
  assert.throws(() => statusLogPlan('kv/0', { n: 'x' }), /expected -n to be a whole number/)
  assert.equal(statusLogPlan('kv/0', {}), { type: 'unit', n: 20, format: 'tabular' })
})

for (const s of [showUnit, statusLog]) s.run()
