import { inHookError } from '../../actors/unit/local-state.ts'
import { applicationOf, type UnitName } from '../../runtime/ids.ts'
import { readerOf } from '../../runtime/model/model-draft.ts'
import type { CommandResult, Entity, ModelCommand, ModelContext } from '../../runtime/model/model-types.ts'
import { tableValues } from '../../runtime/model/table.ts'
import type { Random } from '../../runtime/random.ts'
import { SimControllerGroup } from '../sim-controller-group.ts'
import { HookOrderChecker, formatViolations } from '../invariants/hook-order-checker.ts'
import type { ScenarioCharm } from '../scenario/scenario-types.ts'
import { Simulation } from '../simulation.ts'
import { RandomHookFaults } from '../system/random-hook-faults.ts'
import { SimMachineAgent, simIdentifyPeer } from '../system/sim-machine-agent.ts'
import { systemConvergenceProblems } from '../system/system-convergence.ts'
import { agentRaftTiming } from '../system/system-world.ts'
import { agentChecksEveryMs, agentsProblem } from '../system/system-invariants.ts'

/**
 * The shipped machine agent (actors/machine/machine-agent.ts: ControllerClient, presence,
 * machiner, deployer and unit hosts, through SimMachineAgent) against ONE real controller
 * (a ModelReplica: Raft of one on SimStorage, the controller API, the model) on the
 * simulated network. The agent hosts five units of two related applications (a
 * peer-replicated `kv` with three units and a `web` front end with two), under a workload
 * of config changes, relation changes, leadership moves (the leader removed, leases that
 * run out while the agent is down or stopped), actions, `juju exec`, refreshes and
 * scaling, with random hook failures that are `resolved`, kill -9, SIGTERM and SIGSTOP of
 * the agent at random points, and clock drift. The hook-order invariants, serial hooks,
 * one believed leader per application and no actor errors are checked after every
 * simulated step; after the faults heal, every unit must converge within a budget of
 * simulated time (sim/system/system-convergence.ts).
 */
export interface ScenarioOptions {
  seed: number
  /** Workload and fault events drawn for the run. */
  steps?: number
  /** Simulated time the liveness phase may take after the faults heal. */
  livenessBudgetMs?: number
  /** Test hook: make hook durations depend on real time, to prove the determinism check. */
  nondeterministic?: boolean
}

export interface ScenarioResult {
  seed: number
  hash: string
  failure: string | undefined
  kind: 'safety' | 'liveness' | 'crash' | undefined
  simulatedMs: number
  hooks: number
  crashes: number
}

const machine = '0'
const controllers = ['c0']
const admin: Entity = { kind: 'user', name: 'admin' }
const hookFailureProbability = 0.08
const stepsDefault = 40
/** Half the default lease: stops and crashes of tens of seconds move leadership; its refresh timers (lease/6 per unit) stay cheap. */
const leaseDurationMs = 30_000
/** Simulated time one admin command may take (one controller, never faulted: milliseconds). */
const adminBudgetMs = 30_000
/** Simulated time a SIGTERM may take (hooks killed, commands sent) before the run calls it hung. */
const terminateBudgetMs = 60_000
const unitsPerApplicationMax = 4
/**
 * Simulated time drives the cost of a seed (every Raft tick, heartbeat and lease refresh
 * of the real stack runs): hooks of up to 1 s and steps of up to 5 s keep a seed short
 * while hooks still overlap every fault and change.
 */
const hookDurationMaxMs = 1_000
const stepGapMaxMs = 5_000
const healSliceMs = 2_000

const charms: Record<string, ScenarioCharm> = {
  kv: {
    name: 'kv', provides: { api: 'kv' }, requires: {}, peers: { cluster: 'kv-peer' }, subordinate: false,
    hooks: {
      '*': { durationMs: [1, hookDurationMaxMs] },
      // Also on config-changed: a `start` skipped by `resolved --no-hooks` never sets it.
      start: { status: { status: 'active', message: '' } },
      'config-changed': { status: { status: 'active', message: '' } },
      'leader-elected': { leaderSet: { primary: '{unit}' } },
      'api-relation-joined': { relationSet: { host: '{unit}' } },
      'cluster-relation-joined': { relationSet: { peer: '{unit}' } }
    }
  },
  web: {
    name: 'web', provides: {}, requires: { kv: 'kv' }, peers: {}, subordinate: false,
    hooks: {
      '*': { durationMs: [1, hookDurationMaxMs] },
      start: { status: { status: 'active', message: '' } },
      'config-changed': { status: { status: 'active', message: '' } },
      'leader-elected': { leaderSet: { primary: '{unit}' } },
      'kv-relation-changed': { relationSet: { client: '{unit}' } }
    }
  }
}

