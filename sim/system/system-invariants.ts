/**
 * The safety invariants of a whole-system run, checked after every simulated step (the
 * SimControllerGroup's onStep) and on every Raft message sent:
 *
 * - Raft safety (sim/invariants/raft-safety.ts): election safety, append-only leaders,
 *   log matching, leader completeness, state-machine safety, durable votes and terms,
 *   commits only in the leader's term, one controller holding the singular lease;
 * - leadership: at most one unit of an application believes it leads at any moment
 *   (agents that are down or SIGSTOPped believe nothing anyone can observe);
 * - the uniter: hooks run one at a time per machine, and in the order Juju guarantees
 *   per unit (sim/invariants/hook-order-checker.ts, fed with every unit event);
 * - actors: no machine agent reports an actor error;
 * - acknowledged writes are kept (checked at the end against the applied log).
 *
 * Raft safety and hook order are checked at every step, the agents' checks every
 * `agentChecksEveryMs` of simulated time. The first violation is kept with its simulated
 * time; the run stops on it.
 */
import type { UnitEmitted } from '../../actors/unit/unit-effects.ts'
import { applicationOf } from '../../runtime/ids.ts'
import { tableGet } from '../../runtime/model/table.ts'
import { HookOrderChecker } from '../invariants/hook-order-checker.ts'
import { RaftSafetyChecker } from '../invariants/raft-safety.ts'
import type { SimMachineAgentApi } from './machine-agent-types.ts'
import type { SystemWorld } from './system-world.ts'
import { StatusTruthChecker, statusTruthEveryMs } from '../invariants/status-truth.ts'
import { statusTruthInput } from './status-truth-input.ts'

/**
 * Simulated time between two checks of the agents' invariants. Hook concurrency and actor
 * errors are kept by the agents as high-water marks and lists, so nothing is lost between
 * checks; two units believing they lead is caught if it lasts this long (leases last
 * seconds). Checking every agent at every step cost 40 % of a 50-machine run.
 */
export const agentChecksEveryMs = 10

export interface Violation {
  t: number
  check: 'raft' | 'leadership' | 'serial-hooks' | 'hook-order' | 'actor-error' | 'acknowledged-writes' | 'linearizability' | 'status-truth'
  message: string
}

export class SystemInvariants {
  readonly raft: RaftSafetyChecker
  readonly hookOrder = new HookOrderChecker()
  readonly statusTruth = new StatusTruthChecker()
  readonly #world: SystemWorld
  first: Violation | undefined
  /** Steps checked (Raft safety and hook order at each). */
  checks = 0
  /** Times the agents' invariants (leadership, serial hooks, actor errors) were checked. */
  agentChecks = 0
  #agentsCheckedAt = -Infinity
  #statusCheckedAt = -Infinity

  constructor (world: SystemWorld) {
    this.#world = world
    this.raft = new RaftSafetyChecker(world.group)
    world.observers.onApplied = (id, entry) => { this.raft.onApplied(id, entry) }
    world.observers.onRaftSend = (from, messages) => { this.raft.onRaftSend(from, messages) }
    world.observers.onUnitEvent = (unit, event) => { this.onUnitEvent(unit, event) }
    world.observers.onUnitRestart = (unit, durable) => { this.hookOrder.crash(unit, durable) }
  }

  /** After every step: every invariant, stopping at the first violation. */
  step (): void {
    if (this.first !== undefined) return
    this.checks++
    this.raft.step()
    if (this.raft.violations.length > 0) { this.#violate('raft', this.raft.violations[0]!); return }
    if (this.hookOrder.violations.length > 0) {
      const v = this.hookOrder.violations[0]!
      this.#violate('hook-order', `${v.unit}: ${v.property}: ${v.message}`)
      return
    }
    // The agents' checks look at every agent: at most once per agentChecksEveryMs of simulated time.
    const now = this.#world.sim.clock.now()
    if (now < this.#agentsCheckedAt + agentChecksEveryMs) return
    this.#agentsCheckedAt = now
    this.agentChecks++
    const problem = agentsProblem(this.#world.agentList())
    if (problem !== undefined) { this.#violate(problem.check, problem.message); return }
    // What status shows against the truth: at most once per statusTruthEveryMs (it reads every machine).
    if (now < this.#statusCheckedAt + statusTruthEveryMs) return
    this.#statusCheckedAt = now
    const lie = this.statusTruth.check(statusTruthInput(this.#world))
    if (lie !== undefined) this.#violate('status-truth', lie)
  }

  onUnitEvent (unit: string, event: UnitEmitted): void {
    const model = this.#world.model()
    const life = model === undefined ? 'alive' : tableGet(model.units, unit)?.life ?? 'dead'
    this.hookOrder.event(unit, event, life)
  }

  /** Records a violation found outside a step (acknowledged writes, linearizability). */
  violate (check: Violation['check'], message: string): void {
    if (this.first === undefined) this.#violate(check, message)
  }

  #violate (check: Violation['check'], message: string): void {
    const t = this.#world.sim.clock.now()
    this.first = { t, check, message }
    this.#world.recorder.record({ kind: 'violation', check, message }, `violation ${check}: ${message}`)
  }
}

/** The agents' invariants: one believed leader per application, serial hooks per machine, no actor errors. */
export function agentsProblem (agents: readonly SimMachineAgentApi[]): { check: 'leadership' | 'serial-hooks' | 'actor-error', message: string } | undefined {
  return leadershipProblem(agents) ?? serialHooksProblem(agents) ?? actorErrorProblem(agents)
}

function leadershipProblem (agents: readonly SimMachineAgentApi[]): { check: 'leadership', message: string } | undefined {
  // Asked every agentChecksEveryMs of a run, and most agents believe nothing: the map is
  // made only once some unit believes it leads.
  let leaders: Map<string, string[]> | undefined
  for (const agent of agents) {
    if (agent.state !== 'up') continue
    for (const unit of agent.believedLeaders()) {
      leaders ??= new Map()
      const application = applicationOf(unit)
      const list = leaders.get(application)
      if (list === undefined) leaders.set(application, [unit])
      else list.push(unit)
    }
  }
  if (leaders === undefined) return undefined
  for (const [application, units] of leaders) {
    if (units.length > 1) return { check: 'leadership', message: `${units.length} units of ${application} believe they lead: ${units.join(', ')}` }
  }
  return undefined
}

function serialHooksProblem (agents: readonly SimMachineAgentApi[]): { check: 'serial-hooks', message: string } | undefined {
  const agent = agents.find(a => a.maxConcurrentHooks > 1)
  return agent === undefined ? undefined : { check: 'serial-hooks', message: `${agent.maxConcurrentHooks} hooks ran at once on machine ${agent.machineId}` }
}

function actorErrorProblem (agents: readonly SimMachineAgentApi[]): { check: 'actor-error', message: string } | undefined {
  for (const agent of agents) {
    const errors = agent.errors()
    if (errors.length > 0) return { check: 'actor-error', message: `machine ${agent.machineId}: ${errors[0]!}` }
  }
  return undefined
}
