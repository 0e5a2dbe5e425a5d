/**
 * Status tells the truth about agent liveness (sim/invariants/status-truth.ts), checked by
 * the simulator on the shipping presence, provisioner and machine actors: what
 * `cantrip status` would show of every machine and unit agent, asked of the leader,
 * against what the simulator knows (up, paused, crashed, cut off).
 *
 * Mutation checks, each a test below: without the machine agents' presence heartbeat the
 * check fails (healthy machines shown down and their units lost); an agent that says it
 * crashed but keeps heartbeating is caught as shown alive past lostWithinMs. With the
 * heartbeat, a seed runs for simulated hours of crashes, pauses and partitions that heal
 * without a false alarm (one in `npm test`, three under CANTRIP_LONG=1: 21,564 checks,
 * 40,362 healthy and 1,630 cut-off judgements, no false alarm, at commit time).
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { limits } from '../runtime/limits.ts'
import type { ModelContext } from '../runtime/model/model-types.ts'
import { tableValues } from '../runtime/model/table.ts'
import type { Transport } from '../runtime/transport.ts'
import { presenceTopic } from '../runtime/presence/presence-agent.ts'
import { parseScenario } from '../sim/scenario/parse-scenario.ts'
import { defaultSystemParts, runScenario } from '../sim/scenario/run-scenario.ts'
import type { RunRecord } from '../sim/scenario/scenario-types.ts'
import { statusTruthBounds, type StatusTruthChecker } from '../sim/invariants/status-truth.ts'
import { SimMachineAgent } from '../sim/system/sim-machine-agent.ts'
import type { SystemParts } from '../sim/system/system-world.ts'
import type { AgentState, SimMachineAgentApi } from '../sim/system/machine-agent-types.ts'
import type { SimStorage } from '../sim/sim-storage.ts'

const bounds = statusTruthBounds()

/** The provider, network and kv charm every scenario here shares, as scenario YAML lines. */
function commonParts (name: string, seed: number, controllers: number): string {
  return `name: ${name}
seed: ${seed}
controllers: ${controllers}
provider:
  latency: { allocate: 200ms, deploy: 1s, release: 300ms }
network: { latency: [2ms, 20ms] }
charms:
  kv:
    hooks:
      '*': { duration: [50ms, 300ms] }
      start: { status: active }`
}

function scenario (name: string, faults: string, faultsUntil: string, controllers = 3): ReturnType<typeof parseScenario> {
  return parseScenario(`
${commonParts(name, 1, controllers)}
applications:
  kv: { charm: kv, units: 2 }
relations: []
workload: []
faults:
${faults}
faults-until: ${faultsUntil}
liveness: { budget: 120s }
bugs: []
`, `${name}.yaml`)
}

async function run (s: ReturnType<typeof parseScenario>, parts: SystemParts = defaultSystemParts): Promise<{ record: RunRecord, truth: StatusTruthChecker }> {
  let truth: StatusTruthChecker | undefined
  const record = await runScenario(s, { seed: s.seed, observe: (_world, invariants) => { truth = invariants.statusTruth } }, parts)
  return { record, truth: truth! }
}

test('the bounds come from the presence and machine-actor timeouts', () => {
  assert.is(bounds.lostWithinMs, limits.presenceSuspectAfterMsDefault + limits.presenceFailedAfterMsDefault + 2 * limits.presenceHeartbeatIntervalMsDefault + 1_500)
  assert.ok(bounds.downWithinMs > limits.machineAgentDownAfterMs && bounds.downWithinMs < limits.machineAgentDownAfterMs + 15_000, String(bounds.downWithinMs))
  assert.ok(bounds.recoveryGraceMs < bounds.lostWithinMs, String(bounds.recoveryGraceMs))
})

/** One simulated hour of faults that heal, starting at `h` hours: agents crash and come back, pause, lose the controllers; controllers crash and lose their majority. */
function hourOfFaults (h: number): string {
  const at = (minutes: number): string => `${h * 60 + minutes}m`
  return [
    `  - { at: ${at(10)}, kind: crash, target: machine/0 }`,
    `  - { at: ${at(13)}, kind: restart, target: machine/0 }`,
    `  - { at: ${at(20)}, kind: pause, target: machine/1, for: 30s }`,
    `  - { at: ${at(30)}, kind: partition, shape: isolate, target: machine/0, for: 90s }`,
    `  - { at: ${at(40)}, kind: crash, target: controller/${h % 3} }`,
    `  - { at: ${at(41)}, kind: restart, target: controller/${h % 3} }`,
    `  - { at: ${at(50)}, kind: partition, shape: machines-from-controllers, machines: all, for: 20s }`,
    `  - { at: ${at(55)}, kind: partition, shape: majority-minority, minority: 1, for: 30s }`,
    `  - { at: ${at(58)}, kind: pause, target: leader, for: 5s }`
  ].join('\n')
}

