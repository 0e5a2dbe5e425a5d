import type { Clock } from '../../runtime/clock.ts'

/** Timers fired only by `advance`: a test drives every timer of the code under test. */
export class ManualClock implements Clock {
  #now = 0
  #timers = new Map<number, { at: number, callback: () => void }>()
  #next = 0
  now (): number { return this.#now }
  setTimeout (callback: () => void, delayMs: number): number {
    this.#timers.set(++this.#next, { at: this.#now + delayMs, callback })
    return this.#next
  }

  clearTimeout (handle: unknown): void { this.#timers.delete(handle as number) }
  advance (ms: number): void {
    this.#now += ms
    for (const [id, timer] of [...this.#timers]) {
      if (timer.at <= this.#now) {
        this.#timers.delete(id)
        timer.callback()
      }
    }
  }

  get pending (): number { return this.#timers.size }
}
