/**
 * Several models on one controller group, through the CLI on the local provider: bootstrap,
 * add a second model, deploy kv into each (each model's machine "0" in its own
 * directory), check both come active and `status -m` shows each model alone, refuse an
 * unknown model before anything is sent, destroy the second model (its machines, agent
 * processes and data go; the default model's stay), and destroy the controller with
 * nothing left.
 */
import '../runtime/polyfill.ts'
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { cantrip, cantripInBackground, cantripOk as ok, removeHome } from './support/cli-process.ts'
import { parse } from 'yaml'
import type { StatusDocument } from '../agent/cli/status-document.ts'
import { freePortRun } from '../agent/free-port.ts'
import { killUnitWorkloads, processAlive } from './support/processes.ts'
import { cantripReadOnly, readOnlySupported } from './support/read-only-home.ts'

function status (home: string, model: string): StatusDocument {
  return JSON.parse(ok(home, 'status', '--format', 'json', '-m', model)) as StatusDocument
}

async function listening (port: number): Promise<boolean> {
  try {
    await fetch(`http://127.0.0.1:${port}/kv/anything`, { signal: AbortSignal.timeout(3_000) })
    return true
  } catch {
    return false
  }
}

function agentPid (dir: string): number {
  return Number(readFileSync(join(dir, 'agent.pid'), 'utf8').split(/\s+/)[0])
}

