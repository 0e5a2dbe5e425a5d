/**
 * cantrip over several hosts, on one machine: scripts/netns-hosts.ts makes network
 * namespaces on a bridge with no way out, each with its own address and an sshd. The
 * controller is bootstrapped on h1, listening on h1's address (`--listen`); h2 is added
 * with the manual provider over ssh with a key given on the command line
 * (`add-machine ssh:root@H2 --private-key F`, Juju's add-machine flag). The group is
 * made three with `enable-ha -n 3 --to 0` (Juju's enable-ha --to placement on an
 * existing machine, juju/juju cmd/juju/commands/enableha.go): c1 runs on machine 0's
 * host h2, started there over ssh with the shipped bundle and that machine's key, c2 on
 * h1 (the `ssh:user@host` form is the chaos schedule's). A unit deployed
 * there goes active, serves at h2's own address, and its address in status is h2's (as
 * Juju's manual machines take the address they were added with: juju/juju
 * environs/manual/sshprovisioner, the host becomes the machine's address).
 * `destroy-controller` on h1 then stops the controller and the agent on h2 and removes
 * everything it put there.
 *
 * This is the small sample `npm test` runs. Without root or `ip netns` it skips, saying
 * why. The full fault schedule of issue 25 (three controllers over three hosts, a cut
 * link, kill -9 of a controller host) is test/chaos/multi-host.test.ts.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createHosts, destroyHosts, hostPids, netnsUnavailable, type NetnsHost, type NetnsHosts } from '../scripts/netns-hosts.ts'
import { cantripOnHost, untilHostStatus, type CliRun } from './support/netns-cli.ts'
import { killProcessGroup } from './support/processes.ts'

const test = suite('multi-host')
const unavailable = netnsUnavailable()
const dir = mkdtempSync(join(tmpdir(), 'cantrip-hosts-'))
const home = join(dir, 'cli-home')
const network = `10.231.${20 + (process.pid % 200)}.0/24`
const kvCharm = resolve('examples/charms/kv')
const port = 18490
let hosts: NetnsHosts | undefined

test.after(() => {
  // The controller and its processes live in the namespaces: killing those kills them all.
  destroyHosts(join(dir, 'hosts'))
  rmSync(dir, { recursive: true, force: true })
})

function on (host: NetnsHost, args: readonly string[]): CliRun {
  return cantripOnHost(home, host, args)
}

function onOk (host: NetnsHost, ...args: string[]): string {
  const run = on(host, args)
  assert.is(run.status, 0, `cantrip ${args.join(' ')} on ${host.name}: ${run.stderr}`)
  return run.stdout
}

type Status = { machines: Record<string, { 'dns-name'?: string, 'juju-status'?: { current: string } }>, applications: Record<string, { units?: Record<string, { machine?: string, 'public-address'?: string, 'workload-status': { current: string, message?: string }, 'juju-status'?: { current: string } }> }> }

async function untilStatus (host: NetnsHost, what: string, holds: (s: Status) => boolean, withinMs: number): Promise<Status> {
  return await untilHostStatus(home, host, what, holds, withinMs)
}

test('a machine on another host, added over ssh, runs a unit at its own address', async () => {
  if (unavailable !== undefined) {
    console.log(`  skipped: multi-host ${unavailable}`)
    return
  }
  hosts = createHosts({ count: 2, dir: join(dir, 'hosts'), network })
  const [h1, h2] = hosts.hosts as [NetnsHost, NetnsHost]
  // The controllers keep the CLI's CANTRIP_* settings, and hand them to the machines they start over ssh.
  const booted = cantripOnHost(home, h1, ['bootstrap', '--listen', h1.address], { CANTRIP_LOG_LEVEL: 'debug' })
  assert.is(booted.status, 0, booted.stderr)
  const boot = booted.stdout
  assert.match(boot, `at ${h1.address}`)
  assert.match(onOk(h1, 'add-machine', `ssh:root@${h2.address}`, '--private-key', hosts.keyFile), 'created machine 0')
  const missing = on(h1, ['enable-ha', '-n', '3', '--to', '5'])
  assert.equal([missing.status, missing.stderr], [1, 'ERROR cantrip enable-ha: expected --to machine 5 in model "default", got "no such machine"\n'])
  const ha = onOk(h1, 'enable-ha', '-n', '3', '--to', '0')
  assert.match(ha, 'adding controllers: c1, c2')
  const members = (JSON.parse(onOk(h1, 'show-controller', '--format', 'json')) as Record<string, { members: Record<string, { host?: string, addresses: string[], voter: boolean | null }> }>)['local']!.members
  assert.is(members['c1']?.host, `root@${h2.address}`)
  assert.match(members['c1']!.addresses[0]!, `/ip4/${h2.address}/tcp/`)
  assert.equal(Object.values(members).map(m => m.voter), [true, true, true])
  // c1's process runs in h2's namespace, from h2's home.
  assert.ok(hostPids(h2).some(pid => cmdline(pid).includes(join(h2.home, '.cantrip', 'controller-local', 'c1'))), 'c1 runs on h2')
  // start-agent reaches it over ssh and leaves it alone while it runs.
  assert.match(onOk(h1, 'start-agent', 'c1'), `controller c1 is already running on root@${h2.address}`)
  onOk(h1, 'deploy', kvCharm, '--to', '0', '--config', `port=${port}`)
  const doc = await untilStatus(h1, 'kv/0 active on h2', s => s.applications['kv']?.units?.['kv/0']?.['workload-status'].current === 'active', 420_000)
  const unit = doc.applications['kv']!.units!['kv/0']!
  assert.is(unit['public-address'], h2.address)
  assert.is(doc.machines['0']?.['dns-name'], h2.address)
  // The unit serves at h2's address, reached from h1 across the bridge.
  const probe = spawnSync('ip', ['netns', 'exec', h1.namespace, process.execPath, '-e',
    `fetch('http://${h2.address}:${port}/health').then(r => process.stdout.write(String(r.status)), e => { console.error(String(e)); process.exit(1) })`],
  { encoding: 'utf8', timeout: 60_000 })
  assert.is(probe.stdout, '200', probe.stderr)
  // The agent lives under h2's own home.
  assert.ok(existsSync(join(h2.home, '.cantrip', 'machine-0')), 'machine 0 installed under h2\'s home')
  // It runs from a kept run.sh with the controllers' settings (providers/agent-run-script.ts).
  const runScript = readFileSync(join(h2.home, '.cantrip', 'machine-0', 'run.sh'), 'utf8')
  // (Every CANTRIP_* setting is kept: the test runner's job marker, when set, too.)
  assert.match(runScript, /^export CANTRIP_LOG_LEVEL='debug'\n(export CANTRIP_[A-Z_]+='[^'\n]*'\n)*exec '/, runScript)
  assert.match(runScript, `'--advertise' '${h2.address}'`)
  // Killed (kill -9, as a crash), it comes back with `cantrip start-agent 0` over ssh, as
  // Juju users run `juju ssh 0 sudo systemctl start jujud-machine-0` (juju/juju
  // service/systemd/service.go), and its unit is idle again.
  const agentPid = Number(readFileSync(join(h2.home, '.cantrip', 'machine-0', 'pid'), 'utf8'))
  killProcessGroup(agentPid)
  const restarted = onOk(h1, 'start-agent', '0')
  assert.match(restarted, new RegExp(`^started machine 0 on root@${h2.address.replaceAll('.', '\\.')} \\(pid \\d+\\)\n$`))
  const newPid = Number(/pid (\d+)/.exec(restarted)![1])
  assert.is.not(newPid, agentPid)
  assert.ok(readFileSync(`/proc/${newPid}/environ`, 'utf8').split('\0').includes('CANTRIP_LOG_LEVEL=debug'), 'the restarted agent has the settings')
  assert.match(onOk(h1, 'start-agent', '0'), `machine 0 is already running on root@${h2.address} (pid ${newPid})`)
  await untilStatus(h1, 'kv/0 idle after its agent came back', s => s.applications['kv']?.units?.['kv/0']?.['juju-status']?.current === 'idle' && s.machines['0']?.['juju-status']?.current === 'started', 120_000)

  const destroyed = onOk(h1, 'destroy-controller', 'local', '--no-prompt')
  assert.match(destroyed, '3 controllers and 1 machine agent stopped')
  // Nothing of cantrip is left on h2: only its sshd runs there, and its home is empty.
  const left = hostPids(h2).filter(pid => !hosts!.pids.includes(pid) && !cmdline(pid).includes('sshd'))
  assert.equal(left.map(cmdline), [], 'no process of cantrip left on h2')
  assert.equal(readdirSync(h2.home).filter(name => name.startsWith('.cantrip')), [], 'no files of cantrip left on h2')
})

function cmdline (pid: number): string {
  const run = spawnSync('cat', [`/proc/${pid}/cmdline`], { encoding: 'utf8' })
  return run.stdout.replaceAll('\0', ' ').trim()
}

test.run()
