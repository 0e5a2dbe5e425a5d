/**
 * Bringing controllers back, in real processes (one 3-controller group for the file):
 *
 * - a controller killed with -9 comes back with `cantrip start-agent c1`, from its data
 *   directory and its launch record, as the voter it was; the group has 3 voters again,
 *   every commit lag 0. Juju users do this with `juju ssh 0 sudo systemctl start
 *   jujud-machine-0` (juju/juju service/systemd/service.go).
 * - a controller killed with -9 whose data directory is deleted (lost for good) is
 *   replaced by `cantrip enable-ha`: the leader removes its vote (one configuration
 *   change), a new member c3 joins, the group has 3 voters again and a write commits;
 *   show-controller lists c2 as removed. Juju's enable-ha demotes unavailable controllers
 *   and adds new ones (juju/juju state/enableha.go, enableHAIntentions; the output lines
 *   are cmd/juju/commands/enableha.go's formatSimple).
 * - with every controller down (no watchdog to restart anything, as after a host reboot),
 *   `cantrip start-agent 0` brings the machine agent back from its instance directory.
 *
 * Every process is stopped by pid (destroy-controller, then by the recorded pids) and the
 * temporary directory removed.
 */
import '../runtime/polyfill.ts'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { parse } from 'yaml'
import { cantrip, cantripOk as ok, destroyLeftoverController } from './support/cli-process.ts'
import { processAlive } from './support/processes.ts'

const home = mkdtempSync(join(tmpdir(), 'cantrip-ha-replace-'))
const machinesDir = join(home, 'controllers', 'local', 'machines')
const hostHasSystemd = existsSync('/run/systemd/system')

/** Polls `check` every 250 ms until it holds; fails after `timeoutMs` (a bound for a busy machine, not a verdict). */
async function eventually<T> (what: string, timeoutMs: number, check: () => T | undefined): Promise<T> {
  const until = Date.now() + timeoutMs
  let value = check()
  while (value === undefined) {
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 250))
    value = check()
  }
  return value
}

interface Member { 'peer-id': string, pid: number, 'data-dir': string }
function entry (): { controllers: Member[], 'removed-controllers'?: Member[] } | undefined {
  const file = join(home, 'controllers.yaml')
  if (!existsSync(file)) return undefined
  return (parse(readFileSync(file, 'utf8')) as { controllers: Record<string, { controllers: Member[], 'removed-controllers'?: Member[] }> }).controllers['local']
}
function member (name: string): Member {
  return entry()!.controllers.find(m => m['data-dir'].endsWith(`/${name}`))!
}
function allPids (): number[] {
  const e = entry()
  const agent = machinePid()
  return [...(e?.controllers ?? []), ...(e?.['removed-controllers'] ?? [])].map(m => m.pid).concat(agent === undefined ? [] : [agent])
}
function machinePid (): number | undefined {
  const file = join(machinesDir, 'machine-0', 'agent.pid')
  if (!existsSync(file)) return undefined
  const pid = Number(readFileSync(file, 'utf8').trim().split(/\s+/)[0])
  return Number.isSafeInteger(pid) && pid > 1 ? pid : undefined
}

interface Shown { raft: { voters: string[] }, members: Record<string, { 'peer-id': string, role: string, 'commit-lag': number | null }>, removed?: Record<string, { 'peer-id': string }> }
function shown (): Shown | undefined {
  const run = cantrip(home, ['show-controller', '--format', 'json'])
  return run.status === 0 ? (JSON.parse(run.stdout) as Record<string, Shown>)['local'] : undefined
}
/** Three voters, the members listed, every one answering with commit lag 0. */
function healthy (names: string[]): Shown | undefined {
  const s = shown()
  if (s === undefined || s.raft.voters.length !== 3) return undefined
  const members = Object.entries(s.members)
  const ok = members.map(([n]) => n).join() === names.join() && members.every(([, m]) => m.role !== 'unreachable' && m['commit-lag'] === 0 && s.raft.voters.includes(m['peer-id']))
  return ok ? s : undefined
}

