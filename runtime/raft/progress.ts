import { Inflights } from './inflights.ts'

/**
 * How a leader is replicating to one follower (etcd's tracker states):
 * - `probe`: we do not know where the follower's log matches ours; send one append at
 *   a time and wait for the answer (or the next heartbeat) before sending another.
 * - `replicate`: the follower is caught up to `match`; stream appends optimistically,
 *   up to the inflight window.
 * - `snapshot`: the entries it needs were compacted; a RaftSnapshot is on its way, send
 *   nothing else until it is acknowledged, reported or timed out.
 */
export type ProgressState = 'probe' | 'replicate' | 'snapshot'

export class Progress {
  /** Highest index known to match the leader's log. */
  match = 0
  /** Next index to send. */
  next: number
  state: ProgressState = 'probe'
  /** In `snapshot` state: the index of the RaftSnapshot sent. */
  pendingSnapshot = 0
  /** Heard from since the last CheckQuorum round. */
  recentActive: boolean
  /** In `probe` state: a probe is out, wait for its answer or a heartbeat response. */
  probeSent = false
  /** Leader ticks spent in `snapshot` state, to give up on a RaftSnapshot that was lost. */
  snapshotElapsedTicks = 0
  readonly inflights: Inflights

  constructor (next: number, maxInflight: number, recentActive: boolean) {
    this.next = next
    this.recentActive = recentActive
    this.inflights = new Inflights(maxInflight)
  }

  becomeProbe (): void {
    // After a RaftSnapshot, assume it was installed: probing from there costs one
    // rejection if it was not, and saves re-sending everything it covered if it was.
    const after = this.state === 'snapshot' ? Math.max(this.match + 1, this.pendingSnapshot + 1) : this.match + 1
    this.#reset('probe')
    this.next = after
  }

  becomeReplicate (): void {
    this.#reset('replicate')
    this.next = this.match + 1
  }

  becomeSnapshot (index: number): void {
    this.#reset('snapshot')
    this.pendingSnapshot = index
    this.next = index + 1
  }

  /** An acknowledgement up to `index`; false if it told us nothing new. */
  maybeUpdate (index: number): boolean {
    let updated = false
    if (this.match < index) {
      this.match = index
      this.probeSent = false
      updated = true
    }
    this.next = Math.max(this.next, index + 1)
    return updated
  }

  /**
   * A rejection of the append whose previous index was `rejected`; `matchHint` is the
   * largest index that may still match. False when the rejection is stale.
   */
  maybeDecreaseTo (rejected: number, matchHint: number): boolean {
    if (this.state === 'replicate') {
      if (rejected <= this.match) return false
      this.next = this.match + 1
      return true
    }
    if (this.next - 1 !== rejected) return false
    this.next = Math.max(Math.min(rejected, matchHint + 1), this.match + 1)
    this.probeSent = false
    return true
  }

  /** Whether the leader must hold back appends to this follower for now. */
  isPaused (): boolean {
    switch (this.state) {
      case 'probe': return this.probeSent
      case 'replicate': return this.inflights.full()
      case 'snapshot': return true
    }
  }

  /** An append went out carrying entries up to `lastIndex` (undefined when it carried none). */
  sentAppend (lastIndex: number | undefined): void {
    if (this.state === 'replicate') {
      if (lastIndex !== undefined) {
        this.next = lastIndex + 1
        this.inflights.add(lastIndex)
      }
    } else if (this.state === 'probe') {
      this.probeSent = true
    }
  }

  #reset (state: ProgressState): void {
    this.state = state
    this.probeSent = false
    this.pendingSnapshot = 0
    this.snapshotElapsedTicks = 0
    this.inflights.reset()
  }
}
