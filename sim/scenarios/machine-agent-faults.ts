import { describeHook } from '../../actors/unit/hook-info.ts'
import { inHookError } from '../../actors/unit/local-state.ts'
import type { Random } from '../../runtime/random.ts'
import { applicationOf } from '../../runtime/ids.ts'
import { HookOrderChecker, formatViolations } from '../invariants/hook-order-checker.ts'
import { convergenceProblems } from '../invariants/convergence.ts'
import { Simulation } from '../simulation.ts'
import { UnitWorld } from '../unit-world.ts'

/**
 * One machine agent hosting five units of two related applications (a peer-replicated
 * `kv` with three units and a `web` front end with two), under a workload of config
 * changes, relation settings, leadership moves, actions and scaling, with random hook
 * failures that are `resolved`, and kill -9 or SIGTERM of the agent at random points.
 * The hook-order invariants are checked after every simulated step; after the faults
 * heal, every unit must converge within a budget of simulated time.
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
const hookFailureProbability = 0.08
const stepsDefault = 40

export async function runMachineAgentFaults (options: ScenarioOptions): Promise<ScenarioResult> {
  const sim = new Simulation({ seed: options.seed, replay: `CANTRIP_SEED=${options.seed} node --import tsx test/sim-machine-agent.test.ts` })
  const workload = sim.random('workload')
  const faults = sim.random('faults')
  const durations = sim.random('clock')
  let failuresOn = true
  const world = new UnitWorld({
    simulation: sim,
    automaticallyRetryHooks: faults.next() < 0.5,
    updateStatusIntervalMs: 300_000,
    hookDurationMs: options.nondeterministic === true
      ? () => 1 + (Date.now() % 7)
      : () => durations.int(1, 4_000),
    clockDrift: () => (durations.next() - 0.5) * 0.002
  })
  world.rule((_unit, hook) => {
    if (!failuresOn || faults.next() >= hookFailureProbability) return undefined
    return { kind: 'failed', exitCode: 1, reason: `injected failure of ${describeHook(hook)}` }
  })
  const checker = new HookOrderChecker()
  let checked = 0
  let crashes = 0
  const check = (): string | undefined => {
    for (; checked < world.emitted.length; checked++) {
      const { unit, event } = world.emitted[checked]!
      checker.event(unit, event, world.model.unitLife(unit) ?? 'dead')
    }
    if (checker.violations.length > 0) return formatViolations(checker.violations)
    if (world.maxConcurrentHooksPerMachine > 1) return `${world.maxConcurrentHooksPerMachine} hooks ran at once on machine ${machine}`
    const errors = world.errors()
    if (errors.length > 0) return `actor error: ${errors[0] instanceof Error ? errors[0].message : String(errors[0])}`
    return undefined
  }
  // Invariants are checked after every simulated step; the first violation is kept with its time.
  let firstViolation: string | undefined
  world.onStep = () => {
    if (firstViolation !== undefined) return
    const problem = check()
    if (problem !== undefined) firstViolation = `at ${sim.clock.now()} ms: ${problem}`
  }
  const fail = (kind: 'safety' | 'liveness' | 'crash', what: string): ScenarioResult => ({
    seed: options.seed, hash: sim.traceHash(), failure: sim.failure(kind, what), kind,
    simulatedMs: sim.clock.now(), hooks: world.runs.length, crashes
  })

  try {
    world.model.deploy({ name: 'kv', peers: ['cluster'], provides: { api: 'kv' } }, 3, [machine, machine, machine])
    world.model.deploy({ name: 'web', requires: { kv: 'kv' } }, 2, [machine, machine])
    world.model.relate('web:kv', 'kv:api')
    await world.advance(1_000)
    const steps = options.steps ?? stepsDefault
    for (let step = 0; step < steps; step++) {
      const action = await act(world, workload, faults, step, checker, check)
      sim.trace(`step ${step}: ${action}`)
      if (action.startsWith('crash') || action.startsWith('stop')) crashes++
      await world.advance(workload.int(0, 20_000))
      const problem = firstViolation ?? check()
      if (problem !== undefined) return fail('safety', `step ${step} (${action}): ${problem}`)
    }
    // Heal: no more injected failures; resolve what is in error until everything converges.
    failuresOn = false
    world.resume(machine)
    sim.trace('heal')
    const budget = options.livenessBudgetMs ?? 3_600_000
    const deadline = sim.clock.now() + budget
    for (;;) {
      restartStopped(world)
      for (const unit of world.model.units()) {
        const local = world.durable.get(unit)
        if (world.running(unit) && local !== undefined && inHookError(local)) world.model.resolved(unit, 'retry-hooks')
      }
      await world.advance(10_000)
      const problem = firstViolation ?? check()
      if (problem !== undefined) return fail('safety', `after heal: ${problem}`)
      const open = convergenceProblems(world)
      if (open.length === 0) break
      if (sim.clock.now() >= deadline) return fail('liveness', `units did not converge in ${budget} ms: ${open.slice(0, 3).join('; ')}`)
    }
  } catch (error) {
    return fail('crash', error instanceof Error ? error.stack ?? error.message : String(error))
  }
  return { seed: options.seed, hash: sim.traceHash(), failure: undefined, kind: undefined, simulatedMs: sim.clock.now(), hooks: world.runs.length, crashes }
}

/** Restart every unit whose agent is down (crashed or stopped), telling the checker what the disk says. */
function restartStopped (world: UnitWorld): void {
  for (const unit of world.model.units()) {
    if (!world.running(unit)) world.start(unit)
  }
}

