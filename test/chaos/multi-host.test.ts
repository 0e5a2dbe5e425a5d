/**
 * Chaos, issue 25 item 4: the example bundle over several hosts (network namespaces on
 * one machine, scripts/netns-hosts.ts) under host faults. Three controllers on h1
 * (`bootstrap --ha 3 --listen H1`), machines on h2 and h3 added over ssh with the
 * manual provider; kv/0 and web/0 on h2, kv/1 on h3, so web reaches kv across hosts.
 * Then:
 *
 *   1. values put through kv's action are acknowledged;
 *   2. h3's link is cut: status tells the truth (h3's machine and unit `lost`, the rest
 *      fine), and after the link heals everything is `idle` again;
 *   3. every process of the controller host h1 is killed with -9, the controllers are
 *      started again from their directories (as a reboot would): status converges and
 *      every acknowledged value reads back;
 *   4. `destroy-controller` leaves no process and no file of cantrip on any host.
 *
 * Only under `npm run test:chaos` (root and `ip netns` needed; it skips saying why
 * otherwise). The small sample in `npm test` is test/multi-host.test.ts. Not covered
 * yet: controllers spread over several hosts (bootstrap starts every member on its own
 * host; enable-ha placement on other hosts is issue 25 item 2's).
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createHosts, cutLink, destroyHosts, healLink, hostPids, netnsUnavailable, type NetnsHost, type NetnsHosts } from '../../scripts/netns-hosts.ts'
import { readControllers, writeControllers } from '../../agent/cli/cli-home.ts'
import { packageRoot } from '../../agent/package-root.ts'
import { cantripOnHost, untilHostStatus, type CliRun } from '../support/netns-cli.ts'
import { chaosFull } from './support/chaos-scale.ts'

const test = suite('multi-host chaos')
const unavailable = chaosFull ? netnsUnavailable() : 'runs under npm run test:chaos only (the sample is test/multi-host.test.ts)'
const dir = mkdtempSync(join(tmpdir(), 'cantrip-hosts-chaos-'))
const home = join(dir, 'cli-home')
const network = `10.232.${20 + (process.pid % 200)}.0/24`
const kvCharm = resolve('examples/charms/kv')
const webCharm = resolve('examples/charms/web')
const settleMs = 600_000

test.after(() => {
  destroyHosts(join(dir, 'hosts'))
  rmSync(dir, { recursive: true, force: true })
})

function on (host: NetnsHost, args: readonly string[]): CliRun {
  return cantripOnHost(home, host, args)
}

/**
 * A command that must succeed. On a loaded machine the CLI's group-health probe may miss
 * a busy member and refuse with the quorum line before sending anything; that refusal
 * (and only it) is tried again, a few times.
 */
function onOk (host: NetnsHost, ...args: string[]): string {
  let run = on(host, args)
  for (let retry = 0; retry < 3 && run.status !== 0 && /controllers reachable, \d+ needed/.test(run.stderr); retry++) run = on(host, args)
  assert.is(run.status, 0, `cantrip ${args.join(' ')} on ${host.name}: ${run.stderr}`)
  return run.stdout
}

type Unit = { machine?: string, 'public-address'?: string, 'workload-status': { current: string }, 'juju-status': { current: string } }
type Status = { machines: Record<string, { 'dns-name'?: string, 'juju-status': { current: string } }>, applications: Record<string, { units?: Record<string, Unit> }> }

async function untilStatus (host: NetnsHost, what: string, holds: (s: Status) => boolean, withinMs = settleMs): Promise<Status> {
  return await untilHostStatus(home, host, what, holds, withinMs)
}

const units = (s: Status): Array<[string, Unit]> => Object.values(s.applications).flatMap(a => Object.entries(a.units ?? {}))
const allIdle = (s: Status): boolean => units(s).length === 3 && units(s).every(([, u]) => u['juju-status'].current === 'idle' && u['workload-status'].current === 'active')

