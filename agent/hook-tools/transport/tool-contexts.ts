/**
 * The hook contexts a `ToolServer` accepts calls for, and the per-context lock that runs
 * one tool call at a time (juju-semantics §5.1): the agent opens a context when a hook,
 * action or `juju exec` command starts and closes it when it ends, so a call carrying a
 * stale or forged JUJU_CONTEXT_ID is refused. Calls of one context queue in arrival
 * order, bounded by hookToolCallsQueuedPerContextMax; different contexts run in parallel.
 */
import { assert } from '../../../runtime/assert.ts'
import { limits } from '../../../runtime/limits.ts'

/** How a call submitted with `run` ended up. */
export type ContextRun<T> =
  | { kind: 'ran', value: T }
  /** The context was never opened, or was closed before the call started. */
  | { kind: 'unknown' }
  /** hookToolCallsQueuedPerContextMax calls were already waiting. */
  | { kind: 'queueFull' }

interface Waiter {
  start: () => void
  refuse: () => void
}

interface ContextState {
  running: boolean
  queue: Waiter[]
  /** Resolvers of `close` calls waiting for the running call to end. */
  drained: Array<() => void>
}

export class ToolContexts {
  readonly #open = new Map<string, ContextState>()
  /** Closed contexts whose running call has not finished yet. */
  readonly #closing = new Map<string, ContextState>()

  /** Accepts calls for `contextId` from now on. */
  open (contextId: string): void {
    assert(contextId.length > 0 && !contextId.includes('\0'), `hook tool context id ${JSON.stringify(contextId)} must be non-empty without NUL bytes`)
    assert(!this.#open.has(contextId), `hook tool context "${contextId}" is already open`)
    assert(this.#open.size < limits.hookToolContextsOpenMax, `hook tool contexts: ${this.#open.size} open, at hookToolContextsOpenMax; a context is not being closed`)
    this.#open.set(contextId, { running: false, queue: [], drained: [] })
  }

  /**
   * Refuses calls for `contextId` from now on, including those queued and not started.
   * Resolves once a call that is running has finished, so the caller can flush the
   * context knowing no tool is still writing to it. Closing an unknown id is a no-op.
   */
  close (contextId: string): Promise<void> {
    const state = this.#open.get(contextId)
    if (state === undefined) {
      const closing = this.#closing.get(contextId)
      return closing === undefined ? Promise.resolve() : new Promise(resolve => { closing.drained.push(resolve) })
    }
    this.#open.delete(contextId)
    for (const waiter of state.queue.splice(0)) waiter.refuse()
    if (!state.running) return Promise.resolve()
    this.#closing.set(contextId, state)
    return new Promise(resolve => { state.drained.push(resolve) })
  }

  has (contextId: string): boolean {
    return this.#open.has(contextId)
  }

  get size (): number {
    return this.#open.size
  }

  /** Calls of an open context queued behind the running one (for diagnostics and tests). */
  waiting (contextId: string): number {
    return this.#open.get(contextId)?.queue.length ?? 0
  }

  /** Runs `job` under the context's lock: after every call of the context queued before it. */
  async run<T> (contextId: string, job: () => Promise<T>): Promise<ContextRun<T>> {
    const state = this.#open.get(contextId)
    if (state === undefined) return { kind: 'unknown' }
    if (state.running) {
      if (state.queue.length >= limits.hookToolCallsQueuedPerContextMax) return { kind: 'queueFull' }
      const started = await new Promise<boolean>(resolve => {
        state.queue.push({ start: () => { resolve(true) }, refuse: () => { resolve(false) } })
      })
      if (!started) return { kind: 'unknown' }
    }
    state.running = true
    try {
      return { kind: 'ran', value: await job() }
    } finally {
      this.#release(contextId, state)
    }
  }

  #release (contextId: string, state: ContextState): void {
    const next = state.queue.shift()
    if (next !== undefined) {
      // The lock passes straight to the next call: `running` stays true.
      next.start()
      return
    }
    state.running = false
    if (this.#closing.get(contextId) === state) {
      this.#closing.delete(contextId)
      for (const resolve of state.drained.splice(0)) resolve()
    }
  }
}
