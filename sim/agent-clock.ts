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
  /** While paused (SIGSTOP), timers that come due wait here and fire on resume. */
  #deferred: Array<() => void> | undefined

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
    return this.#base.setTimeout(() => {
      if (this.#deferred !== undefined) this.#deferred.push(callback)
      else callback()
    }, Math.max(0, delayMs / this.#rate))
  }

  /** The agent process is stopped: its timers do not fire until it resumes. */
  pause (): void {
    this.#deferred ??= []
  }

  /** Fire, in order, every timer that came due while paused. */
  resume (): void {
    const due = this.#deferred ?? []
    this.#deferred = undefined
    for (const callback of due) callback()
  }

  get paused (): boolean { return this.#deferred !== undefined }

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
