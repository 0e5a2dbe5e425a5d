import type { Clock, TimerHandle } from '../clock.ts'

/**
 * A clock read on a drifting simulated clock lands a hair before the tick it was armed
 * for; whole ticks are counted with this much of a tick to spare.
 */
const tickSlack = 1e-6

/**
 * Raft's ticks as deadlines. A RaftHost does not wake every tick: most ticks only count
 * (a follower's election timer, a leader's heartbeat interval), so the host sleeps until
 * the next tick that acts (RawNode.ticksUntilDue) and takes the ticks that came due on
 * the clock just before each input, in one step. The core sees the same ticks in the same
 * order relative to its inputs as a host ticking on a timer would; an idle follower wakes
 * for its leader's heartbeats only, and the simulator skips the empty ticks.
 */
export class TickSchedule {
  readonly #clock: Clock
  readonly #tickMs: number
  readonly #onWake: () => void
  /** The clock time of the last tick taken. */
  #tickedAtMs: number
  #timer: TimerHandle | undefined
  /** When the armed timer fires (Infinity when none is armed). */
  #timerAtMs = Infinity
  #stopped = false

  constructor (clock: Clock, tickMs: number, onWake: () => void) {
    this.#clock = clock
    this.#tickMs = tickMs
    this.#onWake = onWake
    this.#tickedAtMs = clock.now()
  }

  /** Whole ticks on the clock since the last one taken. */
  pending (): number {
    return Math.max(0, Math.floor((this.#clock.now() - this.#tickedAtMs) / this.#tickMs + tickSlack))
  }

  /**
   * Takes the ticks that have come due, given that the `due`-th from the last one taken
   * acts: all of them, up to that one. If the clock has run past it (the process was
   * stopped, or its timer fired late) the ticks after it are dropped, as a Go ticker drops
   * them, so a resumed node acts once instead of replaying every missed tick.
   */
  take (due: number): number {
    const count = this.pending()
    if (count <= due) {
      this.#tickedAtMs += count * this.#tickMs
      return count
    }
    this.#tickedAtMs = this.#clock.now()
    return due
  }

  /**
   * Wakes the host by the `due`-th tick from the last one taken. A wake already armed for
   * earlier stays: it fires, the host finds nothing due yet and arms again, which costs
   * less than moving the timer on every heartbeat a follower receives.
   */
  arm (due: number): void {
    const atMs = this.#tickedAtMs + due * this.#tickMs
    if (this.#stopped || atMs >= this.#timerAtMs) return
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer)
    this.#timerAtMs = atMs
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = undefined
      this.#timerAtMs = Infinity
      if (!this.#stopped) this.#onWake()
    }, atMs - this.#clock.now())
  }

  stop (): void {
    this.#stopped = true
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer)
    this.#timer = undefined
    this.#timerAtMs = Infinity
  }
}
