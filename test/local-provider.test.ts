/**
 * The local provider with a fake agent (a small script that reads its bootstrap file and
 * stays up until SIGTERM), so these tests do not depend on cantripd. Every agent appends
 * its pid to one file, and each suite kills every pid in it and removes its temp dirs.
 */
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createLocalProvider, type RealLocalProviderOptions } from '../agent/create-local-provider.ts'
import type { LocalProvider } from '../providers/local-provider.ts'
import { createMemoryLogger, type LogRecord } from '../runtime/logger.ts'
import type { InstanceSpec, StartProgress } from '../providers/provider-contract.ts'
import { providerCompliance } from './compliance/provider-compliance.ts'

const fakeAgent = `
import fs from 'node:fs'
import path from 'node:path'
const [bootstrapFile, dataDir, pidsFile, mode] = process.argv.slice(2)
fs.appendFileSync(pidsFile, process.pid + '\\n')
const bytes = fs.readFileSync(bootstrapFile, 'utf8')
if (bytes.startsWith('bad')) {
  console.log('fake agent: reading bootstrap')
  console.error('fake agent: bad bootstrap data ' + 'x'.repeat(2000))
  process.exit(1)
}
fs.appendFileSync(path.join(dataDir, 'starts'), process.pid + '\\n')
console.log('fake agent up', process.pid)
if (mode === 'stubborn') process.on('SIGTERM', () => { console.log('ignoring SIGTERM') })
else process.on('SIGTERM', () => process.exit(0))
if (mode === 'crash') setTimeout(() => process.exit(3), 300)
setInterval(() => {}, 1 << 30)
`

interface World {
  root: string
  pidsFile: string
  script: string
  records: LogRecord[]
  providers: LocalProvider[]
}

function newWorld (): World {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cantrip-local-provider-'))
  const script = path.join(root, 'fake-agent.mjs')
  fs.writeFileSync(script, fakeAgent)
  return { root, pidsFile: path.join(root, 'pids'), script, records: [], providers: [] }
}

function makeProvider (w: World, mode = 'normal', options: Partial<RealLocalProviderOptions> = {}): LocalProvider {
  const provider = createLocalProvider({
    home: path.join(w.root, 'machines'),
    logger: createMemoryLogger('local-provider', w.records),
    command: { file: process.execPath, args: (bootstrapFile, dataDir) => [w.script, bootstrapFile, dataDir, w.pidsFile, mode] },
    watchIntervalMs: 50,
    restartDelayMs: 100,
    restartDelayMsMax: 1_000,
    startCheckMs: 1_000,
    stopGraceMs: 2_000,
    ...options
  })
  w.providers.push(provider)
  return provider
}

function allPids (w: World): number[] {
  try {
    return fs.readFileSync(w.pidsFile, 'utf8').split('\n').filter(line => line !== '').map(Number)
  } catch {
    return []
  }
}

function alive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return !/\) [ZX] /.test(stat)
  } catch {
    return false
  }
}

async function cleanup (w: World): Promise<void> {
  for (const provider of w.providers) await provider.stop()
  for (const pid of allPids(w)) {
    for (const target of [-pid, pid]) {
      try { process.kill(target, 'SIGKILL') } catch { /* gone */ }
    }
  }
  await until(`every fake agent is gone (left: ${allPids(w).filter(alive).map(pid => describe(pid)).join('; ')})`,
    () => allPids(w).every(pid => !alive(pid)), 5_000)
  fs.rmSync(w.root, { recursive: true, force: true })
}

function describe (pid: number): string {
  try { return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').slice(0, 80) } catch { return `${pid} gone` }
}

/** Waits until the agent of `machineId` has started `count` times (it has read its bootstrap file and set its signal handler). */
async function up (provider: LocalProvider, machineId: string, count = 1): Promise<void> {
  const file = path.join(provider.instanceDir(machineId), 'agent', 'starts')
  await until(`agent of machine ${machineId} up ${count} times`, () => {
    try { return fs.readFileSync(file, 'utf8').trim().split('\n').length >= count } catch { return false }
  }, 5_000)
}

async function until (what: string, check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!await check()) {
    if (Date.now() > deadline) assert.unreachable(`${what} within ${timeoutMs} ms`)
    await sleep(25)
  }
}

