/**
 * Runs the ops framework's own integration-test charms on cantrip, as a user checks it:
 *
 *   node --import tsx scripts/verify-ops-charms.ts --operator PATH [--charms a,b] [--keep]
 *
 * PATH is a checkout of canonical/operator (any commit). Its test charms test_main,
 * test_relation and test_hookcmds (those present at that commit) are packed as charmcraft
 * packs them (scripts/pack-ops-charm.ts): venv/ holds the checkout's `ops` package and the
 * PyYAML and websocket-client of the Python the hooks run (Debian's python3-yaml and
 * python3-websocket, installed when missing). ops 2.21 and later also import
 * opentelemetry-api, which Debian does not package: when the hook Python cannot import
 * it, a no-op stand-in written here goes in its place (the API without an SDK records
 * nothing either) and the table says so. Nothing of ops is kept in this repository.
 *
 * A local controller in a temporary CANTRIP_HOME deploys them, drives what
 * test/integration/test_relation.py and test_hookcmds.py drive (deploys, scaling,
 * relations to a stand-in for any-charm, the actions) and what test/test_main.py checks
 * of test_main's stored state, prints one row per expectation (pass/fail and what was
 * seen), then destroys the controller (unless --keep). Exit status 0 when all pass.
 */
import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'
import { hookPython, hookPythonModule, packOpsCharm, type VenvPackage } from './pack-ops-charm.ts'

const root = resolve(fileURLToPath(import.meta.url), '..', '..')
const cli = join(root, 'dist', 'cantrip.mjs')
const allCharms = ['test_main', 'test_relation', 'test_hookcmds'] as const

interface Row { charm: string, expectation: string, pass: boolean, seen: string }
const rows: Row[] = []

function record (charm: string, expectation: string, pass: boolean, seenValue: string | undefined): void {
  const seen = seenValue ?? '(nothing)'
  rows.push({ charm, expectation, pass, seen: seen.replace(/\s+/g, ' ').slice(0, 160) })
  console.error(`${pass ? 'pass' : 'FAIL'}  ${charm}: ${expectation}${pass ? '' : ` (${seen.replace(/\s+/g, ' ').slice(0, 200)})`}`)
}

let home = ''
interface Run { status: number, stdout: string, stderr: string }
function cantrip (...args: string[]): Run {
  const run = spawnSync(process.execPath, [cli, ...args], { env: { ...process.env, CANTRIP_HOME: home, NO_COLOR: '1' }, encoding: 'utf8', timeout: 600_000 })
  return { status: run.status ?? -1, stdout: run.stdout ?? '', stderr: run.stderr ?? '' }
}

/**
 * An action's results (Juju's runner adds return-code; stdout/stderr when the charm printed),
 * from the task's document `run --format yaml` prints keyed by unit (cmd/juju/action/common.go).
 */
function action (unit: string, name: string, ...params: string[]): { ok: boolean, results: Record<string, unknown>, error: string } {
  const run = cantrip('run', unit, name, ...params, '--wait', '5m', '--format', 'yaml')
  let task: { status?: string, message?: string, results?: Record<string, unknown> } = {}
  try {
    task = ((parse(run.stdout) ?? {}) as Record<string, typeof task>)[unit] ?? {}
  } catch { /* kept empty: the row shows stderr */ }
  // As Juju's, run exits 0 for an action failed by action-fail (its process returned 0): the task's status says it.
  const ok = run.status === 0 && task.status === 'completed'
  return { ok, results: task.results ?? {}, error: run.status === 0 ? `${task.status ?? 'no task'}: ${task.message ?? ''}` : run.stderr.trim() }
}

function expectAction (charm: string, expectation: string, unit: string, name: string, params: string[], check: (r: Record<string, unknown>) => boolean): Record<string, unknown> {
  const run = action(unit, name, ...params)
  const pass = run.ok && check(run.results)
  record(charm, expectation, pass, run.ok ? JSON.stringify(run.results) : run.error)
  return run.results
}

interface StatusDoc { applications?: Record<string, { version?: string, 'application-status'?: { current: string }, units?: Record<string, { leader?: boolean, 'workload-status': { current: string, message?: string }, 'juju-status': { current: string } }> }> }
function status (): StatusDoc {
  const run = cantrip('status', '--format', 'json')
  return run.status === 0 ? JSON.parse(run.stdout) as StatusDoc : {}
}

