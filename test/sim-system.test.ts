import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { decodeBootstrapData } from '../runtime/bootstrap-data.ts'
import { PresenceAgent } from '../runtime/presence/presence-agent.ts'
import type { Transport } from '../runtime/transport.ts'
import { SeededRandom } from '../runtime/random.ts'
import { runScenario } from '../sim/scenario/run-scenario.ts'
import type { FaultEvent, RunEvent, Scenario } from '../sim/scenario/scenario-types.ts'
import { SimStorage } from '../sim/sim-storage.ts'
import { drawFaults, faultProfiles, resolveProfile } from '../sim/system/fault-draw.ts'
import type { AgentState, HookFaultBook, SimMachineAgentApi, SimMachineAgentOptions } from '../sim/system/machine-agent-types.ts'
import type { SystemParts } from '../sim/system/system-world.ts'

/**
 * The system world of `cantrip sim` (sim/system/system-world.ts) run by runScenario:
 * controllers-only scenarios with client writes under random Raft faults (checked
 * linearizable, every acknowledged write kept), and deploy scenarios up to the
 * provisioning liveness (every machine with exactly one DEPLOYED instance recorded in
 * the model, an agent booted on each with its bootstrap data), with every fault kind of
 * the schedule applied, undone and healed, determinism of the trace hash, and the
 * safety / liveness / crash outcomes.
 *
 * The machine agents here are a test stand-in (`PowerOnlyAgent`): it stands for the
 * process on a deployed instance as far as power goes — boot, kill -9, SIGSTOP, clock
 * drift, a disk, and the presence heartbeat that tells the controllers it runs (the
 * status-truth check holds it to that) — and runs no units and no hooks; the real simulated agent
 * (sim/system/sim-machine-agent.ts) is wired in as the default factory separately.
 */

class PowerOnlyAgent implements SimMachineAgentApi {
  readonly machineId: string
  readonly peerId: string
  readonly storage = new SimStorage()
  readonly finished = false
  readonly maxConcurrentHooks = 0
  readonly options: SimMachineAgentOptions
  state: AgentState = 'down'
  starts = 0
  drift: number
  /** Test switch: the stand-in claims that two units lead, to exercise the leadership check. */
  claimTwoLeaders = false

  constructor (options: SimMachineAgentOptions) {
    this.options = options
    this.machineId = options.machineId
    this.peerId = `machine-${options.machineId}`
    this.drift = options.drift ?? 0
  }

  #transport: Transport | undefined
  #presence: PresenceAgent | undefined

  async start (): Promise<void> {
    this.starts++
    this.state = 'up'
    this.#transport = this.options.network.transport(this.peerId)
    this.#heartbeat()
  }

  /** Heartbeats while it runs, each time above its earlier incarnations, as cantripd's do. */
  #heartbeat (): void {
    const clock = this.options.sim.clock
    this.#presence = new PresenceAgent({ transport: this.#transport!, clock }, {
      modelUuid: this.options.model, role: 'machine', incarnation: Math.floor(clock.now()), controllers: () => new Set(this.options.controllers)
    })
    this.#presence.start()
  }

  crash (): void {
    this.state = 'down'
    this.#presence?.stop()
    this.options.network.crash(this.peerId)
    this.storage.crash()
  }

  pause (): void {
    this.state = 'paused'
    this.#presence?.stop()
  }

  resume (): void {
    this.state = 'up'
    this.#heartbeat()
  }
  setDrift (rate: number): void { this.drift = rate }
  units (): string[] { return [] }
  unitState (): undefined { return undefined }
  believedLeaders (): string[] { return this.claimTwoLeaders ? ['kv/0', 'kv/1'] : [] }
  errors (): string[] { return [] }
  /** Its state when the run stopped it at the end. */
  stateAtStop: AgentState | undefined
  async stop (): Promise<void> {
    this.stateAtStop = this.state
    this.#presence?.stop()
    this.state = 'down'
  }
}

