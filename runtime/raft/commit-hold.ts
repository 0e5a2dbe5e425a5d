import type { Clock, TimerHandle } from '../clock.ts'
import { limits } from '../limits.ts'
import type { Message, NodeId } from './raft-types.ts'

interface Held { messages: Message[], timer: TimerHandle }

/**
 * Holds a leader's commit-only appends (an append with no entries: what the core
 * broadcasts when the commit index moves) for a few milliseconds while writes stream in,
 * so that the next message to the same peer (the next write's append, a heartbeat)
 * carries them in its own frame. One sequential write was two round trips to each
 * follower, the entry's append and then the commit's; the second is a request, an
 * answer, a wake-up and a Ready at each follower and is written to the socket ahead of
 * the client's answer (bench/write-stages.ts: two leader socket writes between `applied`
 * and the answer). Held, the commit usually rides on the next append.
 *
 * Only a delay: every message still goes, in order, by a deadline on the injected clock,
 * as a slower network would deliver it; Raft's safety does not depend on when a follower
 * learns the commit index. The deadline is the time the last two groups of proposals
 * came apart (when the next one is due, if writes keep coming as they did), at most
 * `holdMs`. Writes far apart (a lone change, whose notice a follower's watchers wait for)
 * are never held: only when those two groups came within `streamGapMs` of each other and
 * the last within `streamGapMs` of now. Reads are not held up: a ReadIndex round's
 * heartbeat takes whatever waits for its peer along.
 */
export class CommitHold {
  readonly #clock: Clock
  readonly #holdMs: number
  readonly #streamGapMs: number
  readonly #held = new Map<NodeId, Held>()
  #lastAppendAt = -Infinity
  #previousAppendAt = -Infinity

  constructor (clock: Clock, holdMs: number, streamGapMs: number) {
    this.#clock = clock
    this.#holdMs = holdMs
    this.#streamGapMs = streamGapMs
  }

  /** Messages held now, all peers together (for tests and status). */
  get size (): number {
    let n = 0
    for (const held of this.#held.values()) n += held.messages.length
    return n
  }

  /** A group of proposals was appended to the leader's log. */
  appended (): void {
    this.#previousAppendAt = this.#lastAppendAt
    this.#lastAppendAt = this.#clock.now()
  }

  /**
   * What to send `peer` now: what was held for it first, then `messages`; or nothing, when
   * `messages` are commit-only appends to hold (then `due` gets them all by the deadline
   * unless a later call takes them first).
   */
  take (peer: NodeId, messages: Message[], leading: boolean, due: (peer: NodeId, messages: Message[]) => void): Message[] {
    const held = this.#held.get(peer)
    const hold = leading && messages.every(commitOnly) &&
      (held === undefined ? this.#streaming() : held.messages.length + messages.length <= limits.raftCommitHoldMessagesPerPeerMax)
    if (hold && held !== undefined) {
      // Joins what waits, on its deadline: nothing waits longer than the first one.
      held.messages.push(...messages)
      return []
    }
    if (hold) {
      const entry: Held = { messages: [...messages], timer: undefined }
      entry.timer = this.#clock.setTimeout(() => {
        if (this.#held.get(peer) !== entry) return
        this.#held.delete(peer)
        due(peer, entry.messages)
      }, Math.min(this.#holdMs, this.#lastAppendAt - this.#previousAppendAt))
      this.#held.set(peer, entry)
      return []
    }
    if (held === undefined) return messages
    this.#clock.clearTimeout(held.timer)
    this.#held.delete(peer)
    return [...held.messages, ...messages]
  }

  /** Drops everything held (the host stopped: nothing more is sent). */
  clear (): void {
    for (const held of this.#held.values()) this.#clock.clearTimeout(held.timer)
    this.#held.clear()
  }

  #streaming (): boolean {
    if (this.#holdMs <= 0) return false
    const now = this.#clock.now()
    return now - this.#lastAppendAt <= this.#streamGapMs && this.#lastAppendAt - this.#previousAppendAt <= this.#streamGapMs
  }
}

function commitOnly (message: Message): boolean {
  return message.type === 'append' && (message.entries === undefined || message.entries.length === 0)
}
