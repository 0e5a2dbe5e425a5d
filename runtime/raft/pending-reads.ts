import type { Clock, TimerHandle } from '../clock.ts'
import { decode, encode } from '../codec.ts'
import type { ReadState } from './raft-types.ts'

const component = 'raft host'

interface PendingRead<State> {
  /** Known once the leader answered; the read is served when the state machine reaches it. */
  index: number | undefined
  /** The tick at which the read index was last asked for (askAgain). */
  askedAtTick: number
  resolve: (state: State) => void
  reject: (error: Error) => void
  timer: TimerHandle
}

/**
 * RaftHost's linearizable reads waiting for their read point (ReadIndex, Raft
 * dissertation §6.4), by their request context: asked for again when the answer is late,
 * given their index by the Ready's read states, served once the state machine applied
 * that far.
 */
export class PendingReads<State> {
  readonly #reads = new Map<string, PendingRead<State>>()
  readonly #clock: Clock
  readonly #electionTicks: number

  constructor (clock: Clock, electionTicks: number) {
    this.#clock = clock
    this.#electionTicks = electionTicks
  }

  get size (): number {
    return this.#reads.size
  }

  /** Waits for `context`'s read point, rejected with `timedOut()` after `timeoutMs`. */
  async add (context: string, askedAtTick: number, timeoutMs: number, timedOut: () => Error): Promise<State> {
    return await new Promise<State>((resolve, reject) => {
      const timer = this.#clock.setTimeout(() => { this.#settle(context, read => read.reject(timedOut())) }, timeoutMs)
      this.#reads.set(context, { index: undefined, askedAtTick, resolve, reject, timer })
    })
  }

  /** Ticks until a pending read is to be asked for again (askAgain); Infinity when none waits. */
  dueTicks (ticks: number): number {
    let due = Infinity
    for (const read of this.#reads.values()) {
      if (read.index === undefined) due = Math.min(due, Math.max(1, read.askedAtTick + this.#electionTicks - ticks))
    }
    return due
  }

  /**
   * A read whose read index has not come back within an election timeout is asked for
   * again, as etcd's server re-sends its ReadIndex: a forwarded request can be lost (the
   * peer it went to had stopped leading and drops it, or the message was lost), and
   * without this the read waited for its whole timeout. The leader takes the same context
   * again as a duplicate while the first is still pending there.
   */
  askAgain (ticks: number, ask: (context: Uint8Array) => void): void {
    for (const [context, read] of this.#reads) {
      if (read.index !== undefined || ticks - read.askedAtTick < this.#electionTicks) continue
      read.askedAtTick = ticks
      ask(encode(context, component))
    }
  }

  /** Gives each read its index from a Ready's read states, then serves those the state machine has reached. */
  indexAndServe (readStates: readonly ReadState[], applied: number, state: () => State): void {
    for (const readState of readStates) {
      const context = decode(readState.context, component)
      if (typeof context !== 'string') continue
      const read = this.#reads.get(context)
      if (read !== undefined) read.index = readState.index
    }
    for (const [context, read] of this.#reads) {
      if (read.index === undefined || read.index > applied) continue
      const served = state()
      this.#settle(context, pending => pending.resolve(served))
    }
  }

  /** Rejects every pending read (the host stopped). */
  rejectAll (error: Error): void {
    for (const context of [...this.#reads.keys()]) this.#settle(context, read => read.reject(error))
  }

  #settle (context: string, how: (read: PendingRead<State>) => void): void {
    const read = this.#reads.get(context)
    if (read === undefined) return
    this.#reads.delete(context)
    this.#clock.clearTimeout(read.timer)
    how(read)
  }
}