test('add-model, deploy into two models, status -m each, destroy-model, destroy-controller', async () => {
  // A short home: a unit's hook tool socket, deep below it, must fit a unix socket path.
  const home = mkdtempSync(join(tmpdir(), 'cm-'))
  const [defaultPort, twoPort] = [await freePortRun(1), await freePortRun(1)]
  const kv = resolve('examples/charms/kv')
  const machinesDir = join(home, 'controllers', 'local', 'machines')
  const twoMachines = join(machinesDir, 'm-two')
  try {
    ok(home, 'bootstrap')
    if (readOnlySupported()) {
      // A read-only store: add-model says so before it creates anything (models lists no "ro" below).
      const ro = cantripReadOnly(home, ['add-model', 'ro'])
      assert.equal([ro.status, ro.stderr], [1, `ERROR cannot write to "${home}": read-only file system\n`])
    }
    // wait-for model waits for a model that is not there yet, as Juju's does ("model … not
    // found, waiting..." until it appears or the timeout passes), then for its goal.
    assert.equal(cantrip(home, ['wait-for', 'model', 'two', '--timeout', '1s']),
      { status: 1, stdout: '', stderr: 'model "two" not found, waiting...\nERROR timed out waiting for "two" to reach goal state\n' })
    const waitingForTwo = cantripInBackground(home, ['wait-for', 'model', 'two', '--timeout', '3m'])
    assert.match(ok(home, 'add-model', 'two'), /Added 'two' model/)
    const two = await waitingForTwo
    assert.equal([two.status, two.stdout], [0, 'properties:\n  life: alive\n  status: available\n'], two.stderr)
    assert.match(two.stderr, /Model "two" is running\n$/)
    // add-model switched to it, as Juju's does.
    let models = JSON.parse(ok(home, 'models', '--format', 'json')) as { models: Array<{ 'short-name': string, status: { current: string } }>, 'current-model': string }
    assert.is(models['current-model'], 'two')
    assert.equal(models.models.map(m => m['short-name']), ['default', 'two'])

    // The same charm in each model: "store" in two (the current model), "kv" in default (named with -m controller:model).
    ok(home, 'deploy', kv, 'store', '--config', `port=${twoPort}`)
    ok(home, 'deploy', kv, '--config', `port=${defaultPort}`, '-m', 'local:default')
    ok(home, 'wait-for', 'application', 'store', '--timeout', '3m')
    ok(home, 'wait-for', 'application', 'kv', '--timeout', '3m', '-m', 'default')

    // wait-for as a Juju user types it (cmd/juju/waitfor: --query, the summary of what the
    // query read on stdout, "… is running" on stderr; one ERROR line and exit 1 for a bad query).
    const waitFor = (...args: string[]): { status: number | null, stdout: string, stderr: string } => cantrip(home, ['wait-for', ...args])
    assert.equal(waitFor('application', 'store', '--query', 'status=="active"'), { status: 0, stdout: 'properties:\n  status: active\n', stderr: 'Application "store" is running\n' })
    const unit = waitFor('unit', 'kv/0', '--query', 'workload-status=="active" && agent-status=="idle"', '-m', 'default', '--timeout', '3m')
    assert.equal([unit.status, unit.stdout], [0, 'properties:\n  agent-status: idle\n  workload-status: active\n'], unit.stderr)
    assert.match(unit.stderr, /(^|\n)unit "kv\/0" is running\n$/)
    // NAME picks the model: "default" while the current model is two.
    assert.equal(waitFor('model', 'default', '--query', 'forEach(units, unit => unit.workload-status == "active")'),
      { status: 0, stdout: 'properties: {}\nunits:\n  kv/0:\n    workload-status: active\n', stderr: 'Model "default" is running\n' })
    assert.equal(waitFor('application', 'store', '--query', 'status=="active" &&'),
      { status: 1, stdout: '', stderr: 'ERROR cantrip wait-for: cannot parse query at column 20: expected a value (a name, a "string", a number, true, false, "(" or "!"), got the end of the query\n' })
    assert.equal(waitFor('application', 'store', '--query', 'statuss=="active"'), {
      status: 1,
      stdout: '',
      stderr: 'ERROR cantrip wait-for: cannot run query at column 1: expected a name of application "store" (charm-url, exposed, life, machines, name, status, subordinate, units, workload-version), got "statuss" (did you mean "status"?)\n'
    })
    // A goal never reached: Juju's timeout message, after the progress line.
    assert.equal(waitFor('application', 'store', '--query', 'status=="blocked"', '--timeout', '1s'),
      { status: 1, stdout: '', stderr: 'application "store" found with "active", waiting...\nERROR timed out waiting for "store" to reach goal state\n' })

    const inTwo = status(home, 'two')
    const inDefault = status(home, 'default')
    assert.is(inTwo.model.name, 'two')
    assert.is(inDefault.model.name, 'default')
    assert.equal(Object.keys(inTwo.applications), ['store'])
    assert.equal(Object.keys(inDefault.applications), ['kv'])
    // Machine "0" in each model, in directories of their own, each serving its own workload.
    assert.equal(Object.keys(inTwo.machines), ['0'])
    assert.equal(Object.keys(inDefault.machines), ['0'])
    assert.ok(existsSync(join(machinesDir, 'machine-0', 'agent.pid')), 'the default model\'s machine 0')
    assert.ok(existsSync(join(twoMachines, 'machine-0', 'agent.pid')), 'model two\'s machine 0')
    assert.ok(await listening(defaultPort), 'kv/0 of the default model serves')
    assert.ok(await listening(twoPort), 'store/0 of model two serves')

    // A wrong model is refused with one line, before anything is sent.
    const wrong = cantrip(home, ['add-unit', 'kv', '-m', 'nope'])
    assert.is(wrong.status, 1)
    assert.match(wrong.stderr, /^ERROR cantrip: expected a model of controller "local" \(default, two\), got "nope"\n$/)
    const bad = cantrip(home, ['status', '-m', 'Bad_Name'])
    assert.is(bad.status, 1)
    assert.match(bad.stderr, /expected a model name like "default"/)
    assert.match(cantrip(home, ['destroy-model', 'default', '--no-prompt']).stderr, /a model other than "default"/)

    // switch, then the table stars the current model.
    assert.match(ok(home, 'switch', 'default'), /local:two -> local:default/)
    assert.match(ok(home, 'models'), /^default\*\s+localhost\/localhost\s+iaas\s+available\s+1\s+1\s+admin$/m)

    // destroy-model: its machine agent stops and everything of the model goes; the default model is untouched.
    const twoAgent = agentPid(join(twoMachines, 'machine-0'))
    const defaultAgent = agentPid(join(machinesDir, 'machine-0'))
    const member = (parse(readFileSync(join(home, 'controllers.yaml'), 'utf8')) as { controllers: { local: { controllers: Array<{ 'data-dir': string }> } } }).controllers.local.controllers[0]!
    assert.equal(readdirSync(join(member['data-dir'], 'models')).filter(d => d.startsWith('two-')).length, 1, 'model two\'s Raft data')
    assert.match(ok(home, 'destroy-model', 'two', '--no-prompt', '--timeout', '2m'), /Destroyed model "two": 1 machine and 1 application removed/)
    assert.not.ok(processAlive(twoAgent), 'model two\'s machine agent stopped')
    assert.not.ok(await listening(twoPort), 'store/0 stopped serving')
    assert.equal(existsSync(twoMachines) ? readdirSync(twoMachines).filter(d => d.startsWith('machine-')) : [], [], 'model two\'s machine directories are gone')
    models = JSON.parse(ok(home, 'models', '--format', 'json')) as typeof models
    assert.equal(models.models.map(m => m['short-name']), ['default'])
    assert.match(cantrip(home, ['status', '-m', 'two']).stderr, /expected a model of controller "local" \(default\), got "two"/)
    // Each controller drops the model's group and data once it applies the removal.
    const deadline = Date.now() + 120_000
    // The model's machines home goes with it (cantripd's onModelRemoved), as the controllers apply the removal.
    while ((readdirSync(join(member['data-dir'], 'models')).length > 0 || existsSync(twoMachines)) && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 200))
    assert.equal(readdirSync(join(member['data-dir'], 'models')), [], 'model two\'s Raft data is deleted')
    assert.not.ok(existsSync(twoMachines), 'model two\'s machines home is gone')
    assert.ok(processAlive(defaultAgent), 'the default model\'s machine agent runs on')
    assert.is(status(home, 'default').applications['kv']!['application-status'].current, 'active')

    ok(home, 'destroy-controller', 'local', '--no-prompt')
    assert.not.ok(processAlive(defaultAgent), 'every machine agent stopped')
    assert.not.ok(existsSync(join(home, 'controllers', 'local')), 'the controller directory is gone')
  } finally {
    if (existsSync(join(home, 'controllers', 'local'))) {
      cantrip(home, ['destroy-controller', 'local', '--no-prompt'])
      for (const dir of [machinesDir, twoMachines]) if (existsSync(dir)) for (const d of readdirSync(dir)) killUnitWorkloads(join(dir, d, 'agent'))
    }
    removeHome(home)
  }
})

test.run()