/** Records what the schedule asks of hooks (the stand-in agents run none). */
class RecordingHookBook implements HookFaultBook {
  readonly calls: string[] = []
  fail (unit: string, hook: string, times: number): void { this.calls.push(`fail ${unit} ${hook} ${times}`) }
  hang (unit: string, hook: string, untilMs: number | undefined): void { this.calls.push(`hang ${unit} ${hook} ${String(untilMs)}`) }
  releaseAll (): void { this.calls.push('release-all') }
  take (): undefined { return undefined }
  onRelease (): () => void { return () => {} }
}

function powerOnlyParts (): { parts: SystemParts, agents: PowerOnlyAgent[], book: RecordingHookBook } {
  const agents: PowerOnlyAgent[] = []
  const book = new RecordingHookBook()
  return {
    agents,
    book,
    parts: {
      startMachineAgent: options => {
        const agent = new PowerOnlyAgent(options)
        agents.push(agent)
        return agent
      },
      newHookFaults: () => book
    }
  }
}

function scenario (overrides: Partial<Scenario>): Scenario {
  return {
    name: 'test',
    description: 'test scenario',
    seed: 1,
    controllers: 3,
    provider: { nodes: 12, latencyMs: { allocate: 200, deploy: 3_000, release: 500 }, failureRates: { allocate: 0, deploy: 0, release: 0 } },
    network: { latencyMs: [1, 10] },
    charms: {},
    applications: [],
    relations: [],
    workload: [],
    faults: [],
    faultsUntilMs: 10_000,
    livenessBudgetMs: 60_000,
    bugs: [],
    ...overrides
  }
}

const writesScenario = scenario({
  name: 'writes-under-raft-faults',
  workload: [{ at: 1_000, do: 'writes', ratePerS: 20, untilMs: 30_000 }],
  randomFaults: { profile: 'raft', events: 20, fromMs: 2_000, untilMs: 28_000 },
  faultsUntilMs: 30_000,
  livenessBudgetMs: 30_000
})

const kvCharm = { name: 'kv', provides: { db: 'kv' }, requires: {}, peers: { cluster: 'kv-peer' }, subordinate: false, hooks: {} }
const webCharm = { name: 'web', provides: {}, requires: { backend: 'kv' }, peers: {}, subordinate: false, hooks: {} }

