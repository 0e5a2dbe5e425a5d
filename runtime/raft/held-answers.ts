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
 * The answers RaftHost owes its peers' requests, at most one per peer: the Raft messages
 * this host has for a peer ride on the answer to that peer's latest request instead of
 * travelling as a request of their own (see RaftHost's `#receive`).
 *
 * An answer is only worth filling while its sender still waits for it. A request times
 * out at its sender after the send timeout; a follower whose disk is slower than that
 * (its acknowledgement waits for its synced write) would put its acknowledgement on an
 * answer nobody reads, and the leader would learn of it only after probing the follower
 * again. So an answer held longer than `maxHoldMs` is given up (answered empty) and the
 * messages go as a request of their own. No timer is needed: the age is looked at when
 * there is something to send, on the injected clock, so the simulator sees the same.
 */
export class HeldAnswers {
  readonly #byPeer = new Map<NodeId, Held>()
  readonly #clock: Clock
  readonly #maxHoldMs: number

  constructor (clock: Clock, maxHoldMs: number) {
    this.#clock = clock
    this.#maxHoldMs = maxHoldMs
  }

  /** The answer to `peer`'s request just stepped; an older one still held is answered empty. */
  async hold (peer: NodeId, takenAtStep: number): Promise<Uint8Array> {
    return await new Promise<Uint8Array>(resolve => {
      this.#byPeer.get(peer)?.resolve(noMessages)
      this.#byPeer.set(peer, { takenAtStep, since: this.#clock.now(), resolve })
    })
  }

  /**
   * Answers `peer`'s held request with `body` if there is one its sender still waits
   * for; false when the caller must send `body` as a request of its own.
   */
  answer (peer: NodeId, body: () => Uint8Array): boolean {
    const held = this.#byPeer.get(peer)
    if (held === undefined) return false
    this.#byPeer.delete(peer)
    if (this.#clock.now() - held.since >= this.#maxHoldMs) {
      held.resolve(noMessages)
      return false
    }
    held.resolve(body())
    return true
  }

  /** Answers, empty, every held request stepped before the Ready numbered `takenBefore` (all of them with Infinity). */
  release (takenBefore: number): void {
    for (const [peer, held] of [...this.#byPeer]) {
      if (held.takenAtStep >= takenBefore) continue
      this.#byPeer.delete(peer)
      held.resolve(noMessages)
    }
  }
}
