/**
 * Several models on one controller group (multi-raft): every model is a Raft group of
 * its own, hosted by the same controller processes over the same mesh. The "default"
 * model keeps the bare protocol names (raft/1, controller/propose/1, cantrip/api/1);
 * another model's requests carry its name as a suffix (`raft/1@staging`), so one peer
 * serves each model's Raft, propose and API handlers apart. Topics need no scoping:
 * change notices and presence are per model already (`cantrip/changes/<model>`).
 */
import { defaultModelName, type ModelName } from '../../runtime/ids.ts'
import type { PeerId, RequestHandler, RequestOptions, TopicMessage, TopicValidator, Transport, TransportCounters } from '../../runtime/transport.ts'

/** The wire name of `protocol` for `model`. */
export function modelProtocol (protocol: string, model: ModelName): string {
  return model === defaultModelName ? protocol : `${protocol}@${model}`
}

/** `transport` with every request protocol scoped to `model` (itself for "default"). */
export function modelTransport (transport: Transport, model: ModelName): Transport {
  return model === defaultModelName ? transport : new ModelScopedTransport(transport, model)
}

/**
 * A view of a shared transport for one model. Stopping it only drops this model's
 * handlers: the mesh goes on serving the other models.
 */
class ModelScopedTransport implements Transport {
  readonly #inner: Transport
  readonly #model: ModelName
  readonly #handled = new Set<string>()

  constructor (inner: Transport, model: ModelName) {
    this.#inner = inner
    this.#model = model
  }

  get peerId (): PeerId {
    return this.#inner.peerId
  }

  subscribe (topic: string, onMessage: (message: TopicMessage) => void): () => void {
    return this.#inner.subscribe(topic, onMessage)
  }

  setTopicValidator (topic: string, validator: TopicValidator | undefined): void {
    this.#inner.setTopicValidator(topic, validator)
  }

  async publish (topic: string, data: Uint8Array): Promise<void> {
    await this.#inner.publish(topic, data)
  }

  handle (protocol: string, handler: RequestHandler): void {
    const scoped = modelProtocol(protocol, this.#model)
    this.#handled.add(scoped)
    // Handlers see the protocol name they registered.
    this.#inner.handle(scoped, async request => await handler({ ...request, protocol }))
  }

  unhandle (protocol: string): void {
    const scoped = modelProtocol(protocol, this.#model)
    this.#handled.delete(scoped)
    this.#inner.unhandle(scoped)
  }

  async request (peer: PeerId, protocol: string, data: Uint8Array, options: RequestOptions): Promise<Uint8Array> {
    return await this.#inner.request(peer, modelProtocol(protocol, this.#model), data, options)
  }

  connectedPeers (): PeerId[] {
    return this.#inner.connectedPeers()
  }

  counters (): TransportCounters {
    return this.#inner.counters()
  }

  onPeerDisconnected (listener: (peer: PeerId) => void): () => void {
    return this.#inner.onPeerDisconnected?.(listener) ?? (() => {})
  }

  async stop (): Promise<void> {
    for (const protocol of this.#handled) this.#inner.unhandle(protocol)
    this.#handled.clear()
  }
}