/** Every fault kind of the vocabulary, each with a target that exists when it fires. */
const everyKind: FaultEvent[] = [
  { at: 9_000, kind: 'crash', target: 'leader' },
  { at: 10_500, kind: 'restart', target: 'controller/0' },
  { at: 10_500, kind: 'restart', target: 'controller/1' },
  { at: 10_500, kind: 'restart', target: 'controller/2' },
  { at: 11_000, kind: 'pause', target: 'follower', forMs: 1_000 },
  { at: 12_500, kind: 'pause', target: 'machine/0' },
  { at: 13_000, kind: 'resume', target: 'machine/0' },
  { at: 13_500, kind: 'crash', target: 'machine/1' },
  { at: 14_000, kind: 'restart', target: 'machine/1' },
  { at: 14_500, kind: 'partition', shape: 'isolate', target: 'leader', forMs: 1_500 },
  { at: 16_500, kind: 'partition', shape: 'majority-minority', minority: 1, forMs: 1_500 },
  { at: 18_500, kind: 'partition', shape: 'split', groups: [['controller/0', 'machine/0'], ['controller/1', 'controller/2', 'machine/1']], forMs: 1_000 },
  { at: 20_000, kind: 'partition', shape: 'bridge', bridge: 'controller/1', forMs: 1_000 },
  { at: 21_500, kind: 'partition', shape: 'one-way', from: 'leader', to: 'follower', forMs: 1_000 },
  { at: 23_000, kind: 'partition', shape: 'machines-from-controllers', machines: 'all', forMs: 1_000 },
  { at: 24_500, kind: 'heal' },
  { at: 25_000, kind: 'loss', probability: 0.2, forMs: 1_000 },
  { at: 26_500, kind: 'duplicate', probability: 0.2, forMs: 1_000 },
  { at: 28_000, kind: 'delay', minMs: 20, maxMs: 80, forMs: 1_000 },
  { at: 29_500, kind: 'reorder', probability: 0.3, extraMaxMs: 30, forMs: 1_000 },
  { at: 31_000, kind: 'clock-drift', target: 'controller/2', rate: 0.02 },
  { at: 31_000, kind: 'clock-drift', target: 'machine/0', rate: -0.03 },
  { at: 31_500, kind: 'disk-error', target: 'follower', writes: 1 },
  { at: 32_000, kind: 'disk-full', target: 'machine/1', forMs: 1_000 },
  { at: 33_500, kind: 'provider-failure', step: 'all', rate: 1, forMs: 2_000 },
  { at: 34_000, kind: 'hook-fail', unit: 'kv/0', hook: 'install', times: 2 },
  { at: 34_000, kind: 'hook-hang', unit: 'kv', hook: 'start', forMs: 3_000 },
  // No machine 99: skipped and recorded, the run goes on.
  { at: 34_500, kind: 'crash', target: 'machine/99' },
  // Left in force for the heal phase to undo: no quorum until then.
  { at: 35_000, kind: 'disk-full', target: 'controller/0' },
  { at: 35_000, kind: 'pause', target: 'controller/1' },
  { at: 35_000, kind: 'partition', shape: 'isolate', target: 'controller/2' },
  { at: 35_000, kind: 'loss', probability: 0.5 },
  { at: 35_000, kind: 'pause', target: 'machine/2' },
  { at: 35_000, kind: 'crash', target: 'machine/3' },
  { at: 35_000, kind: 'provider-failure', step: 'deploy', rate: 1 }
]

const deployScenario = scenario({
  name: 'deploy-under-every-fault',
  charms: { kv: kvCharm, web: webCharm },
  applications: [{ name: 'kv', charm: 'kv', units: 2, config: { port: 8080 } }, { name: 'web', charm: 'web', units: 1, config: {} }],
  relations: [['web:backend', 'kv:db']],
  workload: [
    { at: 15_000, do: 'add-unit', application: 'kv', units: 1 },
    { at: 16_000, do: 'config', application: 'kv', config: { port: 8081 } },
    { at: 17_000, do: 'writes', ratePerS: 10, untilMs: 30_000 }
  ],
  faults: everyKind,
  faultsUntilMs: 37_000,
  livenessBudgetMs: 120_000
})

function phases (events: readonly RunEvent[]): string[] {
  return events.flatMap(e => e.kind === 'phase' ? [e.phase] : [])
}

test('controllers only: client writes under random Raft faults pass, linearizable, and the run is deterministic', async () => {
  const first = await runScenario(writesScenario, { seed: 7, recordEvents: true, scenarioPath: 'examples/sim/writes.yaml' })
  const again = await runScenario(writesScenario, { seed: 7 })
  const other = await runScenario(writesScenario, { seed: 8 })
  const result = first.result
  assert.is(result.outcome, 'pass', result.failure)
  assert.is(again.result.outcome, 'pass', again.result.failure)
  assert.is(again.result.hash, result.hash, 'same scenario and seed, same trace hash')
  assert.is.not(other.result.hash, result.hash, 'another seed, another hash')
  assert.equal(again.result.faults, result.faults)
  assert.is.not(JSON.stringify(other.result.faults), JSON.stringify(result.faults))
  assert.is(result.faults.length, 20)
  assert.ok(result.faults.every(f => f.at >= 2_000 && f.at < 28_000))
  assert.is(again.events.length, 0, 'events are kept only when asked')
  assert.equal(phases(first.events), ['setup', 'faults', 'heal', 'liveness', 'done'])
  assert.ok(result.counts.leaderTerms >= 2, `leaders changed under the raft profile (${result.counts.leaderTerms} terms)`)
  assert.ok(result.counts.invariantChecks > 1_000)
  assert.ok(result.convergedAtMs !== undefined && result.convergedAtMs >= writesScenario.faultsUntilMs)
  assert.is(result.replay, 'cantrip sim examples/sim/writes.yaml --seed 7')
  assert.is(first.events.filter(e => e.kind === 'fault').length, 20)
  assert.ok(first.events.some(e => e.kind === 'term'))
  assert.ok(first.events.some(e => e.kind === 'agent' && e.state === 'down'), 'controllers went down')
  console.log(`  controllers-only 30 s simulated with 20 random faults: ${result.wallMs} / ${again.result.wallMs} / ${other.result.wallMs} ms wall`)
})

