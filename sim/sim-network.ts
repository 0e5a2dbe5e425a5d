/**
 * The simulated network: every peer's `Transport` (a `SimTransport`) talks through one
 * `SimNetwork`, which decides when, whether and how often each message arrives. All
 * randomness comes from the one `Random` it is given (the simulation's "network"
 * stream) and every arrival is a SimClock timer, so a seed and a sequence of calls
 * replay the same deliveries at the same simulated times.
 *
 * Model, and the choices it makes:
 * - Each message leg (a topic message to one subscriber, a request, a response) is
 *   sent on the directed link sender → receiver with its own latency draw. Links are
 *   FIFO like the one connection libp2p keeps between two peers: a message never
 *   overtakes an earlier one on the same link, unless the reorder fault picks it, in
 *   which case it is held back by an extra delay and later messages pass it.
 * - Reachability is checked twice: when a message is sent (nothing is sent across a
 *   partition, so healing does not resurrect it) and when it arrives (a partition or
 *   crash that starts while a message is in flight drops it).
 * - A clogged link holds what arrives on it and releases it, in arrival order, when
 *   unclogged; released messages are checked again as they arrive.
 * - A duplicate arrives after its original, with a latency draw of its own. Topic
 *   duplicates reach the subscriber (deduplication is the application's job); a
 *   duplicated request runs the handler twice, but the caller takes the first answer
 *   and the network drops the second.
 * - A request to a peer id the network never saw fails at once with
 *   PeerUnreachableError; a request to a known peer that is stopped, restarted or cut
 *   off just gets no answer and times out, as on a real network.
 * - A peer that crashes or stops closes its connections: each running peer it could reach
 *   that listens for closes (Transport.onPeerDisconnected) gets a `closed` leg on the link
 *   from it, behind whatever it sent before, as a kernel's FIN or RST follows the data. A
 *   partition, a cut or a paused peer closes nothing.
 * - A request, its pushes (IncomingRequest.push) and its answer make one stream
 *   (SimStream), ordered as a libp2p stream is: no leg of it arrives before an earlier
 *   one, whatever the reorder fault draws, and pushes are never duplicated. A leg of it
 *   lost or dropped breaks the stream: what follows is dropped too (`broken`), so the
 *   caller never sees a gap, and times out as it does when an answer is lost.
 *   `resetConnection` breaks every stream between its two peers, and the requests waiting
 *   on them fail at once with PeerUnreachableError, as the mesh's channels do; a request
 *   still on its way when its stream broke (reset, or its caller timed out) is dropped.
 * - Request handlers are async. The answer leaves the server when the handler's
 *   promise settles, at the clock's time of that moment; a driver that wants answers
 *   to leave at the exact simulated time runs the clock one timer at a time and lets
 *   promise callbacks run in between (`SimNetworkWorld.wait` does).
 *
 * Every fault change, delivery and drop is reported to `onEvent` as one line without
 * a timestamp (the simulation's trace stamps it), so a run's trace hash covers them.
 */
import { assert } from '../runtime/assert.ts'
import { InvalidInputError } from '../runtime/errors.ts'
import { limits } from '../runtime/limits.ts'
import type { Random } from '../runtime/random.ts'
import type { PeerId, TopicMessage } from '../runtime/transport.ts'
import type { SimClock } from './sim-clock.ts'
import { checkLatency, describeLatency, drawLatencyMs, type LatencyDistribution } from './sim-network-latency.ts'
import {
  bridgeGroups,
  checkPartitionGroups,
  checkPeerId,
  majorityMinorityGroups,
  SimNetworkReachability
} from './sim-network-reachability.ts'
import { SimTransport, type SimNetworkPort, type SimResponse, type SimStream } from './sim-network-transport.ts'
import { SimNetworkStreams } from './sim-network-streams.ts'

export type { LatencyDistribution } from './sim-network-latency.ts'
export { SimTransport } from './sim-network-transport.ts'

const component = 'sim-network'

/** One direction between two peers; faults set on a link affect only that direction. */
export interface Link {
  from: PeerId
  to: PeerId
}

export interface SimNetworkOptions {
  clock: SimClock
  /** The simulation's "network" stream; the network draws from nothing else. */
  random: Random
  /** Latency of every link without its own; default uniform 1..10 ms. */
  latency?: LatencyDistribution
  /** One line per fault change, delivery and drop, for the simulation's trace. */
  onEvent?: (text: string) => void
  /** Messages in flight or held at once before the network asserts a flood. */
  inFlightMax?: number
}

