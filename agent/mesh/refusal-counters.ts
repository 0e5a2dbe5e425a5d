/**
 * What a libp2p node refused from its peers, by kind (issue 12's hostile peers): the
 * transport's `counters().rejected` counts only its own validator's verdicts; these say
 * why everything else hostile went nowhere. Some refusals happen inside libp2p or
 * gossipsub, before our code sees the input, so they are observed at the hooks those
 * libraries offer: the connection gater (a connection that never finished its
 * encryption handshake: no or a wrong network key, a Noise identity that is not the one
 * dialled) and gossipsub's peer score (badly signed, duplicate and graylisted input).
 */
import type { ConnectionGater, MultiaddrConnection } from '@libp2p/interface'

export interface RefusalCounters {
  /** Connections closed before their encryption handshake finished or refused after it: no or wrong network key, a Noise identity that is not the one dialled. */
  handshake: number
  /** Gossip without a valid signature (gossipsub drops it before validation). */
  signature: number
  /** Gossip envelopes that did not decode. */
  malformed: number
  /** Gossip envelopes above the maximum size. */
  oversized: number
  /** Gossip the application's validator rejected (a sender it does not accept, bad content). */
  validator: number
  /** Gossip on a topic this peer neither subscribes to nor validates. */
  wrongTopic: number
  /** Gossip seen before: replays within gossipsub's seen-cache window, and honest mesh redundancy. */
  duplicate: number
  /** RPCs ignored because their sender's score is under the graylist threshold. */
  graylisted: number
  /** Request streams cut off for a bad frame (too large, cut short, trailing bytes). */
  requestFrame: number
  /** Request frames whose envelope did not decode, answered with an error. */
  requestEnvelope: number
}

export type RefusalKind = keyof RefusalCounters

export function emptyRefusals (): RefusalCounters {
  return { handshake: 0, signature: 0, malformed: 0, oversized: 0, validator: 0, wrongTopic: 0, duplicate: 0, graylisted: 0, requestFrame: 0, requestEnvelope: 0 }
}

type Timeline = MultiaddrConnection['timeline']

/**
 * Watches connection upgrades through the gater: every raw connection is noted at its
 * first gate, marked once encrypted (the encrypted connection carries the same timeline
 * object), and counted as a failed handshake when it closed unmarked. It also refuses an
 * outbound connection whose authenticated peer is not the one the dialled address names. Bounded: at most
 * `watchedMax` raw connections are followed at once; beyond that new ones go unwatched.
 */
export class HandshakeWatch {
  readonly #pending = new Set<Timeline>()
  readonly #watchedMax: number
  #failed = 0

  constructor (watchedMax: number) {
    this.#watchedMax = watchedMax
  }

  readonly gater: Partial<ConnectionGater> = {
    denyInboundConnection: async (connection: MultiaddrConnection) => { this.#watch(connection.timeline); return false },
    denyOutboundConnection: async (_peer, connection: MultiaddrConnection) => { this.#watch(connection.timeline); return false },
    denyInboundEncryptedConnection: async (_peer, connection) => { this.#pending.delete(connection.timeline); return false },
    denyOutboundEncryptedConnection: async (peer, connection) => {
      // libp2p 2.10 does not check that the peer Noise authenticated is the one the dialled
      // address names (a seed's /p2p/ id, or the peer store's address for a peer id): an
      // impostor at a known peer's address would get that peer's dials and requests.
      const expected = connection.remoteAddr.getPeerId()
      if (expected !== null && expected !== peer.toString()) return true
      this.#pending.delete(connection.timeline)
      return false
    }
  }

  /** Handshakes that failed so far (connections closed before they were encrypted). */
  failed (): number {
    for (const timeline of this.#pending) {
      if (timeline.close !== undefined) {
        this.#pending.delete(timeline)
        this.#failed++
      }
    }
    return this.#failed
  }

  #watch (timeline: Timeline): void {
    this.failed()
    if (this.#pending.size < this.#watchedMax) this.#pending.add(timeline)
  }
}