const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))

/** Waits (bounded) until every unit of `apps` is idle with a workload status in `workload`. */
async function settle (apps: string[], workload: string[], timeoutMs = 480_000): Promise<{ ok: boolean, seen: string }> {
  const until = Date.now() + timeoutMs
  let seen = ''
  for (;;) {
    const doc = status()
    const units = apps.flatMap(app => Object.entries(doc.applications?.[app]?.units ?? {}))
    seen = units.map(([name, u]) => `${name} ${u['workload-status'].current}/${u['juju-status'].current}`).join(', ')
    const allThere = apps.every(app => Object.keys(doc.applications?.[app]?.units ?? {}).length > 0)
    if (allThere && units.every(([, u]) => workload.includes(u['workload-status'].current) && u['juju-status'].current === 'idle')) return { ok: true, seen }
    if (units.some(([, u]) => u['workload-status'].current === 'error') || Date.now() > until) return { ok: false, seen }
    await sleep(3000)
  }
}

function leaderOf (app: string): { leader: string, others: string[] } {
  const units = status().applications?.[app]?.units ?? {}
  const leader = Object.keys(units).find(name => units[name]!.leader === true) ?? `${app}/0`
  return { leader, others: Object.keys(units).filter(name => name !== leader).sort() }
}

/** The venv every charm gets: ops from the checkout, the rest from the hook Python. */
function venvFor (operator: string, work: string): { venv: VenvPackage[], notes: string[] } {
  const notes: string[] = []
  const venv: VenvPackage[] = [{ from: join(operator, 'ops') }]
  venv.push({ from: hookPythonModule('yaml', 'python3-yaml') })
  venv.push({ from: hookPythonModule('websocket', 'python3-websocket') })
  const pyproject = existsSync(join(operator, 'pyproject.toml')) ? readFileSync(join(operator, 'pyproject.toml'), 'utf8') : ''
  if (/^\s*"opentelemetry-api/m.test(pyproject)) {
    let found: string | undefined
    try { found = hookPythonModule('opentelemetry') } catch { found = undefined }
    if (found !== undefined) venv.push({ from: found })
    else {
      venv.push({ from: writeOpentelemetryStandIn(work) })
      notes.push('opentelemetry-api is not importable by the hook Python (Debian has no package): a no-op stand-in of opentelemetry.trace was packed in its place')
    }
  }
  return { venv, notes }
}

/**
 * The part of opentelemetry.trace that ops calls (get_tracer, start_as_current_span,
 * get_current_span, span attributes and events), doing nothing: what the real API does
 * when no SDK is configured.
 */
function writeOpentelemetryStandIn (work: string): string {
  const dir = join(work, 'opentelemetry')
  mkdirSync(join(dir, 'trace'), { recursive: true })
  writeFileSync(join(dir, '__init__.py'), '"""No-op stand-in for opentelemetry-api, written by cantrip\'s verify-ops-charms."""\n')
  writeFileSync(join(dir, 'trace', '__init__.py'), [
    'import contextlib',
    '',
    'class SpanContext:',
    '    trace_id = 0',
    '    span_id = 0',
    '    is_valid = False',
    '',
    'class Span:',
    '    def set_attribute(self, key, value): pass',
    '    def set_attributes(self, attributes): pass',
    '    def add_event(self, name, attributes=None, timestamp=None): pass',
    '    def record_exception(self, exception, attributes=None, timestamp=None, escaped=False): pass',
    '    def set_status(self, status, description=None): pass',
    '    def is_recording(self): return False',
    '    def get_span_context(self): return SpanContext()',
    '    def end(self, end_time=None): pass',
    '',
    '_SPAN = Span()',
    '',
    'class Tracer:',
    '    @contextlib.contextmanager',
    '    def start_as_current_span(self, name, *args, **kwargs):',
    '        yield _SPAN',
    '    def start_span(self, name, *args, **kwargs): return _SPAN',
    '',
    'def get_tracer(name, version=None, *args, **kwargs): return Tracer()',
    'def get_current_span(context=None): return _SPAN',
    ''
  ].join('\n'))
  return dir
}

