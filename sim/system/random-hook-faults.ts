/**
 * Hook faults drawn as hooks start, for swarms that want "any hook may fail" rather than
 * a schedule (the machine-agent swarm): while on, each hook run fails with a fixed
 * probability drawn from the run's own stream. `releaseAll` (the heal phase) turns the
 * failures off and finishes hung hooks. A test hook, `wallClockHangs`, makes every hook
 * hang for a few milliseconds of the REAL clock, so the determinism check has something
 * to catch.
 */
import type { Random } from '../../runtime/random.ts'
import type { HookFaultBook } from './machine-agent-types.ts'

export interface RandomHookFaultsOptions {
  random: Random
  /** Chance that a hook run fails (exit 1) while failures are on. */
  failProbability: number
  /** Simulated time now, for `wallClockHangs`. */
  now: () => number
  /** Test hook: every hook hangs 1..7 ms taken from Date.now() — time leaking into the run. */
  wallClockHangs?: boolean
}

export class RandomHookFaults implements HookFaultBook {
  readonly #o: RandomHookFaultsOptions
  readonly #finishers = new Set<() => void>()
  #on = true

  constructor (options: RandomHookFaultsOptions) {
    this.#o = options
  }

  /** Scheduled faults are not this book's business: a swarm that wants them uses HookFaultBookImpl. */
  fail (): void {}
  hang (): void {}

  releaseAll (): void {
    this.#on = false
    const finishers = [...this.#finishers]
    this.#finishers.clear()
    for (const finish of finishers) finish()
  }

  take (): { kind: 'fail' } | { kind: 'hang', untilMs: number | undefined } | undefined {
    if (this.#o.wallClockHangs === true) return { kind: 'hang', untilMs: this.#o.now() + 1 + (Date.now() % 7) }
    if (!this.#on) return undefined
    return this.#o.random.next() < this.#o.failProbability ? { kind: 'fail' } : undefined
  }

  onRelease (finish: () => void): () => void {
    this.#finishers.add(finish)
    return () => { this.#finishers.delete(finish) }
  }
}
