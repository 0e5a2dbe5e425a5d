/**
 * Python charms written as ops charms are, packed as charmcraft packs them, deployed with
 * `cantrip deploy ./x.charm` on real processes: the scenarios of canonical/operator's
 * test charms and their integration tests (test/charms/test_main, test_relation,
 * test_hookcmds; test/integration/test_relation.py and test_hookcmds.py), asserting what
 * those tests assert against a real Juju.
 *
 * The charms (test/fixtures/ops-charms/) are our own: a unified charmcraft.yaml, a
 * charmcraft dispatch that execs ./src/charm.py with PYTHONPATH=lib:venv, PyYAML in
 * venv/ from the hook Python (scripts/pack-ops-charm.ts), and a small layer
 * (lib/hookshape.py) that calls every hook tool with the arguments ops 2.20's
 * _ModelBackend passes (ops/model.py: `--format=json` last, `status-set
 * --application=False`, `juju-log --log-level L --`, `relation-set -r N --file -` with
 * YAML on stdin, `relation-list -r N --app`, `status-get --include-data`, text
 * `opened-ports`) and reads the environment ops/jujucontext.py reads.
 *
 * One controller for the file; every process is stopped by pid (destroy-controller) and
 * the temporary directory removed. Hooks are few: two apps, three units.
 */
import '../runtime/polyfill.ts'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { parse } from 'yaml'
import { hookPythonModule, packOpsCharm } from '../scripts/pack-ops-charm.ts'
import { cantrip, cantripOk as ok, destroyLeftoverController, removeHome } from './support/cli-process.ts'

const fixtures = join(import.meta.dirname, 'fixtures', 'ops-charms')
const home = mkdtempSync(join(tmpdir(), 'cantrip-ops-'))
const machinesDir = join(home, 'controllers', 'local', 'machines')
/**
 * Retries of an action whose answer converges: relation membership reaches each unit
 * asynchronously after the controller has it, as upstream's test_relation says. The
 * controller's state is waited for first (show-unit, no hook), so few are needed.
 */
const convergeTriesMax = 15
/** Reads of the controller's state (show-unit) while waiting for it. */
const settleReadsMax = 300

function pack (name: string): string {
  const packed = packOpsCharm({
    dir: join(fixtures, name),
    out: join(home, `${name}.charm`),
    lib: [join(fixtures, 'lib', 'hookshape.py')],
    venv: [{ from: hookPythonModule('yaml', 'python3-yaml') }]
  })
  // Until the chunked upload lands the whole charm goes in one request of at most 1 MiB.
  assert.ok(packed.unpackedBytes < 1024 * 1024, `${name}: ${packed.unpackedBytes} bytes unpacked`)
  return packed.path
}

/**
 * `cantrip run --format yaml`: the task's document keyed by unit (cmd/juju/action/common.go),
 * its results taken; failures kept (status, stderr) for the test to judge.
 */
function runAction (unit: string, action: string, ...params: string[]): { status: number, results: Record<string, unknown>, stderr: string } {
  const run = cantrip(home, ['run', unit, action, ...params, '--wait', '3m', '--format', 'yaml'])
  const doc = (parse(run.stdout) ?? {}) as Record<string, { results?: Record<string, unknown> }>
  return { status: run.status, results: doc[unit]?.results ?? {}, stderr: run.stderr }
}

/** A successful action's own results: Juju's runner adds `return-code` (checked here) beside what action-set set. */
function runOk (unit: string, action: string, ...params: string[]): Record<string, string> {
  const run = runAction(unit, action, ...params)
  assert.is(run.status, 0, `${unit} ${action}: ${run.stderr}`)
  const { 'return-code': code, ...results } = run.results
  assert.is(code, 0, `${unit} ${action}: ${JSON.stringify(run.results)}`)
  return results as Record<string, string>
}

/** The action-set value that holds JSON (Python's json.dumps spacing), parsed. */
const json = (results: Record<string, unknown>, key: string): unknown => JSON.parse(String(results[key]))

async function converge<T> (what: string, attempt: () => T, done: (value: T) => boolean): Promise<T> {
  let value = attempt()
  for (let tries = 1; !done(value); tries++) {
    if (tries >= convergeTriesMax) assert.unreachable(`${what} never converged: ${JSON.stringify(value)}`)
    await new Promise(resolve => setTimeout(resolve, 3000))
    value = attempt()
  }
  return value
}

interface ShowUnit { 'relation-info'?: Array<{ endpoint: string, 'application-data'?: Record<string, string>, 'related-units'?: Record<string, { 'in-scope': boolean, data?: Record<string, string> }> }> }

/** Waits until the controller's view of `unit` (show-unit, as Juju's) satisfies `done`. */
async function settled (what: string, unit: string, done: (view: ShowUnit) => boolean): Promise<void> {
  let view: ShowUnit = {}
  // Each read starts a CLI process: look soon, then less often (up to every 3 s).
  let pauseMs = 500
  for (let reads = 0; reads < settleReadsMax; reads++) {
    view = (JSON.parse(ok(home, 'show-unit', unit, '--format', 'json')) as Record<string, ShowUnit>)[unit] ?? {}
    if (done(view)) return
    await new Promise(resolve => setTimeout(resolve, pauseMs))
    pauseMs = Math.min(3_000, pauseMs * 1.5)
  }
  assert.unreachable(`${what} never settled: ${JSON.stringify(view)}`)
}

