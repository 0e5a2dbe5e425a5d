/**
 * Simulated time. Nothing happens until the simulator moves time: `advance(ms)` fires
 * every timer that falls due, in order of due time and then of scheduling, including
 * timers that those callbacks schedule inside the window. The same object is XState's
 * clock (`createActor(machine, { clock })`), so delayed transitions fire at exactly
 * their simulated deadline.
 */
import { assert } from '../runtime/assert.ts'
import type { Clock, TimerHandle } from '../runtime/clock.ts'
import { limits } from '../runtime/limits.ts'

interface Timer {
  readonly id: number
  readonly dueAt: number
  readonly callback: () => void
}

export interface SimClockOptions {
  /** Simulated milliseconds at the start. */
  startMs?: number
  /** Timers one `advance` may fire before it asserts a timer loop. */
  timersPerAdvanceMax?: number
}

export class SimClock implements Clock {
  #now: number
  #nextId = 1
  /** Binary min-heap on (dueAt, id); cleared timers stay in it until they surface. */
  #heap: Timer[] = []
  /** Timers scheduled and neither fired nor cleared. */
  readonly #live = new Set<number>()
  readonly #timersPerAdvanceMax: number
  #advancing = false

  constructor (options: SimClockOptions = {}) {
    this.#now = options.startMs ?? 0
    assert(Number.isFinite(this.#now), `sim-clock: start time must be finite, got ${String(this.#now)}`)
    this.#timersPerAdvanceMax = options.timersPerAdvanceMax ?? limits.simClockTimersPerAdvanceMax
  }

  now (): number {
    return this.#now
  }

  setTimeout (callback: () => void, delayMs: number): TimerHandle {
    assert(typeof callback === 'function', 'sim-clock: setTimeout needs a callback')
    assert(delayMs !== Infinity, 'sim-clock: a timer delay must be finite')
    // As with Node: a missing, negative or NaN delay means "as soon as possible".
    const delay = Number.isFinite(delayMs) && delayMs > 0 ? delayMs : 0
    const timer: Timer = { id: this.#nextId++, dueAt: this.#now + delay, callback }
    this.#live.add(timer.id)
    this.#push(timer)
    return timer.id
  }

  clearTimeout (handle: TimerHandle): void {
    // Unknown and already fired handles are ignored, as Node ignores them.
    if (typeof handle === 'number' && this.#live.delete(handle)) this.#compactIfMostlyCleared()
  }

  /** Timers scheduled and neither fired nor cleared. */
  get pendingCount (): number {
    return this.#live.size
  }

  /** When the next timer falls due, or undefined when none is pending. */
  nextDueAt (): number | undefined {
    return this.#peekLive()?.dueAt
  }

  /**
   * Moves time forward by `ms`, firing every timer due up to the new time in order;
   * `now()` inside a callback is that timer's due time. Returns the number fired.
   */
  advance (ms: number): number {
    assert(Number.isFinite(ms) && ms >= 0, `sim-clock: advance needs a finite ms >= 0, got ${String(ms)}`)
    return this.#runUntil(this.#now + ms)
  }

  /** Moves time to `timeMs` (not backwards), firing what falls due on the way. */
  advanceTo (timeMs: number): number {
    assert(Number.isFinite(timeMs) && timeMs >= this.#now, `sim-clock: cannot move from ${this.#now} to ${String(timeMs)}`)
    return this.#runUntil(timeMs)
  }

  /** Jumps to the next timer and fires it; false when no timer is pending. */
  runNext (): boolean {
    assert(!this.#advancing, 'sim-clock: runNext called from inside a timer callback')
    const timer = this.#popLive()
    if (timer === undefined) return false
    this.#fire(timer)
    return true
  }

  #runUntil (target: number): number {
    assert(!this.#advancing, 'sim-clock: advance called from inside a timer callback')
    this.#advancing = true
    let fired = 0
    try {
      for (let next = this.#peekLive(); next !== undefined && next.dueAt <= target; next = this.#peekLive()) {
        assert(fired < this.#timersPerAdvanceMax,
          `sim-clock: more than ${this.#timersPerAdvanceMax} timers fired in one advance at ${this.#now} ms; a timer loop keeps rescheduling itself`)
        this.#popLive()
        this.#fire(next)
        fired++
      }
      this.#now = target
    } finally {
      this.#advancing = false
    }
    return fired
  }

  #fire (timer: Timer): void {
    if (timer.dueAt > this.#now) this.#now = timer.dueAt
    this.#live.delete(timer.id)
    timer.callback()
  }

  #peekLive (): Timer | undefined {
    this.#dropClearedTop()
    return this.#heap[0]
  }

  #popLive (): Timer | undefined {
    this.#dropClearedTop()
    return this.#pop()
  }

  #dropClearedTop (): void {
    while (this.#heap.length > 0 && !this.#live.has(this.#heap[0]!.id)) this.#pop()
  }

  /** XState clears and re-arms timers constantly; keep cleared entries from piling up. */
  #compactIfMostlyCleared (): void {
    if (this.#heap.length < 64 || this.#live.size * 2 > this.#heap.length) return
    const kept = this.#heap.filter(timer => this.#live.has(timer.id))
    this.#heap = []
    for (const timer of kept) this.#push(timer)
  }

  #push (timer: Timer): void {
    const heap = this.#heap
    heap.push(timer)
    let i = heap.length - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!before(heap[i]!, heap[parent]!)) break
      swap(heap, i, parent)
      i = parent
    }
  }

  #pop (): Timer | undefined {
    const heap = this.#heap
    const top = heap[0]
    const last = heap.pop()
    if (top === undefined || last === undefined || heap.length === 0) return top
    heap[0] = last
    let i = 0
    for (;;) {
      const left = 2 * i + 1
      const right = left + 1
      let smallest = i
      if (left < heap.length && before(heap[left]!, heap[smallest]!)) smallest = left
      if (right < heap.length && before(heap[right]!, heap[smallest]!)) smallest = right
      if (smallest === i) break
      swap(heap, i, smallest)
      i = smallest
    }
    return top
  }
}

function before (a: Timer, b: Timer): boolean {
  return a.dueAt < b.dueAt || (a.dueAt === b.dueAt && a.id < b.id)
}

function swap (heap: Timer[], i: number, j: number): void {
  const t = heap[i]!
  heap[i] = heap[j]!
  heap[j] = t
}
