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
 * - the killed controllers come back with `cantrip start-agent c1` / `c0`, from their data
 *   directories and launch records, as the voters they were: 3 voters again, every commit
 *   lag 0. Juju users do this with `juju ssh 0 sudo systemctl start jujud-machine-0`
 *   (juju/juju service/systemd/service.go).
 * - a controller killed with -9 whose data directory is deleted (lost for good) is
 *   replaced by `cantrip enable-ha`: the leader removes its vote (one configuration
 *   change), a new member c3 joins, the group has 3 voters again and a write commits;
 *   show-controller lists c2 as removed. Juju's enable-ha demotes unavailable controllers
 *   and adds new ones (juju/juju state/enableha.go, enableHAIntentions; the output lines
 *   are cmd/juju/commands/enableha.go's formatSimple).
 * - with every controller down (no watchdog to restart anything, as after a host reboot),
 *   `cantrip start-agent 0` brings a machine agent back from its instance directory.
 *
 * Every process is stopped by pid (destroy-controller, then by the recorded pids) and the
 * temporary directory removed.
 *
 * The machine agents' files are checked to name every controller with an address: CI once
 * failed here (`timed out … waiting for machine-0 heard under a new incarnation`) because
 * the agents had remembered the new members as bare peer ids — c0 named them before it had
 * met them — and c0 was killed before the next round brought their addresses; the
 * restarted agent could dial only c0 (agent/controller-follower.ts; test/controller-follower.test.ts).
 *
 * Mutation check (issue 25): with agent/known-controllers-file.ts's `remembered` answering
 * [] (the persisted controller set not used on restart), the first test fails with
 * `timed out after 60000 ms waiting for machine-0 heard under a new incarnation`: the
 * restarted agent knows only the dead c0.
 */
import '../runtime/polyfill.ts'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { parse } from 'yaml'
import { controllerMemberName } from '../agent/cli/cli-home.ts'
import { cantrip, cantripOk as ok, destroyLeftoverController, removeHome } from './support/cli-process.ts'
import { GroupReader } from './support/group-reader.ts'
import { killProcessGroup, processAlive } from './support/processes.ts'
import { timeNamespaceUnavailable } from '../agent/time-namespace-boot-clock.ts'

const home = mkdtempSync(join(tmpdir(), 'cantrip-ha-rejoin-'))
const machinesDir = join(home, 'controllers', 'local', 'machines')
const machines = ['0', '1'] as const
/** Waits read the group in this process; the CLI runs where its output is under test. */
const reader = new GroupReader(home)

/**
 * Polls `check` until it holds, first after 250 ms and then less often, up to every 1 s;
 * fails after `timeoutMs` (a bound for a busy machine, not a verdict).
 */
async function eventually<T> (what: string, timeoutMs: number, check: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const until = Date.now() + timeoutMs
  let pauseMs = 250
  let value = await check()
  while (value === undefined) {
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, pauseMs))
    pauseMs = Math.min(1_000, pauseMs * 1.5)
    value = await check()
  }
  return value
}

function controllerMembers (): Array<{ 'peer-id': string, 'data-dir': string }> {
  const value = parse(readFileSync(join(home, 'controllers.yaml'), 'utf8')) as { controllers: Record<string, { controllers: Array<{ 'peer-id': string, 'data-dir': string }> }> }
  return value.controllers['local']!.controllers
}

/** Every member's pid, removed members' too. */
function controllerPids (): number[] {
  const file = join(home, 'controllers.yaml')
  if (!existsSync(file)) return []
  const value = parse(readFileSync(file, 'utf8')) as { controllers: Record<string, { controllers: Array<{ pid: number }>, 'removed-controllers'?: Array<{ pid: number }> }> }
  return Object.values(value.controllers).flatMap(c => [...c.controllers, ...(c['removed-controllers'] ?? [])].map(m => m.pid))
}

interface Member { 'peer-id': string, pid: number, 'data-dir': string }
function member (name: string): Member {
  const value = parse(readFileSync(join(home, 'controllers.yaml'), 'utf8')) as { controllers: Record<string, { controllers: Member[] }> }
  return value.controllers['local']!.controllers.find(m => m['data-dir'].endsWith(`/${name}`))!
}