/** What the network did with the message legs it was given, since it was created. */
export interface SimNetworkStats {
  /** Legs handed to the network, duplicates not included. */
  sent: number
  /** Legs that reached a live receiver (topic messages before its validator ran). */
  delivered: number
  duplicated: number
  /** Legs that arrived on a clogged link and were held. */
  held: number
  lost: number
  /** Dropped because a partition, cut or isolation stood between the peers. */
  droppedUnreachable: number
  /** Dropped because the receiver had stopped (or restarted) by then. */
  droppedStopped: number
  /** Topic messages that arrived after the receiver unsubscribed. */
  droppedUnsubscribed: number
  /** Responses and pushes nobody waited for any more: duplicates and answers after a timeout. */
  droppedStale: number
  /** Pushes and answers behind a dropped leg of their request's stream, or after its connection was reset. */
  droppedBroken: number
}

type Leg =
  | { kind: 'topic', message: TopicMessage }
  | { kind: 'request', protocol: string, id: string, data: Uint8Array, caller: SimTransport, stream: SimStream }
  | { kind: 'push', protocol: string, id: string, data: Uint8Array, stream: SimStream }
  | { kind: 'response', protocol: string, id: string, response: SimResponse, stream: SimStream | undefined }
  | { kind: 'closed' }

interface Envelope {
  readonly from: PeerId
  /** The incarnation the message was sent to; if it has stopped the message is dropped. */
  readonly to: SimTransport
  readonly leg: Leg
  readonly duplicate: boolean
}

type DropReason = 'lost' | 'unreachable' | 'stopped' | 'unsubscribed' | 'stale' | 'broken'

export const defaultSimLatency: LatencyDistribution = { kind: 'uniform', minMs: 1, maxMs: 10 }

export class SimNetwork {
  readonly #clock: SimClock
  readonly #random: Random
  readonly #onEvent: ((text: string) => void) | undefined
  readonly #inFlightMax: number
  readonly #initialLatency: LatencyDistribution

  /** The newest transport of each peer id, in order of first creation. */
  readonly #transports = new Map<PeerId, SimTransport>()
  readonly #sequences = new Map<PeerId, number>()
  readonly #penalties = new Map<PeerId, number>()
  readonly #reachability = new SimNetworkReachability()

  #latency: LatencyDistribution
  readonly #linkLatency = new Map<string, LatencyDistribution>()
  #loss = 0
  readonly #linkLoss = new Map<string, number>()
  #duplication = 0
  readonly #linkDuplication = new Map<string, number>()
  #reorderProbability = 0
  #reorderExtraMaxMs = 0
  /** Clogged links and what they hold, in arrival order. */
  readonly #clogged = new Map<string, { link: Link, held: Envelope[] }>()
  /** Latest arrival time scheduled on each link, which keeps links FIFO. */
  readonly #linkTail = new Map<string, number>()
  /** linkKey of each directed link, made once: every message leg looks its link up, and JSON.stringify per leg was a tenth of the network's cost. */
  readonly #linkKeys = new Map<PeerId, Map<PeerId, string>>()
  /**
   * The running subscribers of each topic, in the order of #transports, built on first
   * use and dropped when a transport stops or (un)subscribes (a new one has no
   * subscriptions, and the incarnation it replaces left at its stop). Every machine
   * agent publishes presence that only the controllers hear: scanning every transport per
   * publication made presence alone grow with the square of the agents.
   */
  readonly #subscribersByTopic = new Map<string, SimTransport[]>()
  /** Requests sent and not yet answered, by id: the streams a reset connection breaks. */
  readonly #streams = new SimNetworkStreams()
  /**
   * The peers that listen, or listened, for closed connections (the controllers), each
   * with its place in #transports: a crash is told to those, in that order, without
   * looking at every transport (which made stopping N agents cost N²).
   */
  readonly #closeHearers = new Set<PeerId>()
  readonly #peerOrder = new Map<PeerId, number>()