interface Harness {
  sim: Simulation
  group: SimControllerGroup
  agent: SimMachineAgent
  model: () => ModelContext
  submit: (body: DistributiveOmit<ModelCommand, 'requestId' | 'proposer'>) => Promise<CommandResult>
  charmRevision: number
}

export async function runMachineAgentFaults (options: ScenarioOptions): Promise<ScenarioResult> {
  const sim = new Simulation({ seed: options.seed, replay: `CANTRIP_SEED=${options.seed} node --import tsx test/sim-machine-agent.test.ts` })
  const workload = sim.random('workload')
  const faults = sim.random('faults')
  const drift = sim.random('drift')
  const checker = new HookOrderChecker()
  let hooks = 0
  let crashes = 0
  let firstViolation: string | undefined
  let checkedAt = -Infinity
  let h: Harness | undefined
  const book = new RandomHookFaults({ random: sim.random('hook-failures'), failProbability: hookFailureProbability, now: () => sim.clock.now(), wallClockHangs: options.nondeterministic === true })
  // Invariants are checked after every simulated step; the first violation is kept with its time.
  const check = (): void => {
    if (firstViolation !== undefined || h === undefined) return
    let problem = checker.violations.length > 0 ? formatViolations(checker.violations) : undefined
    const now = sim.clock.now()
    if (problem === undefined && now >= checkedAt + agentChecksEveryMs) {
      checkedAt = now
      problem = agentsProblem([h.agent])?.message
    }
    if (problem !== undefined) firstViolation = `at ${now} ms: ${problem}`
  }
  const fail = (kind: 'safety' | 'liveness' | 'crash', what: string): ScenarioResult => ({
    seed: options.seed, hash: sim.traceHash(), failure: sim.failure(kind, what), kind, simulatedMs: sim.clock.now(), hooks, crashes
  })

  try {
    const group = await SimControllerGroup.create(sim, {
      size: 1,
      ...agentRaftTiming,
      hostOptions: () => ({ agents: { modelUuid: 'default', identify: simIdentifyPeer(controllers) } }),
      onStep: check
    })
    const model = (): ModelContext => group.nodes()[0]!.host.state()
    let requests = 0
    const submit = async (body: DistributiveOmit<ModelCommand, 'requestId' | 'proposer'>): Promise<CommandResult> => {
      const command = { ...body, requestId: `admin-${++requests}`, proposer: admin } as ModelCommand
      let outcome: { value: CommandResult } | { error: unknown } | undefined
      group.nodes()[0]!.submit(command).then(value => { outcome = { value } }, (error: unknown) => { outcome = { error } })
      if (!await group.runUntil(() => outcome !== undefined, adminBudgetMs, 5)) throw new Error(`admin ${body.type}: no answer in ${adminBudgetMs} ms`)
      if ('error' in outcome!) throw outcome.error
      sim.trace(`admin ${body.type} ${outcome!.value.ok ? 'ok' : `refused: ${outcome!.value.error}`}`)
      return outcome!.value
    }
    const agent = new SimMachineAgent({
      sim, network: group.network, machineId: machine, model: 'default', controllers, charms, hookFaults: book, leaseDurationMs,
      drift: (drift.next() - 0.5) * 0.002,
      onHook: () => { hooks++ },
      onUnitEvent: (unit, event) => { checker.event(unit, event, readerOf(model()).unit(unit)?.life ?? 'dead') },
      onUnitRestart: (unit, durable) => { checker.crash(unit, durable) }
    })
    h = { sim, group, agent, model, submit, charmRevision: 0 }
    if (!await group.runUntil(() => group.leaderNode() !== undefined, adminBudgetMs)) return fail('liveness', 'the controller did not elect itself')
    await setup(h)
    await agent.start()
    await group.runFor(1_000)
    const steps = options.steps ?? stepsDefault
    for (let step = 0; step < steps; step++) {
      const action = await act(h, workload, faults, drift, step)
      sim.trace(`step ${step}: ${action}`)
      if (action.startsWith('crash') || action.startsWith('stop')) crashes++
      await group.runFor(workload.int(0, stepGapMaxMs))
      if (firstViolation !== undefined) return fail('safety', `step ${step} (${action}): ${firstViolation}`)
    }
    // Heal: no more injected failures, the agent runs true; resolve what is in error until everything converges.
    book.releaseAll()
    agent.resume()
    agent.setDrift(0)
    sim.trace('heal')
    // The admin touches each application's config once: every unit runs config-changed, so
    // a unit whose `start` was skipped (`resolved --no-hooks`) reports its status again.
    for (const application of ['kv', 'web']) await submit({ type: 'set-config', application, config: { setting: 'healed' } })
    const budget = options.livenessBudgetMs ?? 3_600_000
    const deadline = sim.clock.now() + budget
    for (;;) {
      if (agent.state === 'down') await agent.start()
      for (const unit of agent.units()) {
        const local = agent.unitState(unit)?.local
        if (local !== undefined && inHookError(local)) await submit({ type: 'resolved', unit, mode: 'retry-hooks' })
      }
      await group.runFor(healSliceMs)
      if (firstViolation !== undefined) return fail('safety', `after heal: ${firstViolation}`)
      const open = systemConvergenceProblems(model(), [agent], charms, 3)
      if (open.length === 0) break
      if (sim.clock.now() >= deadline) return fail('liveness', `units did not converge in ${budget} ms: ${open.join('; ')}`)
    }
    await agent.stop()
    await group.stop()
  } catch (error) {
    return fail('crash', error instanceof Error ? error.stack ?? error.message : String(error))
  }
  return { seed: options.seed, hash: sim.traceHash(), failure: undefined, kind: undefined, simulatedMs: sim.clock.now(), hooks, crashes }
}

