/**
 * The real `Transport`: one libp2p node per agent (TCP, pnet, noise, yamux, identify,
 * ping), gossipsub for topics and one stream protocol for requests. It is held to the
 * same compliance suite as the simulated network (test/compliance/).
 *
 * Gossip: every publication is one versioned msgpack envelope (mesh-envelopes.ts),
 * signed by gossipsub (StrictSign: the sender's peer id is proven by its key, never
 * taken from the payload). Each topic this peer subscribes to, or validates, has one
 * gossipsub topic validator of ours: it refuses malformed or oversized envelopes, then
 * asks the application's validator, and maps `accept` / `reject` / `ignore` to
 * gossipsub's results. Gossipsub forwards only accepted messages, and penalises the
 * peer that sent a rejected one through its score (P4, invalid deliveries; see
 * `rejectedMessageScore`). A message with a bad signature never reaches a validator:
 * gossipsub drops it and penalises the sender in the same way, but it is not counted in
 * `counters().rejected`, which counts only what this peer's validation decided.
 *
 * Requests: one long-lived stream per peer we send requests to, on `requestProtocol`
 * (request-channel.ts, serving-channel.ts): many requests in flight on it at once, each
 * a frame with its own id (channel-frames.ts), answered in any order. The caller's
 * envelope names the application protocol, the answer is data or an error message. One
 * libp2p protocol for all application protocols means `handle`/`unhandle` never
 * renegotiate anything with the peers, a protocol nobody handles is answered with an
 * error frame like any handler failure, and the inbound bounds cover every protocol at
 * once. A stream per request cost a yamux stream, protocol negotiation and a peer-store
 * update each time; that dominated the controllers' CPU under write load.
 *
 * Errors from request(): PeerUnreachableError when no connection could be made or it
 * broke before the answer; RemoteHandlerError when the peer answered with an error
 * (its handler threw, no handler, a response it could not send) or with something
 * that is not a response; RequestTimeoutError when `timeoutMs` passed first, dial
 * included.
 */
import '../../runtime/polyfill.ts'
import type { GossipSub } from '@chainsafe/libp2p-gossipsub'
import { createTopicScoreParams, type TopicScoreParams } from '@chainsafe/libp2p-gossipsub/score'
import {
  TopicValidatorResult,
  type Connection,
  type IncomingStreamData,
  type Message,
  type PeerId as Libp2pPeerId
} from '@libp2p/interface'
import { peerIdFromString } from '@libp2p/peer-id'
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr'
import type { Libp2p } from 'libp2p'
import { CantripError, InvalidInputError } from '../../runtime/errors.ts'
import { limits } from '../../runtime/limits.ts'
import { admitRequest, checkTransportPayload, RequestHandlerTable } from '../../runtime/transport-arguments.ts'
import type { Logger } from '../../runtime/logger.ts'
import {
  PeerUnreachableError,
  RemoteHandlerError,
  RequestTimeoutError,
  TransportStoppedError,
  type PeerId,
  type RequestHandler,
  type RequestOptions,
  type TopicMessage,
  type TopicValidator,
  type Transport,
  type TransportCounters,
  type ValidationResult
} from '../../runtime/transport.ts'
import {
  decodeGossipEnvelope,
  decodeRequestEnvelope,
  decodeResponseEnvelope,
  encodeGossipEnvelope,
  encodeRequestEnvelope,
  encodeResponseEnvelope,
  checkWireName,
  type ResponseEnvelope
} from './mesh-envelopes.ts'
import { parseNetworkKey } from './network-key.ts'
import { parsePeerKey } from './peer-identity.ts'
import { emptyRefusals, HandshakeWatch, type RefusalCounters, type RefusalKind } from './refusal-counters.ts'
import { createMeshNode, type MeshServices } from './libp2p-node.ts'
export type { MeshServices } from './libp2p-node.ts'
import { hostProtocol } from './advertised-addresses.ts'
import { RequestChannel } from './request-channel.ts'
import { ServingChannel } from './serving-channel.ts'
import { TopicSubscriptions } from '../../runtime/topic-subscriptions.ts'

const component = 'libp2p transport'

import { requestProtocol } from './request-protocol.ts'
export { requestProtocol } from './request-protocol.ts'

