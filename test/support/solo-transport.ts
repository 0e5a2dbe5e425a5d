/**
 * Test fixture: the Transport of a controller that is alone, a one-member Raft group whose
 * agents run in the test's process (one-controller-fixture.ts). Requests to itself reach its own
 * handlers; every other peer is unreachable; publications reach its own subscribers only
 * if they are not its own (gossip never echoes), i.e. nobody.
 */
import { InvalidInputError } from '../../runtime/errors.ts'
import { limits } from '../../runtime/limits.ts'
import {
  PeerUnreachableError, RemoteHandlerError, TransportStoppedError,
  type PeerId, type RequestHandler, type RequestOptions, type TopicMessage, type TopicValidator, type Transport, type TransportCounters
} from '../../runtime/transport.ts'

const component = 'solo transport'

export class SoloTransport implements Transport {
  readonly peerId: PeerId
  readonly #handlers = new Map<string, RequestHandler>()
  readonly #counters: TransportCounters = { published: 0, delivered: 0, rejected: 0, ignored: 0, requestsSent: 0, requestsServed: 0, requestsFailed: 0 }
  #stopped = false

  constructor (peerId: PeerId) {
    this.peerId = peerId
  }

  subscribe (_topic: string, _onMessage: (message: TopicMessage) => void): () => void {
    this.#live()
    return () => {}
  }

  setTopicValidator (_topic: string, _validator: TopicValidator | undefined): void {
    this.#live()
  }

  async publish (_topic: string, data: Uint8Array): Promise<void> {
    this.#live()
    this.#checkSize(data)
    this.#counters.published++
  }

  handle (protocol: string, handler: RequestHandler): void {
    this.#live()
    this.#handlers.set(protocol, handler)
  }

  unhandle (protocol: string): void {
    this.#live()
    this.#handlers.delete(protocol)
  }

  async request (peer: PeerId, protocol: string, data: Uint8Array, _options: RequestOptions): Promise<Uint8Array> {
    this.#live()
    this.#checkSize(data)
    this.#counters.requestsSent++
    const handler = peer === this.peerId ? this.#handlers.get(protocol) : undefined
    if (handler === undefined) {
      this.#counters.requestsFailed++
      throw new PeerUnreachableError(peer, peer === this.peerId ? `no handler for "${protocol}"` : 'a solo controller has no peers')
    }
    try {
      const reply = await handler({ from: this.peerId, protocol, data })
      this.#counters.requestsServed++
      return reply
    } catch (error) {
      this.#counters.requestsFailed++
      throw new RemoteHandlerError(peer, protocol, error instanceof Error ? error.message : String(error))
    }
  }

  connectedPeers (): PeerId[] {
    return []
  }

  counters (): TransportCounters {
    return { ...this.#counters }
  }

  async stop (): Promise<void> {
    this.#stopped = true
    this.#handlers.clear()
  }

  #live (): void {
    if (this.#stopped) throw new TransportStoppedError(this.peerId)
  }

  #checkSize (data: Uint8Array): void {
    if (data.byteLength > limits.transportMessageBytesMax) {
      throw new InvalidInputError(component, `at most ${limits.transportMessageBytesMax} bytes`, `${data.byteLength} bytes`)
    }
  }
}