test('deploy: every fault kind applies and undoes, the heal restores everything, every machine ends with one deployed instance and an agent', async () => {
  const { parts, agents, book } = powerOnlyParts()
  // The seed must let every fault find its target (everyKind): machine 3, added at 15 s
  // through leader changes, must have its agent before the crash at 35 s. Seed 3 did until
  // the pre-vote tie-break moved the elections (its add-unit then committed at 21.3 s and
  // machine 3 booted at 38.9 s); seeds 1, 2, 4 and 5 all pass, machine 3 booting at 28.4,
  // 32.8, 20.2 and 28.1 s: seed 4 leaves the widest margin.
  const record = await runScenario(deployScenario, { seed: 4, recordEvents: true }, parts)
  const result = record.result
  assert.is(result.outcome, 'pass', result.failure)
  const faultEvents = record.events.filter((e): e is Extract<RunEvent, { kind: 'fault' }> => e.kind === 'fault')
  assert.is(faultEvents.length, everyKind.length)
  const skipped = faultEvents.filter(e => e.skipped !== undefined)
  // The three restarts after the leader's crash: only the crashed one was down.
  assert.equal(skipped.map(e => e.skipped!), ['already up', 'already up', 'no agent on machine 99'])
  assert.ok(skipped.slice(0, 2).every(e => e.fault.kind === 'restart'))
  // Machines 0..3 (kv/0, kv/1, web/0, then the added kv/2): one agent each, booted with its bootstrap data.
  assert.is(result.counts.machines, 4)
  assert.equal(agents.map(a => a.machineId).sort(), ['0', '1', '2', '3'])
  for (const agent of agents) {
    const data = decodeBootstrapData(agent.options.bootstrap!)
    assert.is(data.machineId, agent.machineId)
    assert.equal(data.controllers.map(c => c.peerId), ['c0', 'c1', 'c2'])
    assert.is(agent.stateAtStop, 'up', `agent ${agent.machineId} is up after the heal, until the run stops it`)
    assert.is(agent.drift, 0, 'the heal sets clocks true')
  }
  assert.is(agents.find(a => a.machineId === '1')!.starts, 2, 'machine 1 crashed and restarted')
  assert.is(agents.find(a => a.machineId === '3')!.starts, 2, 'machine 3 crashed and the heal restarted it')
  assert.equal(book.calls, ['fail kv/0 install 2', 'hang kv start 37000', 'release-all'])
  assert.equal(phases(record.events), ['setup', 'faults', 'heal', 'liveness', 'done'])
  assert.ok(record.events.some(e => e.kind === 'agent' && e.agent === 'machine-0' && e.state === 'paused'))
  assert.ok(record.events.some(e => e.kind === 'command' && e.text.startsWith('add-unit kv') && e.ok))
  assert.ok(record.events.some(e => e.kind === 'units' && e.total === 4))
  assert.is(result.counts.units, 4)
})

test('deploy: the same seed replays to the same trace hash, another seed does not', async () => {
  const run = async (seed: number): Promise<string> => (await runScenario(deployScenario, { seed }, powerOnlyParts().parts)).result.hash
  const [a, b, c] = [await run(11), await run(11), await run(12)]
  assert.is(a, b)
  assert.is.not(a, c)
})

