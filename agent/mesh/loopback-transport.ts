/**
 * A Transport for several roles in one process (`cantripd --role both`): the controller
 * role serves requests and publishes change notices that the machine role in the same
 * process needs too. libp2p neither dials itself nor (with `emitSelf: false`, which the
 * mesh needs so an agent does not count its own gossip) delivers a node's publications
 * back to it, so this wrapper does both locally:
 *
 * - a request to this very peer goes straight to the handler registered through the
 *   wrapper, with the same timeout as a remote one;
 * - a publication on one of the `echoTopics` is also delivered to this process's own
 *   subscribers, after this process's validator for the topic accepts it (as a remote
 *   publication would be).
 *
 * Everything else passes through to the wrapped transport unchanged.
 */
import {
  PeerUnreachableError, RequestTimeoutError, type IncomingRequest, type RequestHandler, type RequestOptions, type TopicMessage,
  type TopicValidator, type Transport, type TransportCounters
} from '../../runtime/transport.ts'

export class LoopbackTransport implements Transport {
  readonly #inner: Transport
  readonly #echoTopics: ReadonlySet<string>
  readonly #handlers = new Map<string, RequestHandler>()
  readonly #subscribers = new Map<string, Set<(message: TopicMessage) => void>>()
  readonly #validators = new Map<string, TopicValidator>()
  #published = 0

  constructor (inner: Transport, { echoTopics }: { echoTopics: readonly string[] }) {
    this.#inner = inner
    this.#echoTopics = new Set(echoTopics)
  }

  get peerId (): string {
    return this.#inner.peerId
  }

  subscribe (topic: string, onMessage: (message: TopicMessage) => void): () => void {
    const unsubscribe = this.#inner.subscribe(topic, onMessage)
    if (!this.#echoTopics.has(topic)) return unsubscribe
    const local = this.#subscribers.get(topic) ?? new Set()
    this.#subscribers.set(topic, local)
    local.add(onMessage)
    return () => {
      unsubscribe()
      local.delete(onMessage)
    }
  }

  setTopicValidator (topic: string, validator: TopicValidator | undefined): void {
    this.#inner.setTopicValidator(topic, validator)
    if (validator === undefined) this.#validators.delete(topic)
    else this.#validators.set(topic, validator)
  }

  async publish (topic: string, data: Uint8Array): Promise<void> {
    await this.#inner.publish(topic, data)
    const local = this.#subscribers.get(topic)
    if (local === undefined || local.size === 0) return
    const message: TopicMessage = { topic, from: this.peerId, id: `${this.peerId}/loopback/${++this.#published}`, data }
    if ((this.#validators.get(topic)?.(message) ?? 'accept') !== 'accept') return
    // Delivered later, as from the network: a publisher never runs its subscribers inline.
    setImmediate(() => { for (const deliver of [...local]) deliver(message) })
  }

  handle (protocol: string, handler: RequestHandler): void {
    this.#inner.handle(protocol, handler)
    this.#handlers.set(protocol, handler)
  }

  unhandle (protocol: string): void {
    this.#handlers.delete(protocol)
    this.#inner.unhandle(protocol)
  }

  async request (peer: string, protocol: string, data: Uint8Array, options: RequestOptions): Promise<Uint8Array> {
    if (peer !== this.peerId) return await this.#inner.request(peer, protocol, data, options)
    const handler = this.#handlers.get(protocol)
    if (handler === undefined) throw new PeerUnreachableError(peer, `this process serves no "${protocol}"`)
    const request: IncomingRequest = { from: this.peerId, protocol, data }
    let timer: ReturnType<typeof setTimeout> | undefined
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => { reject(new RequestTimeoutError(peer, protocol, options.timeoutMs)) }, options.timeoutMs)
    })
    try {
      return await Promise.race([handler(request), timeout])
    } finally {
      clearTimeout(timer)
    }
  }

  connectedPeers (): string[] {
    return this.#inner.connectedPeers()
  }

  counters (): TransportCounters {
    return this.#inner.counters()
  }

  onPeerDisconnected (listener: (peer: string) => void): () => void {
    return this.#inner.onPeerDisconnected?.(listener) ?? (() => {})
  }

  async stop (): Promise<void> {
    await this.#inner.stop()
  }
}