/** Simulated hours of the long run: one in `npm test` (about 25 s of CPU, 90 s wall on a loaded 2-core host), three under CANTRIP_LONG=1 (about 70 s of CPU). */
const hours = process.env['CANTRIP_LONG'] === '1' ? 3 : 1

test(`a healthy machine is never shown down over ${hours} simulated hour(s) of crashes, pauses and partitions that heal`, async () => {
  const s = scenario('hours', Array.from({ length: hours }, (_, h) => hourOfFaults(h)).join('\n'), `${hours * 60}m`)
  const { record, truth } = await run(s)
  assert.is(record.result.outcome, 'pass', record.result.failure)
  assert.ok(record.result.simulatedMs >= hours * 3_600_000)
  assert.ok(truth.counts.healthyJudged > hours * 10_000, `healthy judged ${truth.counts.healthyJudged} times`)
  assert.ok(truth.counts.lostShown > 0 && truth.counts.downShown > 0, JSON.stringify(truth.counts))
  console.log(`  ${hours} simulated hour(s): ${record.result.wallMs} ms wall, ${JSON.stringify(truth.counts)}`)
})

test(`a killed machine agent's units are shown lost within ${bounds.lostWithinMs} ms and its machine not heard from within ${bounds.downWithinMs} ms`, async () => {
  const { record, truth } = await run(scenario('killed-agent', '  - { at: 20s, kind: crash, target: machine/0 }', '150s'))
  assert.is(record.result.outcome, 'pass', record.result.failure)
  assert.ok(truth.counts.lostShown > 0, 'its units were shown lost')
  assert.ok(truth.counts.downShown > 0, 'its machine was shown not heard from')
  assert.ok(truth.counts.healthyJudged > 0, 'the other machine was judged healthy')
})

test('a paused agent is shown lost while paused and healthy again after it resumes', async () => {
  const { record, truth } = await run(scenario('paused-agent', '  - { at: 20s, kind: pause, target: machine/1, for: 40s }', '120s'))
  assert.is(record.result.outcome, 'pass', record.result.failure)
  assert.ok(truth.counts.lostShown > 0, 'its units were shown lost while paused')
  assert.ok(truth.counts.healthyJudged > 0)
})

test('mutation: without the machine agents\' presence heartbeat, healthy machines are shown down and the check fails', async () => {
  // The machine agents' heartbeats never leave them: their presence publications are dropped.
  const parts: SystemParts = {
    ...defaultSystemParts,
    startMachineAgent: options => new SimMachineAgent({
      ...options,
      network: {
        transport: peer => silencePresence(options.network.transport(peer), options.model),
        crash: peer => { options.network.crash(peer) }
      }
    })
  }
  const { record } = await run(scenario('no-heartbeat', '', '60s'), parts)
  assert.is(record.result.outcome, 'safety')
  assert.match(record.result.failure ?? '', /^status-truth at \d+ ms: machine \d+ at \d+ ms: status shows (machine agent "down"|unit kv\/\d+ agent "lost"), but the truth is its agent up and connected to c\d/)
})

test('mutation: an agent that claims to have crashed but keeps heartbeating is caught shown alive', async () => {
  // The simulator believes machine/0 crashed; the process goes on (its crash does nothing).
  const parts: SystemParts = {
    ...defaultSystemParts,
    startMachineAgent: options => {
      const agent = new SimMachineAgent(options)
      if (options.machineId !== '0') return agent
      return new UndeadAgent(agent)
    }
  }
  const { record } = await run(scenario('undead-agent', '  - { at: 20s, kind: crash, target: machine/0 }', '60s'), parts)
  assert.is(record.result.outcome, 'safety')
  assert.match(record.result.failure ?? '', /machine 0 at \d+ ms: status shows unit kv\/0 agent "idle" after \d+ ms \(lostWithinMs\), but the truth is its agent crashed/)
})

