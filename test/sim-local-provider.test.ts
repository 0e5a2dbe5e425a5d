/**
 * The local provider's own code on the simulator's processes, files and clock: agents
 * that cannot run, exit at once, crash later or ignore SIGTERM (sim/scenarios/
 * local-provider-faults.ts), and a few named cases read step by step.
 *
 * CANTRIP_SEEDS sets how many seeds the swarm runs (default 40); CANTRIP_SEED runs one.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { LocalProvider } from '../providers/local-provider.ts'
import { createMemoryLogger, type LogRecord } from '../runtime/logger.ts'
import { ProviderError, type InstanceSpec } from '../providers/provider-contract.ts'
import { SimClock } from '../sim/sim-clock.ts'
import { SimFileSystem } from '../sim/sim-file-system.ts'
import { SimProcessRunner, type SimProcessOutcome } from '../sim/sim-process-runner.ts'
import { runLocalProviderFaults, type LocalProviderScenarioResult } from '../sim/scenarios/local-provider-faults.ts'
import { providerCompliance } from './compliance/provider-compliance.ts'
import { flush, settle as settleClock } from './support/sim-settle.ts'


interface World {
  clock: SimClock
  files: SimFileSystem
  processes: SimProcessRunner
  provider: LocalProvider
  records: LogRecord[]
  /** What the next agents launched do, in order; then they run until killed. */
  outcomes: SimProcessOutcome[]
}

function world (): World {
  const clock = new SimClock({ startMs: 1_000_000 })
  const files = new SimFileSystem()
  const outcomes: SimProcessOutcome[] = []
  const processes = new SimProcessRunner(clock, () => { throw new Error('no plain processes here') }, {
    files,
    detachedScript: () => outcomes.shift() ?? { durationMs: 0, hang: true, output: ['cantripd: up'] }
  })
  const records: LogRecord[] = []
  const provider = new LocalProvider({
    home: '/srv/machines',
    logger: createMemoryLogger('local-provider', records),
    command: { file: '/usr/bin/node', args: (bootstrapFile, dataDir) => ['cantripd.ts', '--bootstrap', bootstrapFile, '--data-dir', dataDir] },
    processes,
    files,
    clock,
    watchIntervalMs: 1_000,
    restartDelayMs: 1_000,
    restartDelayMsMax: 8_000,
    startCheckMs: 1_000,
    stopGraceMs: 3_000
  })
  return { clock, files, processes, provider, records, outcomes }
}

async function settle<T> (w: World, promise: Promise<T>, budgetMs = 60_000): Promise<T> {
  return await settleClock(w.clock, promise, 50, budgetMs)
}

async function advance (w: World, ms: number): Promise<void> {
  for (let spent = 0; spent < ms; spent += 50) {
    w.clock.advance(50)
    await flush()
  }
}

function spec (machineId: string, token = `token-${machineId}`): InstanceSpec {
  return { machineId, token, bootstrap: new TextEncoder().encode(`ok ${machineId}`), constraints: {} }
}

async function rejection (w: World, promise: Promise<unknown>): Promise<ProviderError> {
  try {
    await settle(w, promise)
  } catch (error) {
    if (error instanceof ProviderError) return error
    throw error
  }
  throw new Error('expected a rejection')
}

// The shared provider contract, against the local provider's code on simulated processes and files.
let complianceWorld = world()
providerCompliance({
  name: 'local (simulated processes and files)',
  create: async () => {
    complianceWorld = world()
    complianceWorld.provider.start()
    return { provider: complianceWorld.provider, close: async () => { await complianceWorld.provider.stop() } }
  },
  bootstrap: machineId => new TextEncoder().encode(`ok ${machineId}`),
  settle: async () => {
    complianceWorld.clock.advance(100)
    await flush()
  },
  timeoutMs: 10_000,
  failingStart: () => {
    complianceWorld.outcomes.push({ durationMs: 10, exitCode: 1, stderr: ['cantripd: bad bootstrap data'] })
    return { overrides: {}, failure: 'deployment-failed' }
  }
})

const test = suite('local provider on the simulator')