export const defaultListenAddress = '/ip4/127.0.0.1/tcp/0'

/**
 * Score parameters of every topic we take part in. Only P4 (invalid message deliveries)
 * counts: the other terms reward or punish delivery rates, which in our low-traffic
 * status and notice topics would prune honest but quiet peers. One rejection costs -10
 * (below zero: pruned from our meshes), two -40 (below gossipsub's gossip threshold of
 * -10: no IHAVE/IWANT with us), three -90 (below the graylist threshold of -80: all its
 * RPCs ignored). The counter decays by 1 % a second, so a peer that sent one bad message
 * is back to zero in a few minutes; one that keeps doing it stays out.
 */
export const rejectedMessageScore: Readonly<TopicScoreParams> = Object.freeze(createTopicScoreParams({
  topicWeight: 1,
  timeInMeshWeight: 0,
  firstMessageDeliveriesWeight: 0,
  meshMessageDeliveriesWeight: 0,
  meshFailurePenaltyWeight: 0,
  invalidMessageDeliveriesWeight: -10,
  invalidMessageDeliveriesDecay: 0.99
}))

/** What a wire capture sees: every payload this peer received, after decryption, before any check. */
export type WireCapture = (kind: 'gossip' | 'request' | 'response', bytes: Uint8Array) => void

export interface Libp2pTransportOptions {
  /** Ed25519 private key bytes from the agent config (peer-identity.ts). */
  privateKey: Uint8Array
  /** The deployment's swarm key file bytes (network-key.ts); peers with another key cannot connect. */
  networkKey: Uint8Array | string
  /** Multiaddr(s) to listen on; default `/ip4/127.0.0.1/tcp/0` (an ephemeral port on loopback). */
  listen?: string | readonly string[]
  /**
   * The host (an IP address or a name) other agents dial, when it is not the one listened
   * on (`--listen /ip4/0.0.0.0/…`, NAT): every listen port is advertised at it.
   */
  advertise?: string
  /**
   * Seed peers (multiaddrs ending in `/p2p/<peer id>`), typically the controllers:
   * dialled at start, and redialled with back-off whenever unreachable or lost
   * (limits.transportSeedRedial*). Seeds do not introduce agents to each other.
   */
  bootstrap?: readonly string[]
  /** Gossipsub heartbeat (mesh maintenance, gossip); default gossipsub's 1000 ms. */
  heartbeatIntervalMs?: number
  /**
   * Where errors of this peer's own callbacks go (a validator or subscriber that throws).
   * Without a logger they are rethrown from a fresh task, like an exception in an event
   * listener, so a bug in the receiver is never silent.
   */
  logger?: Logger
  /** Diagnostics and tests: sees every payload received (cantripd: $CANTRIP_WIRE_CAPTURE_DIR). */
  capture?: WireCapture
}



interface Seed {
  readonly address: Multiaddr
  /** The wait before the next redial; 0 while connected. */
  delayMs: number
  timer: ReturnType<typeof setTimeout> | undefined
}

interface PendingRequest {
  /** Set once the request is on a channel: tells the server to stop working on it. */
  cancel: (() => void) | undefined
  fail: (error: Error) => void
}

