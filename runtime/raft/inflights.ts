import { assert } from '../assert.ts'

/**
 * The append messages a leader has sent to one follower and not yet heard back about,
 * by the last index each carried. Bounding them is the pipelining window: a leader in
 * replicate state keeps sending without waiting until the window is full.
 */
export class Inflights {
  readonly max: number
  #lastIndexes: number[] = []

  constructor (max: number) {
    assert(Number.isSafeInteger(max) && max > 0, `raft inflights: window must be a positive integer, got ${max}`)
    this.max = max
  }

  get count (): number {
    return this.#lastIndexes.length
  }

  full (): boolean {
    return this.#lastIndexes.length >= this.max
  }

  add (lastIndex: number): void {
    assert(!this.full(), `raft inflights: window of ${this.max} messages is full`)
    const previous = this.#lastIndexes[this.#lastIndexes.length - 1]
    assert(previous === undefined || lastIndex > previous, `raft inflights: ${lastIndex} sent after ${String(previous)}`)
    this.#lastIndexes.push(lastIndex)
  }

  /** The follower acknowledged everything up to `index`. */
  freeTo (index: number): void {
    let n = 0
    while (n < this.#lastIndexes.length && this.#lastIndexes[n]! <= index) n++
    if (n > 0) this.#lastIndexes = this.#lastIndexes.slice(n)
  }

  /** Make room for one message, when a heartbeat response shows the follower is alive but acks were lost. */
  freeFirst (): void {
    this.#lastIndexes = this.#lastIndexes.slice(1)
  }

  reset (): void {
    this.#lastIndexes = []
  }
}
