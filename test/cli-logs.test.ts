/**
 * The logs and status history a Juju user reads, against real processes on one
 * controller for the file (`cantrip bootstrap`, the local provider; cli-unit-logs was
 * merged in to share it):
 *
 * debug-log, show-status-log and show-unit: two kv units (two machine agents), then
 * - `debug-log --replay --no-tail --include kv/0` shows the install hook's juju-log
 *   lines, in Juju's line format, and only kv/0's;
 * - a following `debug-log` prints a line logged after it started (config-changed,
 *   triggered by `cantrip config`), within a bounded wait;
 * - `show-status-log kv/0` lists the maintenance → active transitions in order;
 * - `show-unit kv/0` shows the peer relation's data from kv/1.
 *
 * A removed unit's last log lines: a charm whose stop and remove hooks log a marker with
 * `juju-log` (and print one on stdout), `remove-unit`, and as soon as the unit has left
 * the model:
 * - `debug-log --replay --no-tail --include marker/0` already has both markers (read once,
 *   not polled: the machine agent waits for a controller to keep its final batch before it
 *   marks the unit dead, so the lines cannot be late);
 * - the unit's log file on its machine, `<machine>/agent/log/unit-marker-0.log`, has them
 *   too, in Juju's file line format, and the machine agent's own `machine-<n>.log` exists;
 * - SIGTERM to that machine's agent: once it has exited, its `terminating on SIGTERM` and,
 *   last of all, its `stopped` line (logged just before the mesh closes) are in
 *   `debug-log --replay` (read once: the agent waits for a controller to keep its last
 *   batch before it closes the mesh) and in its `machine-<n>.log`.
 *
 * Juju followed: worker/uniter's removal path (the stop hook, then remove, then the unit
 * is marked dead) and worker/logsender (the agent's records go to the controller's
 * logsink), cmd/jujud/agent/machine.go (`/var/log/juju/<agent tag>.log`) and loggo's
 * formatter.go for the file's lines.
 *
 * Every process started is stopped by pid (destroy-controller stops the agents); the
 * temporary directory is removed.
 */