/** A stand-in for any-charm: provides `db` and `ingress` endpoints, active at start. */
function writeAnyCharm (work: string): string {
  const dir = join(work, 'any-charm')
  mkdirSync(join(dir, 'hooks'), { recursive: true })
  writeFileSync(join(dir, 'metadata.yaml'), [
    'name: any-charm', 'summary: stand-in for any-charm', 'description: provides db and ingress, sets active',
    'provides:', '  provide-db:', '    interface: db', '  provide-ingress:', '    interface: ingress', ''
  ].join('\n'))
  writeFileSync(join(dir, 'hooks', 'start'), '#!/bin/sh\nstatus-set active\n')
  chmodSync(join(dir, 'hooks', 'start'), 0o755)
  return dir
}

/** test_main's StoredState, read with the checkout's ops from the unit's .unit-state.db. */
function storedState (operator: string, unit: string): Record<string, unknown> | undefined {
  const agents = join(home, 'controllers', 'local', 'machines')
  const found = spawnSync('find', [agents, '-path', `*/unit-${unit.replace('/', '-')}/charm/.unit-state.db`], { encoding: 'utf8' }).stdout.trim().split('\n')[0]
  if (found === undefined || found === '') return undefined
  const script = [
    'import json, pickle, sqlite3, sys',
    'db = sqlite3.connect(sys.argv[1])',
    'for handle, data in db.execute("SELECT handle, data FROM snapshot"):',
    '    if handle == "Charm/StoredStateData[_stored]":',
    '        print(json.dumps(pickle.loads(data), default=str))'
  ].join('\n')
  const run = spawnSync(hookPython(), ['-c', script, found], { encoding: 'utf8', env: { ...process.env, PYTHONPATH: operator } })
  try {
    return JSON.parse(run.stdout) as Record<string, unknown>
  } catch {
    return undefined
  }
}

async function verifyMain (operator: string, charmFile: string): Promise<void> {
  const c = 'test_main'
  const deploy = cantrip('deploy', charmFile)
  record(c, 'deploy succeeds', deploy.status === 0, deploy.stderr || deploy.stdout)
  if (deploy.status !== 0) return
  // The charm never sets a status: Juju shows the workload unknown once start has run.
  const settled = await settle(['main'], ['unknown'])
  record(c, 'unit reaches idle, workload unknown (no status set)', settled.ok, settled.seen)
  if (!settled.ok) return
  const unit = 'main/0'
  const state = storedState(operator, unit)
  record(c, 'StoredState: on_install == [InstallEvent]', JSON.stringify(state?.['on_install']) === '["InstallEvent"]', JSON.stringify(state?.['on_install']))
  record(c, 'StoredState: on_start == [StartEvent]', JSON.stringify(state?.['on_start']) === '["StartEvent"]', JSON.stringify(state?.['on_start']))
  const configChanged = state?.['on_config_changed'] as unknown[] | undefined
  record(c, 'config-changed deferred and re-emitted on later dispatches', (configChanged?.length ?? 0) >= 2, JSON.stringify(configChanged))
  const observed = (state?.['observed_event_types'] ?? []) as string[]
  record(c, 'events observed in Juju order: install, config-changed, start',
    observed.indexOf('InstallEvent') === 0 && observed.indexOf('ConfigChangedEvent') < observed.indexOf('StartEvent'), observed.join(' '))
  expectAction(c, 'action foo-bar (required param) runs', unit, 'foo-bar', ['foo-name=bar'], () => true)
  expectAction(c, 'action get-model-name runs', unit, 'get-model-name', [], () => true)
  const after = storedState(operator, unit)
  record(c, 'StoredState: on_foo_bar_action == [ActionEvent]', JSON.stringify(after?.['on_foo_bar_action']) === '["ActionEvent"]', JSON.stringify(after?.['on_foo_bar_action']))
  record(c, 'StoredState: model name seen by the action is "default"', JSON.stringify(after?.['_on_get_model_name_action']) === '["default"]', JSON.stringify(after?.['_on_get_model_name_action']))
  const crash = action(unit, 'keyerror')
  record(c, 'action keyerror fails (uncaught exception)', !crash.ok, crash.error)
  for (const [name, level, text] of [['log-critical', 'CRITICAL', 'super critical'], ['log-error', 'ERROR', 'grave error'], ['log-warning', 'WARNING', 'wise warning'], ['log-info', 'INFO', 'useful info']] as const) {
    expectAction(c, `action ${name} runs`, unit, name, [], () => true)
    const log = cantrip('debug-log', '--replay', '--no-tail', '--include', unit).stdout
    record(c, `debug-log shows "${text}" at ${level} under unit.main/0.juju-log`, new RegExp(`${level} unit\\.main/0\\.juju-log ${text}`).test(log), log.split('\n').filter(l => l.includes(text)).join(' | ') || '(no such line)')
  }
  const log = cantrip('debug-log', '--replay', '--no-tail', '--include', unit).stdout
  record(c, 'debug-log keeps the traceback\'s last line (KeyError: ...)', log.includes('KeyError: "\'foo\' not found in \'bar\'"'), log.split('\n').filter(l => l.includes('KeyError')).join(' | ').slice(0, 160) || '(no KeyError line)')
}