async function killed (pid: number, what: string): Promise<void> {
  process.kill(pid, 'SIGKILL')
  await eventually(`${what} to die`, 10_000, () => processAlive(pid) ? undefined : true)
}

test('bootstrap --ha 3 and a machine; without systemd, --systemd says so in one line', async () => {
  const boot = cantrip(home, ['bootstrap', '--ha', '3', ...(hostHasSystemd ? [] : ['--systemd'])])
  assert.is(boot.status, 0, boot.stderr)
  if (!hostHasSystemd) {
    assert.match(boot.stderr, /^cantrip bootstrap: systemd is not running on this host \(PID 1 is "[^"]+"\): the controllers run as detached processes; "cantrip start-agent cN" brings one back$/m)
  }
  for (const name of ['c0', 'c1', 'c2']) assert.ok(existsSync(join(home, 'controllers', 'local', name, 'launch.json')), `${name} keeps its launch record`)
  assert.match(ok(home, 'add-machine'), /created machine 0/)
  await eventually('machine 0\'s agent', 60_000, () => machinePid())
  await eventually('three healthy voters', 60_000, () => healthy(['c0', 'c1', 'c2']))
})

test('start-agent: a running agent is left alone; a bad name is refused in one line', () => {
  const c0 = member('c0')
  assert.equal(cantrip(home, ['start-agent', 'c0']), { status: 0, stdout: `controller c0 is already running (pid ${c0.pid})\n`, stderr: '' })
  const bad = cantrip(home, ['start-agent', 'bogus'])
  assert.equal([bad.status, bad.stderr], [1, 'ERROR cantrip start-agent: expected a controller member (c0, c1, c2) or a machine id, got "bogus"\n'])
  const none = cantrip(home, ['start-agent', '7'])
  assert.equal([none.status, none.stderr], [1, `ERROR cantrip start-agent: expected a machine of model "default" with a local instance on this host (${join(machinesDir, 'machine-7')}); a machine added over SSH is started on its host, got "7"\n`])
})

test('a controller killed with -9 comes back with start-agent; 3 voters, every lag 0', async () => {
  const before = member('c1')
  await killed(before.pid, 'c1')
  const run = cantrip(home, ['start-agent', 'c1'])
  assert.is(run.status, 0, run.stderr)
  const pid = Number(/^started controller c1 \(pid (\d+)\)\n$/.exec(run.stdout)?.[1])
  assert.ok(processAlive(pid), run.stdout)
  assert.is(member('c1').pid, pid, 'controllers.yaml has its new pid')
  const s = await eventually('c1 back as a voter, caught up', 60_000, () => healthy(['c0', 'c1', 'c2']))
  assert.is(s.members['c1']!['peer-id'], before['peer-id'], 'the same member, not a new one')
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
  const s = await eventually('c3 voting, caught up', 60_000, () => healthy(['c0', 'c1', 'c3']))
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

test('with every controller down, start-agent brings the machine agent back', async () => {
  for (const name of ['c0', 'c1', 'c3']) await killed(member(name).pid, name)
  const old = machinePid()!
  process.kill(-old, 'SIGKILL')
  await eventually('machine 0\'s agent to die', 10_000, () => processAlive(old) ? undefined : true)
  const run = cantrip(home, ['start-agent', '0'])
  assert.is(run.status, 0, run.stderr)
  const pid = Number(/^started machine 0 \(pid (\d+)\)\n$/.exec(run.stdout)?.[1])
  assert.ok(pid !== old && processAlive(pid), run.stdout)
  assert.is(machinePid(), pid)
})

test('destroy-controller stops every process, removed members\' included', () => {
  const pids = allPids()
  ok(home, 'destroy-controller', 'local', '--no-prompt')
  assert.ok(pids.every(pid => !processAlive(pid)), 'every controller and machine agent stopped')
})

test.after(() => {
  destroyLeftoverController(home, machinesDir)
  for (const pid of allPids()) if (processAlive(pid)) try { process.kill(pid, 'SIGKILL') } catch { /* gone */ }
  rmSync(home, { recursive: true, force: true })
})

test.run()