test('remove-application takes the machine it empties (its agent stopped, its instance released) and leaves the one it shares; status stays true', async () => {
  const s = parseScenario(`
${commonParts('remove-application-machines', 3, 1)}
  web:
    hooks:
      '*': { duration: [20ms, 100ms] }
      start: { status: active }
applications:
  kv: { charm: kv, units: 2 }
  web: { charm: web, units: 1, to: ['0'] }
relations: []
workload:
  - { at: 40s, do: remove-application, application: kv }
faults: []
faults-until: 60s
liveness: { budget: 120s }
bugs: []
`, 'remove-application-machines.yaml')
  let world: Parameters<NonNullable<Parameters<typeof runScenario>[1]['observe']>>[0] | undefined
  // The run stops its controllers and agents at the end: keep the last model it sampled
  // (every slice) and what machine 1's agent was then.
  let model: ModelContext | undefined
  let agent1: { state: string, finished: boolean } | undefined
  const record = await runScenario(s, {
    seed: s.seed,
    observe: w => {
      world = w
      const read = w.model.bind(w)
      w.model = () => {
        const m = read()
        if (m !== undefined) model = m
        const agent = w.agents.get('1')
        if (agent !== undefined) agent1 = { state: agent.state, finished: agent.finished }
        return m
      }
    }
  }, defaultSystemParts)
  assert.is(record.result.outcome, 'pass', record.result.failure)
  assert.ok(model !== undefined)
  assert.equal(tableValues(model.machines).map(m => [m.id, m.life, m.units]), [['0', 'alive', ['web/0']]], 'machine 1 went with kv/1; machine 0 stays with web/0')
  // It marked the machine dead and either ended by itself or lost power with its instance first.
  assert.is(agent1?.state, 'down', `the agent of machine 1 stopped: ${JSON.stringify(agent1)}`)
  assert.equal(world!.cloud.instancesFor('1').filter(node => node.state === 'DEPLOYED'), [], 'its instance was released')
  assert.is(world!.cloud.instancesFor('0').filter(node => node.state === 'DEPLOYED').length, 1)
})

/** An agent the simulator is told crashed while it goes on running and heartbeating. */
class UndeadAgent implements SimMachineAgentApi {
  readonly #inner: SimMachineAgent
  #crashed = false
  constructor (inner: SimMachineAgent) { this.#inner = inner }
  get machineId (): string { return this.#inner.machineId }
  get peerId (): string { return this.#inner.peerId }
  get storage (): SimStorage { return this.#inner.storage }
  get state (): AgentState { return this.#crashed ? 'down' : this.#inner.state }
  get finished (): boolean { return this.#inner.finished }
  get maxConcurrentHooks (): number { return this.#inner.maxConcurrentHooks }
  async start (): Promise<void> { this.#crashed = false; await this.#inner.start() }
  crash (): void { this.#crashed = true }
  pause (): void { this.#inner.pause() }
  resume (): void { this.#inner.resume() }
  setDrift (rate: number): void { this.#inner.setDrift(rate) }
  units (): string[] { return this.#inner.units() }
  unitState (unit: string): ReturnType<SimMachineAgentApi['unitState']> { return this.#inner.unitState(unit) }
  believedLeaders (): string[] { return this.#crashed ? [] : this.#inner.believedLeaders() }
  errors (): string[] { return this.#inner.errors() }
  async stop (): Promise<void> { await this.#inner.stop() }
}

/** A transport whose presence heartbeats go nowhere. */
function silencePresence (inner: Transport, model: string): Transport {
  const topic = presenceTopic(model)
  return { ...bind(inner), publish: async (t, data) => { if (t !== topic) await inner.publish(t, data) } }
}

function bind (t: Transport): Transport {
  return {
    peerId: t.peerId,
    subscribe: (topic, on) => t.subscribe(topic, on),
    setTopicValidator: (topic, v) => { t.setTopicValidator(topic, v) },
    publish: async (topic, data) => { await t.publish(topic, data) },
    handle: (p, h) => { t.handle(p, h) },
    unhandle: p => { t.unhandle(p) },
    request: async (peer, p, data, o) => await t.request(peer, p, data, o),
    connectedPeers: () => t.connectedPeers(),
    counters: () => t.counters(),
    stop: async () => { await t.stop() }
  }
}

test.run()
