/**
 * `retry-provisioning` end to end on the local provider (one controller for the file).
 * Machines 0 and 1 cannot get their instance directories: a dangling symlink stands at
 * each (a machine directory moved to a disk that is not mounted), which the provider does
 * not remove and no retry fixes. So their first start fails for good and they wait in
 * `provisioning error` for the operator, as Juju's provisioner leaves them
 * (worker/provisioner/provisioner_task.go setErrorStatus); once the links are gone,
 * `retry-provisioning` starts them again. Juju followed: cmd/juju/machine/
 * retryprovisioning.go (machines or --all, not both; no containers; each failure printed
 * on stderr, exit 0), apiserver/facades/client/machinemanager RetryProvisioning (a named
 * machine not in error: "machine N is not in an error state (<instance status>)"; --all
 * passes over machines that are not) and cmd/juju/status output_tabular.go printMachine
 * (State the agent's, Inst id `pending`, Message the instance status's).
 */
import '../runtime/polyfill.ts'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { parse } from 'yaml'
import { cantrip, cantripOk, destroyLeftoverController, removeHome } from './support/cli-process.ts'

const home = mkdtempSync(join(tmpdir(), 'cantrip-retry-prov-'))
const machinesDir = join(home, 'controllers', 'local', 'machines')
const ok = (...args: string[]): string => cantripOk(home, ...args)

function writeTinyCharm (dir: string): void {
  const files: Record<string, string> = {
    'metadata.yaml': 'name: tiny\nsummary: s\ndescription: d\n',
    'hooks/install': '#!/bin/bash\ntrue\n',
    'hooks/start': '#!/bin/bash\nstatus-set active ready\n'
  }
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true })
    writeFileSync(join(dir, path), content, { mode: 0o755 })
  }
}

/** Where the machine's directory would go: a link to a disk that is not there. */
function blockMachineDirectory (machine: string): string {
  const link = join(machinesDir, `machine-${machine}`)
  symlinkSync(join(home, 'unmounted-disk', `machine-${machine}`), link)
  return link
}

type MachineDoc = { 'juju-status': { current: string }, 'machine-status': { current: string, message?: string }, 'instance-id': string }
function machinesOf (yaml: string): Record<string, MachineDoc> {
  return (parse(yaml) as { machines: Record<string, MachineDoc> }).machines
}

const retry = suite('retry-provisioning')
const links: string[] = []

retry.before(() => {
  writeTinyCharm(join(home, 'tiny'))
  ok('bootstrap')
  mkdirSync(machinesDir, { recursive: true })
  links.push(blockMachineDirectory('0'), blockMachineDirectory('1'))
  ok('deploy', join(home, 'tiny'))
  ok('add-machine')
  ok('wait-for', 'machine', '0', '--status', 'provisioning error', '--timeout', '4m')
  ok('wait-for', 'machine', '1', '--status', 'provisioning error', '--timeout', '4m')
})

retry.after(() => {
  for (const link of links) rmSync(link, { force: true })
  destroyLeftoverController(home, machinesDir)
  removeHome(home)
})

retry('a failed first start: status shows the provisioning error with the provider\'s reason; the unit waits for its machine', () => {
  const machines = machinesOf(ok('status', '--format', 'yaml'))
  for (const id of ['0', '1']) {
    const m = machines[id]!
    assert.is(m['machine-status'].current, 'provisioning error')
    assert.match(m['machine-status'].message ?? '', `cannot create instance directory "${join(machinesDir, `machine-${id}`)}"`)
    assert.match(m['machine-status'].message ?? '', /EEXIST/)
    assert.is(m['instance-id'], 'pending')
  }
  const table = ok('status')
  assert.match(table, /\n0 +pending +pending +failed to start machine 0 after 1 attempt: provider local: invalid: cannot create instance directory/)
  assert.match(table, /\ntiny\/0 +waiting +allocating +0 /)
})

retry('usage: machines or --all, not both; no containers — one ERROR line, exit 2', () => {
  const none = cantrip(home, ['retry-provisioning'])
  assert.equal([none.status, none.stderr], [2, 'ERROR cantrip retry-provisioning: expected machine ids or --all, got none\n'])
  const both = cantrip(home, ['retry-provisioning', '--all', '0'])
  assert.equal([both.status, both.stderr], [2, 'ERROR cantrip retry-provisioning: expected machine ids or --all, not both, got --all 0\n'])
  const container = cantrip(home, ['retry-provisioning', '0/lxd/1'])
  assert.equal([container.status, container.stderr], [2, 'ERROR cantrip retry-provisioning: expected machine ids like "0" (not containers), got "0/lxd/1"\n'])
})

retry('the cause removed, retry-provisioning N starts that machine and its unit; the other stays in error until --all', () => {
  for (const link of links.splice(0)) rmSync(link)
  const run = cantrip(home, ['retry-provisioning', '0'])
  assert.equal([run.status, run.stdout, run.stderr], [0, '', ''])
  // The instance running, not only the agent started: the local provider records the
  // instance when its start check (limits.localProviderStartCheckMs) has passed, and on a
  // quiet machine the agent and its unit's first hooks can finish inside that second.
  ok('wait-for', 'machine', '0', '--query', 'status=="started" && instance-status=="running"', '--timeout', '4m')
  // Active and idle: the workload's active comes from the start hook, and the agent is
  // still executing until the hooks queued behind it have run.
  ok('wait-for', 'unit', 'tiny/0', '--query', 'workload-status=="active" && agent-status=="idle"', '--timeout', '4m')
  const table = ok('status')
  assert.match(table, /\ntiny\/0\* +active +idle +0 +127\.0\.0\.1 +ready\n/, table)
  assert.match(table, /\n0 +started +127\.0\.0\.1 +local:machine-0 /)
  // Nothing retries machine 1 by itself: its error waits for the operator.
  const machines = machinesOf(ok('status', '--format', 'yaml'))
  assert.equal([machines['0']!['machine-status'].current, machines['1']!['machine-status'].current], ['running', 'provisioning error'])

  // A machine not in error says so on stderr; the command still succeeds (Juju prints each result's error).
  const again = cantrip(home, ['retry-provisioning', '0', '7'])
  assert.equal([again.status, again.stdout, again.stderr], [0, '', 'machine 0 is not in an error state (running)\nmachine 7 not found\n'])

  const all = cantrip(home, ['retry-provisioning', '--all'])
  assert.equal([all.status, all.stdout, all.stderr], [0, '', ''])
  ok('wait-for', 'machine', '1', '--status', 'started', '--timeout', '4m')
  const nothingLeft = cantrip(home, ['retry-provisioning', '--all'])
  assert.equal([nothingLeft.status, nothingLeft.stdout, nothingLeft.stderr], [0, '', ''])
})

retry.run()
