/** SimProvider: the provider compliance suite on simulated time, then the simulated cloud's own faults and bounds. */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { InstanceSpec, StartedInstance, StartProgress } from '../providers/provider-contract.ts'
import { SeededRandom } from '../runtime/random.ts'
import { SimClock } from '../sim/sim-clock.ts'
import { SimProvider, type SimNodeTransition, type SimProviderOptions } from '../providers/sim-provider.ts'
import { assertProviderError, providerCompliance } from './compliance/provider-compliance.ts'

const settleMicrotasks = (): Promise<void> => new Promise(resolve => setImmediate(resolve))
const bootstrap = (machineId: string): Uint8Array => new TextEncoder().encode(`bootstrap for machine ${machineId}`)

let complianceClock = new SimClock()
providerCompliance({
  name: 'SimProvider',
  create: async () => {
    complianceClock = new SimClock()
    const provider = new SimProvider({ clock: complianceClock, random: new SeededRandom(11), nodes: 4 })
    return { provider, close: async () => {} }
  },
  bootstrap,
  settle: async () => {
    complianceClock.advance(100)
    await settleMicrotasks()
  },
  timeoutMs: 5_000,
  failingStart: () => ({ overrides: { constraints: { arch: 's390x' } }, failure: 'invalid' })
})

const test = suite('sim provider')

interface World {
  clock: SimClock
  provider: SimProvider
  transitions: string[]
}

const world = (options: Partial<Omit<SimProviderOptions, 'clock' | 'random'>> & { seed?: number } = {}): World => {
  const clock = new SimClock()
  const transitions: string[] = []
  const { seed = 1, nodes = 4, ...rest } = options
  const provider = new SimProvider({
    clock,
    random: new SeededRandom(seed),
    nodes,
    onTransition: (t: SimNodeTransition) => transitions.push(`${t.atMs} ${t.node.instanceId} ${t.from}->${t.node.state} ${t.node.machineId ?? ''}`),
    ...rest
  })
  return { clock, provider, transitions }
}

const spec = (machineId: string, token = `token-${machineId}`): InstanceSpec =>
  ({ machineId, token, bootstrap: bootstrap(machineId), constraints: {} })

interface Outcome { value?: StartedInstance, error?: unknown }

/** Runs the clock until the start settles (the sim always settles once its timers run). */
const run = async (w: World, promise: Promise<StartedInstance>): Promise<Outcome> => {
  let outcome: Outcome | undefined
  promise.then(value => { outcome = { value } }, (error: unknown) => { outcome = { error } })
  await settleMicrotasks()
  for (let steps = 0; outcome === undefined && steps < 10_000; steps++) {
    if (!w.clock.runNext()) break
    await settleMicrotasks()
  }
  assert.ok(outcome !== undefined, 'start never settled: no timer left to run')
  return outcome
}

const drain = async (w: World): Promise<void> => {
  for (let steps = 0; steps < 10_000 && w.clock.runNext(); steps++) await settleMicrotasks()
  await settleMicrotasks()
}

test('a failed deployment rejects deployment-failed and the node returns to READY', async () => {
  const w = world({ nodes: 1, failureRates: { deploy: 1 } })
  const outcome = await run(w, w.provider.startInstance(spec('3')))
  assertProviderError(outcome.error, 'deployment-failed')
  assert.match((outcome.error as Error).message, /^provider sim: deployment-failed: cannot start instance for machine "3"/)
  assert.equal(w.provider.nodes().map(n => n.state), ['FAILED_DEPLOYMENT'])
  assert.equal((await w.provider.allInstances()).map(i => i.status), ['failed'])
  await drain(w)
  assert.equal(w.provider.nodes().map(n => n.state), ['READY'])
  assert.equal(await w.provider.allInstances(), [])
  assert.is(w.provider.deployedCount('3'), 0)
  // The token's failed attempt is forgotten, so the same token starts afresh.
  w.provider.setFailureRates({ deploy: 0 })
  const again = await run(w, w.provider.startInstance(spec('3')))
  assert.equal(again.value, { instanceId: 'node-1', addresses: ['10.0.0.2'] })
  assert.is(w.provider.deployedCount('3'), 1)
})

test('an allocate API error rejects transient and holds no node', async () => {
  const w = world({ failureRates: { allocate: 1 } })
  const outcome = await run(w, w.provider.startInstance(spec('0')))
  assertProviderError(outcome.error, 'transient')
  assert.ok(w.provider.nodes().every(n => n.state === 'READY'))
})

test('a release API error rejects transient and changes nothing', async () => {
  const w = world()
  const started = await run(w, w.provider.startInstance(spec('0')))
  w.provider.setFailureRates({ release: 1 })
  let error: unknown
  await w.provider.stopInstances([started.value!.instanceId]).catch((e: unknown) => { error = e })
  assertProviderError(error, 'transient')
  assert.equal((await w.provider.allInstances()).map(i => i.status), ['running'])
})

test('starts beyond the quota reject quota until a node is released', async () => {
  const w = world({ nodes: 4, quota: 2 })
  const a = await run(w, w.provider.startInstance(spec('0')))
  await run(w, w.provider.startInstance(spec('1')))
  const third = await run(w, w.provider.startInstance(spec('2')))
  assertProviderError(third.error, 'quota')
  assert.not.ok(assertProviderError(third.error).failure === 'invalid')
  await w.provider.stopInstances([a.value!.instanceId])
  const retried = await run(w, w.provider.startInstance(spec('2')))
  assert.ok(retried.value !== undefined, String(retried.error))
})

