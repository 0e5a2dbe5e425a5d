/**
 * Status tells the truth about agent liveness: what `cantrip status` would show now,
 * asked of the controller leader, against what the simulator knows of every booted machine
 * agent. Shown is read through the code the CLI's answer goes through: the `model` op's
 * view (actors/controller/full-model-view.ts) with the leader's presence, the display
 * rules (runtime/model/status-display.ts) and the machine-status message the
 * provisioner's machine actor wrote (actors/machine/machine-status.ts).
 *
 * Truth, relative to the observer (the leader, running and not paused):
 * - healthy: the agent's process is up and not paused, and it and the observer reach each
 *   other (presence needs both ways: heartbeats one way, a refuted suspicion the other);
 * - cut off: the agent is down or paused, or its messages cannot reach the observer;
 * - anything else (a one-way cut from the observer to the agent) is left unjudged.
 *
 * A healthy agent must never be shown lost, down or "not heard from" once it has been
 * healthy, and the observer stable, for `recoveryGraceMs`; a cut-off one must be shown
 * lost (the machine `down`; each unit past install `lost`, its workload `unknown` "agent
 * lost, see 'cantrip show-status-log <unit>'" or its error kept, as Juju shows them)
 * within `lostWithinMs` and its machine "not heard from", with the down period begun in its
 * status history, within `downWithinMs` (the history's period ends within `recoveryGraceMs`
 * of its return). The bounds come from the presence and machine-actor
 * timeouts plus slack (statusTruthBounds). Truth is sampled every `statusTruthEveryMs`.
 */
import { fullModelView, type FullModelView } from '../../actors/controller/full-model-view.ts'
import type { MachinePresence } from '../../actors/controller/controller-api.ts'
import { limits } from '../../runtime/limits.ts'
import type { ModelContext } from '../../runtime/model/model-types.ts'
import { readerOf } from '../../runtime/model/model-draft.ts'
import { displayedMachineAgent, displayedUnit, lostAgentMessage, unitCanBeLost } from '../../runtime/model/status-display.ts'

/** Simulated time between two status-truth checks: far below every bound, cheap at 50 machines. */
export const statusTruthEveryMs = 500

/** The machine-status message of a machine whose agent the machine actor calls down (machine-status.ts). */
const notHeardFrom = 'not heard from'

export interface StatusTruthTimings {
  heartbeatIntervalMs: number
  suspectAfterMs: number
  failedAfterMs: number
  agentDownAfterMs: number
  livenessFeedIntervalMs: number
}

export interface StatusTruthBounds {
  /** Healthy (and the observer stable) this long: nothing may show it lost, down or not heard from. */
  recoveryGraceMs: number
  /** Cut off this long: its units show lost, and its started machine down. */
  lostWithinMs: number
  /** Cut off this long: its started machine's status says its agent was not heard from. */
  downWithinMs: number
}

/** Time for a status change to commit through a stable leader, and for the check's sampling. */
export const statusCommitSlackMs = 3_000

export const defaultStatusTruthTimings: StatusTruthTimings = {
  heartbeatIntervalMs: limits.presenceHeartbeatIntervalMsDefault,
  suspectAfterMs: limits.presenceSuspectAfterMsDefault,
  failedAfterMs: limits.presenceFailedAfterMsDefault,
  agentDownAfterMs: limits.machineAgentDownAfterMs,
  livenessFeedIntervalMs: limits.provisionerLivenessFeedIntervalMs
}

/**
 * Recovery: a failed member refutes on the observer's next heartbeat and is heard on its
 * own next one (two intervals), then the feed tells the machine actor (one feed interval)
 * and the status commits. Loss: silence is suspect after suspectAfterMs and failed
 * failedAfterMs later, noticed at the observer's next beat. Down: the machine actor's
 * timeout from the last time heard, armed up to one feed interval late.
 */
export function statusTruthBounds (t: StatusTruthTimings = defaultStatusTruthTimings): StatusTruthBounds {
  return {
    recoveryGraceMs: 2 * t.heartbeatIntervalMs + t.livenessFeedIntervalMs + statusCommitSlackMs + statusTruthEveryMs,
    lostWithinMs: t.suspectAfterMs + t.failedAfterMs + 2 * t.heartbeatIntervalMs + statusTruthEveryMs + 1_000,
    downWithinMs: t.agentDownAfterMs + t.livenessFeedIntervalMs + t.heartbeatIntervalMs + statusCommitSlackMs + statusTruthEveryMs
  }
}

export type AgentTruth = 'healthy' | 'cut-off' | 'unjudged'

/** One machine agent as the simulator knows it, relative to the observer. */
export interface AgentFact {
  machine: string
  truth: AgentTruth
  /** Why, for the failure message: `up`, `crashed`, `paused`, `partitioned from c0`, … */
  why: string
}

/** What the world tells the checker at one check. */
export interface StatusTruthInput {
  now: number
  /** The controller a status would be asked of; undefined when none could answer. */
  observer: { id: string, term: number, startedAt: number } | undefined
  /** The observer's applied model and presence. */
  model: ModelContext | undefined
  presenceOf: MachinePresence | undefined
  agents: readonly AgentFact[]
}

/** What status shows of one unit whose liveness is judged (Juju's canBeLost: past install). */
export interface ShownUnit {
  unit: string
  agent: string
  workload: string
  message: string
  /** The unit's recorded workload is an error, which a lost agent keeps showing. */
  error: boolean
}

/** What status shows of one machine's agent and its units. */
export interface ShownLiveness {
  machineAgent: string
  machineMessage: string
  /** The last machine-agent status in the status history (`show-status-log --type juju-machine`). */
  machineHistory: string | undefined
  units: ShownUnit[]
}

