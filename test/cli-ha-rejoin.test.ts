/**
 * A controller group that outlives its original controller, in real processes (one cluster
 * for the file):
 *
 * - machines added while the group had one controller (their bootstrap data names only
 *   c0) learn the members `enable-ha -n 3` added and keep them (<data dir>/controllers.json),
 *   as every controller keeps its peers';
 *   after kill -9 of c0, every machine agent is killed -9 and restarted by the provider's
 *   watchdog: each one registers again with a controller it remembered, heartbeats under
 *   a new incarnation and its unit is idle again. Juju's agents do this with agent.conf's
 *   apiaddresses, rewritten on every change of the controllers' addresses
 *   (juju/juju worker/apiaddressupdater/apiaddressupdater.go; agent/agent.go SetAPIHostPorts).
 * - then a second controller is killed: with 1 of 3 left the group cannot commit, and every
 *   command says so in one line within a request's timeout (`status`, `add-unit`), exit 1;
 *   `show-controller` lists the two down members as unreachable and `controllers` shows HA 1/3.
 *
 * Every process is stopped by pid (destroy-controller, then by the recorded pids) and the
 * temporary directory removed.
 */
import '../runtime/polyfill.ts'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { parse } from 'yaml'
import { cantrip, cantripOk as ok, destroyLeftoverController } from './support/cli-process.ts'
import { processAlive } from './support/processes.ts'

const home = mkdtempSync(join(tmpdir(), 'cantrip-ha-rejoin-'))
const machinesDir = join(home, 'controllers', 'local', 'machines')
const machines = ['0', '1'] as const

/**
 * Polls `check` until it holds, first after 250 ms and then less often, up to every 1 s
 * (a check may start a CLI process); fails after `timeoutMs` (a bound for a busy machine,
 * not a verdict).
 */
async function eventually<T> (what: string, timeoutMs: number, check: () => T | undefined): Promise<T> {
  const until = Date.now() + timeoutMs
  let pauseMs = 250
  let value = check()
  while (value === undefined) {
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, pauseMs))
    pauseMs = Math.min(1_000, pauseMs * 1.5)
    value = check()
  }
  return value
}

function controllerMembers (): Array<{ 'peer-id': string, 'data-dir': string }> {
  const value = parse(readFileSync(join(home, 'controllers.yaml'), 'utf8')) as { controllers: Record<string, { controllers: Array<{ 'peer-id': string, 'data-dir': string }> }> }
  return value.controllers['local']!.controllers
}

function controllerPids (): number[] {
  const file = join(home, 'controllers.yaml')
  if (!existsSync(file)) return []
  const value = parse(readFileSync(file, 'utf8')) as { controllers: Record<string, { controllers: Array<{ pid: number }> }> }
  return Object.values(value.controllers).flatMap(c => c.controllers.map(m => m.pid))
}

function agentPid (machine: string): number | undefined {
  const file = join(machinesDir, `machine-${machine}`, 'agent.pid')
  if (!existsSync(file)) return undefined
  const pid = Number(readFileSync(file, 'utf8').trim().split(/\s+/)[0])
  return Number.isSafeInteger(pid) && pid > 1 ? pid : undefined
}

interface UnitStatus { machine: string, 'juju-status': { current: string } }
function units (): Record<string, UnitStatus> | undefined {
  const run = cantrip(home, ['status', '--format', 'json'])
  if (run.status !== 0) return undefined
  return (JSON.parse(run.stdout) as { applications: Record<string, { units?: Record<string, UnitStatus> }> }).applications['tiny']?.units
}

function incarnation (machine: string): number | undefined {
  const run = cantrip(home, ['members', '--format', 'json'])
  if (run.status !== 0) return undefined
  const row = (JSON.parse(run.stdout) as { members: Array<{ entity: string, state: string, incarnation: number }> }).members.find(m => m.entity === `machine-${machine}`)
  return row?.state === 'alive' ? row.incarnation : undefined
}

function writeTinyCharm (dir: string): void {
  const files: Record<string, string> = {
    'metadata.yaml': 'name: tiny\nsummary: s\ndescription: d\n',
    'hooks/start': '#!/bin/bash\nstatus-set active ready\n'
  }
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true })
    writeFileSync(join(dir, path), content)
    chmodSync(join(dir, path), 0o755)
  }
}