async function verifyRelation (charmFile: string, anyCharm: string): Promise<void> {
  const c = 'test_relation'
  const steps: string[][] = [['deploy', charmFile], ['add-unit', 'test-relation', '-n', '2'], ['deploy', anyCharm, 'test-db', '-n', '3'],
    ['integrate', 'test-relation:db', 'test-db'], ['deploy', anyCharm, 'test-ingress', '-n', '2'], ['integrate', 'test-relation:ingress', 'test-ingress']]
  for (const step of steps) {
    const run = cantrip(...step)
    if (run.status !== 0) { record(c, `cantrip ${step.join(' ')}`, false, run.stderr); return }
  }
  const settled = await settle(['test-relation', 'test-db', 'test-ingress'], ['active'])
  record(c, 'all units active (jubilant.all_active)', settled.ok, settled.seen)
  const doc = status()
  const unitsOf = (app: string): string[] => Object.keys(doc.applications?.[app]?.units ?? {}).sort()
  const wanted = { db: unitsOf('test-db'), ingress: unitsOf('test-ingress'), peer: unitsOf('test-relation').filter(u => u !== 'test-relation/0') }
  let seen: Record<string, string[]> = {}
  // As upstream: relation membership reaches each unit asynchronously; retry a bounded number of times.
  for (let tries = 0; tries < 30; tries++) {
    const run = action('test-relation/0', 'get-units')
    seen = run.ok ? JSON.parse(String(run.results['units'])) as Record<string, string[]> : {}
    if (JSON.stringify(['db', 'ingress', 'peer'].map(k => (seen[k] ?? []).sort())) === JSON.stringify([wanted.db, wanted.ingress, wanted.peer])) break
    await sleep(10_000)
  }
  for (const endpoint of ['db', 'ingress', 'peer'] as const) {
    record(c, `get-units: ${endpoint} == ${wanted[endpoint].join(',')}`, JSON.stringify((seen[endpoint] ?? []).sort()) === JSON.stringify(wanted[endpoint]), JSON.stringify(seen[endpoint] ?? []))
  }
}