async function sleep (ms: number): Promise<void> {
  await new Promise(resolve => setTimeout(resolve, ms))
}

function spec (machineId: string, token = `token-${machineId}`, bootstrap = `ok ${machineId}`): InstanceSpec {
  return { machineId, token, bootstrap: new TextEncoder().encode(bootstrap), constraints: {} }
}

function pidOf (provider: LocalProvider, machineId: string): number {
  return Number(fs.readFileSync(path.join(provider.instanceDir(machineId), 'agent.pid'), 'utf8').split(' ')[0])
}

async function rejection (promise: Promise<unknown>): Promise<Error & { failure?: string }> {
  try {
    await promise
  } catch (err) {
    return err as Error & { failure?: string }
  }
  throw new Error('expected a rejection')
}

const test = suite('local provider')
let w: World
test.before.each(() => { w = newWorld() })
test.after.each(async () => { await cleanup(w) })

test('three starts make three live agents, each in its own directory', async () => {
  const provider = makeProvider(w)
  const progress: StartProgress[] = []
  const started = await Promise.all(['0', '1', '2'].map(async id => await provider.startInstance(spec(id), p => progress.push(p))))
  assert.equal(started.map(s => s.instanceId), ['local:machine-0', 'local:machine-1', 'local:machine-2'])
  assert.equal(started[0]!.addresses, ['127.0.0.1'])
  assert.equal(progress.filter(p => p.type === 'allocated').length, 3)
  assert.equal(progress.filter(p => p.type === 'deploying').length, 3)
  const pids = ['0', '1', '2'].map(id => pidOf(provider, id))
  for (const id of ['0', '1', '2']) await up(provider, id)
  assert.is(new Set(pids).size, 3)
  for (const [i, id] of ['0', '1', '2'].entries()) {
    const dir = provider.instanceDir(id)
    assert.ok(alive(pids[i]!), `agent of machine ${id} is alive`)
    assert.is(fs.readFileSync(path.join(dir, 'bootstrap'), 'utf8'), `ok ${id}`)
    assert.is(fs.statSync(path.join(dir, 'bootstrap')).mode & 0o777, 0o600)
    assert.is(fs.readFileSync(path.join(dir, 'token'), 'utf8'), `token-${id}`)
    assert.equal(fs.readdirSync(dir).sort(), ['agent', 'agent.log', 'agent.pid', 'bootstrap', 'token'])
    // Spawned detached: each agent leads its own process group.
    const stat = fs.readFileSync(`/proc/${pids[i]!}/stat`, 'utf8')
    assert.is(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]), pids[i])
  }
  const listed = await provider.allInstances()
  assert.equal(listed.map(i => [i.machineId, i.token, i.status]).sort(), [
    ['0', 'token-0', 'running'], ['1', 'token-1', 'running'], ['2', 'token-2', 'running']
  ])
  assert.not.ok(JSON.stringify(w.records).includes('ok 0'), 'bootstrap bytes never logged')
})

test('a start with the same token answers the same instance and spawns nothing', async () => {
  const provider = makeProvider(w)
  const first = await provider.startInstance(spec('4'))
  const pid = pidOf(provider, '4')
  await up(provider, '4')
  const again = await Promise.all([provider.startInstance(spec('4')), provider.startInstance(spec('4'))])
  assert.equal(again, [first, first])
  await sleep(300)
  assert.equal(allPids(w), [pid])
  assert.is(pidOf(provider, '4'), pid)
})

test('a start with another token for a running machine is invalid', async () => {
  const provider = makeProvider(w)
  await provider.startInstance(spec('5'))
  const err = await rejection(provider.startInstance(spec('5', 'other-token')))
  assert.is(err.name, 'ProviderError')
  assert.is(err.failure, 'invalid')
  assert.is(allPids(w).length, 1)
  assert.is(fs.readFileSync(path.join(provider.instanceDir('5'), 'token'), 'utf8'), 'token-5')
})