test('started agents run from their instance directories, with the files a real start writes', async () => {
  const w = world()
  const started = await settle(w, Promise.all(['0', '1'].map(async id => await w.provider.startInstance(spec(id)))))
  assert.equal(started.map(s => s.instanceId), ['local:machine-0', 'local:machine-1'])
  assert.equal(w.files.paths('/srv/machines/machine-0'), [
    '/srv/machines/machine-0/agent', '/srv/machines/machine-0/agent.log', '/srv/machines/machine-0/agent.pid',
    '/srv/machines/machine-0/bootstrap', '/srv/machines/machine-0/token'
  ])
  assert.is(w.files.mode('/srv/machines/machine-0/bootstrap'), 0o600)
  assert.is(new TextDecoder().decode(w.files.readFile('/srv/machines/machine-0/agent.log')), 'cantripd: up\n')
  assert.equal(w.processes.detachedPids().length, 2)
  assert.equal((await w.provider.allInstances()).map(i => [i.machineId, i.status]), [['0', 'running'], ['1', 'running']])
})

test('a start whose agent exits at once fails the deployment, says why and leaves nothing', async () => {
  const w = world()
  w.outcomes.push({ durationMs: 30, exitCode: 1, stderr: ['cantripd: bad bootstrap data', '    at decode (x.ts:1:1)'] })
  const error = await rejection(w, w.provider.startInstance(spec('2')))
  assert.is(error.failure, 'deployment-failed')
  assert.is(error.message, 'provider local: deployment-failed: cannot start instance "local:machine-2": agent exited at once (exit code 1): cantripd: bad bootstrap data')
  assert.not.ok(w.files.exists('/srv/machines/machine-2'))
  assert.equal(w.processes.detachedPids(), [])
  assert.equal(await w.provider.allInstances(), [])
})

test('a start whose agent cannot be run at all is a failed deployment', async () => {
  const w = world()
  w.outcomes.push({ durationMs: 0, spawnFailure: 'spawn /usr/bin/node ENOENT', missing: true })
  const error = await rejection(w, w.provider.startInstance(spec('3')))
  assert.is(error.failure, 'deployment-failed')
  assert.match(error.message, 'cannot run "/usr/bin/node": spawn /usr/bin/node ENOENT')
  assert.not.ok(w.files.exists('/srv/machines/machine-3'))
})

test('an agent that crashes is listed failed at once, and the watchdog brings it back', async () => {
  const w = world()
  await settle(w, w.provider.startInstance(spec('4')))
  w.provider.start()
  const [pid] = w.processes.detachedPids()
  assert.ok(w.processes.crash(pid!, 'SIGSEGV'))
  const listed = await w.provider.allInstances()
  assert.equal(listed.map(i => [i.machineId, i.status]), [['4', 'failed']])
  assert.match(listed[0]!.message, 'agent process not running; restart due')
  await advance(w, 1_500)
  assert.is(w.provider.restartCount('4'), 1)
  const [again] = w.processes.detachedPids()
  assert.ok(again !== undefined && again !== pid, 'a new agent runs')
  assert.equal((await w.provider.allInstances()).map(i => i.status), ['running'])
  assert.ok(w.records.some(r => r.message === 'agent process died; restarted'))
  await w.provider.stop()
})

test('a crash-looping agent is restarted with doubling delays up to the maximum', async () => {
  const w = world()
  await settle(w, w.provider.startInstance(spec('5')))
  for (let i = 0; i < 8; i++) w.outcomes.push({ durationMs: 100, exitCode: 3 })
  w.provider.start()
  w.processes.crash(w.processes.detachedPids()[0]!)
  await advance(w, 40_000)
  await w.provider.stop()
  const delays = w.records.filter(r => r.message === 'agent process died; restarted').map(r => r.fields?.nextRestartDelayMs)
  assert.equal(delays.slice(0, 5), [1_000, 2_000, 4_000, 8_000, 8_000])
})

test('a stop SIGKILLs an agent that ignores SIGTERM after the grace', async () => {
  const w = world()
  w.outcomes.push({ durationMs: 0, hang: true, ignoresSigterm: true })
  const started = await settle(w, w.provider.startInstance(spec('6')))
  const before = w.clock.now()
  await settle(w, w.provider.stopInstances([started.instanceId]))
  assert.ok(w.clock.now() - before >= 3_000, `stopped after ${w.clock.now() - before} ms`)
  assert.ok(w.records.some(r => r.message === 'agent ignored SIGTERM; killing'))
  assert.equal(w.processes.detachedPids(), [])
  assert.equal(w.files.paths('/srv/machines'), [])
})