test('the bundle over three hosts survives a cut link and kill -9 of the controller host', async () => {
  if (unavailable !== undefined) {
    console.log(`  skipped: multi-host chaos ${unavailable}`)
    return
  }
  const hosts: NetnsHosts = createHosts({ count: 3, dir: join(dir, 'hosts'), network })
  const [h1, h2, h3] = hosts.hosts as [NetnsHost, NetnsHost, NetnsHost]
  onOk(h1, 'bootstrap', '--ha', '3', '--listen', h1.address)
  onOk(h1, 'add-machine', `ssh:root@${h2.address}`, '--private-key', hosts.keyFile)
  onOk(h1, 'add-machine', `ssh:root@${h3.address}`, '--private-key', hosts.keyFile)
  onOk(h1, 'deploy', kvCharm, '-n', '2', '--to', '0,1', '--config', 'port-base=18600')
  onOk(h1, 'deploy', webCharm, '--to', '0', '--config', 'port-base=18700')
  onOk(h1, 'integrate', 'web:backend', 'kv:website')
  let doc = await untilStatus(h1, 'every unit idle', allIdle)
  const where = Object.fromEntries(units(doc).map(([name, u]) => [name, u['public-address']]))
  assert.equal(where, { 'kv/0': h2.address, 'kv/1': h3.address, 'web/0': h2.address })

  // 1. Acknowledged writes, through the action (the controllers) into kv/1's workload on h3.
  const acknowledged: Record<string, string> = {}
  for (let i = 0; i < 3; i++) {
    onOk(h1, 'run', 'kv/1', 'put', `key=k${i}`, `value=v${i}`, '--wait', '3m')
    acknowledged[`k${i}`] = `v${i}`
  }
  // web on h2 reaches kv/1 on h3: asked for a key only kv/1 holds, some request answers it.
  assert.ok(await webReaches(h1, h2.address, 'k0', 'v0'), 'web/0 on h2 forwards to kv/1 on h3')

  // 2. h3 cut off: its machine and unit shown lost, the others not; back to idle after.
  cutLink(h3)
  doc = await untilStatus(h1, 'kv/1 lost after the cut', s => s.applications['kv']?.units?.['kv/1']?.['juju-status'].current === 'lost')
  assert.is(doc.applications['kv']!.units!['kv/0']!['juju-status'].current, 'idle', 'kv/0 on h2 is not lost')
  assert.is(doc.machines['1']?.['juju-status'].current, 'down')
  healLink(h3)
  await untilStatus(h1, 'every unit idle after the link healed', allIdle)

  // 3. Power cut on the controller host: every process there, kill -9; then the controllers come back.
  const entry = controllersEntry()
  const argv = entry.controllers.map(member => ({ member, argv: readFileSync(`/proc/${member.pid}/cmdline`, 'utf8').split('\0').filter(Boolean) }))
  for (const pid of hostPids(h1)) if (!hosts.pids.includes(pid)) kill(pid)
  for (const { member, argv: command } of argv) {
    const log = openSync(join(member['data-dir'], 'cantripd.log'), 'a')
    const child = spawn('ip', ['netns', 'exec', h1.namespace, ...command], { cwd: packageRoot, detached: true, stdio: ['ignore', log, log] })
    child.unref()
    member.pid = child.pid ?? 0
  }
  saveControllersEntry(entry)
  await untilStatus(h1, 'every unit idle after the controllers came back', allIdle)
  for (const [key, value] of Object.entries(acknowledged)) {
    const got = onOk(h1, 'run', 'kv/1', 'get', `key=${key}`, '--wait', '3m')
    assert.match(got, value, `acknowledged ${key}=${value} read back`)
  }

  // 4. Nothing of cantrip left on any host.
  onOk(h1, 'destroy-controller', 'local', '--no-prompt')
  for (const host of [h2, h3]) {
    const left = hostPids(host).filter(pid => !hosts.pids.includes(pid) && !cmdline(pid).includes('sshd'))
    assert.equal(left.map(cmdline), [], `no process of cantrip left on ${host.name}`)
    assert.equal(readdirSync(host.home).filter(name => name.startsWith('.cantrip')), [], `no files of cantrip left on ${host.name}`)
  }
})

/** Whether GET /kv/KEY through web at `address` answers `value` within a few tries (the proxy rotates its backends). */
async function webReaches (from: NetnsHost, address: string, key: string, value: string): Promise<boolean> {
  for (let i = 0; i < 6; i++) {
    const run = spawnSync('ip', ['netns', 'exec', from.namespace, process.execPath, '-e',
      `fetch('http://${address}:18700/kv/${key}').then(r => r.text()).then(t => process.stdout.write(t), () => {})`], { encoding: 'utf8', timeout: 30_000 })
    if (run.stdout.includes(value)) return true
  }
  return false
}

function controllersEntry (): ReturnType<typeof readControllers>['controllers'][string] {
  process.env['CANTRIP_HOME'] = home
  return readControllers().controllers['local']!
}

function saveControllersEntry (entry: ReturnType<typeof controllersEntry>): void {
  process.env['CANTRIP_HOME'] = home
  const file = readControllers()
  file.controllers['local'] = entry
  writeControllers(file)
}

function kill (pid: number): void {
  try { process.kill(pid, 'SIGKILL') } catch { /* gone */ }
}

function cmdline (pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim()
  } catch {
    return ''
  }
}

test.run()
