/**
 * The CLI end to end on the local provider, as a user would drive it: bootstrap three
 * controllers, deploy a bundle of the example charms (kv ×2 behind web, logship on each
 * kv unit), wait until active, then scale up, change config, run an action, add and
 * remove a machine, remove a relation — checking `status --format json` and
 * what the workloads do after each step — and destroy the controller, leaving no process
 * and no directory behind.
 */
import '../runtime/polyfill.ts'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { parse } from 'yaml'
import type { StatusDocument } from '../agent/cli/status-document.ts'
import { freePortRun } from './support/cantripd-cluster.ts'
import { killUnitWorkloads, processAlive } from './support/processes.ts'

function cantrip (home: string, ...args: string[]): { status: number, stdout: string, stderr: string } {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'agent/cli/cantrip.ts', ...args], {
    env: { ...process.env, CANTRIP_HOME: home, NO_COLOR: '1' }, encoding: 'utf8', timeout: 240_000
  })
  return { status: run.status ?? -1, stdout: run.stdout, stderr: run.stderr }
}

function ok (home: string, ...args: string[]): string {
  const run = cantrip(home, ...args)
  assert.is(run.status, 0, `cantrip ${args.join(' ')}: ${run.stderr}`)
  return run.stdout
}

function status (home: string): StatusDocument {
  return JSON.parse(ok(home, 'status', '--format', 'json')) as StatusDocument
}

async function get (url: string): Promise<string | undefined> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(3_000) })
    return await response.text()
  } catch {
    return undefined
  }
}

test('bootstrap --ha 3, deploy a bundle, scale up, config, action, add/remove-machine, remove-relation, destroy', async () => {
  const home = mkdtempSync(join(tmpdir(), 'cantrip-e2e-'))
  const [kvBase, webBase] = [await freePortRun(4), await freePortRun(2)]
  const bundle = join(home, 'bundle.yaml')
  writeFileSync(bundle, readFileSync('examples/bundle.yaml', 'utf8')
    .replaceAll('./charms/', `${resolve('examples/charms')}/`)
    .replace('port-base: 18400', `port-base: ${kvBase}`).replace('port-base: 18500', `port-base: ${webBase}`))
  const machinesDir = join(home, 'controllers', 'local', 'machines')
  try {
    ok(home, 'bootstrap', '--ha', '3')
    ok(home, 'deploy', bundle)
    ok(home, 'wait-for', 'application', 'web', '--timeout', '4m')
    ok(home, 'wait-for', 'application', 'kv', '--timeout', '2m')
    let doc = status(home)
    assert.equal(Object.keys(doc.applications), ['kv', 'logship', 'web'])
    assert.equal(Object.keys(doc.applications['kv']!.units!), ['kv/0', 'kv/1'])
    for (const unit of Object.values(doc.applications['kv']!.units!)) {
      assert.is(unit['workload-status'].current, 'active')
      assert.equal(Object.keys(unit.subordinates ?? {}).length, 1, 'logship on every kv unit')
    }
    assert.is(doc.applications['web']!['application-status'].message, '2 backends')
    assert.equal(Object.keys(doc.machines), ['0', '1', '2'], 'one machine per principal unit')

    // Scale up: a third backend, which the web proxy picks up.
    ok(home, 'add-unit', 'kv')
    ok(home, 'wait-for', 'unit', 'kv/2', '--timeout', '3m')
    ok(home, 'wait-for', 'application', 'web', '--status', 'active', '--timeout', '1m')
    doc = status(home)
    assert.is(doc.applications['web']!['application-status'].message, '3 backends')

    // Config: the value reaches the workload's config file.
    ok(home, 'config', 'kv', 'log-level=debug')
    assert.is(ok(home, 'config', 'kv', 'log-level').trim(), 'debug')

    // An action with results; the workload then holds the value.
    const put = parse(ok(home, 'run', 'kv/0', 'put', 'key=colour', 'value=blue', '--wait', '1m')) as Record<string, unknown>
    assert.match(JSON.stringify(put), /stored/)
    assert.is(await get(`http://127.0.0.1:${kvBase}/kv/colour`), 'blue')

    // A machine added by hand is provisioned; remove-machine stops its agent and removes it.
    assert.match(ok(home, 'add-machine'), /created machine 4/)
    ok(home, 'wait-for', 'machine', '4', '--status', 'started', '--timeout', '2m')
    ok(home, 'remove-machine', '4')
    ok(home, 'wait-for', 'machine', '4', '--status', 'missing', '--timeout', '2m')
    assert.not.ok(existsSync(join(machinesDir, 'machine-4')), 'its directory is removed')

    // Remove the relation: web has no backends and says so.
    ok(home, 'remove-relation', 'web', 'kv')
    ok(home, 'wait-for', 'application', 'web', '--status', 'blocked', '--timeout', '2m')
    assert.is(status(home).applications['web']!['application-status'].message, 'no backends')

    const pids = readdirSync(machinesDir).map(d => Number(readFileSync(join(machinesDir, d, 'agent.pid'), 'utf8').split(/\s+/)[0]))
    ok(home, 'destroy-controller', 'local', '--no-prompt')
    assert.ok(pids.every(pid => !processAlive(pid)), 'every machine agent stopped')
    assert.not.ok(existsSync(join(home, 'controllers', 'local')), 'the controller directory is gone')
  } finally {
    if (existsSync(join(home, 'controllers', 'local'))) {
      cantrip(home, 'destroy-controller', 'local', '--no-prompt')
      if (existsSync(machinesDir)) for (const d of readdirSync(machinesDir)) killUnitWorkloads(join(machinesDir, d, 'agent'))
    }
    rmSync(home, { recursive: true, force: true })
  }
})

test.run()
