import { assert } from '../../runtime/assert.ts'

/**
 * A client history: what each client asked for, what it was told, and when, in sim time.
 *
 * Real-time order is the only order the checker trusts: operation A precedes B when A
 * returned strictly before B was called (`A.return < B.call`). Equal times count as
 * concurrent, because the simulator runs many events within one millisecond and the
 * times alone cannot say which came first; this can only make the checker more lenient,
 * never make it reject a history that is linearizable.
 *
 * An operation with `return === undefined` never returned: the client timed out, crashed
 * or gave up. It may have taken effect at any moment after its call (even long after
 * its client moved on), or never; its output is unknown and ignored.
 */
export interface Operation<I, O> {
  /** Unique within the history; explanations name operations as `#id`. */
  readonly id: number
  readonly client: string
  readonly input: I
  /** The reply, or undefined for an operation that never returned. */
  readonly output: O | undefined
  /** Sim time at which the client sent the request. */
  readonly call: number
  /** Sim time at which the client received the reply; undefined if it never did. */
  readonly return: number | undefined
}

export type History<I, O> = ReadonlyArray<Operation<I, O>>

/**
 * Operations one recorder may hold. Named here rather than in `runtime/limits.ts` because
 * only the simulator records histories and this folder is the checker's own; the recorder
 * asserts it so a runaway workload fails loudly instead of exhausting memory.
 */
export const historyOperationsMax = 1_000_000

interface OpenOperation<I, O> {
  id: number
  client: string
  input: I
  output: O | undefined
  call: number
  return: number | undefined
  /** Open: awaiting a reply. Abandoned: will never get one. */
  status: 'open' | 'completed' | 'abandoned'
}

/**
 * Records a history as the simulator runs: `invoke` when a client sends a request,
 * `complete` when it gets the reply, `abandon` when it stops waiting (timeout, crash)
 * without knowing whether the request took effect, and `discard` when it knows for sure
 * the request did not (the server refused it before doing anything).
 *
 * Sim time must never go backwards across calls: that is what makes the recorded
 * call/return times a faithful real-time order.
 */
export class HistoryRecorder<I, O> {
  readonly operationsMax: number
  readonly #operations = new Map<number, OpenOperation<I, O>>()
  #nextId = 1
  #lastNow = Number.NEGATIVE_INFINITY

  constructor (options: { operationsMax?: number } = {}) {
    this.operationsMax = options.operationsMax ?? historyOperationsMax
    assert(Number.isSafeInteger(this.operationsMax) && this.operationsMax > 0, `history recorder: operationsMax must be a positive integer, got ${String(this.operationsMax)}`)
  }

  /** Records a request; returns the id to complete, abandon or discard it with. */
  invoke (client: string, input: I, now: number): number {
    this.#advance(now, `client "${client}" invoked an operation`)
    assert(this.#operations.size < this.operationsMax, `history recorder: more than ${this.operationsMax} operations (operationsMax)`)
    const id = this.#nextId++
    this.#operations.set(id, { id, client, input, output: undefined, call: now, return: undefined, status: 'open' })
    return id
  }

  /** Records the reply to an open operation. */
  complete (id: number, output: O, now: number): void {
    const op = this.#open(id, 'complete')
    this.#advance(now, `operation #${id} completed`)
    op.output = output
    op.return = now
    op.status = 'completed'
  }

  /** The client will never learn the outcome: the operation stays pending for good. */
  abandon (id: number): void {
    const op = this.#open(id, 'abandon')
    op.status = 'abandoned'
  }

  /**
   * The operation certainly had no effect, so it is dropped from the history. Use it only
   * for a definite refusal; a timeout or a lost reply is `abandon`.
   */
  discard (id: number): void {
    this.#open(id, 'discard')
    this.#operations.delete(id)
  }

  /** Operations still awaiting a reply. */
  get openCount (): number {
    let count = 0
    for (const op of this.#operations.values()) if (op.status === 'open') count++
    return count
  }

  get size (): number {
    return this.#operations.size
  }

  /** The history so far, in invocation order; operations still open count as pending. */
  history (): Array<Operation<I, O>> {
    const out: Array<Operation<I, O>> = []
    for (const op of this.#operations.values()) {
      out.push({ id: op.id, client: op.client, input: op.input, output: op.status === 'completed' ? op.output : undefined, call: op.call, return: op.status === 'completed' ? op.return : undefined })
    }
    return out
  }

  #open (id: number, verb: string): OpenOperation<I, O> {
    const op = this.#operations.get(id)
    assert(op !== undefined, `history recorder: cannot ${verb} operation #${id}: no such operation`)
    assert(op.status === 'open', `history recorder: cannot ${verb} operation #${id}: already ${op.status}`)
    return op
  }

  #advance (now: number, what: string): void {
    assert(Number.isFinite(now), `history recorder: ${what} at non-finite time ${String(now)}`)
    assert(now >= this.#lastNow, `history recorder: ${what} at ${now}, before the last recorded time ${this.#lastNow}`)
    this.#lastNow = now
  }
}

/** Checks the shape the checker relies on; returns one line per problem, empty when sound. */
export function historyProblems<I, O> (history: History<I, O>): string[] {
  const problems: string[] = []
  const ids = new Set<number>()
  for (const op of history) {
    if (ids.has(op.id)) problems.push(`operation #${op.id}: duplicate id`)
    ids.add(op.id)
    if (!Number.isFinite(op.call)) problems.push(`operation #${op.id}: call time ${String(op.call)} is not finite`)
    if (op.return !== undefined && !(op.return >= op.call)) problems.push(`operation #${op.id}: returned at ${String(op.return)}, before its call at ${op.call}`)
  }
  return problems
}
