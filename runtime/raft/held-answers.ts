import type { Clock } from '../clock.ts'
import type { NodeId } from './raft-types.ts'

/** An answer with no Raft messages in it. */
export const noMessages = new Uint8Array(0)

interface Held {
  /** Readies taken when the request's messages were stepped: a later Ready holds every answer to them. */
  readonly takenAtStep: number
  /** When the request arrived (Clock.now), to know whether its sender still waits for the answer. */
  readonly since: number
  readonly resolve: (body: Uint8Array) => void
}

/**
 * The answers RaftHost owes its peers' requests, oldest first, a few per peer: the Raft
 * messages this host has for a peer ride on the answer to one of that peer's waiting
 * requests instead of travelling as a request of their own (see RaftHost's `#receive`).
 *
 * Several are held, not one, because a leader's next request often arrives while the
 * answer to its previous one still waits for this host's disk: a follower syncing an
 * append is sent the commit index. With one held answer the first was answered empty,
 * the acknowledgement rode on the second and the acknowledgement of the commit index
 * went as a request of its own that the leader then answered empty: three socket writes
 * and a wake-up on each side more per write than Raft needs (issue 28). Held in order,
 * each Ready's messages fill the oldest answer and every request is answered once, with
 * something in it whenever this host had something to say. At most `maxPerPeer` wait;
 * an older one past that is answered empty.
 *
 * An answer is only worth filling while its sender still waits for it. A request times
 * out at its sender after the send timeout; a follower whose disk is slower than that
 * (its acknowledgement waits for its synced write) would put its acknowledgement on an
 * answer nobody reads, and the leader would learn of it only after probing the follower
 * again. So an answer held longer than `maxHoldMs` is given up (answered empty) and the
 * messages go on a younger one, or as a request of their own. No timer is needed: the
 * age is looked at when there is something to send, on the injected clock, so the
 * simulator sees the same.
 */
export class HeldAnswers {
  readonly #byPeer = new Map<NodeId, Held[]>()
  readonly #clock: Clock
  readonly #maxHoldMs: number
  readonly #maxPerPeer: number

  constructor (clock: Clock, maxHoldMs: number, maxPerPeer: number) {
    this.#clock = clock
    this.#maxHoldMs = maxHoldMs
    this.#maxPerPeer = maxPerPeer
  }

  /** The answer to `peer`'s request just stepped; the oldest held is answered empty when `maxPerPeer` already wait. */
  hold (peer: NodeId, takenAtStep: number): Promise<Uint8Array> {
    // One promise per held answer, not an async wrapper's second one: every follower makes one per heartbeat.
    return new Promise<Uint8Array>(resolve => {
      const queue = this.#byPeer.get(peer) ?? []
      while (queue.length >= this.#maxPerPeer) queue.shift()!.resolve(noMessages)
      queue.push({ takenAtStep, since: this.#clock.now(), resolve })
      this.#byPeer.set(peer, queue)
    })
  }

  /**
   * Answers `peer`'s oldest held request its sender still waits for with `body`; false
   * when there is none and the caller must send `body` as a request of its own.
   */
  answer (peer: NodeId, body: () => Uint8Array): boolean {
    const queue = this.#byPeer.get(peer)
    if (queue === undefined) return false
    const now = this.#clock.now()
    let held = queue.shift()
    while (held !== undefined && now - held.since >= this.#maxHoldMs) {
      held.resolve(noMessages)
      held = queue.shift()
    }
    if (queue.length === 0) this.#byPeer.delete(peer)
    if (held === undefined) return false
    held.resolve(body())
    return true
  }

  /** Answers, empty, every held request stepped before the Ready numbered `takenBefore` (all of them with Infinity). */
  release (takenBefore: number): void {
    // Called twice per Ready, nearly always with nothing held (answers were filled): no copies then.
    if (this.#byPeer.size === 0) return
    for (const [peer, queue] of [...this.#byPeer]) {
      const keep = queue.filter(held => held.takenAtStep >= takenBefore)
      for (const held of queue) if (held.takenAtStep < takenBefore) held.resolve(noMessages)
      if (keep.length === 0) this.#byPeer.delete(peer)
      else this.#byPeer.set(peer, keep)
    }
  }
}
