import { assert } from './assert.ts'
import { limits } from './limits.ts'

/**
 * The machine-wide hook lock (juju-semantics §1.5): at most one hook, action or command
 * of any unit on a machine runs at a time. Waiters are served in arrival order. Pure:
 * the grant is a callback, and the machine agent owns one lock per machine.
 */
export class HookLock {
  readonly name: string
  #holder: string | undefined
  #waiters: Array<{ owner: string, ticket: number, granted: () => void }> = []
  #nextTicket = 0
  #heldTicket = -1

  constructor (name: string) {
    this.name = name
  }

  get holder (): string | undefined { return this.#holder }
  get waiting (): number { return this.#waiters.length }

  /** Ask for the lock; `granted` is called (possibly at once) when it is ours. Returns the release function. */
  acquire (owner: string, granted: () => void): () => void {
    assert(this.#waiters.length < limits.hookLockWaitersMax, `hook lock "${this.name}": more than ${limits.hookLockWaitersMax} waiters`)
    const ticket = this.#nextTicket++
    this.#waiters.push({ owner, ticket, granted })
    this.#grantNext()
    let released = false
    return () => {
      if (released) return
      released = true
      if (this.#heldTicket === ticket) {
        this.#holder = undefined
        this.#heldTicket = -1
        this.#grantNext()
      } else {
        this.#waiters = this.#waiters.filter(waiter => waiter.ticket !== ticket)
      }
    }
  }

  #grantNext (): void {
    if (this.#holder !== undefined) return
    const next = this.#waiters.shift()
    if (next === undefined) return
    this.#holder = next.owner
    this.#heldTicket = next.ticket
    next.granted()
  }
}
