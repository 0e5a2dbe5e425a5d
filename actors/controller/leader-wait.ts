import type { Clock, TimerHandle } from '../../runtime/clock.ts'
import type { NodeId } from '../../runtime/raft/raft-types.ts'

/**
 * Client writes that reach a controller while no leader is known (an election under way)
 * wait here for one, as etcd holds a proposal until its member knows a leader, instead of
 * being refused at once: a refused client can only guess when to ask again (the CLI waits
 * submitRetryPauseMs, 200 ms), and a failover then costs the election plus that guess.
 * Each wait is bounded by the caller's maximum, and at most `waitersMax` wait at once
 * (further ones are answered at once, as before), so a group that cannot elect never
 * piles up requests.
 */
export class LeaderWait {
  readonly #clock: Clock
  readonly #waitersMax: number
  readonly #waiters = new Set<{ resolve: (leader: NodeId | '') => void, timer: TimerHandle }>()
  /** Forwards in flight to a leader, each waiting to hear that another one took over. */
  readonly #forwards = new Set<{ from: NodeId, resolve: (leader: NodeId | '') => void }>()

  constructor (clock: Clock, waitersMax: number) {
    this.#clock = clock
    this.#waitersMax = waitersMax
  }

  get waiting (): number {
    return this.#waiters.size
  }

  /** The leader once one is known, or '' after `maxMs` (or at once when too many wait). */
  async wait (maxMs: number): Promise<NodeId | ''> {
    if (this.#waiters.size >= this.#waitersMax || maxMs <= 0) return ''
    return await new Promise(resolve => {
      const waiter = {
        resolve,
        timer: this.#clock.setTimeout(() => {
          this.#waiters.delete(waiter)
          resolve('')
        }, maxMs)
      }
      this.#waiters.add(waiter)
    })
  }

  /**
   * Settles with the next leader other than `from` ('' when this controller stops): a
   * write forwarded to `from` is then moot, since `from` either is cut off (partitioned, so
   * its transport answers only at the forward's timeout of some twenty election timeouts)
   * or has stepped down. `cancel` once the forward is answered. Past `waitersMax` forwards
   * nothing is watched and the forward's own timeout bounds it, as before.
   */
  movedFrom (from: NodeId): { moved: Promise<NodeId | ''>, cancel: () => void } {
    if (this.#forwards.size >= this.#waitersMax) return { moved: new Promise(() => {}), cancel: () => {} }
    let forward: { from: NodeId, resolve: (leader: NodeId | '') => void } | undefined
    const moved = new Promise<NodeId | ''>(resolve => {
      forward = { from, resolve }
      this.#forwards.add(forward)
    })
    return { moved, cancel: () => { this.#forwards.delete(forward!) } }
  }

  /** The Raft host's view changed: every waiter learns a leader as soon as there is one. */
  known (leader: NodeId | ''): void {
    if (leader === '') return
    this.#release(leader)
    for (const forward of this.#forwards) {
      if (forward.from === leader) continue
      this.#forwards.delete(forward)
      forward.resolve(leader)
    }
  }

  /** The controller stops: nobody waits any more (each then sees no leader). */
  stop (): void {
    this.#release('')
    for (const forward of this.#forwards) forward.resolve('')
    this.#forwards.clear()
  }

  #release (leader: NodeId | ''): void {
    for (const waiter of this.#waiters) {
      this.#clock.clearTimeout(waiter.timer)
      waiter.resolve(leader)
    }
    this.#waiters.clear()
  }
}
