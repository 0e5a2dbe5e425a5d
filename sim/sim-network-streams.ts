import type { PeerId } from '../runtime/transport.ts'
import type { SimStream } from './sim-network-transport.ts'

/**
 * The open streams of a simulated network (requests sent and not yet answered), by id and
 * by the peer at each end. A stopping transport or a reset connection breaks the streams
 * of one peer: found by scanning every open stream, stopping N agents (every swarm
 * test's teardown) cost N² stream visits.
 */
export class SimNetworkStreams {
  readonly #byId = new Map<string, SimStream>()
  /** Peer → the open streams it calls or serves. */
  readonly #byPeer = new Map<PeerId, Set<SimStream>>()

  add (stream: SimStream): void {
    this.delete(stream.id)
    this.#byId.set(stream.id, stream)
    this.#index(stream.caller.peerId, stream)
    this.#index(stream.server, stream)
  }

  get (id: string): SimStream | undefined {
    return this.#byId.get(id)
  }

  delete (id: string): void {
    const stream = this.#byId.get(id)
    if (stream === undefined) return
    this.#byId.delete(id)
    this.#unindex(stream.caller.peerId, stream)
    this.#unindex(stream.server, stream)
  }

  /** Breaks and forgets the open streams with an end at `peer` that `which` picks. */
  breakAt (peer: PeerId, which: (stream: SimStream) => boolean): void {
    const streams = this.#byPeer.get(peer)
    if (streams === undefined) return
    for (const stream of [...streams]) {
      if (!which(stream)) continue
      stream.broken = true
      this.delete(stream.id)
    }
  }

  #index (peer: PeerId, stream: SimStream): void {
    const streams = this.#byPeer.get(peer)
    if (streams === undefined) this.#byPeer.set(peer, new Set([stream]))
    else streams.add(stream)
  }

  #unindex (peer: PeerId, stream: SimStream): void {
    const streams = this.#byPeer.get(peer)
    streams?.delete(stream)
    if (streams?.size === 0) this.#byPeer.delete(peer)
  }
}