async function verifyHookcmds (charmFile: string, anyCharm: string, work: string): Promise<void> {
  const c = 'test_hookcmds'
  const resource = join(work, 'test-file.txt')
  writeFileSync(resource, 'hello from the integration test resource')
  let deploy = cantrip('deploy', charmFile, '-n', '2', '--resource', `test-file=${resource}`, '--trust')
  record(c, 'deploy -n 2 --resource test-file=… --trust', deploy.status === 0, deploy.stderr)
  if (deploy.status !== 0) {
    deploy = cantrip('deploy', charmFile, '-n', '2', '--trust')
    record(c, 'deploy -n 2 --trust (without the resource, to go on)', deploy.status === 0, deploy.stderr)
    if (deploy.status !== 0) return
  }
  for (const step of [['deploy', anyCharm], ['integrate', 'test-hookcmds:anycharm', 'any-charm']]) {
    const run = cantrip(...step)
    if (run.status !== 0) { record(c, `cantrip ${step.join(' ')}`, false, run.stderr); return }
  }
  const settled = await settle(['test-hookcmds', 'any-charm'], ['active'])
  record(c, 'test_setup: all units active', settled.ok, settled.seen)
  if (!settled.ok) return
  const { leader, others } = leaderOf('test-hookcmds')
  const nonleader = others[0] ?? leader
  const is = (key: string, value: string) => (r: Record<string, unknown>) => String(r[key]) === value
  const json = (r: Record<string, unknown>, key: string): unknown => { try { return JSON.parse(String(r[key])) } catch { return undefined } }

  expectAction(c, 'get-status: unit-status active, unit-message present', leader, 'get-status', [], r => r['unit-status'] === 'active' && 'unit-message' in r)
  expectAction(c, 'get-status (leader): app-status, app-message, app-unit-count', leader, 'get-status', [], r => 'app-status' in r && 'app-message' in r && Number(r['app-unit-count']) >= 0)
  expectAction(c, 'set-and-check-status maintenance "hookcmds test"', leader, 'set-and-check-status', ['status=maintenance', 'message=hookcmds test'], r => r['status'] === 'maintenance' && r['message'] === 'hookcmds test')
  for (const s of ['blocked', 'waiting', 'maintenance', 'active']) expectAction(c, `set-and-check-status ${s}`, leader, 'set-and-check-status', [`status=${s}`], is('status', s))
  expectAction(c, 'get-all-config: string-opt hello, int-opt 42', leader, 'get-all-config', [], r => { const cfg = json(r, 'config') as Record<string, unknown> | undefined; return cfg?.['string-opt'] === 'hello' && cfg['int-opt'] === 42 })
  expectAction(c, 'get-config-value string-opt: hello (str)', leader, 'get-config-value', ['key=string-opt'], r => r['value'] === 'hello' && r['type'] === 'str')
  expectAction(c, 'get-config-value int-opt: 42 (int)', leader, 'get-config-value', ['key=int-opt'], r => String(r['value']) === '42' && r['type'] === 'int')
  expectAction(c, 'check-leadership on the leader: true', leader, 'check-leadership', [], is('is-leader', 'true'))
  expectAction(c, 'check-leadership on a non-leader: false', nonleader, 'check-leadership', [], is('is-leader', 'false'))
  expectAction(c, 'test-logging at every level succeeds', leader, 'test-logging', ['message=hookcmds integration test'], () => true)
  expectAction(c, 'set-app-version 3.14.15 runs', leader, 'set-app-version', ['version="3.14.15"'], () => true)
  record(c, 'status shows application version 3.14.15', status().applications?.['test-hookcmds']?.version === '3.14.15', String(status().applications?.['test-hookcmds']?.version))
  expectAction(c, 'get-network-info: a bind address with interface and value', leader, 'get-network-info', [], r => {
    const bind = json(r, 'bind-addresses') as Array<{ 'interface-name': string, addresses: Array<{ value: string }> }> | undefined
    const paths = [json(r, 'egress-subnets'), json(r, 'ingress-addresses')] as Array<unknown[] | undefined>
    return bind !== undefined && bind.length > 0 && bind[0]!['interface-name'] !== '' && (bind[0]!.addresses[0]?.value ?? '') !== '' && paths.some(p => (p?.length ?? 0) > 0)
  })
  for (const port of [9988, 80, 443, 8080]) {
    expectAction(c, `test-ports ${port}: open/close cycle seen by opened_ports`, leader, 'test-ports', [`port=${port}`], r => {
      const list = (k: string): Array<{ protocol: string, port: number }> => (json(r, k) ?? []) as Array<{ protocol: string, port: number }>
      const has = (k: string, proto: string): boolean => list(k).some(p => p.protocol === proto && p.port === port)
      return has('after-open-tcp', 'tcp') && !has('before', 'tcp') && has('after-open-both', 'udp') && !has('after-close-tcp', 'tcp') && has('after-close-tcp', 'udp') && list('final').length === list('before').length
    })
  }
  for (const [key, value] of [['testkey', 'testvalue'], ['mykey', 'hello world!']] as const) {
    expectAction(c, `test-unit-state ${key}=${JSON.stringify(value)}: set, get, get all, delete`, leader, 'test-unit-state', [`key=${key}`, `value=${JSON.stringify(value)}`], r => {
      const all = json(r, 'all-state') as Record<string, string> | undefined
      const after = json(r, 'after-delete') as Record<string, string> | undefined
      return r['retrieved'] === value && all?.[key] === value && after !== undefined && !(key in after)
    })
  }
  // test_hookcmds.py test_secret_full_lifecycle's assertions on the action's results.
  expectAction(c, 'test-secret-crud: full secret lifecycle', leader, 'test-secret-crud', [], r => {
    const id = String(r['secret-id'] ?? '')
    const ids = JSON.parse(String(r['secret-ids'] ?? '[]')) as string[]
    return String(r['initial-revision']) === '1' && ids.some(i => i.includes(id) || id.includes(i)) && r['initial-label'] === 'hookcmds-inttest' &&
      r['initial-description'] === 'Created by ops.hookcmds integration test' && r['initial-password'] === 'initial-secret' &&
      r['updated-password'] === 'updated-secret' && r['updated-description'] === 'Updated by hookcmds test' && String(r['label-lookup-password'] ?? '') !== ''
  })
  expectAction(c, 'test-goal-state: units of test-hookcmds with known statuses', leader, 'test-goal-state', [], r => {
    const names = String(r['unit-names'] ?? '').split(',')
    return Number(r['unit-count']) >= 1 && names.some(u => u.startsWith('test-hookcmds/')) && Number(r['relation-endpoint-count']) >= 1
  })
  expectAction(c, 'test-relation-data: peer relation round trip', leader, 'test-relation-data', [], r =>
    String(r['relation-id-str']).startsWith('peer:') && Number(r['member-count']) === 1 && r['retrieved-value'] === 'verified-by-integration-test')
  expectAction(c, 'test-storage: data storage listed with a location', leader, 'test-storage', [], r =>
    Number(r['data-storage-count']) >= 1 && String(r['storage-id']).startsWith('data/') && String(r['storage-location']) !== '' && ['filesystem', 'block'].includes(String(r['storage-kind'])))
  expectAction(c, 'test-action-params: received and param-count 1', leader, 'test-action-params', ['message=hello-from-hookcmds'], r => r['received'] === 'hello-from-hookcmds' && Number(r['param-count']) === 1)
  const failed = action(leader, 'fail-action', 'message=intentional hookcmds failure')
  record(c, 'fail-action: the action fails', !failed.ok, failed.error)
  expectAction(c, 'trigger-relation-error 9999: hookcmds.Error raised', leader, 'trigger-relation-error', ['relation-id=9999'], is('raised', 'Error'))
  expectAction(c, 'test-credential-get (trusted): cloud-type and cloud-name', leader, 'test-credential-get', [], r => String(r['cloud-type'] ?? '') !== '' && String(r['cloud-name'] ?? '') !== '')
  expectAction(c, 'test-relation-model-get: the peer relation\'s model is this model', leader, 'test-relation-model-get', [], r => r['uuid'] !== undefined && r['uuid'] === r['env-model-uuid'])
  expectAction(c, 'test-resource-get: a path ending test-file.txt', leader, 'test-resource-get', [], r => String(r['path'] ?? '').endsWith('/test-file.txt'))
  const grant = expectAction(c, 'test-secret-grant: granted', leader, 'test-secret-grant', [], is('granted', 'true'))
  if (grant['secret-id'] !== undefined) expectAction(c, 'test-secret-revoke: revoked', leader, 'test-secret-revoke', [`secret-id=${String(grant['secret-id'])}`], is('revoked', 'true'))
  const added = action(leader, 'test-storage-add')
  record(c, 'test-storage-add runs', added.ok, added.ok ? JSON.stringify(added.results) : added.error)
  if (added.ok) {
    await settle(['test-hookcmds'], ['active'])
    const before = Number(added.results['count-before-add'])
    expectAction(c, 'storage count grows by one after storage-add', leader, 'test-storage', [], r => Number(r['data-storage-count']) === before + 1)
  }
  expectAction(c, 'test-ports-endpoint-scoped 7766: port listed with endpoint peer', leader, 'test-ports-endpoint-scoped', ['port=7766'], r =>
    r['port-found-with-endpoint'] === 'true' && r['endpoint-matches'] === 'true' && r['closed-after'] === 'true')
  const marker = action(leader, 'test-reboot-marker')
  record(c, 'test-reboot-marker before: no marker', marker.ok && marker.results['marker-exists'] === 'false', JSON.stringify(marker.results) + marker.error)
  const config = cantrip('config', 'test-hookcmds', 'reboot-trigger=reboot-please')
  const rebooted = config.status === 0 ? await settle(['test-hookcmds'], ['active']) : { ok: false, seen: config.stderr }
  const markerAfter = action(leader, 'test-reboot-marker')
  record(c, 'juju-reboot from config-changed: marker set, boot time later', rebooted.ok && markerAfter.results['marker-exists'] === 'true' && Number(markerAfter.results['boot-time']) > Number(marker.results['boot-time']),
    JSON.stringify(markerAfter.results) + markerAfter.error)
}