/** The admin's deployment: machine 0, the two charms, kv ×3 and web ×2 on it, related. */
async function setup (h: Harness): Promise<void> {
  const strict = async (body: Parameters<Harness['submit']>[0]): Promise<void> => {
    const result = await h.submit(body)
    if (!result.ok) throw new Error(`setup: ${body.type} refused: ${result.error}`)
  }
  await strict({ type: 'add-machine' })
  for (const name of ['kv', 'web']) await strict(addCharm(name, `local:${name}-0`))
  await strict({ type: 'deploy', application: 'kv', charm: 'local:kv-0', config: {}, constraints: {}, numUnits: 3, placement: [machine, machine, machine] })
  await strict({ type: 'deploy', application: 'web', charm: 'local:web-0', config: {}, constraints: {}, numUnits: 2, placement: [machine, machine] })
  await strict({ type: 'integrate', a: 'web:kv', b: 'kv:api' })
}

function addCharm (name: string, url: string): Parameters<Harness['submit']>[0] {
  const charm = charms[name]!
  return {
    type: 'add-charm',
    url,
    hash: 'ab'.repeat(8),
    metadata: {
      name, subordinate: false, provides: { ...charm.provides }, requires: { ...charm.requires }, peers: { ...charm.peers },
      config: { setting: { type: 'string' } },
      actions: { backup: { description: 'backup' } }
    }
  }
}