test('machine agents restarted after the original controller died rejoin from the controllers they remembered', async () => {
  ok(home, 'bootstrap')
  const charm = join(home, 'tiny')
  writeTinyCharm(charm)
  ok(home, 'deploy', charm, '-n', '2')
  for (const n of ['0', '1']) ok(home, 'wait-for', 'unit', `tiny/${n}`, '--status', 'active', '--timeout', '4m')
  const remembered = (machine: string): number | undefined => {
    try {
      return (JSON.parse(readFileSync(join(machinesDir, `machine-${machine}`, 'agent', 'controllers.json'), 'utf8')) as { controllers: unknown[] }).controllers.length
    } catch {
      return undefined
    }
  }
  for (const machine of machines) assert.is(await eventually(`machine-${machine} to remember c0`, 60_000, () => remembered(machine)), 1, 'c0 only, before enable-ha')

  const original = controllerPids()[0]!
  assert.match(ok(home, 'enable-ha', '-n', '3'), /Controller "local" has 3 members/)
  // Every machine agent keeps the group's three members (it started knowing c0 only).
  for (const machine of machines) await eventually(`machine-${machine} to remember 3 controllers`, 60_000, () => (remembered(machine) ?? 0) >= 3 ? true : undefined)
  // The controllers keep their peers' addresses too: a restarted member dials them, not only its --seed.
  const members = controllerMembers()
  for (const member of members) {
    const others = members.filter(m => m['peer-id'] !== member['peer-id']).map(m => m['peer-id']).sort()
    await eventually(`${member['peer-id'].slice(-8)} to remember its peers`, 60_000, () => {
      try {
        const kept = (JSON.parse(readFileSync(join(member['data-dir'], 'controllers.json'), 'utf8')) as { controllers: Array<{ peerId: string, addresses: string[] }> }).controllers
        return others.every(peer => kept.some(c => c.peerId === peer && c.addresses.length > 0)) ? true : undefined
      } catch {
        return undefined
      }
    })
  }

  process.kill(original, 'SIGKILL')
  await eventually('c0 to die', 10_000, () => processAlive(original) ? undefined : true)
  await eventually('a group without c0 to answer status', 60_000, () => units())

  const measured: string[] = []
  for (const machine of machines) {
    const before = incarnation(machine) ?? 0
    const old = agentPid(machine)!
    process.kill(old, 'SIGKILL')
    // The provider's watchdog (on the new leader) starts the agent again with the same
    // bootstrap file (c0 only) and data directory.
    const fresh = await eventually(`machine-${machine}'s agent to be restarted`, 60_000, () => {
      const pid = agentPid(machine)
      return pid !== undefined && pid !== old && processAlive(pid) ? pid : undefined
    })
    const restartedAt = Date.now()
    await eventually(`machine-${machine} heard under a new incarnation`, 60_000, () => (incarnation(machine) ?? 0) > before ? true : undefined)
    await eventually(`tiny on machine ${machine} idle`, 60_000, () => {
      const all = units()
      const mine = Object.values(all ?? {}).filter(u => u.machine === machine)
      return mine.length === 1 && mine.every(u => u['juju-status'].current === 'idle') ? true : undefined
    })
    measured.push(`machine-${machine}: ${((Date.now() - restartedAt) / 1000).toFixed(1)} s`)
    assert.ok(processAlive(fresh), 'the restarted agent keeps running (no crash loop)')
  }
  console.log(`  restarted agents rejoined, units idle: ${measured.join(', ')}`)
  const all = units()!
  assert.equal(Object.keys(all).sort(), ['tiny/0', 'tiny/1'])
  assert.ok(Object.values(all).every(u => u['juju-status'].current === 'idle'), JSON.stringify(all))
})

test('quorum lost: one line naming how many controllers answer and how many are needed, fast', async () => {
  const [, second, third] = controllerPids()
  process.kill(second!, 'SIGKILL')
  await eventually('c1 to die', 10_000, () => processAlive(second!) ? undefined : true)
  assert.ok(processAlive(third!))
  const line = 'ERROR controller group "local": 1 of 3 controllers reachable, 2 needed to commit; reachable: c2\n'
  const measured: string[] = []
  for (const args of [['status'], ['add-unit', 'tiny'], ['show-unit', 'tiny/0'], ['config', 'tiny']]) {
    const started = Date.now()
    const run = cantrip(home, args)
    const seconds = (Date.now() - started) / 1000
    measured.push(`${args[0]} ${seconds.toFixed(1)} s`)
    assert.equal([run.status, run.stderr, run.stdout], [1, line, ''], args.join(' '))
    // The CLI's own start is in this figure; the bound is generous for a busy machine.
    assert.ok(seconds < 15, `${args.join(' ')} answered in ${seconds} s`)
  }
  console.log(`  quorum-loss line (CLI process start included): ${measured.join(', ')}`)
  const shown = JSON.parse(ok(home, 'show-controller', '--format', 'json')) as Record<string, { members: Record<string, { role: string, error?: string }> }>
  const members = shown['local']!.members
  assert.equal(Object.keys(members), ['c0', 'c1', 'c2'])
  assert.equal([members['c0']!.role, members['c1']!.role], ['unreachable', 'unreachable'])
  assert.ok(members['c0']!.error !== undefined && members['c1']!.error !== undefined)
  assert.is.not(members['c2']!.role, 'unreachable')
  assert.match(ok(home, 'controllers'), /^local\*\s+default\s+admin\s+superuser\s+localhost\/localhost\s+1\s+3\s+1\/3\s+/m)
  const listed = JSON.parse(ok(home, 'controllers', '--format', 'json')) as { controllers: Record<string, { 'controller-machines': unknown }> }
  assert.equal(listed.controllers['local']!['controller-machines'], { active: 1, total: 3 })
})

test('destroy-controller stops every process', () => {
  const pids = [...controllerPids(), ...machines.map(agentPid).filter((p): p is number => p !== undefined)]
  ok(home, 'destroy-controller', 'local', '--no-prompt')
  assert.ok(pids.every(pid => !processAlive(pid)), 'every controller and machine agent stopped')
})

test.after(() => {
  destroyLeftoverController(home, machinesDir)
  for (const pid of [...controllerPids(), ...machines.map(agentPid).filter((p): p is number => p !== undefined)]) {
    if (processAlive(pid)) try { process.kill(pid, 'SIGKILL') } catch { /* gone */ }
  }
  rmSync(home, { recursive: true, force: true })
})

test.run()