import '../runtime/polyfill.ts'
import { spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { cantrip, cantripOk as ok, destroyLeftoverController, removeHome } from './support/cli-process.ts'
import { parse } from 'yaml'
import { freePortRun } from '../agent/free-port.ts'
import { waitFor } from './support/wait-for.ts'
import { processAlive } from './support/processes.ts'
import { distProgram } from './support/dist.ts'
import { StatusReader } from './support/status-reader.ts'

/** One controller for the file: bootstrapped by the first test, destroyed after the last. */
const home = mkdtempSync(join(tmpdir(), 'cantrip-logs-'))
const machinesDir = join(home, 'controllers', 'local', 'machines')

function writeMarkerCharm (dir: string): void {
  mkdirSync(join(dir, 'hooks'), { recursive: true })
  writeFileSync(join(dir, 'metadata.yaml'), 'name: marker\nsummary: marker\ndescription: logs a marker from its stop and remove hooks\n')
  const hooks: Record<string, string> = {
    install: 'juju-log "install-marker"',
    start: 'status-set active started',
    stop: 'juju-log "stop-marker"\necho "stop-stdout-marker"',
    remove: 'juju-log "remove-marker"\necho "remove-stdout-marker"'
  }
  for (const [name, body] of Object.entries(hooks)) {
    writeFileSync(join(dir, 'hooks', name), `#!/bin/bash\nset -eu\n${body}\n`)
    chmodSync(join(dir, 'hooks', name), 0o755)
  }
}

/** Every file called `name` under `dir`, at any depth. */
function findFiles (dir: string, name: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter(e => e.isFile() && e.name === name)
    .map(e => join(e.parentPath, e.name))
}

test('debug-log (replay, filter, follow), show-status-log and show-unit on a bootstrapped controller', async () => {
  const base = await freePortRun(2)
  let follower: ReturnType<typeof spawn> | undefined
  try {
    ok(home, 'bootstrap')
    ok(home, 'deploy', resolve('examples/charms/kv'), '-n', '2', '--config', `port-base=${base}`)
    ok(home, 'wait-for', 'application', 'kv', '--status', 'active', '--timeout', '4m')

    // The install hook's juju-log lines, kv/0's only, in Juju's format.
    let replay: string[] = []
    // The last records may still be on their way from the machine agent (shipped every 200 ms).
    await waitFor('install lines in debug-log', () => {
      replay = ok(home, 'debug-log', '--replay', '--no-tail', '--include', 'kv/0').trim().split('\n')
      return replay.some(line => line.includes('install: preparing'))
    }, () => replay.join('\n'))
    assert.ok(replay.every(line => /^unit-kv-0: \d\d:\d\d:\d\d (TRACE|DEBUG|INFO|WARNING|ERROR) \S+ /.test(line)), replay.join('\n'))
    assert.match(replay.join('\n'), /^unit-kv-0: \d\d:\d\d:\d\d INFO unit\.kv\/0\.juju-log install: preparing /m)
    assert.ok(replay.length > 3)
    // The other machine's agent ships its unit's lines too (only its own: the controller checks).
    let other: string[] = []
    await waitFor('kv/1 install lines', () => {
      other = ok(home, 'debug-log', '--replay', '--no-tail', '--include', 'unit-kv-1', '--include-module', 'unit.kv/1.juju-log').trim().split('\n')
      return other.some(line => line.includes('install: preparing'))
    }, () => other.join('\n'))
    assert.ok(other.every(line => line.startsWith('unit-kv-1: ')), other.join('\n'))
    const last2 = ok(home, 'debug-log', '--no-tail', '-n', '2', '--include', 'kv').trim().split('\n')
    assert.is(last2.length, 2)
    assert.ok(last2.every(line => /^unit-kv-[01]: /.test(line)))
    const warnings = ok(home, 'debug-log', '--replay', '--no-tail', '--level', 'WARNING').trim()
    assert.ok(warnings === '' || warnings.split('\n').every(line => / (WARNING|ERROR) /.test(line)), warnings)
    assert.match(cantrip(home, ['debug-log', '--level', 'LOUD']).stderr, /^ERROR cantrip debug-log: expected a level TRACE, DEBUG, INFO, WARNING, ERROR or CRITICAL, got "LOUD"$/m)

    // Following: a line logged after it started arrives (pushed, bounded wait).
    const out: string[] = []
    follower = spawn(process.execPath, [distProgram('cantrip'), 'debug-log', '-n', '1', '--include', 'kv/0', '--include-module', 'unit.kv/0.juju-log'], {
      env: { ...process.env, CANTRIP_HOME: home, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe']
    })
    follower.stdout!.setEncoding('utf8').on('data', (chunk: string) => { out.push(chunk) })
    await waitFor('debug-log to start following', () => out.join('').includes('unit-kv-0: '), () => out.join(''))
    const started = Date.now()
    ok(home, 'config', 'kv', 'log-level=debug')
    await waitFor('the config-changed line, live', () => /log-level debug/.test(out.join('')), () => out.join(''))
    const liveMs = Date.now() - started
    assert.ok(out.join('').trim().split('\n').every(line => line.startsWith('unit-kv-0: ') && line.includes(' unit.kv/0.juju-log ')), out.join(''))
    console.log(`config → live debug-log line: ${liveMs} ms`)

    // The unit's status history: maintenance before active, oldest first.
    const rows = JSON.parse(ok(home, 'show-status-log', 'kv/0', '--format', 'json')) as Array<{ time: string, type: string, status: string, message: string }>
    const workload = rows.filter(r => r.type === 'workload').map(r => r.status)
    assert.ok(workload.indexOf('maintenance') >= 0 && workload.lastIndexOf('active') > workload.indexOf('maintenance'), JSON.stringify(rows))
    assert.ok(rows.some(r => r.type === 'juju-unit' && r.status === 'executing'), JSON.stringify(rows))
    assert.match(ok(home, 'show-status-log', 'kv/0'), /^Time +Type +Status +Message\n/)

    // show-unit: the peer relation, with kv/1's databag.
    const doc = parse(ok(home, 'show-unit', 'kv/0')) as Record<string, { 'relation-info': Array<{ endpoint: string, 'related-units': Record<string, { 'in-scope': boolean, data: Record<string, string> }> }>, machine: string }>
    const cluster = doc['kv/0']!['relation-info'].find(r => r.endpoint === 'cluster')!
    assert.is(cluster['related-units']['kv/1']!['in-scope'], true)
    assert.is(cluster['related-units']['kv/1']!.data.port, String(base + 1))
    assert.equal(JSON.parse(ok(home, 'show-unit', 'kv/0', '--format', 'json')), doc)
  } finally {
    if (follower?.pid !== undefined && processAlive(follower.pid)) {
      const exited = new Promise(resolve => follower!.once('exit', resolve))
      follower.kill('SIGKILL')
      await exited
    }
  }
})


test('remove-unit: the stop and remove hooks\' lines are in debug-log --replay and in the unit\'s log file', async () => {
  const charm = join(home, 'charm')
  writeMarkerCharm(charm)
  let reader: StatusReader | undefined
  try {
    // Beside kv/0, so that the machine (and the unit's log file on it) outlives the unit:
    // a machine left with no principal goes with its last unit, as in Juju.
    const kvMachine = (JSON.parse(ok(home, 'show-unit', 'kv/0', '--format', 'json')) as Record<string, { machine: string }>)['kv/0']!.machine
    ok(home, 'deploy', charm, '--to', kvMachine)
    ok(home, 'wait-for', 'application', 'marker', '--status', 'active', '--timeout', '4m')
    // Hook output is logged at DEBUG, which Juju's default logging-config (<root>=INFO) leaves
    // out. Set once the unit's agent runs, so the stop and remove hooks' DEBUG lines below show
    // the running agent applied the new config (Juju's logger worker), not only its first one.
    ok(home, 'model-config', 'logging-config=<root>=INFO;unit=DEBUG')
    // Waited on in this process (a `cantrip status` per look cost ~0.5 CPU-s each).
    reader = await StatusReader.open(home)
    ok(home, 'remove-unit', 'marker/0')
    await reader.until('marker/0 to leave the model', doc => doc.applications['marker']?.units?.['marker/0'] === undefined)
    await reader.close()
    reader = undefined

    // Once: the final batch was kept before the unit was marked dead.
    const replay = ok(home, 'debug-log', '--replay', '--no-tail', '--include', 'marker/0')
    assert.match(replay, /^unit-marker-0: \d\d:\d\d:\d\d INFO unit\.marker\/0\.juju-log stop-marker$/m)
    assert.match(replay, /^unit-marker-0: \d\d:\d\d:\d\d INFO unit\.marker\/0\.juju-log remove-marker$/m)
    assert.match(replay, /^unit-marker-0: \d\d:\d\d:\d\d DEBUG unit\.marker\/0\.remove remove-stdout-marker$/m)
    const lines = replay.trim().split('\n')
    assert.ok(lines.findIndex(l => l.endsWith(' stop-marker')) < lines.findIndex(l => l.endsWith(' remove-marker')), replay)

    // The unit's own file on its machine, Juju's file format (UTC to the second).
    const unitFiles = findFiles(machinesDir, 'unit-marker-0.log')
    assert.is(unitFiles.length, 1, `one unit-marker-0.log under ${machinesDir}`)
    const logDir = join(unitFiles[0]!, '..')
    assert.ok(logDir.endsWith(join('agent', 'log')), logDir)
    const text = readFileSync(unitFiles[0]!, 'utf8')
    for (const marker of ['install-marker', 'stop-marker', 'remove-marker']) {
      assert.match(text, new RegExp(`^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d INFO unit\\.marker/0\\.juju-log ${marker}$`, 'm'))
    }
    assert.match(text, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d DEBUG unit\.marker\/0\.stop stop-stdout-marker$/m)
    const machineLog = readdirSync(logDir).find(name => /^machine-\d+\.log$/.test(name))
    assert.ok(machineLog !== undefined, readdirSync(logDir).join(' '))

    // SIGTERM: the agent's last words are kept by a controller before it exits.
    const entity = machineLog.replace(/\.log$/, '')
    const pid = Number(readFileSync(join(logDir, '..', '..', 'agent.pid'), 'utf8').split(' ')[0])
    assert.ok(processAlive(pid), `the agent of ${entity} runs (pid ${pid})`)
    process.kill(pid, 'SIGTERM')
    await waitFor(`${entity}'s agent to exit`, () => !processAlive(pid))
    const last = ok(home, 'debug-log', '--replay', '--no-tail', '--include', entity)
    const lastLines = last.trim().split('\n')
    const terminating = lastLines.findIndex(line => new RegExp(`^${entity}: \\d\\d:\\d\\d:\\d\\d INFO juju\\.agent terminating on SIGTERM$`).test(line))
    // The watchdog may have restarted the agent since: its new lines may follow.
    const stopped = lastLines.findIndex(line => new RegExp(`^${entity}: \\d\\d:\\d\\d:\\d\\d INFO juju\\.agent stopped$`).test(line))
    assert.ok(terminating >= 0 && stopped > terminating, last)
    assert.match(readFileSync(join(logDir, machineLog), 'utf8'), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d INFO juju\.agent stopped$/m)
  } finally {
    await reader?.close()
  }
})


test.after(() => {
  destroyLeftoverController(home, machinesDir)
  removeHome(home)
})

test.run()
