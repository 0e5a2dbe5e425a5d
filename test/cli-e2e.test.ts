/**
 * The CLI end to end on the local provider, as a user would drive it: bootstrap,
 * deploy a bundle of the example charms (kv ×2 behind web, logship on each
 * kv unit), wait until active, then scale up, change config, run an action, scale down,
 * fail a hook and resolve it, refresh a charm, add and remove a machine, remove a
 * relation — checking `status --format json` and what the workloads do after each step —
 * and destroy the controller, leaving no process and no directory behind.
 *
 * The controller directory sits under a temp dir, so unit agent paths are long
 * (machines/machine-3/agent/agents/unit-logship-2/agent.socket): this is where a hook
 * tool socket that could not bind kept a subordinate from starting, and so its principal
 * from ever leaving the model on remove-unit.
 *
 * `npm test` bootstraps one controller; CANTRIP_LONG=1 (`npm run test:long`) three, as a
 * user running `bootstrap --ha 3` would. Two idle followers were a third of this file's
 * CPU, and the same journey over a three-member group is in `npm test` elsewhere:
 * cli-bootstrap (bootstrap --ha 3), cli-enable-ha and cli-ha-rejoin (deploys on a group
 * grown to three, kill -9 of the leader), cantripd-deploy (related charms on three
 * controllers, the leader killed under load).
 */
import '../runtime/polyfill.ts'
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { cantripOk as ok, destroyLeftoverController, removeHome } from './support/cli-process.ts'
import { parse } from 'yaml'
import type { StatusDocument } from '../agent/cli/status-document.ts'
import { freePortRun } from '../agent/free-port.ts'
import { processAlive } from './support/processes.ts'
import { StatusReader } from './support/status-reader.ts'
import { writeExampleBundle } from './support/example-bundle.ts'

function status (home: string): StatusDocument {
  return JSON.parse(ok(home, 'status', '--format', 'json')) as StatusDocument
}

const backendsAttemptsMax = 5

async function get (url: string): Promise<string | undefined> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(3_000) })
    return await response.text()
  } catch {
    return undefined
  }
}

/** The pid in a unit's workload pid file (`<agents>/unit-kv-2/state/kv-server.pid`). */
function workloadPid (machinesDir: string, machine: string, unit: string, pidFile: string): number {
  return Number(readFileSync(join(machinesDir, `machine-${machine}`, 'agent', 'agents', `unit-${unit.replace('/', '-')}`, 'state', pidFile), 'utf8').trim())
}

/** The proxy's backends; a few tries (bounded), since one request may time out on a loaded machine. */
async function backendsOf (webUrl: string): Promise<string[] | undefined> {
  for (let attempt = 0; attempt < backendsAttemptsMax; attempt++) {
    const body = await get(`${webUrl}/backends`)
    if (body !== undefined) return (JSON.parse(body) as { backends: string[] }).backends
    await new Promise(resolve => setTimeout(resolve, 500))
  }
  return undefined
}

const controllers = process.env['CANTRIP_LONG'] === '1' ? '3' : '1'