interface Shown { raft: { voters: string[] }, members: Record<string, { 'peer-id': string, role: string, 'commit-lag': number | null }>, removed?: Record<string, { 'peer-id': string }> }
/** show-controller when it lists exactly `names`, three voters, every member answering with commit lag 0. */
function healthy (names: string[]): Shown | undefined {
  const run = cantrip(home, ['show-controller', '--format', 'json'])
  const s = run.status === 0 ? (JSON.parse(run.stdout) as Record<string, Shown>)['local'] : undefined
  if (s === undefined || s.raft.voters.length !== 3) return undefined
  const members = Object.entries(s.members)
  return members.map(([n]) => n).join() === names.join() && members.every(([, m]) => m.role !== 'unreachable' && m['commit-lag'] === 0 && s.raft.voters.includes(m['peer-id'])) ? s : undefined
}

/**
 * The same verdict as `healthy`, read in this process: a wait that asked show-controller
 * once a second started a CLI per look. The test then asks the CLI itself (`healthy`).
 */
async function healthyInProcess (names: string[]): Promise<true | undefined> {
  try {
    const { entry, group } = await reader.group()
    const voters = group.leader?.voters ?? []
    if (voters.length !== 3 || entry.controllers.map(controllerMemberName).join() !== names.join()) return undefined
    return group.members.every(m => m.status !== undefined && voters.includes(m.peer) && group.leader?.progress[m.peer]?.lag === 0) ? true : undefined
  } catch {
    return undefined
  }
}

/** The CLI's `healthy` verdict, looked for once the group reads healthy in this process. */
async function untilHealthy (what: string, names: string[]): Promise<Shown> {
  await eventually(`${what} (read in-process)`, 60_000, async () => await healthyInProcess(names))
  return await eventually(what, 120_000, () => healthy(names))
}

