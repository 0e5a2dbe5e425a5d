/**
 * Ends the machine watches (and the CLI's model watches) of a controller that has lost
 * its leader. A watch is served
 * from the state this controller applied (machine-watches.ts), so a controller cut off
 * from its leader would hold its agents' watches with nothing to tell them, and they
 * would not know: machine agents do not listen to the change notices while their watch
 * is healthy (actors/machine/controller-client.ts), so no notice tells them either.
 *
 * This is etcd's answer for its watches opened `WithRequireLeader` (etcd commit 9c103dd,
 * v3rpc's monitorLeader): a member that has had no leader for a few election timeouts
 * cancels them with "no leader", and its clients watch through another member. Here:
 * once this controller has had no leader for limits.machineWatchLeaderlessElectionTimeouts
 * election timeouts, every held watch is answered with a refusal and new ones are
 * refused, until it hears a leader again. A follower partitioned from the group, and a
 * leader cut off from its quorum (CheckQuorum makes it step down), both lose their
 * leader within an election timeout or two; an ordinary election ends before the grace.
 */
import type { Clock, TimerHandle } from '../../runtime/clock.ts'
import type { NodeId } from '../../runtime/raft/raft-types.ts'

export interface WatchLeaderGuardOptions {
  clock: Clock
  /** How long without a leader before the watches end (ms). */
  graceMs: number
  /** Called with the reason when the watches must end, and with undefined when a leader is back. */
  refuse: (reason: string | undefined) => void
}

export class WatchLeaderGuard {
  readonly #o: WatchLeaderGuardOptions
  #timer: TimerHandle | undefined
  #refusing = false
  #stopped = false

  constructor (options: WatchLeaderGuardOptions) {
    this.#o = options
  }

  /** Whether watches are refused now (no leader for the grace). */
  get refusing (): boolean {
    return this.#refusing
  }

  /** The leader this controller now knows of ('' none, itself when it leads). */
  known (leader: NodeId | ''): void {
    if (this.#stopped) return
    if (leader !== '') {
      if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer)
      this.#timer = undefined
      if (this.#refusing) {
        this.#refusing = false
        this.#o.refuse(undefined)
      }
      return
    }
    if (this.#timer !== undefined || this.#refusing) return
    this.#timer = this.#o.clock.setTimeout(() => {
      this.#timer = undefined
      this.#refusing = true
      this.#o.refuse(`this controller has had no leader for ${this.#o.graceMs} ms`)
    }, this.#o.graceMs)
  }

  stop (): void {
    this.#stopped = true
    if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer)
    this.#timer = undefined
  }
}