test(`bootstrap --ha ${controllers}, deploy a bundle, scale up and down, config, action, hook error and resolved, refresh, add/remove-machine, remove-relation, destroy`, async () => {
  const home = mkdtempSync(join(tmpdir(), 'cantrip-e2e-'))
  const [kvBase, webBase] = [await freePortRun(4), await freePortRun(2)]
  const bundle = join(home, 'bundle.yaml')
  writeExampleBundle(bundle, { kvBase, webBase })
  const machinesDir = join(home, 'controllers', 'local', 'machines')
  let reader: StatusReader | undefined
  try {
    ok(home, 'bootstrap', '--ha', controllers)
    reader = await StatusReader.open(home)
    const untilStatus = reader.until.bind(reader)
    ok(home, 'deploy', bundle)
    ok(home, 'wait-for', 'application', 'web', '--timeout', '4m')
    ok(home, 'wait-for', 'application', 'kv', '--timeout', '2m')
    let doc = status(home)
    assert.equal(Object.keys(doc.applications), ['kv', 'logship', 'web'])
    assert.equal(Object.keys(doc.applications['kv']!.units!), ['kv/0', 'kv/1'])
    for (const unit of Object.values(doc.applications['kv']!.units!)) {
      assert.is(unit['workload-status'].current, 'active')
      const subordinates = Object.values(unit.subordinates ?? {})
      assert.is(subordinates.length, 1, 'logship on every kv unit')
      assert.is(subordinates[0]!['workload-status'].current, 'active', 'its agent started and the shipper runs')
    }
    assert.is(doc.applications['web']!['application-status'].message, '2 backends')
    assert.equal(Object.keys(doc.machines), ['0', '1', '2'], 'one machine per principal unit')

    // Scale up: a third backend, which the web proxy picks up.
    ok(home, 'add-unit', 'kv')
    ok(home, 'wait-for', 'unit', 'kv/2', '--timeout', '3m')
    doc = await untilStatus('web to show 3 backends and logship/2 active', d =>
      d.applications['web']!['application-status'].message === '3 backends' &&
      d.applications['kv']!.units!['kv/2']!.subordinates?.['logship/2']?.['workload-status'].current === 'active')
    const kv2Machine = doc.applications['kv']!.units!['kv/2']!.machine

    // Config: the value reaches the workload's config file.
    ok(home, 'config', 'kv', 'log-level=debug')
    assert.is(ok(home, 'config', 'kv', 'log-level').trim(), 'debug')

    // An action with results (the task's document: --format yaml, as cmd/juju/action/common.go
    // prints it keyed by unit); the workload then holds the value.
    const put = parse(ok(home, 'run', 'kv/0', 'put', 'key=colour', 'value=blue', '--wait', '1m', '--format', 'yaml')) as Record<string, { status: string, results: Record<string, unknown> }>
    assert.is(put['kv/0']?.status, 'completed')
    assert.match(JSON.stringify(put['kv/0']?.results), /stored/)
    assert.is(await get(`http://127.0.0.1:${kvBase}/kv/colour`), 'blue')

    // Scale down: kv/2 and its logship subordinate leave, their workloads stop, web has one
    // backend fewer, and the machine they emptied goes too (Juju's remove-unit): out of
    // status, its agent stopped and its directory removed.
    const kv2Pid = workloadPid(machinesDir, kv2Machine, 'kv/2', 'kv-server.pid')
    const shipperPid = workloadPid(machinesDir, kv2Machine, 'logship/2', 'shipper.pid')
    assert.ok(processAlive(kv2Pid) && processAlive(shipperPid), 'kv/2 and logship/2 workloads run')
    const webUrl = `http://127.0.0.1:${webBase}`
    assert.is((await backendsOf(webUrl))?.length, 3)
    ok(home, 'remove-unit', 'kv/2')
    doc = await untilStatus(`kv/2 to leave, web to show 2 backends and machine ${kv2Machine} to go`, d =>
      d.applications['kv']!.units!['kv/2'] === undefined && d.applications['web']!['application-status'].message === '2 backends' &&
      d.machines[kv2Machine] === undefined && !existsSync(join(machinesDir, `machine-${kv2Machine}`)))
    assert.equal(Object.keys(doc.applications['kv']!.units!), ['kv/0', 'kv/1'])
    const beforeRefresh = doc.applications['kv']!
    assert.equal(Object.values(doc.applications['kv']!.units!).flatMap(u => Object.keys(u.subordinates ?? {})), ['logship/0', 'logship/1'], 'logship/2 went with it')
    assert.is((await backendsOf(webUrl))?.length, 2, 'the proxy forwards to two backends')
    assert.not.ok(processAlive(kv2Pid), 'kv/2 workload stopped')
    assert.not.ok(processAlive(shipperPid), 'logship/2 shipper stopped')
    assert.is(await get(`http://127.0.0.1:${kvBase + 2}/health`), undefined, 'nothing serves on kv/2\'s port')

    // A failing hook: a port web cannot use makes config-changed exit 1; the unit shows
    // the error with the hook named, the proxy keeps serving on its old port; once the
    // config is fixed, `resolved` runs the hook again and the unit is back to active/idle.
    ok(home, 'config', 'web', 'port=70000')
    doc = await untilStatus('web/0 in error', d => d.applications['web']!.units!['web/0']!['workload-status'].current === 'error')
    assert.is(doc.applications['web']!.units!['web/0']!['workload-status'].message, 'hook failed: "config-changed"')
    assert.is((await backendsOf(webUrl))?.length, 2, 'the proxy still serves while its hook is in error')
    ok(home, 'config', 'web', 'port=0')
    ok(home, 'resolved', 'web/0')
    doc = await untilStatus('web/0 active and idle', d => {
      const web0 = d.applications['web']!.units!['web/0']!
      return web0['workload-status'].current === 'active' && web0['juju-status'].current === 'idle'
    })
    assert.is(doc.applications['web']!.units!['web/0']!['workload-status'].message, '2 backends')
    assert.is((await backendsOf(webUrl))?.length, 2)

    // Refresh kv to a copy whose workload reports a new version: upgrade-charm runs the new
    // code, the revision moves on, and the data survives the restart.
    const kvNext = join(home, 'kv-next')
    cpSync('examples/charms/kv', kvNext, { recursive: true })
    const server = join(kvNext, 'workload', 'kv-server.mjs')
    writeFileSync(server, readFileSync(server, 'utf8').replace("export const VERSION = '1.0.0'", "export const VERSION = '1.1.0'"))
    assert.is(beforeRefresh.version, '1.0.0')
    assert.match(ok(home, 'refresh', 'kv', '--path', kvNext), /refreshed to/)
    doc = await untilStatus('kv to report workload version 1.1.0 on a new revision', d => {
      const kv = d.applications['kv']!
      return kv.version === '1.1.0' && kv['charm-rev'] > beforeRefresh['charm-rev'] &&
        Object.values(kv.units!).every(u => u['workload-status'].current === 'active' && u['juju-status'].current === 'idle')
    }, 90_000)
    assert.is(await get(`http://127.0.0.1:${kvBase}/kv/colour`), 'blue', 'kv/0 serves its data on the new code')

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

    await reader.close()
    reader = undefined
    const pids = readdirSync(machinesDir).map(d => Number(readFileSync(join(machinesDir, d, 'agent.pid'), 'utf8').split(/\s+/)[0]))
    ok(home, 'destroy-controller', 'local', '--no-prompt')
    assert.ok(pids.every(pid => !processAlive(pid)), 'every machine agent stopped')
    assert.not.ok(existsSync(join(home, 'controllers', 'local')), 'the controller directory is gone')
  } finally {
    await reader?.close()
    destroyLeftoverController(home, machinesDir)
    removeHome(home)
  }
})

test.run()