async function killed (pid: number, what: string): Promise<void> {
  process.kill(pid, 'SIGKILL')
  await eventually(`${what} to die`, 60_000, () => processAlive(pid) ? undefined : true)
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

/** rc's units as `status` shows them, read in this process (for waits). */
async function unitsInProcess (): Promise<Record<string, UnitStatus> | undefined> {
  try {
    return (await reader.status()).applications['tiny']?.units as Record<string, UnitStatus> | undefined
  } catch {
    return undefined
  }
}

/** The machine agent's incarnation in the gossip membership (`cantrip members`' row), while it is alive. */
async function incarnation (machine: string): Promise<number | undefined> {
  try {
    const row = (await reader.members()).find(m => m.entity === `machine-${machine}`)
    return row?.state === 'alive' ? row.incarnation : undefined
  } catch {
    return undefined
  }
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
  // Without systemd as PID 1 (this sandbox), --systemd says so in one line and goes on with detached processes.
  const hostHasSystemd = existsSync('/run/systemd/system')
  const boot = cantrip(home, ['bootstrap', ...(hostHasSystemd ? [] : ['--systemd'])])
  assert.is(boot.status, 0, boot.stderr)
  if (!hostHasSystemd) assert.match(boot.stderr, /^cantrip bootstrap: systemd is not running on this host \(PID 1 is "[^"]+"\): the controllers run as detached processes; "cantrip start-agent cN" brings one back$/m)
  assert.ok(existsSync(join(home, 'controllers', 'local', 'c0', 'launch.json')), 'c0 keeps its launch record')
  const charm = join(home, 'tiny')
  writeTinyCharm(charm)
  ok(home, 'deploy', charm, '-n', '2')
  for (const n of ['0', '1']) ok(home, 'wait-for', 'unit', `tiny/${n}`, '--status', 'active', '--timeout', '4m')
  /** How many controllers the agent keeps, each with an address to dial (a bare peer id would be no way back to the group). */
  const remembered = (machine: string): number | undefined => {
    let text: string
    try {
      text = readFileSync(join(machinesDir, `machine-${machine}`, 'agent', 'controllers.json'), 'utf8')
    } catch {
      return undefined
    }
    const kept = (JSON.parse(text) as { controllers: Array<{ addresses: string[] }> }).controllers
    assert.ok(kept.every(c => c.addresses.length > 0), `machine-${machine} remembers a controller it cannot dial: ${text}`)
    return kept.length
  }
  for (const machine of machines) assert.is(await eventually(`machine-${machine} to remember c0`, 60_000, () => remembered(machine)), 1, 'c0 only, before enable-ha')

  const original = controllerPids()[0]!
  assert.match(ok(home, 'enable-ha', '-n', '3'), /^adding controllers: c1, c2$/m)
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
  await eventually('c0 to die', 60_000, () => processAlive(original) ? undefined : true)
  await eventually('a group without c0 to answer status', 60_000, unitsInProcess)

  const measured: string[] = []
  for (const machine of machines) {
    const before = await incarnation(machine) ?? 0
    const old = agentPid(machine)!
    process.kill(old, 'SIGKILL')
    // The provider's watchdog (on the new leader) starts the agent again with the same
    // bootstrap file (c0 only) and data directory.
    const fresh = await eventually(`machine-${machine}'s agent to be restarted`, 60_000, () => {
      const pid = agentPid(machine)
      return pid !== undefined && pid !== old && processAlive(pid) ? pid : undefined
    })
    const restartedAt = Date.now()
    await eventually(`machine-${machine} heard under a new incarnation`, 60_000, async () => (await incarnation(machine) ?? 0) > before ? true : undefined)
    const heardAfter = (Date.now() - restartedAt) / 1000
    await eventually(`tiny on machine ${machine} idle`, 60_000, async () => {
      const all = await unitsInProcess()
      const mine = Object.values(all ?? {}).filter(u => u.machine === machine)
      return mine.length === 1 && mine.every(u => u['juju-status'].current === 'idle') ? true : undefined
    })
    measured.push(`machine-${machine}: heard ${heardAfter.toFixed(1)} s, idle ${((Date.now() - restartedAt) / 1000).toFixed(1)} s`)
    assert.ok(processAlive(fresh), 'the restarted agent keeps running (no crash loop)')
  }
  // After the agent's restart, CLI process starts included (seconds each on a busy machine); issue 25 asks for idle within 30 s.
  console.log(`  restarted agents rejoined (after the restart): ${measured.join('; ')}`)
  const all = units()!
  assert.equal(Object.keys(all).sort(), ['tiny/0', 'tiny/1'])
  assert.ok(Object.values(all).every(u => u['juju-status'].current === 'idle'), JSON.stringify(all))
})

test('quorum lost: one line naming how many controllers answer and how many are needed, fast', async () => {
  const [, second, third] = controllerPids()
  process.kill(second!, 'SIGKILL')
  await eventually('c1 to die', 60_000, () => processAlive(second!) ? undefined : true)
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

test('start-agent brings the killed controllers back as the voters they were; a running one is left alone', async () => {
  const c2 = member('c2')
  assert.equal(cantrip(home, ['start-agent', 'c2']), { status: 0, stdout: `controller c2 is already running (pid ${c2.pid})\n`, stderr: '' })
  const bad = cantrip(home, ['start-agent', 'bogus'])
  assert.equal([bad.status, bad.stderr], [1, 'ERROR cantrip start-agent: expected a controller member (c0, c1, c2) or a machine id, got "bogus"\n'])
  // c1 (killed for the quorum loss) first: with it the group has a quorum again; then c0, the original.
  for (const name of ['c1', 'c0']) {
    const run = cantrip(home, ['start-agent', name])
    assert.is(run.status, 0, run.stderr)
    const pid = Number(new RegExp(`^started controller ${name} \\(pid (\\d+)\\)\n$`).exec(run.stdout)?.[1])
    assert.ok(processAlive(pid), run.stdout)
    assert.is(member(name).pid, pid, 'controllers.yaml has its new pid')
  }
  const before = controllerMembers().map(m => m['peer-id'])
  const s = await untilHealthy('c0 and c1 back as voters, caught up', ['c0', 'c1', 'c2'])
  assert.equal(Object.values(s.members).map(m => m['peer-id']), before, 'the same members, not new ones')
  // A machine with no instance here may have been added over ssh: the model is asked (it
  // can answer again), and one it does not have is refused in one line.
  const none = cantrip(home, ['start-agent', '7'])
  assert.equal([none.status, none.stderr], [1, 'ERROR cantrip start-agent: expected a machine of model "default", got "7"\n'])
})

test('a controller lost with its data is replaced by enable-ha; 3 voters again and a write commits', async () => {
  const lost = member('c2')
  await killed(lost.pid, 'c2')
  rmSync(lost['data-dir'], { recursive: true, force: true })
  const gone = cantrip(home, ['start-agent', 'c2'])
  assert.equal([gone.status, gone.stderr], [1, `ERROR cantrip start-agent: expected controller c2's data directory ${lost['data-dir']} with its launch.json (a member whose data is lost is replaced by "cantrip enable-ha"), got "no directory"\n`])
  const refused = cantrip(home, ['enable-ha', '-n', '1'])
  assert.equal([refused.status, refused.stderr], [1, 'ERROR cantrip enable-ha: expected -n of at least the 3 members controller "local" has (enable-ha never removes a working member), got "1"\n'])

  const ha = cantrip(home, ['enable-ha'])
  assert.is(ha.status, 0, ha.stderr)
  assert.is(ha.stdout, 'maintaining controllers: c0, c1\nadding controllers: c3\nremoving controllers: c2\n')
  assert.match(ha.stderr, /removing c2 \(\w+\), which is down, from the voters/, 'progress is shown')
  assert.match(ha.stderr, /adding c3 \(\w+\) as a voter/)
  const s = await untilHealthy('c3 voting, caught up', ['c0', 'c1', 'c3'])
  assert.not.ok(s.raft.voters.includes(lost['peer-id']), 'c2 lost its vote')
  assert.equal(Object.keys(s.removed ?? {}), ['c2'])
  assert.is(s.removed!['c2']!['peer-id'], lost['peer-id'])
  assert.match(ok(home, 'controllers'), /^local\*\s+default\s+admin\s+superuser\s+localhost\/localhost\s+1\s+3\s+3\s+/m)
  ok(home, 'model-config', 'update-status-hook-interval=7m')
  assert.is(ok(home, 'model-config', 'update-status-hook-interval'), '7m\n', 'the write committed')
  const again = cantrip(home, ['start-agent', 'c2'])
  assert.equal([again.status, again.stderr], [1, 'ERROR cantrip start-agent: expected a member of controller "local" (c0, c1, c3); c2 was replaced by enable-ha, got "c2"\n'])
  assert.equal(cantrip(home, ['enable-ha']), { status: 0, stdout: 'maintaining controllers: c0, c1, c3\n', stderr: 'enabling HA for controller "local": 3 of 3 members up, 3 wanted...\n' }, 'nothing more to do')
})

test('with every controller down, start-agent brings a machine agent back', async () => {
  for (const name of ['c0', 'c1', 'c3']) await killed(member(name).pid, name)
  const old = agentPid('0')!
  const bootClock = (): string | undefined => timeNamespaceUnavailable() === undefined ? readFileSync(join(machinesDir, 'machine-0', 'agent', 'boot-clock'), 'utf8') : undefined
  const booted = bootClock()
  killProcessGroup(old)
  await eventually('machine 0\'s agent to die', 60_000, () => processAlive(old) ? undefined : true)
  const run = cantrip(home, ['start-agent', '0'])
  assert.is(run.status, 0, run.stderr)
  const pid = Number(/^started machine 0 \(pid (\d+)\)\n$/.exec(run.stdout)?.[1])
  assert.ok(pid !== old && processAlive(pid), run.stdout)
  assert.is(agentPid('0'), pid)
  // The same boot of the machine: its boot clock (agent/time-namespace-boot-clock.ts) keeps its epoch.
  assert.is(bootClock(), booted)
})

test('destroy-controller stops every process', async () => {
  await reader.close()
  const pids = [...controllerPids(), ...machines.map(agentPid).filter((p): p is number => p !== undefined)]
  ok(home, 'destroy-controller', 'local', '--no-prompt')
  assert.ok(pids.every(pid => !processAlive(pid)), 'every controller and machine agent stopped')
})

test.after(async () => {
  await reader.close()
  destroyLeftoverController(home, machinesDir)
  for (const pid of [...controllerPids(), ...machines.map(agentPid).filter((p): p is number => p !== undefined)]) {
    if (processAlive(pid)) try { process.kill(pid, 'SIGKILL') } catch { /* gone */ }
  }
  removeHome(home)
})

test.run()