test('a link to nowhere where the instance directory goes: invalid (no retry fixes it), left as it is, listed as no instance', async () => {
  // Juju leaves such a machine in provisioning error until retry-provisioning
  // (worker/provisioner/provisioner_task.go setErrorStatus); test/cli-retry-provisioning.test.ts drives it end to end.
  const provider = makeProvider(w)
  fs.mkdirSync(path.join(w.root, 'machines'), { recursive: true })
  const link = provider.instanceDir('6')
  fs.symlinkSync(path.join(w.root, 'unmounted', 'machine-6'), link)
  const err = await rejection(provider.startInstance(spec('6')))
  assert.is(err.name, 'ProviderError')
  assert.is(err.failure, 'invalid')
  assert.match(err.message, `cannot create instance directory "${link}"`)
  assert.match(err.message, 'EEXIST')
  assert.ok(fs.lstatSync(link).isSymbolicLink(), 'the operator\'s link is not removed')
  assert.equal(await provider.allInstances(), [])
  assert.is(allPids(w).length, 0)
  fs.rmSync(link)
  await provider.startInstance(spec('6'))
  await up(provider, '6')
})

test('the watchdog restarts a killed agent with the same data dir', async () => {
  const provider = makeProvider(w)
  await provider.startInstance(spec('6'))
  await up(provider, '6')
  provider.start()
  const pid = pidOf(provider, '6')
  process.kill(pid, 'SIGKILL')
  await until('agent restarted', () => { const p = pidOf(provider, '6'); return p !== pid && alive(p) }, 5_000)
  assert.is(provider.restartCount('6'), 1)
  await up(provider, '6', 2)
  assert.ok(w.records.some(r => r.message === 'agent process died; restarted'))
  assert.is((await provider.allInstances())[0]!.status, 'running')
})

test('a crash-looping agent backs off to the maximum delay', async () => {
  const provider = makeProvider(w, 'crash', { watchIntervalMs: 20, restartDelayMs: 250, restartDelayMsMax: 1_000, startCheckMs: 100 })
  await provider.startInstance(spec('7'))
  provider.start()
  await sleep(5_000)
  await provider.stop()
  const restarts = provider.restartCount('7')
  // Without back-off an agent dying every 300 ms would restart about 15 times in 5 s.
  assert.ok(restarts >= 2 && restarts <= 6, `restarts in 5 s: ${restarts}`)
  const delays = w.records.filter(r => r.message === 'agent process died; restarted').map(r => r.fields?.nextRestartDelayMs)
  assert.is(delays.length, restarts)
  assert.equal(delays, delays.map((_, i) => Math.min(250 * 2 ** i, 1_000)), `delays ${delays.join(', ')}`)
  const listed = await provider.allInstances()
  assert.ok(listed[0]!.status === 'failed' || listed[0]!.status === 'running')
})

test('stopInstances kills the agent, removes its directory and ignores unknown ids', async () => {
  const provider = makeProvider(w)
  provider.start()
  const a = await provider.startInstance(spec('8'))
  await provider.startInstance(spec('9'))
  const pid = pidOf(provider, '8')
  await provider.stopInstances([a.instanceId, 'local:machine-77', 'bogus', 'local:../etc'])
  assert.not.ok(alive(pid))
  assert.not.ok(fs.existsSync(provider.instanceDir('8')))
  await sleep(300)
  assert.not.ok(fs.existsSync(provider.instanceDir('8')), 'the watchdog did not bring it back')
  assert.equal((await provider.allInstances()).map(i => i.machineId), ['9'])
  await provider.stopInstances([a.instanceId])
})

test('an agent that ignores SIGTERM is killed after the grace', async () => {
  const provider = makeProvider(w, 'stubborn', { stopGraceMs: 300 })
  const started = await provider.startInstance(spec('10'))
  const pid = pidOf(provider, '10')
  await up(provider, '10')
  const t0 = Date.now()
  await provider.stopInstances([started.instanceId])
  assert.ok(Date.now() - t0 >= 300)
  assert.not.ok(alive(pid))
  assert.ok(w.records.some(r => r.message === 'agent ignored SIGTERM; killing'))
})

