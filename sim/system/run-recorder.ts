/**
 * What one `cantrip sim` run records: every RunEvent for the report (only when asked:
 * swarms keep results only), and every one of them also traced, so the trace hash covers
 * commands, faults, phases, agents, terms and hooks whether or not events are kept.
 */
import type { RunEvent } from '../scenario/scenario-types.ts'
import type { Simulation } from '../simulation.ts'

/** Events kept for one report at most; past it the run goes on and only the trace grows. */
export const runEventsMax = 500_000

export class RunRecorder {
  readonly events: RunEvent[] = []
  readonly #sim: Simulation
  readonly #keep: boolean
  dropped = 0

  constructor (sim: Simulation, keep: boolean) {
    this.#sim = sim
    this.#keep = keep
  }

  /** Records `event` at the current simulated time; `trace` is its line in the trace. */
  record (event: DistributiveOmit<RunEvent, 't'>, trace: string): void {
    this.#sim.trace(trace)
    if (!this.#keep) return
    if (this.events.length >= runEventsMax) { this.dropped++; return }
    this.events.push({ t: this.#sim.clock.now(), ...event } as RunEvent)
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never
