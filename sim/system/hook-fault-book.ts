/**
 * The hook faults a fault schedule injects (`hook-fail`, `hook-hang`), shared by every
 * simulated machine agent of a run: each hook run asks `take` as it starts and gets what
 * the schedule wants of it, consuming one use. A target is a unit (`web/0`) or every
 * unit of an application (`web`); a unit's own entries are served before its
 * application's. The heal phase (`releaseAll`) drops what is left and lets hung hooks
 * finish.
 */
import { assert } from '../../runtime/assert.ts'
import type { HookFaultBook } from './machine-agent-types.ts'

/** Entries the book holds at once: a schedule is short, so more is a runaway caller. */
export const hookFaultEntriesMax = 10_000

type Fault = { kind: 'fail', remaining: number } | { kind: 'hang', untilMs: number | undefined }

export class HookFaultBookImpl implements HookFaultBook {
  /** `<unit or application> <hook>` → faults in the order they were booked. */
  readonly #faults = new Map<string, Fault[]>()
  readonly #finishers = new Set<() => void>()
  #entries = 0

  fail (unit: string, hook: string, times: number): void {
    assert(Number.isSafeInteger(times) && times > 0, `hook fault book: expected a positive whole number of failures, got ${String(times)}`)
    this.#book(unit, hook, { kind: 'fail', remaining: times })
  }

  hang (unit: string, hook: string, untilMs: number | undefined): void {
    this.#book(unit, hook, { kind: 'hang', untilMs })
  }

  releaseAll (): void {
    this.#faults.clear()
    this.#entries = 0
    const finishers = [...this.#finishers]
    this.#finishers.clear()
    for (const finish of finishers) finish()
  }

  take (unit: string, hook: string): { kind: 'fail' } | { kind: 'hang', untilMs: number | undefined } | undefined {
    if (this.#entries === 0) return undefined
    const application = unit.slice(0, unit.lastIndexOf('/'))
    for (const key of [`${unit} ${hook}`, `${application} ${hook}`]) {
      const queue = this.#faults.get(key)
      const fault = queue?.[0]
      if (queue === undefined || fault === undefined) continue
      if (fault.kind === 'hang' || --fault.remaining === 0) {
        queue.shift()
        this.#entries--
        if (queue.length === 0) this.#faults.delete(key)
      }
      return fault.kind === 'fail' ? { kind: 'fail' } : { kind: 'hang', untilMs: fault.untilMs }
    }
    return undefined
  }

  onRelease (finish: () => void): () => void {
    this.#finishers.add(finish)
    return () => { this.#finishers.delete(finish) }
  }

  /** Faults still booked (for tests and the report). */
  get pending (): number {
    return this.#entries
  }

  #book (target: string, hook: string, fault: Fault): void {
    assert(target !== '' && hook !== '', `hook fault book: expected a unit or application and a hook name, got ${JSON.stringify(target)} and ${JSON.stringify(hook)}`)
    assert(this.#entries < hookFaultEntriesMax, `hook fault book: more than ${hookFaultEntriesMax} faults booked`)
    const key = `${target} ${hook}`
    const queue = this.#faults.get(key) ?? []
    queue.push(fault)
    this.#faults.set(key, queue)
    this.#entries++
  }
}