/** Draw and apply one workload or fault step; returns its description for the trace. */
async function act (h: Harness, workload: Random, faults: Random, drift: Random, step: number): Promise<string> {
  const { agent, group } = h
  const units = tableValues(h.model().units).filter(unit => unit.life === 'alive').map(unit => unit.name)
  const pick = <T>(list: readonly T[]): T | undefined => list.length === 0 ? undefined : list[workload.int(0, list.length - 1)]
  const roll = faults.next()
  if (roll < 0.12) {
    // kill -9 of the machine agent: every unit actor on it stops where it is; the disk keeps what was synced.
    agent.crash()
    await group.runFor(faults.int(0, 20_000))
    await agent.start()
    return 'crash machine agent'
  }
  if (roll < 0.18) {
    // SIGTERM: running hooks are killed and re-queued, then the process exits and is started again.
    const stopped = agent.terminate()
    let done = false
    void stopped.finally(() => { done = true })
    if (!await group.runUntil(() => done, terminateBudgetMs)) throw new Error(`SIGTERM: the machine agent did not stop in ${terminateBudgetMs} ms`)
    await stopped
    await agent.start()
    return 'stop and restart machine agent'
  }
  if (roll < 0.24) {
    agent.pause()
    await group.runFor(workload.int(1_000, 30_000))
    agent.resume()
    return 'pause and resume machine agent'
  }
  if (roll < 0.28) {
    const rate = (drift.next() - 0.5) * 0.02
    agent.setDrift(rate)
    return `clock drift ${rate.toFixed(4)}`
  }
  if (roll < 0.38) {
    const inError = agent.units().filter(unit => { const local = agent.unitState(unit)?.local; return local !== undefined && inHookError(local) })
    const target = pick(inError)
    if (target !== undefined) {
      const mode = workload.next() < 0.7 ? 'retry-hooks' : 'no-hooks'
      await h.submit({ type: 'resolved', unit: target, mode })
      return `resolved ${target} ${mode}`
    }
  }
  return await workloadStep(h, workload, step, units, pick)
}

async function workloadStep (h: Harness, workload: Random, step: number, units: UnitName[], pick: <T>(list: readonly T[]) => T | undefined): Promise<string> {
  const app = workload.next() < 0.5 ? 'kv' : 'web'
  const ofApp = units.filter(unit => applicationOf(unit) === app)
  switch (workload.int(0, 9)) {
    case 0: case 1: {
      await h.submit({ type: 'set-config', application: app, config: { setting: `config-${step}` } })
      return `config ${app}`
    }
    case 2: {
      // Leadership moves: the leader leaves, another unit claims the lease.
      const leader = readerOf(h.model()).lease(app)?.holder
      if (leader === undefined || ofApp.length < 2 || !ofApp.includes(leader)) return `move leader of ${app}: noop`
      await h.submit({ type: 'remove-unit', unit: leader })
      return `remove leader ${leader}`
    }
    case 3: {
      // Relation settings come and go with the relation: departed/broken, then joined and set again.
      const relation = tableValues(h.model().relations).find(r => r.key === 'kv:api web:kv')
      if (relation !== undefined) {
        await h.submit({ type: 'remove-relation', relationId: relation.id })
        return 'remove relation web:kv kv:api'
      }
      await h.submit({ type: 'integrate', a: 'web:kv', b: 'kv:api' })
      return 'integrate web:kv kv:api'
    }
    case 4: case 5: {
      const unit = pick(units)
      if (unit === undefined) return 'noop'
      await h.submit({ type: 'enqueue-action', unit, name: 'backup', parameters: {} })
      return `action on ${unit}`
    }
    case 6: {
      if (tableValues(h.model().units).filter(unit => unit.application === app).length >= unitsPerApplicationMax) return 'noop'
      const result = await h.submit({ type: 'add-unit', application: app, numUnits: 1, placement: [machine] })
      return `add unit ${result.ok ? result.units?.[0] ?? '?' : `refused: ${result.error}`}`
    }
    case 7: {
      const target = pick(ofApp.length > 1 ? ofApp : [])
      if (target === undefined) return 'noop'
      await h.submit({ type: 'remove-unit', unit: target })
      return `remove unit ${target}`
    }
    case 8: {
      const unit = pick(units)
      if (unit === undefined) return 'noop'
      await h.submit({ type: 'enqueue-command', unit, commands: 'hostname' })
      return `exec on ${unit}`
    }
    default: {
      if (workload.next() >= 0.3) return 'idle'
      const url = `local:kv-${++h.charmRevision}`
      await h.submit(addCharm('kv', url))
      await h.submit({ type: 'refresh', application: 'kv', charm: url })
      return 'refresh kv'
    }
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never