test('a new provider on the same disk adopts the running agents', async () => {
  const w = world()
  await settle(w, w.provider.startInstance(spec('7')))
  const successor = new LocalProvider({
    home: '/srv/machines',
    logger: createMemoryLogger('successor', w.records),
    command: { file: '/usr/bin/node', args: () => [] },
    processes: w.processes,
    files: w.files,
    clock: w.clock
  })
  assert.equal((await successor.allInstances()).map(i => [i.machineId, i.token, i.status]), [['7', 'token-7', 'running']])
  assert.equal((await settle(w, successor.startInstance(spec('7')))).instanceId, 'local:machine-7')
  assert.is(w.processes.detachedPids().length, 1, 'the same token answers the adopted instance')
})

test('a machine\'s own --listen/--advertise reach its agent and its address; others follow the default network; kept for restarts', async () => {
  const clock = new SimClock({ startMs: 1_000_000 })
  const files = new SimFileSystem()
  const launched: string[][] = []
  const processes = new SimProcessRunner(clock, () => { throw new Error('no plain processes here') }, {
    files,
    detachedScript: spec => { launched.push([...spec.args]); return { durationMs: 0, hang: true } }
  })
  const provider = new LocalProvider({
    home: '/srv/machines',
    logger: createMemoryLogger('local-provider', []),
    command: { file: '/usr/bin/node', args: () => ['cantripd'], networkArgs: (listen, advertise) => ['--listen', listen, ...(advertise === undefined ? [] : ['--advertise', advertise])] },
    processes,
    files,
    clock,
    startCheckMs: 100,
    // The controllers' network (agent/machine-agent-network.ts): a group other hosts reach.
    defaultNetwork: { listen: '0.0.0.0', advertise: '10.0.0.5' }
  })
  const run = async <T>(promise: Promise<T>): Promise<T> => await settleClock(clock, promise, 50, 60_000)
  const own = await run(provider.startInstance({ ...spec('8'), network: { listen: '10.0.0.8:17080', advertise: '203.0.113.8' } }))
  const bound = await run(provider.startInstance({ ...spec('9'), network: { listen: '10.0.0.9' } }))
  const plain = await run(provider.startInstance(spec('10')))
  assert.equal(launched, [
    ['cantripd', '--listen', '/ip4/10.0.0.8/tcp/17080', '--advertise', '203.0.113.8'],
    ['cantripd', '--listen', '/ip4/10.0.0.9/tcp/0'],
    ['cantripd', '--listen', '/ip4/0.0.0.0/tcp/0', '--advertise', '10.0.0.5']
  ])
  assert.equal([own.addresses, bound.addresses, plain.addresses], [['203.0.113.8'], ['10.0.0.9'], ['10.0.0.5']])
  // A restart (the watchdog's, or start-agent's) launches the same agent from what the directory keeps.
  processes.crash(processes.detachedPids()[0]!)
  await run(provider.startInstance({ ...spec('8') }))
  assert.equal(launched.at(-1), ['cantripd', '--listen', '/ip4/10.0.0.8/tcp/17080', '--advertise', '203.0.113.8'])
  assert.equal((await provider.allInstances()).map(i => [i.machineId, i.addresses]), [['10', ['10.0.0.5']], ['8', ['203.0.113.8']], ['9', ['10.0.0.9']]])
})

test.run()

const swarm = suite('local provider faults swarm')
const only = process.env['CANTRIP_SEED']
const seeds = only !== undefined ? [Number(only)] : Array.from({ length: Number(process.env['CANTRIP_SEEDS'] ?? 40) }, (_, i) => i + 1)

swarm('every seed keeps the safety checks and converges; the faults all happen', async () => {
  const results: LocalProviderScenarioResult[] = []
  for (const seed of seeds) {
    const result = await runLocalProviderFaults({ seed })
    if (result.failure !== undefined) assert.unreachable(result.failure)
    results.push(result)
  }
  if (only !== undefined) return
  const total = (key: keyof LocalProviderScenarioResult): number => results.reduce((sum, r) => sum + Number(r[key]), 0)
  for (const key of ['started', 'failedStarts', 'spawnFailures', 'crashes', 'foundDead', 'restarts', 'stops', 'stubbornKills', 'invalidStarts'] as const) {
    assert.ok(total(key) > 0, `no seed produced any ${key}`)
  }
})

swarm('the same seed gives the same trace; another seed another', async () => {
  const a = await runLocalProviderFaults({ seed: 7 })
  const b = await runLocalProviderFaults({ seed: 7 })
  const c = await runLocalProviderFaults({ seed: 8 })
  assert.is(a.hash, b.hash)
  assert.equal(a, b)
  assert.is.not(a.hash, c.hash)
})

swarm.run()