const relatedIn = (view: ShowUnit, endpoint: string): string[] =>
  Object.entries(view['relation-info']?.find(info => info.endpoint === endpoint)?.['related-units'] ?? {}).filter(([, u]) => u['in-scope']).map(([name]) => name).sort()

interface Status { applications: Record<string, { version?: string, units?: Record<string, { leader?: true, 'workload-status': { current: string, message?: string }, 'open-ports'?: string[] }> }> }
const status = (): Status => JSON.parse(ok(home, 'status', '--format', 'json')) as Status

let leader = ''
let follower = ''

test.before(() => {
  const probe = pack('ops-probe')
  const db = pack('ops-db')
  ok(home, 'bootstrap')
  ok(home, 'deploy', probe, '-n', '2')
  // Beside ops-probe/0, as Juju's --to places it: one machine agent fewer to start.
  ok(home, 'deploy', db, '--to', '0')
  ok(home, 'integrate', 'ops-probe:db', 'ops-db')
})

test.after(() => {
  destroyLeftoverController(home, machinesDir)
  removeHome(home)
})

test('the packed charms reach the statuses their start hooks set (jubilant.all_active)', () => {
  ok(home, 'wait-for', 'application', 'ops-probe', '--status', 'active', '--timeout', '5m')
  ok(home, 'wait-for', 'application', 'ops-db', '--status', 'active', '--timeout', '5m')
  const units = status().applications['ops-probe']!.units!
  assert.equal(Object.keys(units).sort(), ['ops-probe/0', 'ops-probe/1'])
  for (const unit of Object.values(units)) assert.equal(unit['workload-status'], { ...unit['workload-status'], current: 'active', message: 'ok' })
  leader = Object.keys(units).find(name => units[name]!.leader === true)!
  follower = Object.keys(units).find(name => name !== leader)!
  assert.ok(leader !== undefined && follower !== undefined, JSON.stringify(units))
})

// test_relation.py: relation.units per endpoint, the acting unit not among its peers.
test('get-units: the remote units of every relation, as test_relation expects', async () => {
  const wanted = { db: ['ops-db/0'], peer: [follower] }
  await settled('the relations', leader, view => JSON.stringify([relatedIn(view, 'db'), relatedIn(view, 'peer')]) === JSON.stringify([wanted.db, wanted.peer]))
  const results = await converge('get-units', () => runAction(leader, 'get-units'),
    run => run.status === 0 && JSON.stringify(json(run.results, 'units')) === JSON.stringify(wanted))
  assert.equal(json(results.results, 'units'), wanted)
})

test('relation data set by one side is seen by the other, unit and application buckets', async () => {
  const askers = ['ops-probe/0', 'ops-probe/1'].join(',')
  await settled('ops-db/0 answering both', leader, view =>
    view['relation-info']?.find(info => info.endpoint === 'db')?.['related-units']?.['ops-db/0']?.data?.['answered'] === askers)
  const run = await converge('relation data', () => runAction(leader, 'get-relation-data'),
    r => r.status === 0 && String(r.results['unit-data']).includes(`"answered": "${askers}"`))
  assert.is(run.results['return-code'], 0)
  assert.is(run.results['remote-app'], 'ops-db')
  assert.equal(JSON.parse(String(run.results['app-data'])), { database: 'probe-db', 'remote-app': 'ops-probe' })
  const unitData = JSON.parse(String(run.results['unit-data'])) as Record<string, Record<string, string>>
  assert.equal(Object.keys(unitData), ['ops-db/0'])
  const data = unitData['ops-db/0']!
  assert.is(data['host'], 'ops-db/0')
  assert.is(data['answered'], askers)
  // Juju adds the unit's addresses to its own settings when it enters scope.
  for (const key of ['egress-subnets', 'ingress-address', 'private-address']) assert.ok(key in data, `${key} in ${JSON.stringify(data)}`)
})

// test_hookcmds.py: status, config, leadership, app version, ports, actions' failure.
test('status-get and status-set as test_hookcmds checks them', () => {
  const unit = runOk(follower, 'get-status')
  assert.equal(unit, { 'unit-status': 'active', 'unit-message': 'ok' })
  const app = runOk(leader, 'get-status')
  assert.is(app['unit-status'], 'active')
  assert.ok('app-status' in app && 'app-message' in app, JSON.stringify(app))
  // Two of upstream's round trips: one with a message, one without (the others add no new path).
  for (const [wanted, message] of [['maintenance', 'hookcmds test'], ['waiting', '']] as const) {
    assert.equal(runOk(follower, 'set-and-check-status', `status=${wanted}`, `message=${JSON.stringify(message)}`), { status: wanted, message })
  }
})