test('an agent that exits at once fails the deployment and leaves nothing behind', async () => {
  const provider = makeProvider(w)
  const err = await rejection(provider.startInstance(spec('11', 't', 'bad data')))
  assert.is(err.name, 'ProviderError')
  assert.is(err.failure, 'deployment-failed')
  assert.match(err.message, 'fake agent: bad bootstrap data')
  assert.not.match(err.message, '\n')
  assert.ok(err.message.length < 500, `message of ${err.message.length} characters`)
  assert.not.ok(fs.existsSync(provider.instanceDir('11')))
  assert.equal(await provider.allInstances(), [])
  // A command that cannot run at all fails the same way.
  const missing = makeProvider(w, 'normal', { command: { file: path.join(w.root, 'no-such-agent'), args: () => [] } })
  const err2 = await rejection(missing.startInstance(spec('12')))
  assert.is(err2.failure, 'deployment-failed')
  assert.match(err2.message, 'ENOENT')
})

test('a new provider on the same home adopts the running agents', async () => {
  const old = makeProvider(w)
  await old.startInstance(spec('13'))
  await old.startInstance(spec('14'))
  const pids = [pidOf(old, '13'), pidOf(old, '14')]
  await up(old, '13')
  await up(old, '14')
  const provider = makeProvider(w)
  assert.equal(w.records.filter(r => r.message === 'adopted instance').map(r => r.fields?.machineId).sort(), ['13', '14'])
  const listed = await provider.allInstances()
  assert.equal(listed.map(i => [i.machineId, i.token, i.status]).sort(), [['13', 'token-13', 'running'], ['14', 'token-14', 'running']])
  // Idempotent across providers too.
  await provider.startInstance(spec('13'))
  assert.is(allPids(w).length, 2)
  provider.start()
  process.kill(pids[0]!, 'SIGKILL')
  await until('adopted agent restarted', () => { const p = pidOf(provider, '13'); return p !== pids[0] && alive(p) }, 5_000)
  await provider.stopInstances(listed.map(i => i.instanceId))
  assert.ok(allPids(w).every(pid => !alive(pid)))
  assert.equal(fs.readdirSync(path.join(w.root, 'machines')), [])
})

test('a pid reused by another process is not taken for the agent', async () => {
  const provider = makeProvider(w)
  await provider.startInstance(spec('15'))
  const pid = pidOf(provider, '15')
  // Our own pid with a wrong start time: alive, but not the agent the file names.
  fs.writeFileSync(path.join(provider.instanceDir('15'), 'agent.pid'), `${process.pid} 1\n`)
  assert.is((await provider.allInstances())[0]!.status, 'failed')
  process.kill(pid, 'SIGKILL')
})

test('a machine id whose directory would be another machine\'s is invalid', async () => {
  const provider = makeProvider(w)
  const err = await rejection(provider.startInstance(spec('0-lxd-1')))
  assert.is(err.failure, 'invalid')
  const started = await provider.startInstance(spec('0/lxd/1'))
  assert.is(started.instanceId, 'local:machine-0-lxd-1')
  assert.equal((await provider.allInstances()).map(i => i.machineId), ['0/lxd/1'])
})

test.run()

// The shared provider contract against the same fake agent.
let complianceWorld: World | undefined
providerCompliance({
  name: 'local (fake agent)',
  async create () {
    const world = newWorld()
    complianceWorld = world
    const provider = makeProvider(world)
    provider.start()
    return {
      provider,
      async close () {
        await provider.stopInstances((await provider.allInstances()).map(i => i.instanceId))
        await cleanup(world)
      }
    }
  },
  bootstrap: machineId => new TextEncoder().encode(`ok ${machineId}`),
  failingStart: () => ({ overrides: { bootstrap: new TextEncoder().encode('bad bootstrap') }, failure: 'deployment-failed' }),
  timeoutMs: 10_000
})
void complianceWorld