test('an exhausted pool rejects no-capacity, and a releasing node is not ready', async () => {
  const w = world({ nodes: 2 })
  const a = await run(w, w.provider.startInstance(spec('0')))
  await run(w, w.provider.startInstance(spec('1')))
  assertProviderError((await run(w, w.provider.startInstance(spec('2')))).error, 'no-capacity')
  await w.provider.stopInstances([a.value!.instanceId])
  assert.equal(w.provider.nodes().map(n => n.state).sort(), ['DEPLOYED', 'RELEASING'])
  assert.equal((await w.provider.allInstances()).map(i => i.status).sort(), ['running', 'stopping'])
  await drain(w)
  const retried = await run(w, w.provider.startInstance(spec('2')))
  assert.is(retried.value?.instanceId, a.value!.instanceId)
})

test('the same seed replays the same states and instance ids; another seed differs', async () => {
  const scenario = async (seed: number): Promise<string[]> => {
    const w = world({ seed, nodes: 6, failureRates: { allocate: 0.2, deploy: 0.3 } })
    const ids: string[] = []
    for (let round = 0; round < 4; round++) {
      const outcomes = await Promise.all(['0', '1', '2'].map(async m => await run(w, w.provider.startInstance(spec(m, `t-${m}-${round}`)))))
      for (const o of outcomes) ids.push(o.value?.instanceId ?? (o.error as Error).message)
      await w.provider.stopInstances(outcomes.flatMap(o => o.value === undefined ? [] : [o.value.instanceId]))
      await drain(w)
    }
    return [...ids, ...w.transitions]
  }
  const first = await scenario(42)
  assert.equal(await scenario(42), first)
  assert.ok(first.length > 12)
  assert.not.equal(await scenario(43), first)
})

test('concurrent starts with one token share one attempt and one instance, even with failures', async () => {
  const w = world({ seed: 5, nodes: 3, failureRates: { allocate: 0.3, deploy: 0.5 } })
  let instanceId: string | undefined
  for (let attempt = 0; attempt < 50 && instanceId === undefined; attempt++) {
    const starts = [0, 1, 2].map(() => w.provider.startInstance(spec('7')))
    const outcomes = await Promise.all(starts.map(async p => await run(w, p)))
    const shapes = new Set(outcomes.map(o => o.value?.instanceId ?? (o.error as Error).message))
    assert.is(shapes.size, 1, `callers of one token saw different outcomes: ${[...shapes].join(' | ')}`)
    instanceId = outcomes[0]!.value?.instanceId
    assert.ok(w.provider.instancesFor('7').length <= 1)
  }
  assert.ok(instanceId !== undefined, 'no start succeeded in 50 attempts')
  await drain(w)
  assert.equal(w.provider.instancesFor('7').map(n => [n.instanceId, n.state]), [[instanceId, 'DEPLOYED']])
  assert.is(w.provider.deployedCount('7'), 1)
  assert.equal(w.provider.violations(), [])
})

test('a late joiner of an in-flight start hears the progress so far', async () => {
  const w = world({ latencyMs: { allocate: 10, deploy: 1_000 } })
  const first = w.provider.startInstance(spec('0'))
  w.clock.advance(100)
  const heard: StartProgress[] = []
  const second = w.provider.startInstance(spec('0'), p => heard.push(p))
  const [a, b] = await Promise.all([run(w, first), run(w, second)])
  assert.is(a.value!.instanceId, b.value!.instanceId)
  assert.equal(heard, [{ type: 'allocated', instanceId: a.value!.instanceId }, { type: 'deploying', message: 'deploying: curtin installing' }])
})

test('a token reused for another machine is invalid', async () => {
  const w = world()
  const first = w.provider.startInstance(spec('0', 'shared'))
  let error: unknown
  await w.provider.startInstance(spec('1', 'shared')).catch((e: unknown) => { error = e })
  assertProviderError(error, 'invalid')
  assert.ok((await run(w, first)).value !== undefined)
})

test('stopping an instance while it deploys fails its start and frees the token', async () => {
  const w = world({ nodes: 1 })
  const progress: StartProgress[] = []
  const start = w.provider.startInstance(spec('0'), p => progress.push(p))
  const outcome = run(w, start)
  while (progress.length === 0) w.clock.runNext()
  await w.provider.stopInstances(['node-1'])
  assertProviderError((await outcome).error, 'deployment-failed')
  await drain(w)
  const again = await run(w, w.provider.startInstance(spec('0')))
  assert.is(again.value?.instanceId, 'node-1')
  assert.equal(w.provider.violations(), [])
})

test('two live instances for one machine are recorded as a violation', async () => {
  const w = world()
  await run(w, w.provider.startInstance(spec('9', 'a')))
  await run(w, w.provider.startInstance(spec('9', 'b')))
  assert.is(w.provider.instancesFor('9').length, 2)
  assert.is(w.provider.deployedCount('9'), 2)
  assert.is(w.provider.violations().length, 1)
  assert.match(w.provider.violations()[0]!, /machine "9" got instance/)
})

test('in-flight starts finish on the cloud\'s timers with nobody waiting (controller crash)', async () => {
  const w = world()
  void w.provider.startInstance(spec('0'), () => { throw new Error('crashed controller') }).catch(() => {})
  await drain(w)
  assert.equal(w.provider.instancesFor('0').map(n => n.state), ['DEPLOYED'])
  const again = await run(w, w.provider.startInstance(spec('0')))
  assert.is(again.value?.instanceId, w.provider.instancesFor('0')[0]!.instanceId)
})

test.run()
