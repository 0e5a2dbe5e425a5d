import { assert } from '../runtime/assert.ts'
import type { Clock, TimerHandle } from '../runtime/clock.ts'
import type { SimClock } from './sim-clock.ts'

/**
 * One agent's view of simulated time: the true simulated clock with an offset and a rate
 * error (drift). Timers are scheduled on the true clock, so an agent whose clock runs
 * fast fires its timers early in true time, as a real drifting clock would.
 */
export class AgentClock implements Clock {
  readonly #base: SimClock
  #offsetMs: number
  #rate: number
  #anchorTrueMs: number
  #anchorAgentMs: number

  constructor (base: SimClock, options: { offsetMs?: number, drift?: number } = {}) {
    this.#base = base
    this.#offsetMs = options.offsetMs ?? 0
    this.#rate = 1 + (options.drift ?? 0)
    assert(this.#rate > 0.5 && this.#rate < 1.5, `agent clock: drift must be within ±0.5, got ${options.drift}`)
    this.#anchorTrueMs = base.now()
    this.#anchorAgentMs = base.now() + this.#offsetMs
  }

  now (): number {
    return this.#anchorAgentMs + (this.#base.now() - this.#anchorTrueMs) * this.#rate
  }

  setTimeout (callback: () => void, delayMs: number): TimerHandle {
    return this.#base.setTimeout(callback, Math.max(0, delayMs / this.#rate))
  }

  clearTimeout (handle: TimerHandle): void {
    this.#base.clearTimeout(handle)
  }

  /** Change the drift from now on (time already shown stays continuous). */
  setDrift (drift: number): void {
    const rate = 1 + drift
    assert(rate > 0.5 && rate < 1.5, `agent clock: drift must be within ±0.5, got ${drift}`)
    this.#anchorAgentMs = this.now()
    this.#anchorTrueMs = this.#base.now()
    this.#rate = rate
  }

  get drift (): number { return this.#rate - 1 }
}