  #inFlight = 0
  readonly #stats: SimNetworkStats = {
    sent: 0, delivered: 0, duplicated: 0, held: 0, lost: 0,
    droppedUnreachable: 0, droppedStopped: 0, droppedUnsubscribed: 0, droppedStale: 0, droppedBroken: 0
  }

  readonly #port: SimNetworkPort = {
    nextMessageId: peer => {
      const sequence = (this.#sequences.get(peer) ?? 0) + 1
      this.#sequences.set(peer, sequence)
      return `${peer}#${sequence}`
    },
    isKnown: peer => this.#transports.has(peer),
    connectedPeers: peer => this.#connectedPeers(peer),
    publish: (sender, message) => { this.#publish(sender, message) },
    sendRequest: (sender, to, protocol, id, data, listens) => {
      const target = this.#transports.get(to)
      assert(target !== undefined, `sim-network: request "${id}" to unknown peer "${to}" got past the transport`)
      const stream: SimStream = { id, caller: sender, server: to, listens, broken: false, tailAt: 0, unwritten: 0 }
      this.#streams.add(stream)
      this.#send({ from: sender.peerId, to: target, leg: { kind: 'request', protocol, id, data, caller: sender, stream }, duplicate: false })
    },
    sendPush: (server, caller, protocol, id, data, stream) => {
      if (stream.broken || !stream.listens || stream.unwritten >= limits.transportRequestPushesUnwrittenMax) return false
      stream.unwritten++
      this.#send({ from: server.peerId, to: caller, leg: { kind: 'push', protocol, id, data, stream }, duplicate: false })
      return true
    },
    sendResponse: (server, caller, protocol, id, response, stream) => {
      this.#send({ from: server.peerId, to: caller, leg: { kind: 'response', protocol, id, response, stream }, duplicate: false })
    },
    requestEnded: id => {
      const stream = this.#streams.get(id)
      if (stream === undefined) return
      stream.broken = true
      this.#streams.delete(id)
    },
    stopped: transport => {
      this.#streams.breakAt(transport.peerId, stream => stream.caller === transport || stream.server === transport.peerId)
      this.#subscribersByTopic.clear()
      this.#event(() => `stop ${transport.peerId} incarnation ${transport.incarnation}`)
      this.#closeConnections(transport.peerId)
    },
    subscriptionsChanged: (_transport, topic) => { this.#subscribersByTopic.delete(topic) },
    listensForCloses: transport => { this.#closeHearers.add(transport.peerId) }
  }

  constructor (options: SimNetworkOptions) {
    assert(options?.clock !== undefined, 'sim-network: no "clock"; pass the simulation\'s SimClock')
    assert(options.random !== undefined, 'sim-network: no "random"; pass the simulation\'s "network" stream')
    this.#clock = options.clock
    this.#random = options.random
    this.#onEvent = options.onEvent
    this.#inFlightMax = options.inFlightMax ?? limits.simNetworkInFlightMax
    assert(Number.isSafeInteger(this.#inFlightMax) && this.#inFlightMax > 0,
      `sim-network: inFlightMax must be a positive integer, got ${String(this.#inFlightMax)}`)
    const latency = options.latency ?? defaultSimLatency
    checkLatency(component, latency)
    this.#initialLatency = latency
    this.#latency = latency
  }

  // -------------------------------------------------------------------------------
  // Peers

  /**
   * The running transport of `peerId`, created if there is none: the first call
   * starts the peer, and a call after it stopped restarts it as a new incarnation.
   */
  transport (peerId: PeerId): SimTransport {
    checkPeerId(peerId)
    const current = this.#transports.get(peerId)
    if (current !== undefined && !current.stopped) return current
    const incarnation = (current?.incarnation ?? 0) + 1
    const transport = new SimTransport(peerId, incarnation, this.#port, this.#clock)
    this.#transports.set(peerId, transport)
    if (!this.#peerOrder.has(peerId)) this.#peerOrder.set(peerId, this.#peerOrder.size)
    this.#event(() => `start ${peerId} incarnation ${incarnation}`)
    return transport
  }

  /** Stops the peer at once, as a crash would; unknown or stopped peers are ignored. */
  crash (peerId: PeerId): void {
    this.#transports.get(peerId)?.crash()
  }

  /** Every peer id ever started, running or not, in order of first start. */
  peers (): PeerId[] {
    return [...this.#transports.keys()]
  }

  isRunning (peerId: PeerId): boolean {
    return this.#transports.get(peerId)?.stopped === false
  }

  /** Whether a message sent now from `from` would be let through to `to` (both running, no partition, cut or isolation). */
  canReach (from: PeerId, to: PeerId): boolean {
    return this.isRunning(from) && this.isRunning(to) && this.#reachability.canSend(from, to)
  }

  /** Messages of `peerId` that receivers' validators rejected, over all its incarnations. */
  penalty (peerId: PeerId): number {
    return this.#penalties.get(peerId) ?? 0
  }

  stats (): SimNetworkStats {
    return { ...this.#stats }
  }

  /** Message legs scheduled to arrive or held on a clogged link. */
  get inFlightCount (): number {
    return this.#inFlight
  }

  // -------------------------------------------------------------------------------
  // Faults. Each takes effect from the current simulated time and is traced.

  /** Latency of every link without its own, or of one directed link. */
  setLatency (latency: LatencyDistribution, link?: Link): void {
    checkLatency(component, latency)
    if (link === undefined) this.#latency = latency
    else this.#linkLatency.set(linkKey(checkLink(link)), latency)
    this.#event(() => `latency ${describeLatency(latency)}${onLink(link)}`)
  }

  /** Probability that a message leg is lost, on every link or one directed link. */
  setLoss (probability: number, link?: Link): void {
    checkProbability(probability)
    if (link === undefined) this.#loss = probability
    else this.#linkLoss.set(linkKey(checkLink(link)), probability)
    this.#event(() => `loss ${probability}${onLink(link)}`)
  }

  /** Probability that a message leg arrives twice, on every link or one directed link. */
  setDuplication (probability: number, link?: Link): void {
    checkProbability(probability)
    if (link === undefined) this.#duplication = probability
    else this.#linkDuplication.set(linkKey(checkLink(link)), probability)
    this.#event(() => `duplication ${probability}${onLink(link)}`)
  }

  /** Probability that a message leg is delayed by 1..extraMaxMs more and lets later ones pass. */
  setReorder (probability: number, extraMaxMs: number): void {
    checkProbability(probability)
    if (!Number.isSafeInteger(extraMaxMs) || extraMaxMs < 0 || (probability > 0 && extraMaxMs < 1)) {
      throw new InvalidInputError(component, 'a reorder delay of whole ms, at least 1 when the probability is above 0', extraMaxMs)
    }
    this.#reorderProbability = probability
    this.#reorderExtraMaxMs = extraMaxMs
    this.#event(() => probability === 0 ? 'reorder off' : `reorder ${probability} extra 1..${extraMaxMs} ms`)
  }

  /** Holds every message from `a` to `b` (not lost) until `unclog(a, b)`. */
  clog (a: PeerId, b: PeerId): void {
    const link = checkLink({ from: a, to: b })
    const key = linkKey(link)
    if (!this.#clogged.has(key)) this.#clogged.set(key, { link, held: [] })
    this.#event(() => `clog ${a}->${b}`)
  }

  /** Releases what `a` → `b` holds, in the order it arrived, at the current time. */
  unclog (a: PeerId, b: PeerId): void {
    const key = linkKey(checkLink({ from: a, to: b }))
    const clogged = this.#clogged.get(key)
    this.#clogged.delete(key)
    this.#event(() => `unclog ${a}->${b} releasing ${clogged?.held.length ?? 0}`)
    if (clogged !== undefined) this.#release(clogged.held)
  }

  /** Symmetric partition: peers in different groups cannot talk; peers in no group talk to nobody. */
  partition (groups: PeerId[][]): void {
    const checked = checkPartitionGroups(groups)
    this.#reachability.setGroups(checked)
    this.#event(() => `partition ${checked.map(describeGroup).join(' ')}`)
  }

  /** Messages from `from` to `to` are lost; the other direction still works. */
  cutOneWay (from: PeerId, to: PeerId): void {
    checkLink({ from, to })
    this.#reachability.cutOneWay(from, to)
    this.#event(() => `cut ${from}->${to}`)
  }

  /**
   * The connection between two running peers is reset (a middlebox or a flapping interface
   * drops it) although both live: each end hears of the close, as after a crash, and the
   * next message between them goes through as on a redialled connection.
   */
  resetConnection (a: PeerId, b: PeerId): void {
    checkLink({ from: a, to: b })
    this.#event(() => `reset connection ${a}<->${b}`)
    // What was on the connection is gone: undelivered pushes and answers, and the requests waiting for them.
    this.#streams.breakAt(a, ({ caller, server }) => (caller.peerId === a && server === b) || (caller.peerId === b && server === a))
    for (const [side, other] of [[a, b], [b, a]] as const) {
      const transport = this.#transports.get(side)
      if (transport !== undefined && !transport.stopped) transport.connectionReset(other)
    }
    for (const [from, to] of [[a, b], [b, a]] as const) {
      const target = this.#transports.get(to)
      if (this.isRunning(from) && target?.hearsCloses === true) this.#send({ from, to: target, leg: { kind: 'closed' }, duplicate: false })
    }
  }

  /** `peer` can neither send nor receive, whatever the partition says. */
  isolate (peer: PeerId): void {
    checkPeerId(peer)
    this.#reachability.isolate(peer)
    this.#event(() => `isolate ${peer}`)
  }

  /**
   * Splits `peers` into a majority and a minority made of the first `minoritySize`
   * of them (put a leader first to cut it off with the minority). Like `partition`,
   * peers not listed are cut off from everyone.
   */
  majorityMinority (peers: readonly PeerId[], minoritySize: number): void {
    const [majority, minority] = majorityMinorityGroups(peers, minoritySize)
    this.#reachability.setGroups([majority!, minority!])
    this.#event(() => `partition majority ${describeGroup(majority!)} minority ${describeGroup(minority!)}`)
  }

  /** Two sides that cannot reach each other, and `bridgePeer`, which reaches both. */
  bridge (groupA: PeerId[], groupB: PeerId[], bridgePeer: PeerId): void {
    const groups = bridgeGroups(groupA, groupB, bridgePeer)
    this.#reachability.setGroups(groups)
    this.#event(() => `bridge ${groups.map(describeGroup).join(' ')} via ${bridgePeer}`)
  }

  /** Removes every partition, cut and isolation; loss, duplication, reorder, clogs and latency stay. */
  heal (): void {
    this.#reachability.heal()
    this.#event(() => 'heal')
  }

  /** Back to a clean network: heals, unclogs (releasing what was held) and drops every other fault setting. */
  resetFaults (): void {
    this.#reachability.heal()
    this.#loss = 0
    this.#linkLoss.clear()
    this.#duplication = 0
    this.#linkDuplication.clear()
    this.#reorderProbability = 0
    this.#reorderExtraMaxMs = 0
    this.#latency = this.#initialLatency
    this.#linkLatency.clear()
    const clogged = [...this.#clogged.values()]
    this.#clogged.clear()
    this.#event(() => 'reset faults')
    for (const { held } of clogged) this.#release(held)
  }

  // -------------------------------------------------------------------------------
  // Moving messages

  /** `peer` stopped: its connections close at the peers that listen for it (see the model above). */
  #closeConnections (peer: PeerId): void {
    const hearers: SimTransport[] = []
    for (const id of this.#closeHearers) {
      const transport = this.#transports.get(id)
      // One that stopped listening (or stopped) says so again if it listens again.
      if (transport === undefined || !transport.hearsCloses) this.#closeHearers.delete(id)
      else if (id !== peer) hearers.push(transport)
    }
    hearers.sort((x, y) => this.#peerOrder.get(x.peerId)! - this.#peerOrder.get(y.peerId)!)
    for (const transport of hearers) this.#send({ from: peer, to: transport, leg: { kind: 'closed' }, duplicate: false })
  }

  #connectedPeers (peer: PeerId): PeerId[] {
    const reachable: PeerId[] = []
    for (const [id, transport] of this.#transports) {
      if (!transport.stopped && this.#reachability.canSend(peer, id)) reachable.push(id)
    }
    return reachable.sort()
  }

  /** Gossip goes to the peers subscribed at publish time; each copy is a leg of its own. */
  #publish (sender: SimTransport, message: TopicMessage): void {
    for (const receiver of this.#subscribers(message.topic)) {
      if (receiver.peerId === sender.peerId) continue
      this.#send({ from: sender.peerId, to: receiver, leg: { kind: 'topic', message }, duplicate: false })
    }
  }

  #subscribers (topic: string): readonly SimTransport[] {
    let list = this.#subscribersByTopic.get(topic)
    if (list === undefined) {
      list = [...this.#transports.values()].filter(transport => transport.isSubscribed(topic))
      this.#subscribersByTopic.set(topic, list)
    }
    return list
  }

  #send (envelope: Envelope): void {
    this.#stats.sent++
    const { from, to } = envelope
    if (brokenStream(envelope)) return this.#drop(envelope, 'broken')
    if (to.stopped) return this.#drop(envelope, 'stopped')
    if (!this.#reachability.canSend(from, to.peerId)) return this.#drop(envelope, 'unreachable')
    const key = this.#linkKey(from, to.peerId)
    // Draws are taken only for faults that are on, so a run without faults draws
    // exactly one latency per leg.
    const loss = this.#linkLoss.get(key) ?? this.#loss
    if (loss > 0 && this.#random.next() < loss) return this.#drop(envelope, 'lost')
    const latency = this.#linkLatency.get(key) ?? this.#latency
    const now = this.#clock.now()
    let arrivesAt = now + drawLatencyMs(latency, this.#random)
    if (this.#reorderProbability > 0 && this.#random.next() < this.#reorderProbability) {
      // Held back without moving the link's tail, so the legs behind it overtake it.
      arrivesAt += this.#random.int(1, this.#reorderExtraMaxMs)
    } else {
      arrivesAt = Math.max(arrivesAt, this.#linkTail.get(key) ?? arrivesAt)
      this.#linkTail.set(key, arrivesAt)
    }
    const stream = streamOf(envelope.leg)
    if (stream !== undefined && envelope.leg.kind !== 'request') {
      // A stream's legs keep their order whatever the link does (a reordered one holds back those behind it).
      arrivesAt = Math.max(arrivesAt, stream.tailAt)
      stream.tailAt = arrivesAt
    }
    this.#schedule(envelope, arrivesAt - now)
    // A stream does not duplicate what it carries; a push twice would be a push out of order.
    if (envelope.leg.kind === 'push') return
    const duplication = this.#linkDuplication.get(key) ?? this.#duplication
    if (duplication > 0 && this.#random.next() < duplication) {
      this.#stats.duplicated++
      this.#schedule({ ...envelope, duplicate: true }, arrivesAt - now + drawLatencyMs(latency, this.#random))
    }
  }

  #linkKey (from: PeerId, to: PeerId): string {
    let byTarget = this.#linkKeys.get(from)
    if (byTarget === undefined) this.#linkKeys.set(from, byTarget = new Map())
    let key = byTarget.get(to)
    if (key === undefined) byTarget.set(to, key = linkKey({ from, to }))
    return key
  }

  #schedule (envelope: Envelope, delayMs: number): void {
    assert(this.#inFlight < this.#inFlightMax,
      `sim-network: more than ${this.#inFlightMax} messages in flight at ${this.#clock.now()} ms; something floods the network`)
    this.#inFlight++
    this.#clock.setTimeout(() => {
      this.#inFlight--
      this.#arrive(envelope)
    }, delayMs)
  }

  #arrive (envelope: Envelope): void {
    const { from, to } = envelope
    if (brokenStream(envelope)) return this.#drop(envelope, 'broken')
    if (to.stopped) return this.#drop(envelope, 'stopped')
    if (!this.#reachability.canSend(from, to.peerId)) return this.#drop(envelope, 'unreachable')
    const clogged = this.#clogged.get(this.#linkKey(from, to.peerId))
    if (clogged !== undefined) {
      this.#stats.held++
      this.#inFlight++
      clogged.held.push(envelope)
      this.#event(() => `hold ${describeEnvelope(envelope)}`)
      return
    }
    this.#handOver(envelope)
  }

  #handOver (envelope: Envelope): void {
    const { leg, to } = envelope
    switch (leg.kind) {
      case 'topic': {
        if (!to.isSubscribed(leg.message.topic)) return this.#drop(envelope, 'unsubscribed')
        this.#stats.delivered++
        const result = to.validateTopicMessage(leg.message)
        this.#event(() => `deliver ${describeEnvelope(envelope)} ${result}`)
        if (result === 'reject') this.#penalties.set(envelope.from, this.penalty(envelope.from) + 1)
        if (result === 'accept') to.deliverTopicMessage(leg.message)
        return
      }
      case 'request':
        this.#stats.delivered++
        this.#event(() => `deliver ${describeEnvelope(envelope)}`)
        // A duplicate is served too, but nobody listens to its pushes.
        to.serveRequest(leg.caller, leg.protocol, leg.id, leg.data.slice(), envelope.duplicate ? undefined : leg.stream)
        return
      case 'push':
        leg.stream.unwritten--
        if (!to.receivePush(leg.id, leg.data)) return this.#drop(envelope, 'stale')
        this.#stats.delivered++
        this.#event(() => `deliver ${describeEnvelope(envelope)}`)
        return
      case 'response': {
        if (leg.stream !== undefined && !envelope.duplicate) this.#streams.delete(leg.id)
        // Only the first answer to a request counts; the caller may also have given up.
        if (!to.receiveResponse(leg.id, leg.response)) return this.#drop(envelope, 'stale')
        this.#stats.delivered++
        this.#event(() => `deliver ${describeEnvelope(envelope)} ${leg.response.ok ? 'ok' : 'error'}`)
        return
      }
      case 'closed':
        this.#stats.delivered++
        this.#event(() => `deliver ${describeEnvelope(envelope)}`)
        to.connectionClosed(envelope.from)
    }
  }

  /** Held legs go back on the wire with no further delay, in the order they arrived. */
  #release (held: Envelope[]): void {
    for (const envelope of held) {
      this.#inFlight--
      this.#schedule(envelope, 0)
    }
  }

  #drop (envelope: Envelope, reason: DropReason): void {
    switch (reason) {
      case 'lost': this.#stats.lost++; break
      case 'unreachable': this.#stats.droppedUnreachable++; break
      case 'stopped': this.#stats.droppedStopped++; break
      case 'unsubscribed': this.#stats.droppedUnsubscribed++; break
      case 'stale': this.#stats.droppedStale++; break
      case 'broken': this.#stats.droppedBroken++; break
    }
    const { leg } = envelope
    // A stale push was already taken off the stream when it was handed over.
    if (leg.kind === 'push' && reason !== 'stale') leg.stream.unwritten--
    const stream = streamOf(leg)
    if (stream !== undefined && !envelope.duplicate && reason !== 'stale') {
      // What follows a lost leg on its stream is lost too: a stream has no gaps.
      stream.broken = true
      if (leg.kind !== 'push') this.#streams.delete(stream.id)
    }
    this.#event(() => `drop ${reason} ${describeEnvelope(envelope)}`)
  }

  /** Builds the line only when someone listens: most messages are never traced. */
  #event (line: () => string): void {
    if (this.#onEvent !== undefined) this.#onEvent(line())
  }
}

function streamOf (leg: Leg): SimStream | undefined {
  return leg.kind === 'request' || leg.kind === 'push' || leg.kind === 'response' ? leg.stream : undefined
}

/** Whether a leg travels on a stream already broken (a request too: its caller has given up on it, or its connection was reset). */
function brokenStream ({ leg }: Envelope): boolean {
  return streamOf(leg)?.broken === true
}

function linkKey (link: Link): string {
  return JSON.stringify([link.from, link.to])
}

function checkLink (link: Link): Link {
  if (typeof link !== 'object' || link === null) throw new InvalidInputError(component, 'a link { from, to }', link)
  checkPeerId(link.from, 'a link with a non-empty "from" peer id')
  checkPeerId(link.to, 'a link with a non-empty "to" peer id')
  if (link.from === link.to) throw new InvalidInputError(component, 'a link between two different peers', link.from)
  return { from: link.from, to: link.to }
}

function checkProbability (probability: number): void {
  if (typeof probability !== 'number' || !(probability >= 0 && probability <= 1)) {
    throw new InvalidInputError(component, 'a probability from 0 to 1', probability)
  }
}

const onLink = (link: Link | undefined): string => link === undefined ? '' : ` ${link.from}->${link.to}`

const describeGroup = (group: readonly PeerId[]): string => `{${group.join(' ')}}`

function describeEnvelope ({ from, to, leg, duplicate }: Envelope): string {
  if (leg.kind === 'closed') return `closed ${from}->${to.peerId}${duplicate ? ' dup' : ''}`
  const what = leg.kind === 'topic' ? `topic ${leg.message.topic}` : `${leg.kind} ${leg.protocol}`
  const id = leg.kind === 'topic' ? leg.message.id : leg.id
  return `${what} ${from}->${to.peerId} ${id}${duplicate ? ' dup' : ''}`
}