function printTable (notes: string[], operator: string, commit: string): void {
  const lines = ['| charm | expectation | result | seen |', '|---|---|---|---|']
  for (const row of rows) lines.push(`| ${row.charm} | ${row.expectation.replaceAll('|', '\\|')} | ${row.pass ? 'pass' : '**fail**'} | ${row.pass ? '' : row.seen.replaceAll('|', '\\|')} |`)
  console.log(`ops checkout: ${operator}${commit === '' ? '' : ` (${commit})`}`)
  for (const note of notes) console.log(`note: ${note}`)
  console.log(lines.join('\n'))
  const passed = rows.filter(row => row.pass).length
  console.log(`\n${passed} passed, ${rows.length - passed} failed`)
}

async function main (argv: readonly string[]): Promise<number> {
  let operator: string | undefined
  let charms: string[] = [...allCharms]
  let keep = false
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--operator') operator = argv[++i]
    else if (arg === '--charms') charms = (argv[++i] ?? '').split(',')
    else if (arg === '--keep') keep = true
    else throw new Error(`verify-ops-charms: expected --operator PATH, --charms LIST or --keep, got ${JSON.stringify(arg)}`)
  }
  if (operator === undefined || !existsSync(join(operator, 'ops', '__init__.py'))) {
    throw new Error(`verify-ops-charms: expected --operator naming a canonical/operator checkout (with ops/__init__.py), got ${JSON.stringify(operator ?? '')}`)
  }
  operator = resolve(operator)
  if (!existsSync(cli)) throw new Error('verify-ops-charms: expected dist/cantrip.mjs; run npm run build first')
  const commit = spawnSync('git', ['-C', operator, 'describe', '--tags', '--always'], { encoding: 'utf8' }).stdout?.trim() ?? ''
  const work = mkdtempSync(join(tmpdir(), 'verify-ops-'))
  home = join(work, 'home')
  const { venv, notes } = venvFor(operator, join(work, 'venv-extra'))
  const anyCharm = writeAnyCharm(work)
  try {
    const boot = cantrip('bootstrap')
    if (boot.status !== 0) throw new Error(`verify-ops-charms: cantrip bootstrap failed: ${boot.stderr}`)
    for (const name of charms) {
      const dir = join(operator, 'test', 'charms', name)
      if (!existsSync(dir)) { notes.push(`${name}: not in this checkout`); continue }
      const packed = packOpsCharm({ dir, out: join(work, `${name}.charm`), venv })
      notes.push(`${name}: packed ${packed.files} files, ${(packed.bytes / 1024).toFixed(0)} KiB (${(packed.unpackedBytes / 1024).toFixed(0)} KiB unpacked)`)
      if (name === 'test_main') await verifyMain(operator, packed.path)
      if (name === 'test_relation') await verifyRelation(packed.path, anyCharm)
      if (name === 'test_hookcmds') await verifyHookcmds(packed.path, anyCharm, work)
    }
  } finally {
    if (keep) notes.push(`controller kept: CANTRIP_HOME=${home}`)
    else {
      cantrip('destroy-controller', 'local', '--no-prompt')
      rmSync(work, { recursive: true, force: true })
    }
  }
  printTable(notes, operator, commit)
  return rows.every(row => row.pass) ? 0 : 1
}

main(process.argv.slice(2)).then(code => process.exit(code), (error: Error) => {
  console.error(error.message)
  process.exit(2)
})