test('config-get --format=json gives the typed defaults; is-leader answers per unit', () => {
  assert.equal(JSON.parse(runOk(follower, 'get-all-config')['config']!), { 'int-opt': 42, 'string-opt': 'hello' })
  assert.equal(runOk(leader, 'check-leadership'), { 'is-leader': 'true' })
  assert.equal(runOk(follower, 'check-leadership'), { 'is-leader': 'false' })
})

test('application-version-set -- VERSION shows in status', () => {
  runOk(leader, 'set-app-version', 'version="3.14.15"')
  assert.is(status().applications['ops-probe']!.version, '3.14.15')
})

test('open-port, opened-ports and close-port within one action (test_ports_open_close_cycle)', () => {
  const r = runOk(follower, 'test-ports', 'port=9988')
  const list = (key: string): string[] => JSON.parse(r[key]!) as string[]
  assert.not.ok(list('before').includes('9988/tcp'), r['before'])
  assert.ok(list('after-open-tcp').includes('9988/tcp'), r['after-open-tcp'])
  assert.ok(list('after-open-both').includes('9988/udp'), r['after-open-both'])
  assert.not.ok(list('after-close-tcp').includes('9988/tcp'), r['after-close-tcp'])
  assert.ok(list('after-close-tcp').includes('9988/udp'), r['after-close-tcp'])
  assert.is(list('final').length, list('before').length)
})

test('an action that exits 0 commits its changes: a port it opened shows in status afterwards', async () => {
  runOk(follower, 'keep-port', 'port=9977')
  // Juju's HookContext.Flush writes an action's ports and settings as it does a hook's; they were dropped.
  const unitPorts = (): string[] => status().applications['ops-probe']!.units![follower]!['open-ports'] ?? []
  await converge('9977/tcp in status', unitPorts, ports => ports.includes('9977/tcp'))
})

test('juju-log at every level ops uses succeeds and reaches debug-log under the unit', async () => {
  runOk(follower, 'test-logging', 'message=ops-probe-log-check')
  const unitTag = `unit-${follower.replace('/', '-')}`
  const lines = await converge('the log lines', () => ok(home, 'debug-log', '--replay', '--no-tail', '--include', follower),
    text => text.includes('[ERROR] ops-probe-log-check'))
  for (const level of ['INFO', 'WARNING', 'ERROR']) {
    assert.match(lines, new RegExp(`^${unitTag}: \\d\\d:\\d\\d:\\d\\d ${level} unit\\.${follower.replace('/', '\\/')}\\.juju-log \\[${level}\\] ops-probe-log-check$`, 'm'))
  }
})

test('action-fail: the action fails with its message, as juju run reports it', () => {
  // Juju 3.6 cmd/juju/action/common.go (run_test.go "run action which fails"): plain output
  // says the task failed; the command exits 0, since the charm's process returned 0 (only a
  // non-zero return code fails `juju run`).
  const run = cantrip(home, ['run', follower, 'fail-action', 'message="failed on purpose"', '--wait', '3m'])
  assert.is(run.status, 0, run.stderr)
  const [, id] = /^Action id (\d+) failed: failed on purpose\n/.exec(run.stdout) ?? []
  assert.ok(id !== undefined, run.stdout)
  const task = parse(ok(home, 'show-task', id!, '--format', 'yaml')) as { status: string, message: string, results: Record<string, unknown> }
  assert.equal([task.status, task.message, task.results['return-code']], ['failed', 'failed on purpose', 0])
})

// test_main: the events dispatch gave the charm, and the relation views ops builds in -created.
test('dispatch: the events in Juju order, and relation-ids/relation-list in -relation-created', () => {
  const r = runOk(follower, 'get-events')
  const events = JSON.parse(r['events']!) as string[]
  // juju-semantics §2.1 and §2.7: install, <peer>-relation-created, the leadership hook, config-changed, start.
  const order: Array<[string, string]> = [['install', 'peer_relation_created'], ['peer_relation_created', 'leader_settings_changed'],
    ['leader_settings_changed', 'config_changed'], ['config_changed', 'start']]
  for (const [before, after] of order) {
    assert.ok(events.indexOf(before) >= 0 && events.indexOf(before) < events.indexOf(after), `${before} before ${after}: ${events.join(' ')}`)
  }
  assert.ok(events.includes('db_relation_created') && events.includes('db_relation_joined'), events.join(' '))
  assert.ok(events.includes('get_events_action'), events.join(' '))
  // Juju's hook context lists the relation being created (relation-ids) and it has no members yet.
  const created = JSON.parse(r['created']!) as Record<string, { ids: number[], units: string[][] }>
  assert.is(created['peer']?.ids.length, 1, r['created'])
  assert.is(created['db']?.ids.length, 1, r['created'])
  assert.equal(created['db']?.units, [[]], r['created'])
})

test('goal-state --format=json: the planned units of the application (ops planned_units)', () => {
  const r = runOk(leader, 'get-goal-state')
  assert.is(String(r['planned-units']), '2')
  assert.equal(JSON.parse(r['units']!), ['ops-probe/0', 'ops-probe/1'])
})

test.run()
