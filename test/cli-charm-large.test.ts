/**
 * A 30 MB charm on real processes, with the memory its upload takes (`npm run test:long`
 * only: CANTRIP_LONG=1; `npm test` runs the 3 MB one in cli-charm-tools.test.ts).
 *
 * The charm holds 30 MB of random, incompressible content (so deflating it hides
 * nothing) beside a charmcraft.yaml and a `dispatch` that checks the content's sha256 in
 * the unit's copy. The client's peak RSS is read by /usr/bin/time (`%M`), the
 * controller's from /proc (VmHWM) before and after. The bounds pinned are generous (a
 * few times the archive): what they catch is a copy of the whole archive per chunk (120
 * chunks), not noise. The figures are printed; CANTRIP_LARGE_CHARM_MIB changes the size.
 */
import '../runtime/polyfill.ts'
import { spawnSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { parse } from 'yaml'
import { cantripOk as ok, destroyLeftoverController, removeHome } from './support/cli-process.ts'
import { distProgram } from './support/dist.ts'

const long = process.env['CANTRIP_LONG'] === '1'
const charmBytes = Number(process.env['CANTRIP_LARGE_CHARM_MIB'] ?? 30) * 1024 * 1024
const mib = 1024 * 1024

function writeCharm (dir: string): void {
  const blob = randomBytes(charmBytes)
  const digest = createHash('sha256').update(blob).digest('hex')
  mkdirSync(join(dir, 'venv'), { recursive: true })
  writeFileSync(join(dir, 'venv', 'blob.bin'), blob)
  writeFileSync(join(dir, 'charmcraft.yaml'), 'name: huge\ntype: charm\nsummary: s\ndescription: d\n')
  writeFileSync(join(dir, 'dispatch'), [
    '#!/bin/bash',
    'set -e',
    'case "$JUJU_DISPATCH_PATH" in',
    `  hooks/install) echo "${digest}  $CHARM_DIR/venv/blob.bin" | sha256sum -c --status ;;`,
    '  hooks/start) status-set active big ;;',
    'esac',
    ''
  ].join('\n'), { mode: 0o755 })
}

/** Peak resident set of process `pid` so far, in bytes (Linux VmHWM). */
function peakRss (pid: number): number {
  const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  assert.ok(match !== null, `no VmHWM for pid ${pid}`)
  return Number(match[1]) * 1024
}

function controllerPid (home: string): number {
  const file = parse(readFileSync(join(home, 'controllers.yaml'), 'utf8')) as { controllers: Record<string, { controllers: Array<{ pid: number }> }> }
  return file.controllers['local']!.controllers[0]!.pid
}

test('a 30 MB charm deploys to active/idle, with the client\'s and controller\'s memory bounded', async () => {
  if (!long) return
  const home = mkdtempSync(join(tmpdir(), 'cantrip-charm-large-'))
  const machinesDir = join(home, 'controllers', 'local', 'machines')
  try {
    const charm = join(home, 'huge')
    writeCharm(charm)
    ok(home, 'bootstrap')
    const pid = controllerPid(home)
    const controllerBefore = peakRss(pid)
    const started = performance.now()
    const run = spawnSync('/usr/bin/time', ['-f', 'maxrss-kb=%M', process.execPath, distProgram('cantrip'), 'deploy', charm], {
      env: { ...process.env, CANTRIP_HOME: home, NO_COLOR: '1' }, encoding: 'utf8', timeout: 600_000
    })
    const deployMs = performance.now() - started
    assert.is(run.status, 0, run.stderr)
    const clientPeak = Number(/maxrss-kb=(\d+)/.exec(run.stderr)?.[1]) * 1024
    const controllerUploaded = peakRss(pid)
    // The workload says active from inside its start hook; the agent is idle only after it.
    ok(home, 'wait-for', 'unit', 'huge/0', '--query', 'workload-status=="active" && agent-status=="idle"', '--timeout', '8m')
    const status = JSON.parse(ok(home, 'status', '--format', 'json')) as { applications: Record<string, { units: Record<string, { 'workload-status': { current: string }, 'juju-status': { current: string } }> }> }
    const unit = status.applications.huge!.units['huge/0']!
    assert.equal([unit['workload-status'].current, unit['juju-status'].current], ['active', 'idle'])
    const controllerAfter = peakRss(pid)
    console.log(`${charmBytes / mib} MiB charm: deploy ${(deployMs / 1000).toFixed(1)} s; client peak RSS ${(clientPeak / mib).toFixed(0)} MiB; controller peak RSS ${(controllerBefore / mib).toFixed(0)} MiB before, ${(controllerUploaded / mib).toFixed(0)} MiB after the upload, ${(controllerAfter / mib).toFixed(0)} MiB after the machine fetched it`)
    // Measured (2 cores, Node 20): the client peaks near 100 MiB plus 3.3 times the charm
    // (the files, their msgpack envelope and the deflated archive, each held once); the
    // controller grows by about 50 MiB plus the charm, chunks already written waiting for
    // the collector (10 MiB: +56, 30 MiB: +76, 60 MiB: +112). A copy of the whole archive
    // per chunk would cost gigabytes; these bounds catch that, not noise.
    assert.ok(clientPeak < 128 * mib + 5 * charmBytes, `client peak RSS ${clientPeak}`)
    assert.ok(controllerAfter - controllerBefore < 64 * mib + 2 * charmBytes, `controller peak RSS ${controllerBefore} → ${controllerAfter}`)
  } finally {
    if (existsSync(join(home, 'controllers'))) destroyLeftoverController(home, machinesDir)
    removeHome(home)
  }
})

test.run()