export class Libp2pTransport implements Transport {
  readonly peerId: PeerId
  /**
   * The libp2p node, for diagnostics and for tests that play a misbehaving peer. Code
   * that talks to other agents goes through the Transport methods.
   */
  readonly node: Libp2p<MeshServices>
  readonly #gossip: GossipSub
  readonly #logger: Logger | undefined
  #stopped = false
  #stopping: Promise<void> | undefined
  readonly #subscriptions = new TopicSubscriptions()
  readonly #validators = new Map<string, TopicValidator>()
  readonly #handlers = new RequestHandlerTable(component)
  readonly #pending = new Set<PendingRequest>()
  /** Our open channel to each peer we send requests to; a closed one leaves at once. */
  readonly #channels = new Map<PeerId, RequestChannel>()
  /** Channels being opened, which every request to that peer meanwhile waits for. */
  readonly #opening = new Map<PeerId, Promise<RequestChannel>>()
  /** Channels peers opened to us, by the id of the connection that carries them. */
  readonly #serving = new Map<ServingChannel, string>()
  /** Aborts channel opens in progress at stop. */
  readonly #stopController = new AbortController()
  /** What our topic validator decoded and accepted, handed on to delivery; keyed by gossipsub's message object. */
  readonly #accepted = new WeakMap<Message, TopicMessage>()
  readonly #counters: TransportCounters = {
    published: 0, delivered: 0, rejected: 0, ignored: 0, requestsSent: 0, requestsServed: 0, requestsFailed: 0
  }
  readonly #refusals: RefusalCounters = emptyRefusals()
  readonly #handshakes: HandshakeWatch
  readonly #capture: WireCapture | undefined

  readonly #onGossipMessage = (event: CustomEvent<Message>): void => { this.#deliver(event.detail) }
  /** Bootstrap seeds by peer id, each with its redial back-off. */
  readonly #seeds: Map<PeerId, Seed>
  /** Who hears of closed connections (Transport.onPeerDisconnected). */
  readonly #disconnectListeners = new Set<(peer: PeerId) => void>()
  /** libp2p says this once the last connection to a peer closed (a killed peer's kernel closes them at once), not per failed redial. */
  readonly #onPeerDisconnect = (event: CustomEvent<Libp2pPeerId>): void => {
    const peer = event.detail.toString()
    const seed = this.#seeds.get(peer)
    if (seed !== undefined) this.#scheduleSeed(seed)
    for (const listener of [...this.#disconnectListeners]) listener(peer)
  }
  /**
   * A channel whose caller ended its side waits for its answers before it ends ours; when
   * the connection is gone nobody will take them, so it goes at once.
   */
  readonly #onConnectionClose = (event: CustomEvent<Connection>): void => {
    const lost = new CantripError(`request channel: connection ${event.detail.id} closed`)
    for (const [channel, connection] of [...this.#serving]) if (connection === event.detail.id) channel.close(lost)
  }

  /** Starts a node listening on `options.listen`, with its request protocol registered. */
  static async create (options: Libp2pTransportOptions): Promise<Libp2pTransport> {
    if (typeof options !== 'object' || options === null) throw new InvalidInputError(component, 'options', options)
    const privateKey = parsePeerKey(options.privateKey)
    const psk = parseNetworkKey(options.networkKey)
    const listen = addressList(options.listen ?? defaultListenAddress, 'a listen multiaddr')
    const seeds = addressList(options.bootstrap ?? [], 'a bootstrap multiaddr ending in /p2p/<peer id>')
    for (const seed of seeds) {
      if (seed.getPeerId() === null) throw new InvalidInputError(component, 'a bootstrap multiaddr ending in /p2p/<peer id>', seed.toString())
    }
    const heartbeatIntervalMs = options.heartbeatIntervalMs
    if (heartbeatIntervalMs !== undefined && (!Number.isSafeInteger(heartbeatIntervalMs) || heartbeatIntervalMs < 10)) {
      throw new InvalidInputError(component, 'a gossipsub heartbeat interval of at least 10 ms', heartbeatIntervalMs)
    }
    const handshakes = new HandshakeWatch(limits.transportHandshakesWatchedMax)
    if (options.advertise !== undefined) hostProtocol(component, options.advertise)
    const node = await createMeshNode({
      privateKey, psk, listen, handshakes,
      ...(options.advertise === undefined ? {} : { advertise: options.advertise }),
      ...(heartbeatIntervalMs === undefined ? {} : { heartbeatIntervalMs })
    })
    let transport: Libp2pTransport | undefined
    try {
      transport = new Libp2pTransport(node, seeds, options.logger, handshakes, options.capture)
      await node.handle(requestProtocol, data => { transport!.#serve(data) }, {
        maxInboundStreams: limits.transportRequestChannelsPerPeerMax,
        // libp2p takes the per-connection cap on streams we open from here, not from
        // dialProtocol; we keep one channel per peer, plus one closing.
        maxOutboundStreams: limits.transportRequestChannelsPerPeerMax
      })
    } catch (error) {
      await Promise.resolve(node.stop()).catch(() => {})
      throw error
    }
    for (const seed of transport.#seeds.values()) transport.#dialSeed(seed)
    return transport
  }

  private constructor (node: Libp2p<MeshServices>, seeds: Multiaddr[], logger: Logger | undefined, handshakes: HandshakeWatch, capture: WireCapture | undefined) {
    this.node = node
    this.peerId = node.peerId.toString()
    this.#gossip = node.services.pubsub as unknown as GossipSub
    this.#logger = logger
    this.#handshakes = handshakes
    this.#capture = capture
    this.#countGossipRefusals()
    // A node listed among its own seeds (one seed list for every controller) skips itself.
    this.#seeds = new Map(seeds
      .filter(seed => seed.getPeerId() !== this.peerId)
      .map(seed => [seed.getPeerId()!, { address: seed, delayMs: 0, timer: undefined }]))
    this.#gossip.addEventListener('message', this.#onGossipMessage)
    node.addEventListener('peer:disconnect', this.#onPeerDisconnect)
    node.addEventListener('connection:close', this.#onConnectionClose)
  }

  // ---------------------------------------------------------------------------------
  // Transport

  subscribe (topic: string, onMessage: (message: TopicMessage) => void): () => void {
    this.#assertRunning()
    checkWireName(topic, 'topic')
    if (typeof onMessage !== 'function') throw new InvalidInputError(component, 'a message callback', onMessage)
    const remove = this.#subscriptions.add(topic, onMessage)
    this.#syncTopic(topic)
    return () => {
      if (remove() && !this.#stopped) this.#syncTopic(topic)
    }
  }

  setTopicValidator (topic: string, validator: TopicValidator | undefined): void {
    this.#assertRunning()
    checkWireName(topic, 'topic')
    if (validator === undefined) {
      this.#validators.delete(topic)
    } else {
      if (typeof validator !== 'function') throw new InvalidInputError(component, 'a validator function or undefined', validator)
      this.#validators.set(topic, validator)
    }
    this.#syncTopic(topic)
  }

  async publish (topic: string, data: Uint8Array): Promise<void> {
    this.#assertRunning()
    checkWireName(topic, 'topic')
    checkTransportPayload(component, data, 'message')
    // Encoded (copied) before the first await: the caller may reuse its buffer at once.
    const envelope = encodeGossipEnvelope(data)
    try {
      await this.#gossip.publish(topic, envelope)
    } catch (error) {
      if (this.#stopped) throw new TransportStoppedError(this.peerId)
      throw new CantripError(`cannot publish on topic "${topic}": ${describeError(error)}`, { cause: error })
    }
    this.#counters.published++
  }

  handle (protocol: string, handler: RequestHandler): void {
    this.#assertRunning()
    checkWireName(protocol, 'protocol')
    this.#handlers.serve(protocol, handler)
  }

  unhandle (protocol: string): void {
    this.#handlers.drop(protocol)
  }

  async request (peer: PeerId, protocol: string, data: Uint8Array, options: RequestOptions): Promise<Uint8Array> {
    this.#assertRunning()
    checkWireName(protocol, 'protocol')
    // An open channel was opened to this very id, so it parsed then: only a first request
    // to a peer pays for parsing it (a multihash decode per request was 1-2 % of a leader's CPU).
    const open = this.#channels.get(peer)
    let target: Libp2pPeerId | undefined
    if (open === undefined) {
      try {
        target = peerIdFromString(peer)
      } catch (error) {
        throw new InvalidInputError(component, 'a libp2p peer id', peer, { cause: error })
      }
    }
    const timeoutMs = admitRequest(component, this.peerId, peer, protocol, data, options, this.#pending.size)
    const envelope = encodeRequestEnvelope({ protocol, data })
    this.#counters.requestsSent++
    const answer = Promise.withResolvers<Uint8Array>()
    let settled = false
    const settle = (error: Error | undefined, value?: Uint8Array): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      this.#pending.delete(pending)
      if (error === undefined) {
        answer.resolve(value!)
        return
      }
      this.#counters.requestsFailed++
      pending.cancel?.()
      answer.reject(error)
    }
    const pending: PendingRequest = { cancel: undefined, fail: error => { settle(error) } }
    const timer = setTimeout(() => { settle(new RequestTimeoutError(peer, protocol, timeoutMs)) }, timeoutMs)
    this.#pending.add(pending)
    const send = (channel: RequestChannel): void => {
      if (settled) return
      const onPush = options.onPush
      pending.cancel = channel.request(protocol, envelope, (error, body) => {
        pending.cancel = undefined
        if (error !== undefined) settle(error)
        else settle(...this.#response(peer, protocol, body!))
      }, onPush === undefined ? undefined : body => { if (!settled) onPush(body) })
    }
    // The common case, an open channel, sends before returning.
    if (open !== undefined) {
      try { send(open) } catch (error) { settle(error as Error) }
    } else if (target !== undefined) {
      this.#channel(target, peer, protocol).then(send).catch((error: Error) => { settle(error) })
    }
    return await answer.promise
  }

  connectedPeers (): PeerId[] {
    if (this.#stopped) return []
    return [...new Set(this.node.getPeers().map(peer => peer.toString()))]
  }

  counters (): TransportCounters {
    return { ...this.#counters }
  }

  onPeerDisconnected (listener: (peer: PeerId) => void): () => void {
    this.#assertRunning()
    this.#disconnectListeners.add(listener)
    return () => { this.#disconnectListeners.delete(listener) }
  }

  /** What this peer refused from others, by kind (refusal-counters.ts); beyond the Transport contract. */
  refusals (): RefusalCounters {
    return { ...this.#refusals, handshake: this.#handshakes.failed() }
  }

  /** Stops the node: waiting requests reject at once, then every connection closes. A second call waits for the first. */
  async stop (): Promise<void> {
    if (this.#stopping !== undefined) return await this.#stopping
    this.#stopped = true
    this.#subscriptions.clear()
    this.#validators.clear()
    this.#handlers.clear()
    this.#gossip.removeEventListener('message', this.#onGossipMessage)
    this.node.removeEventListener('peer:disconnect', this.#onPeerDisconnect)
    this.node.removeEventListener('connection:close', this.#onConnectionClose)
    this.#disconnectListeners.clear()
    for (const seed of this.#seeds.values()) clearTimeout(seed.timer)
    const error = new TransportStoppedError(this.peerId)
    for (const pending of [...this.#pending]) pending.fail(error)
    this.#stopController.abort(error)
    for (const channel of [...this.#channels.values()]) channel.close(error)
    for (const channel of [...this.#serving.keys()]) channel.close(error)
    this.#stopping = Promise.resolve(this.node.stop())
    await this.#stopping
  }

  // ---------------------------------------------------------------------------------
  // Beyond the contract: addresses and diagnostics

  /** Where others can dial this peer: listen multiaddrs ending in `/p2p/<peer id>`. */
  addresses (): string[] {
    return this.node.getMultiaddrs().map(address => address.toString())
  }

  /** Connects to a peer at `address` (a multiaddr with `/p2p/<peer id>`); resolves with its peer id. */
  async dial (address: string, options: { timeoutMs?: number } = {}): Promise<PeerId> {
    this.#assertRunning()
    const [target] = addressList(address, 'a multiaddr to dial')
    const expected = target!.getPeerId() ?? address
    try {
      const connection = await this.node.dial(target!, options.timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(options.timeoutMs) })
      return connection.remotePeer.toString()
    } catch (error) {
      if (this.#stopped) throw new TransportStoppedError(this.peerId)
      throw new PeerUnreachableError(expected, describeError(error))
    }
  }

  /** Peers we have a gossipsub stream to: once a peer is here, our subscriptions reach it. */
  gossipPeers (): PeerId[] {
    if (this.#stopped) return []
    return [...this.#gossip.streamsOutbound.keys()]
  }

  /** Peers known to subscribe to `topic`. */
  topicPeers (topic: string): PeerId[] {
    if (this.#stopped) return []
    return this.#gossip.getSubscribers(topic).map(peer => peer.toString())
  }

  /** Peers in our gossipsub mesh for `topic` (formed at heartbeats). */
  meshPeers (topic: string): PeerId[] {
    if (this.#stopped) return []
    return this.#gossip.getMeshPeers(topic)
  }

  /** Gossipsub's score of `peer` as seen here: below zero after it sent rejected or badly signed messages. */
  peerScore (peer: PeerId): number {
    return this.#gossip.getScore(peer)
  }

  /** Requests this peer sent that wait for an answer. */
  get requestsInFlight (): number {
    return this.#pending.size
  }

  /** Requests from other peers this peer is handling or answering (cancelled ones no longer count). */
  get requestsServing (): number {
    let serving = 0
    for (const channel of this.#serving.keys()) serving += channel.serving
    return serving
  }

  /** Open request channels: ours to other peers, and theirs to us. */
  get requestChannels (): { outbound: number, inbound: number } {
    return { outbound: this.#channels.size, inbound: this.#serving.size }
  }

  // ---------------------------------------------------------------------------------
  // Bootstrap seeds

  /** Dials a seed; when that fails, tries again after its back-off. */
  #dialSeed (seed: Seed): void {
    if (this.#stopped) return
    this.node.dial(seed.address).then(() => { seed.delayMs = 0 }, (error: unknown) => {
      this.#logger?.log('debug', 'cannot reach bootstrap seed', { seed: seed.address.toString(), error: describeError(error) })
      this.#scheduleSeed(seed)
    })
  }

  #scheduleSeed (seed: Seed): void {
    if (this.#stopped || seed.timer !== undefined) return
    seed.delayMs = Math.min(limits.transportSeedRedialDelayMsMax, Math.max(limits.transportSeedRedialDelayMsMin, 2 * seed.delayMs))
    seed.timer = setTimeout(() => {
      seed.timer = undefined
      this.#dialSeed(seed)
    }, seed.delayMs)
  }

  // ---------------------------------------------------------------------------------
  // Gossip

  /**
   * Keeps gossipsub in line with what the application asked for on `topic`: subscribed
   * while it has a subscriber, validated and scored while it has a subscriber or a
   * validator.
   */
  #syncTopic (topic: string): void {
    const subscribed = this.#subscriptions.has(topic)
    const interested = subscribed || this.#validators.has(topic)
    const scored = this.#gossip.score.params.topics
    if (interested) {
      if (!this.#gossip.topicValidators.has(topic)) {
        this.#gossip.topicValidators.set(topic, (from, message) => this.#validate(topic, from, message))
      }
      scored[topic] = rejectedMessageScore
    } else {
      this.#gossip.topicValidators.delete(topic)
      // The score drops what it knew of this topic; past penalties were already applied.
      delete scored[topic]
    }
    const inGossip = this.#gossip.getTopics().includes(topic)
    if (subscribed && !inGossip) this.#gossip.subscribe(topic)
    if (!subscribed && inGossip) this.#gossip.unsubscribe(topic)
  }

  /** Our gossipsub topic validator: the envelope first, then the application's verdict. */
  #validate (topic: string, _from: Libp2pPeerId, message: Message): TopicValidatorResult {
    if (this.#stopped) return TopicValidatorResult.Ignore
    this.#capture?.('gossip', message.data)
    // StrictSign makes gossipsub drop unsigned messages before this; a topic mismatch
    // would be a gossipsub bug. Neither reaches the application.
    if (message.type !== 'signed' || message.topic !== topic) {
      this.#counters.rejected++
      this.#refuse('signature')
      return TopicValidatorResult.Reject
    }
    let data: Uint8Array
    try {
      data = decodeGossipEnvelope(message.data)
    } catch (error) {
      this.#counters.rejected++
      this.#refuse(message.data.byteLength > limits.transportMessageBytesMax ? 'oversized' : 'malformed')
      this.#logger?.log('debug', 'rejected malformed gossip envelope', { topic, from: message.from.toString(), error: describeError(error) })
      return TopicValidatorResult.Reject
    }
    const topicMessage: TopicMessage = { topic, from: message.from.toString(), id: messageId(message.from, message.sequenceNumber), data }
    const validator = this.#validators.get(topic)
    let result: ValidationResult = 'accept'
    if (validator !== undefined) {
      try {
        result = validator(topicMessage)
      } catch (error) {
        // A validator that throws is a bug here, not the sender's fault: no penalty.
        this.#report(error, `validator of topic "${topic}" threw`)
        result = 'ignore'
      }
      if (result !== 'accept' && result !== 'reject' && result !== 'ignore') {
        this.#report(new CantripError(`validator of topic "${topic}" returned ${JSON.stringify(result)}`), 'validator returned no verdict')
        result = 'ignore'
      }
    }
    switch (result) {
      case 'accept':
        this.#accepted.set(message, topicMessage)
        return TopicValidatorResult.Accept
      case 'reject':
        this.#counters.rejected++
        this.#refuse('validator')
        return TopicValidatorResult.Reject
      case 'ignore':
        this.#counters.ignored++
        return TopicValidatorResult.Ignore
    }
  }

  /** Hands a message gossipsub validated and dispatched to this topic's subscribers, each with its own copy. */
  #deliver (message: Message): void {
    if (this.#stopped || message.type !== 'signed' || message.from.equals(this.node.peerId)) return
    const accepted = this.#accepted.get(message)
    this.#accepted.delete(message)
    // Every subscribed topic has our validator, so an unvalidated message is one that
    // raced an unsubscribe; it is dropped rather than delivered unchecked.
    if (accepted === undefined) return
    if (!this.#subscriptions.has(message.topic)) return
    this.#counters.delivered++
    this.#subscriptions.deliver(accepted, () => !this.#stopped, error => { this.#report(error, `subscriber of topic "${message.topic}" threw`) })
  }

  // ---------------------------------------------------------------------------------
  // Requests

  /** Our channel to `peer`: the open one, the one being opened, or a new one. */
  async #channel (target: Libp2pPeerId, peer: PeerId, protocol: string): Promise<RequestChannel> {
    const open = this.#channels.get(peer)
    if (open !== undefined) return open
    let opening = this.#opening.get(peer)
    if (opening === undefined) {
      opening = this.#openChannel(target, peer, protocol).finally(() => { this.#opening.delete(peer) })
      this.#opening.set(peer, opening)
    }
    return await opening
  }

  /**
   * Dials `peer` (if not connected) and opens a channel. Not bound to the first caller's
   * timeout: others wait on the same open; libp2p's dial timeout bounds it.
   */
  async #openChannel (target: Libp2pPeerId, peer: PeerId, protocol: string): Promise<RequestChannel> {
    let stream
    try {
      stream = await this.node.dialProtocol(target, requestProtocol, { signal: this.#stopController.signal })
    } catch (error) {
      if (this.#stopped) throw new TransportStoppedError(this.peerId)
      if ((error as Error).name === 'UnsupportedProtocolError') throw new RemoteHandlerError(peer, protocol, 'the peer serves no requests')
      throw new PeerUnreachableError(peer, describeError(error))
    }
    if (this.#stopped) {
      stream.abort(new TransportStoppedError(this.peerId))
      throw new TransportStoppedError(this.peerId)
    }
    const channel = new RequestChannel(peer, stream, closed => {
      // A lost channel is forgotten at once, so the next request opens a fresh one.
      if (this.#channels.get(peer) === closed) this.#channels.delete(peer)
    })
    if (channel.closed === undefined) this.#channels.set(peer, channel)
    return channel
  }

  /** A response envelope as the result of request(): data, or the remote error. */
  #response (peer: PeerId, protocol: string, body: Uint8Array): [Error | undefined, Uint8Array?] {
    this.#capture?.('response', body)
    let response: ResponseEnvelope
    try {
      response = decodeResponseEnvelope(body)
    } catch (error) {
      return [new RemoteHandlerError(peer, protocol, `malformed response: ${(error as Error).message}`)]
    }
    if (!response.ok) return [new RemoteHandlerError(peer, protocol, response.error)]
    return [undefined, response.data]
  }

  /** A channel a peer opened to us: served until it or we close it. */
  #serve ({ stream, connection }: IncomingStreamData): void {
    if (this.#stopped) {
      stream.abort(new TransportStoppedError(this.peerId))
      return
    }
    const channel = new ServingChannel(stream, connection.remotePeer.toString(), {
      serve: async (envelope, from, push) => await this.#answer(envelope, from, push),
      onBadFrame: () => { this.#refuse('requestFrame') },
      onClose: closed => { this.#serving.delete(closed) }
    })
    if (!channel.closed) this.#serving.set(channel, connection.id)
  }

  /** One request envelope's response envelope. Never throws. */
  async #answer (payload: Uint8Array, from: PeerId, push: (data: Uint8Array) => boolean): Promise<Uint8Array> {
    this.#capture?.('request', payload)
    let request: { protocol: string, data: Uint8Array }
    try {
      request = decodeRequestEnvelope(payload)
    } catch (error) {
      this.#refuse('requestEnvelope')
      return encodeResponseEnvelope({ ok: false, error: `malformed request: ${describeError(error)}` })
    }
    return encodeResponseEnvelope(await this.#run(request, from, push))
  }

  async #run (request: { protocol: string, data: Uint8Array }, from: PeerId, push: (data: Uint8Array) => boolean): Promise<ResponseEnvelope> {
    const { protocol, data } = request
    const handler = this.#handlers.get(protocol)
    if (handler === undefined) return { ok: false, error: `no handler for protocol "${protocol}"` }
    let result: unknown
    try {
      result = await handler({ from, protocol, data, push })
    } catch (error) {
      return { ok: false, error: error instanceof Error ? error.message : String(error) }
    }
    if (!(result instanceof Uint8Array)) return { ok: false, error: `handler returned ${typeof result}, expected bytes` }
    if (result.byteLength > limits.transportMessageBytesMax) {
      return { ok: false, error: `response of ${result.byteLength} bytes exceeds the maximum of ${limits.transportMessageBytesMax}` }
    }
    this.#counters.requestsServed++
    return { ok: true, data: result }
  }

  // ---------------------------------------------------------------------------------

  #refuse (kind: RefusalKind): void {
    this.#refusals[kind]++
  }

  /**
   * Counts what gossipsub refuses before our validator runs, at the hooks it has: its peer
   * score hears of every badly signed (`rejectInvalidMessage`) and duplicate message, and
   * `acceptFrom` decides on every RPC whether its sender is graylisted. A message on a topic
   * we neither subscribe to nor validate has no validator of ours; the fallback one
   * ignores it (no penalty: an unsubscribe may race it) and counts it.
   */
  #countGossipRefusals (): void {
    const gossip = this.#gossip as unknown as {
      score: { rejectInvalidMessage: (from: string, topic: string) => void, duplicateMessage: (from: string, id: string, topic: string) => void }
      acceptFrom: (id: string) => boolean
      topicValidators: Map<string, unknown>
    }
    const score = gossip.score
    const rejectInvalid = score.rejectInvalidMessage.bind(score)
    score.rejectInvalidMessage = (from, topic) => { this.#refuse('signature'); rejectInvalid(from, topic) }
    const duplicate = score.duplicateMessage.bind(score)
    score.duplicateMessage = (from, id, topic) => { this.#refuse('duplicate'); duplicate(from, id, topic) }
    const acceptFrom = gossip.acceptFrom.bind(gossip)
    gossip.acceptFrom = id => {
      const accepted = acceptFrom(id)
      if (!accepted) this.#refuse('graylisted')
      return accepted
    }
    const validators = gossip.topicValidators
    const wrongTopic = (): TopicValidatorResult => {
      this.#refuse('wrongTopic')
      return TopicValidatorResult.Ignore
    }
    validators.get = (topic: string) => Map.prototype.get.call(validators, topic) ?? wrongTopic
  }

  #assertRunning (): void {
    if (this.#stopped) throw new TransportStoppedError(this.peerId)
  }

  #report (error: unknown, what: string): void {
    if (this.#logger !== undefined) {
      this.#logger.log('error', what, { error: describeError(error) })
      return
    }
    setImmediate(() => { throw error })
  }
}

/** Unique per publication: gossipsub's own message identity (author and its random 64-bit sequence number). */
function messageId (from: Libp2pPeerId, sequenceNumber: bigint): string {
  return `${from.toString()}/${sequenceNumber.toString(16).padStart(16, '0')}`
}


function addressList (value: string | readonly string[], expected: string): Multiaddr[] {
  const list = typeof value === 'string' ? [value] : value
  if (!Array.isArray(list)) throw new InvalidInputError(component, `${expected} or a list of them`, value)
  return list.map(address => {
    if (typeof address !== 'string') throw new InvalidInputError(component, expected, address)
    try {
      return multiaddr(address)
    } catch (error) {
      throw new InvalidInputError(component, expected, address, { cause: error })
    }
  })
}

function describeError (error: unknown): string {
  if (error instanceof Error) return error.name === 'Error' ? error.message : `${error.name}: ${error.message}`
  return String(error)
}