/** The liveness `cantrip status` shows for `machine` in the `model` op's answer, through the CLI's own rules. */
export function shownLiveness (view: FullModelView, machine: string): ShownLiveness | undefined {
  const reader = readerOf(view.model)
  const record = reader.machine(machine)
  if (record === undefined) return undefined
  const lost = view.presence[machine]?.status === 'lost'
  // A unit still allocating or installing is not judged by presence (Juju's canBeLost): nor here.
  const units = record.units.flatMap(name => {
    const unit = reader.unit(name)
    if (unit === undefined || !unitCanBeLost(unit)) return []
    const shown = displayedUnit(unit, lost)
    return [{ unit: name, agent: shown.agent.status, workload: shown.workload.status, message: shown.workload.message, error: unit.agent.status === 'error' }]
  })
  const machineHistory = record.statusHistory.findLast(e => e.type === 'juju-machine')?.status
  return { machineAgent: displayedMachineAgent(record, lost).status, machineMessage: record.instance.message, machineHistory, units }
}

/** How a unit shown for a lost agent differs from Juju's (`unknown` / `lost` / "agent lost, see …", an error kept); undefined when it does not. */
export function lostUnitLie (u: ShownUnit): string | undefined {
  if (u.agent !== 'lost') return `unit ${u.unit} agent "${u.agent}"`
  if (u.error) return u.workload === 'error' ? undefined : `unit ${u.unit} in error shows workload "${u.workload}"`
  if (u.workload !== 'unknown' || u.message !== lostAgentMessage(u.unit)) return `unit ${u.unit} workload "${u.workload}" "${u.message}"`
  return undefined
}

interface Since { truth: AgentTruth, since: number }

export class StatusTruthChecker {
  readonly bounds: StatusTruthBounds
  readonly #truth = new Map<string, Since>()
  #observer: { key: string, since: number } | undefined
  /** Checks made, and machines judged healthy or cut off (coverage for tests). */
  readonly counts = { checks: 0, healthyJudged: 0, cutOffJudged: 0, lostShown: 0, downShown: 0 }

  constructor (bounds: StatusTruthBounds = statusTruthBounds()) {
    this.bounds = bounds
  }

  /** The first lie status tells at this check, as a failure message; undefined when it tells the truth. */
  check (input: StatusTruthInput): string | undefined {
    this.counts.checks++
    const { now } = input
    for (const fact of input.agents) {
      const previous = this.#truth.get(fact.machine)
      if (previous?.truth !== fact.truth) this.#truth.set(fact.machine, { truth: fact.truth, since: now })
    }
    if (input.observer === undefined || input.model === undefined) {
      this.#observer = undefined
      return undefined
    }
    const key = `${input.observer.id}@${input.observer.term}`
    if (this.#observer?.key !== key) this.#observer = { key, since: Math.max(now, input.observer.startedAt) }
    const observedFor = now - this.#observer.since
    const view = fullModelView(input.model, input.presenceOf)
    const reader = readerOf(view.model)
    for (const fact of input.agents) {
      const record = reader.machine(fact.machine)
      if (record === undefined || record.life !== 'alive') continue
      const truthFor = now - this.#truth.get(fact.machine)!.since
      const shown = shownLiveness(view, fact.machine)
      if (shown === undefined) continue
      const lie = fact.truth === 'healthy'
        ? this.#healthyLie(shown, Math.min(truthFor, observedFor))
        : fact.truth === 'cut-off' ? this.#cutOffLie(shown, record.agent.status === 'started', Math.min(truthFor, observedFor)) : undefined
      if (lie !== undefined) {
        return `machine ${fact.machine} at ${Math.round(now)} ms: status shows ${lie}, but the truth is ${fact.why} ` +
          `(${fact.truth} for ${Math.round(truthFor)} ms, observer ${input.observer.id} stable for ${Math.round(observedFor)} ms)`
      }
    }
    return undefined
  }

  #healthyLie (shown: ShownLiveness, forMs: number): string | undefined {
    if (forMs < this.bounds.recoveryGraceMs) return undefined
    this.counts.healthyJudged++
    if (shown.machineAgent === 'down') return `machine agent "down"`
    if (shown.machineMessage.includes(notHeardFrom)) return `machine status "${shown.machineMessage}"`
    if (shown.machineHistory === 'down') return 'a status history whose down period never ended'
    const lost = shown.units.find(u => u.agent === 'lost' || u.message.startsWith('agent lost'))
    if (lost !== undefined) return `unit ${lost.unit} agent "${lost.agent}" workload "${lost.workload}" "${lost.message}"`
    return undefined
  }

  #cutOffLie (shown: ShownLiveness, started: boolean, forMs: number): string | undefined {
    if (forMs >= this.bounds.lostWithinMs) {
      this.counts.cutOffJudged++
      for (const u of shown.units) {
        const lie = lostUnitLie(u)
        if (lie !== undefined) return `${lie} after ${this.bounds.lostWithinMs} ms (lostWithinMs)`
      }
      if (started && shown.machineAgent !== 'down') return `machine agent "${shown.machineAgent}" after ${this.bounds.lostWithinMs} ms (lostWithinMs)`
      this.counts.lostShown++
    }
    if (started && forMs >= this.bounds.downWithinMs) {
      if (!shown.machineMessage.includes(notHeardFrom)) return `machine status "${shown.machineMessage}" after ${this.bounds.downWithinMs} ms (downWithinMs)`
      if (shown.machineHistory !== 'down') return `status history "${shown.machineHistory ?? ''}", not the down period, after ${this.bounds.downWithinMs} ms (downWithinMs)`
      this.counts.downShown++
    }
    return undefined
  }
}
