/**
 * debug-log, show-status-log and show-unit against real processes: `cantrip bootstrap`
 * (one controller, the local provider), two kv units (two machine agents), then
 *
 * - `debug-log --replay --no-tail --include kv/0` shows the install hook's juju-log
 *   lines, in Juju's line format, and only kv/0's;
 * - a following `debug-log` prints a line logged after it started (config-changed,
 *   triggered by `cantrip config`), within a bounded wait;
 * - `show-status-log kv/0` lists the maintenance → active transitions in order;
 * - `show-unit kv/0` shows the peer relation's data from kv/1.
 *
 * Every process started is stopped by pid (destroy-controller stops the agents); the
 * temporary directory is removed.
 */
import '../runtime/polyfill.ts'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { cantrip, cantripOk as ok, destroyLeftoverController } from './support/cli-process.ts'
import { parse } from 'yaml'
import { freePortRun, waitFor } from './support/cantripd-cluster.ts'
import { processAlive } from './support/processes.ts'
import { distProgram } from './support/dist.ts'

test('debug-log (replay, filter, follow), show-status-log and show-unit on a bootstrapped controller', async () => {
  const home = mkdtempSync(join(tmpdir(), 'cantrip-logs-'))
  const machinesDir = join(home, 'controllers', 'local', 'machines')
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
    destroyLeftoverController(home, machinesDir)
    rmSync(home, { recursive: true, force: true })
  }
})

test.run()
