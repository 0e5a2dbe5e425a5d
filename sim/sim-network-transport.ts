/**
 * One peer's end of the simulated network: the `Transport` contract on top of
 * `SimNetwork`. This class keeps what a peer owns (subscriptions, validators, handlers,
 * requests waiting for an answer, counters); everything that crosses a link, and every
 * fault, lives in the network. Nothing here is delivered synchronously: every message
 * reaches a peer from a SimClock timer, so callers never see re-entrant callbacks.
 *
 * A validator or subscriber that throws is a bug in the receiver: the exception leaves
 * through the SimClock step that delivered the message, so the simulation fails where
 * it happened instead of carrying on with a message half delivered.
 *
 * A crash and `stop()` are the same thing to the network: the object is dead for good,
 * and a restart is a new `SimTransport` for the same peer id (a new incarnation), so
 * messages still in flight to the old one are dropped, as on a broken connection.
 *
 * Handlers may push (IncomingRequest.push) as the mesh's serving channel lets them: each
 * push is a leg of the request's own stream (SimStream), which the network keeps in order
 * ahead of the answer and which a lost leg or a reset connection breaks for good, so a
 * caller never sees a gap or an overtaking push. At most
 * limits.transportRequestPushesUnwrittenMax pushes of one request are on the network at
 * once (sent, not yet delivered or dropped): the simulator's "not yet written".
 */
import { assert } from '../runtime/assert.ts'
import type { TimerHandle } from '../runtime/clock.ts'
import { InvalidInputError } from '../runtime/errors.ts'
import { limits } from '../runtime/limits.ts'
import { admitRequest, checkTransportPayload, RequestHandlerTable } from '../runtime/transport-arguments.ts'
import { PeerUnreachableError, RemoteHandlerError, RequestTimeoutError, TransportStoppedError } from '../runtime/transport.ts'
import type { IncomingRequest, PeerId, RequestHandler, RequestOptions, TopicMessage, TopicValidator, Transport, TransportCounters, ValidationResult } from '../runtime/transport.ts'
import type { SimClock } from './sim-clock.ts'
import { TopicSubscriptions } from '../runtime/topic-subscriptions.ts'

const component = 'sim-network'

/** What travels back for a request: the handler's bytes, or why there are none. */
export type SimResponse = { ok: true, data: Uint8Array } | { ok: false, message: string }

/**
 * One request's own stream, from the request leg to its answer: what the network needs to
 * keep its pushes and answer in order (`tailAt`), to lose all of what follows a lost leg
 * (`broken`), and to bound the pushes on their way (`unwritten`).
 */
export interface SimStream {
  readonly id: string
  readonly caller: SimTransport
  readonly server: PeerId
  /** Whether the caller passed RequestOptions.onPush. */
  readonly listens: boolean
  /** A leg of this stream was lost or dropped, its connection reset, or the caller gave up: nothing more goes on it. */
  broken: boolean
  /** Arrival time of the stream's last leg scheduled: none after it arrives before it. */
  tailAt: number
  /** Pushes sent and not yet delivered or dropped (limits.transportRequestPushesUnwrittenMax). */
  unwritten: number
}

/** What a transport asks of its network; `SimNetwork` implements it. */
export interface SimNetworkPort {
  /** A network-wide unique id for the next publication or request of `peer`. */
  nextMessageId (peer: PeerId): string
  /** Whether a transport for `peer` was ever created on this network. */
  isKnown (peer: PeerId): boolean
  connectedPeers (peer: PeerId): PeerId[]
  publish (sender: SimTransport, message: TopicMessage): void
  sendRequest (sender: SimTransport, to: PeerId, protocol: string, id: string, data: Uint8Array, listens: boolean): void
  /** Sends a push of a request on its stream; false when the stream takes none (see SimStream). */
  sendPush (server: SimTransport, caller: SimTransport, protocol: string, id: string, data: Uint8Array, stream: SimStream): boolean
  sendResponse (server: SimTransport, caller: SimTransport, protocol: string, id: string, response: SimResponse, stream: SimStream | undefined): void
  /** The caller stopped waiting for request `id` (its timeout): its stream takes nothing more. */
  requestEnded (id: string): void
  stopped (transport: SimTransport): void
  /** A subscription of `transport` to `topic` came or went (the network indexes subscribers by topic). */
  subscriptionsChanged (transport: SimTransport, topic: string): void
  /** `transport` has a listener for closed connections (the network tells only those of a crash). */
  listensForCloses (transport: SimTransport): void
}