/** Draw and apply one workload or fault step; returns its description for the trace. */
async function act (world: UnitWorld, workload: Random, faults: Random, step: number, checker: HookOrderChecker, check: () => unknown): Promise<string> {
  const units = world.model.units().filter(unit => world.model.unitLife(unit) === 'alive')
  const pick = <T>(list: readonly T[]): T | undefined => list.length === 0 ? undefined : list[workload.int(0, list.length - 1)]
  const unit = pick(units)
  const roll = faults.next()
  if (roll < 0.12) {
    // kill -9 of the whole machine agent: every unit actor on it stops where it is.
    const running = world.model.units().filter(u => world.running(u))
    for (const u of running) {
      // Stopping one unit releases the machine hook lock to the next: drain its events first.
      check()
      world.crash(u)
      checker.crash(u, world.durable.get(u))
    }
    await world.settle()
    for (const u of running) world.start(u)
    return `crash machine agent (${running.length} units)`
  }
  if (roll < 0.18) {
    const running = world.model.units().filter(u => world.running(u))
    for (const u of running) await world.stop(u)
    for (const u of running) world.start(u)
    return `stop and restart machine agent (${running.length} units)`
  }
  if (roll < 0.24) {
    world.pause(machine)
    await world.advance(workload.int(1_000, 60_000))
    world.resume(machine)
    return 'pause and resume machine agent'
  }
  if (roll < 0.34) {
    const inError = world.model.units().filter(u => world.running(u) && inHookError(world.durable.get(u) ?? { operation: { kind: 'continue', step: 'pending' } } as never))
    const target = pick(inError)
    if (target !== undefined) {
      const mode = workload.next() < 0.7 ? 'retry-hooks' : 'no-hooks'
      world.model.resolved(target, mode)
      return `resolved ${target} ${mode}`
    }
  }
  const choice = workload.int(0, 9)
  switch (choice) {
    case 0: world.model.setConfig('kv', { setting: `config-${step}` }); return 'config kv'
    case 1: world.model.setConfig('web', { setting: `config-${step}` }); return 'config web'
    case 2: return world.model.leaderSet('kv') ? 'leader-set kv' : 'leader-set kv (no leader)'
    case 3: {
      if (unit === undefined) return 'noop'
      const ids = world.model.relationIds()
      const id = pick(ids)
      if (id === undefined) return 'noop'
      try { world.model.relationSet(unit, id) } catch { return `relation-set ${unit} not in scope of ${id}` }
      return `relation-set ${unit} on ${id}`
    }
    case 4: {
      const app = workload.next() < 0.5 ? 'kv' : 'web'
      const candidates = units.filter(u => applicationOf(u) === app)
      const leader = pick(candidates)
      world.model.setLeader(app, leader)
      return `leader of ${app} → ${leader ?? 'none'}`
    }
    case 5: {
      if (unit === undefined) return 'noop'
      world.model.enqueueAction(unit, 'backup')
      return `action on ${unit}`
    }
    case 6: {
      const app = workload.next() < 0.5 ? 'kv' : 'web'
      if (world.model.units().filter(u => applicationOf(u) === app).length >= 4) return 'noop'
      const added = world.model.addUnit(app, machine)
      return `add unit ${added}`
    }
    case 7: {
      const removable = units.filter(u => units.filter(x => applicationOf(x) === applicationOf(u)).length > 1)
      const target = pick(removable)
      if (target === undefined) return 'noop'
      world.model.removeUnit(target)
      return `remove unit ${target}`
    }
    case 8: {
      // Addresses belong to the machine: every unit on it sees them change.
      world.model.setMachineAddresses(machine, [`10.0.0.${step + 1}`])
      return `addresses of machine ${machine}`
    }
    default: {
      if (workload.next() < 0.3) {
        world.model.refresh('kv', `local:kv-${step + 1}`)
        return 'refresh kv'
      }
      return 'idle'
    }
  }
}