test('safety: an invariant broken at a step ends the run with the check, its time and the replay command', async () => {
  const { parts, agents } = powerOnlyParts()
  const start = parts.startMachineAgent!
  parts.startMachineAgent = options => {
    const agent = start(options) as PowerOnlyAgent
    if (options.machineId === '0') agent.claimTwoLeaders = true
    return agent
  }
  const s = scenario({ name: 'two-leaders', charms: { kv: kvCharm }, applications: [{ name: 'kv', charm: 'kv', units: 1, config: {} }] })
  const { result } = await runScenario(s, { seed: 1, scenarioPath: 'two-leaders.yaml' }, parts)
  assert.is(result.outcome, 'safety')
  assert.match(result.failure!, /^leadership at \d+ ms: 2 units of kv believe they lead: kv\/0, kv\/1$/)
  assert.is(result.replay, 'cantrip sim two-leaders.yaml --seed 1')
  assert.is(agents.length, 1)
})

test('liveness: a cloud that never deploys fails the run with what is still wrong', async () => {
  const s = scenario({
    name: 'no-cloud',
    charms: { kv: kvCharm },
    applications: [{ name: 'kv', charm: 'kv', units: 1, config: {} }],
    provider: { nodes: 4, latencyMs: { allocate: 200, deploy: 1_000, release: 200 }, failureRates: { allocate: 0, deploy: 1, release: 0 } },
    faultsUntilMs: 2_000,
    livenessBudgetMs: 10_000
  })
  const { result } = await runScenario(s, { seed: 1 }, powerOnlyParts().parts)
  assert.is(result.outcome, 'liveness')
  // The first problem found is named: the machine without an instance, or — while the
  // provisioner keeps committing its retries — followers a heartbeat behind the leader.
  assert.match(result.failure!, /^not converged within 10000 ms of the heal: (machine 0 has |controllers behind the leader's commit)/, result.failure)
})

test('crash: a deploy scenario without a machine agent factory is refused as a crash, naming what is missing', async () => {
  const s = scenario({ name: 'no-agents', charms: { kv: kvCharm }, applications: [{ name: 'kv', charm: 'kv', units: 1, config: {} }] })
  const { result } = await runScenario(s, { seed: 1 }, {})
  assert.is(result.outcome, 'crash')
  assert.match(result.failure!, /no machine agent factory/)
})

test('fault draws: deterministic per seed, within the window, as many as asked, for every profile', () => {
  const context = { fromMs: 1_000, untilMs: 20_000, events: 15, controllers: 3, machines: ['0', '1', '2'], units: ['kv/0', 'kv/1'] }
  for (const profile of [...faultProfiles, 'mixed']) {
    const a = drawFaults(new SeededRandom(5), profile, context)
    const b = drawFaults(new SeededRandom(5), profile, context)
    assert.equal(a, b, profile)
    assert.is(a.length, 15, profile)
    assert.ok(a.every((f, i) => i === 0 || f.at >= a[i - 1]!.at), `${profile}: in time order`)
    assert.ok(a.every(f => f.at >= 1_000), profile)
  }
  const kinds = new Set(drawFaults(new SeededRandom(1), 'raft', { ...context, events: 200 }).map(f => f.kind))
  for (const kind of ['crash', 'restart', 'partition', 'pause']) assert.ok(kinds.has(kind as FaultEvent['kind']), `raft draws ${kind}`)
  const picked = new Set(Array.from({ length: 40 }, (_, seed) => resolveProfile(new SeededRandom(seed), 'mixed')))
  assert.ok(picked.size >= 4, `mixed picks several profiles over seeds (${[...picked].join(', ')})`)
  assert.throws(() => drawFaults(new SeededRandom(1), 'chaos', context), /expected a profile of raft, network, agents, cloud, hooks, mixed, got "chaos"/)
})

test.run()
