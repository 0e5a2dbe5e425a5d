/**
 * The real `Clock`: monotonic wall-ish time and Node timers. Also usable as XState's
 * clock (`createActor(machine, { clock: new SystemClock() })`).
 */
import type { Clock, TimerHandle } from '../runtime/clock.ts'

/** Node fires a timer after 1 ms when asked for more than this (2^31 - 1 ms, ~24.8 days). */
const nodeTimerDelayMsMax = 2_147_483_647

/** A long delay is a chain of maximal Node timers; the handle tracks the current link. */
class LongTimer {
  timer: NodeJS.Timeout | undefined
}

export interface SystemClockOptions {
  /** Let pending timers not keep the process alive (tests, background housekeeping). */
  unrefTimers?: boolean
}

export class SystemClock implements Clock {
  readonly #unref: boolean

  constructor (options: SystemClockOptions = {}) {
    this.#unref = options.unrefTimers ?? false
  }

  /**
   * performance.now() is monotonic; adding timeOrigin keeps it near Unix epoch
   * milliseconds for logs, without ever stepping back when the wall clock is adjusted.
   */
  now (): number {
    return performance.timeOrigin + performance.now()
  }

  setTimeout (callback: () => void, delayMs: number): TimerHandle {
    const delay = Number.isFinite(delayMs) && delayMs > 0 ? delayMs : 0
    if (delay <= nodeTimerDelayMsMax) return this.#arm(callback, delay)
    const long = new LongTimer()
    const deadline = this.now() + delay
    const step = (): void => {
      const remaining = deadline - this.now()
      if (remaining <= 0) {
        callback()
        return
      }
      long.timer = this.#arm(step, Math.min(remaining, nodeTimerDelayMsMax))
    }
    long.timer = this.#arm(step, nodeTimerDelayMsMax)
    return long
  }

  clearTimeout (handle: TimerHandle): void {
    if (handle === undefined || handle === null) return
    if (handle instanceof LongTimer) {
      clearTimeout(handle.timer)
      return
    }
    clearTimeout(handle as NodeJS.Timeout)
  }

  #arm (callback: () => void, delayMs: number): NodeJS.Timeout {
    const timer = setTimeout(callback, delayMs)
    if (this.#unref) timer.unref()
    return timer
  }
}