interface PendingRequest {
  readonly peer: PeerId
  readonly protocol: string
  readonly timer: TimerHandle
  readonly onPush: ((data: Uint8Array) => void) | undefined
  readonly resolve: (data: Uint8Array) => void
  readonly reject: (error: Error) => void
}

export class SimTransport implements Transport {
  readonly peerId: PeerId
  /** 1 for the first transport of this peer id, counting up on each restart. */
  readonly incarnation: number
  readonly #port: SimNetworkPort
  readonly #clock: SimClock
  #stopped = false
  readonly #subscriptions = new TopicSubscriptions()
  readonly #validators = new Map<string, TopicValidator>()
  readonly #handlers = new RequestHandlerTable(component)
  readonly #pending = new Map<string, PendingRequest>()
  /** Who hears of closed connections (Transport.onPeerDisconnected). */
  readonly #disconnectListeners = new Set<(peer: PeerId) => void>()
  readonly #counters: TransportCounters = {
    published: 0, delivered: 0, rejected: 0, ignored: 0, requestsSent: 0, requestsServed: 0, requestsFailed: 0
  }

  constructor (peerId: PeerId, incarnation: number, port: SimNetworkPort, clock: SimClock) {
    this.peerId = peerId
    this.incarnation = incarnation
    this.#port = port
    this.#clock = clock
  }

  get stopped (): boolean {
    return this.#stopped
  }

  /** Requests sent by this peer still waiting for an answer. */
  get requestsInFlight (): number {
    return this.#pending.size
  }

  subscribe (topic: string, onMessage: (message: TopicMessage) => void): () => void {
    this.#assertRunning()
    checkName('a non-empty topic', topic)
    if (typeof onMessage !== 'function') throw new InvalidInputError(component, 'a message callback', onMessage)
    const remove = this.#subscriptions.add(topic, onMessage)
    this.#port.subscriptionsChanged(this, topic)
    return () => {
      remove()
      this.#port.subscriptionsChanged(this, topic)
    }
  }

  setTopicValidator (topic: string, validator: TopicValidator | undefined): void {
    this.#assertRunning()
    checkName('a non-empty topic', topic)
    if (validator === undefined) {
      this.#validators.delete(topic)
      return
    }
    if (typeof validator !== 'function') throw new InvalidInputError(component, 'a validator function or undefined', validator)
    this.#validators.set(topic, validator)
  }

  async publish (topic: string, data: Uint8Array): Promise<void> {
    // An async body runs synchronously up to its first await, so the deliveries are
    // scheduled in call order even when nobody awaits the returned promise.
    this.#assertRunning()
    checkName('a non-empty topic', topic)
    checkTransportPayload(component, data, 'message')
    this.#counters.published++
    this.#port.publish(this, { topic, from: this.peerId, id: this.#port.nextMessageId(this.peerId), data: data.slice() })
  }

  handle (protocol: string, handler: RequestHandler): void {
    this.#assertRunning()
    checkName('a non-empty protocol', protocol)
    this.#handlers.serve(protocol, handler)
  }

  unhandle (protocol: string): void {
    this.#handlers.drop(protocol)
  }

  async request (peer: PeerId, protocol: string, data: Uint8Array, options: RequestOptions): Promise<Uint8Array> {
    this.#assertRunning()
    checkName('a non-empty peer id', peer)
    checkName('a non-empty protocol', protocol)
    const timeoutMs = admitRequest(component, this.peerId, peer, protocol, data, options, this.#pending.size)
    // A peer id this network never saw is refused at once: there is no address to dial.
    // A known peer that is stopped or cut off is not: the request times out, as it
    // would on a real network where nobody can tell a dead peer from a slow one.
    if (!this.#port.isKnown(peer)) throw new PeerUnreachableError(peer, 'no peer with this id was ever on the network')
    const id = this.#port.nextMessageId(this.peerId)
    const answer = new Promise<Uint8Array>((resolve, reject) => {
      const timer = this.#clock.setTimeout(() => {
        if (!this.#pending.delete(id)) return
        this.#port.requestEnded(id)
        this.#counters.requestsFailed++
        reject(new RequestTimeoutError(peer, protocol, timeoutMs))
      }, timeoutMs)
      this.#pending.set(id, { peer, protocol, timer, onPush: options.onPush, resolve, reject })
    })
    try {
      this.#port.sendRequest(this, peer, protocol, id, data.slice(), options.onPush !== undefined)
    } catch (error) {
      // Only a network assertion gets here; forget the request so its timer cannot
      // later reject a promise nobody holds.
      const pending = this.#pending.get(id)
      this.#pending.delete(id)
      if (pending !== undefined) this.#clock.clearTimeout(pending.timer)
      throw error
    }
    this.#counters.requestsSent++
    return await answer
  }

  connectedPeers (): PeerId[] {
    return this.#stopped ? [] : this.#port.connectedPeers(this.peerId)
  }

  counters (): TransportCounters {
    return { ...this.#counters }
  }

  onPeerDisconnected (listener: (peer: PeerId) => void): () => void {
    this.#assertRunning()
    this.#disconnectListeners.add(listener)
    this.#port.listensForCloses(this)
    return () => { this.#disconnectListeners.delete(listener) }
  }

  async stop (): Promise<void> {
    this.crash()
  }

  /**
   * Stops at once (what `stop()` and a simulated crash both do): waiting requests
   * reject, and nothing is delivered to this object again.
   */
  crash (): void {
    if (this.#stopped) return
    this.#stopped = true
    this.#subscriptions.clear()
    this.#validators.clear()
    this.#handlers.clear()
    this.#disconnectListeners.clear()
    const pending = [...this.#pending.values()]
    this.#pending.clear()
    for (const request of pending) {
      this.#clock.clearTimeout(request.timer)
      this.#counters.requestsFailed++
      request.reject(new TransportStoppedError(this.peerId))
    }
    this.#port.stopped(this)
  }

  // -------------------------------------------------------------------------------
  // Called by SimNetwork when a message arrives; not part of the Transport contract.

  /** Whether anyone here listens for closed connections: the network tells only those peers of a crash. */
  get hearsCloses (): boolean {
    return !this.#stopped && this.#disconnectListeners.size > 0
  }

  /** The connection to `peer` closed (it crashed or stopped): tells this peer's listeners. */
  connectionClosed (peer: PeerId): void {
    if (this.#stopped) return
    for (const listener of [...this.#disconnectListeners]) listener(peer)
  }

  isSubscribed (topic: string): boolean {
    return !this.#stopped && this.#subscriptions.has(topic)
  }

  /** Runs this peer's validator for an arriving message and counts what it decided. */
  validateTopicMessage (message: TopicMessage): ValidationResult {
    assert(!this.#stopped, `sim-network: message "${message.id}" validated by stopped transport of "${this.peerId}"`)
    const validator = this.#validators.get(message.topic)
    const result = validator === undefined ? 'accept' : validator(message)
    assert(result === 'accept' || result === 'reject' || result === 'ignore',
      `sim-network: validator of "${this.peerId}" for topic "${message.topic}" returned ${JSON.stringify(result)}`)
    if (result === 'reject') this.#counters.rejected++
    if (result === 'ignore') this.#counters.ignored++
    return result
  }

  /** Hands an accepted message to every subscriber of its topic, each with its own copy. */
  deliverTopicMessage (message: TopicMessage): void {
    this.#counters.delivered++
    // A throwing subscriber is a bug in the code under test: it surfaces, as before.
    this.#subscriptions.deliver(message, () => !this.#stopped, error => { throw error })
  }

  /**
   * Runs the handler for an arriving request; the answer goes back through the network
   * when the handler settles, from the simulated time of that moment. `stream` is the
   * request's own (undefined for a duplicate, which nobody listens to): the handler's
   * pushes go on it, and say false once the answer is on its way.
   */
  serveRequest (caller: SimTransport, protocol: string, id: string, data: Uint8Array, stream: SimStream | undefined): void {
    const handler = this.#handlers.get(protocol)
    const respond = (response: SimResponse): void => { this.#port.sendResponse(this, caller, protocol, id, response, stream) }
    if (handler === undefined) {
      respond({ ok: false, message: `no handler for protocol "${protocol}"` })
      return
    }
    let answered = false
    const push = (bytes: Uint8Array): boolean => {
      if (this.#stopped || answered || stream === undefined || !(bytes instanceof Uint8Array) || bytes.length > limits.transportMessageBytesMax) return false
      return this.#port.sendPush(this, caller, protocol, id, bytes.slice(), stream)
    }
    const request: IncomingRequest = { from: caller.peerId, protocol, data, push }
    let result: Promise<Uint8Array>
    try {
      // Called synchronously, so the handler starts at the arrival time.
      result = Promise.resolve(handler(request))
    } catch (error) {
      result = Promise.reject(error)
    }
    result.then(response => {
      answered = true
      if (this.#stopped) return
      if (!(response instanceof Uint8Array)) {
        respond({ ok: false, message: `handler returned ${typeof response}, expected bytes` })
      } else if (response.length > limits.transportMessageBytesMax) {
        respond({ ok: false, message: `response of ${response.length} bytes exceeds the maximum of ${limits.transportMessageBytesMax}` })
      } else {
        this.#counters.requestsServed++
        respond({ ok: true, data: response.slice() })
      }
    }, (error: unknown) => {
      answered = true
      if (this.#stopped) return
      respond({ ok: false, message: error instanceof Error ? error.message : String(error) })
    })
  }

  /** Hands a pushed message to the request waiting for it; false when none listens (answered, timed out, or no onPush). */
  receivePush (id: string, data: Uint8Array): boolean {
    const pending = this.#pending.get(id)
    if (pending?.onPush === undefined || this.#stopped) return false
    // A throwing listener is a bug in the code under test: it surfaces, as a subscriber's does.
    pending.onPush(data)
    return true
  }

  /**
   * The connection to `peer` was reset: every request waiting on it fails at once, as the
   * mesh's request channel fails what it carried when its stream breaks.
   */
  connectionReset (peer: PeerId): void {
    if (this.#stopped) return
    for (const [id, request] of [...this.#pending]) {
      if (request.peer !== peer) continue
      this.#pending.delete(id)
      this.#clock.clearTimeout(request.timer)
      this.#counters.requestsFailed++
      request.reject(new PeerUnreachableError(peer, 'connection reset before the answer'))
    }
  }

  /** Settles a waiting request; false when none waits (answered, timed out, or a duplicate). */
  receiveResponse (id: string, response: SimResponse): boolean {
    const pending = this.#pending.get(id)
    if (pending === undefined || this.#stopped) return false
    this.#pending.delete(id)
    this.#clock.clearTimeout(pending.timer)
    if (response.ok) {
      pending.resolve(response.data)
    } else {
      this.#counters.requestsFailed++
      pending.reject(new RemoteHandlerError(pending.peer, pending.protocol, response.message))
    }
    return true
  }

  #assertRunning (): void {
    if (this.#stopped) throw new TransportStoppedError(this.peerId)
  }
}

function checkName (expected: string, value: unknown): void {
  if (typeof value !== 'string' || value.length === 0) throw new InvalidInputError(component, expected, value)
}

