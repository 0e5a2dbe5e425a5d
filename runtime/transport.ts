import { CantripError } from './errors.ts'

/**
 * How agents talk: topic publish/subscribe (gossip) with per-message validation, and
 * request/response between two peers. Real: libp2p gossipsub + streams (the mesh issue);
 * simulated: `SimNetwork` in sim/, with latency, loss, duplication, reordering, clogging
 * and partitions. Both are held to one compliance suite (test/compliance/).
 *
 * Gossip is a hint, not the source of truth: delivery is at-most-once per subscriber
 * and unordered across senders; applications deduplicate and order by their own
 * revisions. A subscriber never receives its own publications.
 */
export type PeerId = string

export interface TopicMessage {
  topic: string
  from: PeerId
  /** Unique per publication (sender + sequence), for deduplication and tracing. */
  id: string
  data: Uint8Array
}

/**
 * `accept` delivers; `reject` drops and penalises the sender (counted); `ignore` drops
 * without penalty (e.g. a duplicate the application already has).
 */
export type ValidationResult = 'accept' | 'reject' | 'ignore'
export type TopicValidator = (message: TopicMessage) => ValidationResult

export interface IncomingRequest {
  from: PeerId
  protocol: string
  data: Uint8Array
  /**
   * Present where the transport carries them (not every one does: a handler without it
   * answers once, as always): sends `data` to the caller ahead of the answer, on the
   * request's own stream, in order, to its RequestOptions.onPush. One long-lived request
   * can so carry many messages the server chooses when to send (a watch's changes, as
   * etcd's watch stream), one message each instead of an answer and a new request.
   * False when nothing was sent: the request is answered, cancelled or its stream gone,
   * the caller does not listen, or limits.transportRequestPushesUnwrittenMax pushes of
   * this request are not yet written (a caller that stops reading gets its answer instead,
   * never an unbounded queue). At most limits.transportMessageBytesMax bytes.
   */
  push?: (data: Uint8Array) => boolean
}

export type RequestHandler = (request: IncomingRequest) => Promise<Uint8Array>

export interface RequestOptions {
  timeoutMs: number
  /**
   * Called with each message the handler pushes ahead of its answer (IncomingRequest.push),
   * in order, until the request settles; never after. The timeout still bounds the request.
   */
  onPush?: (data: Uint8Array) => void
}

export interface TransportCounters {
  /** Publications accepted by `publish` (whether or not anyone was subscribed). */
  published: number
  /** Topic messages this peer's validator accepted and handed to its subscribers. */
  delivered: number
  /** Topic messages this peer's validator rejected (the sender is penalised). */
  rejected: number
  /** Topic messages this peer's validator ignored. */
  ignored: number
  /** Requests handed to the network (not those refused at the call). */
  requestsSent: number
  /** Requests this peer's handlers answered with data. */
  requestsServed: number
  /** Requests sent that ended in an error: timeout, remote error, or stop while waiting. */
  requestsFailed: number
}

/**
 * After `stop()`: `publish` and `request` reject and `subscribe`, `setTopicValidator`
 * and `handle` throw TransportStoppedError; requests still waiting reject with it;
 * `connectedPeers()` is empty; `counters()` still answers; a second `stop()` is a no-op.
 * Messages and requests above limits.transportMessageBytesMax are refused with an
 * InvalidInputError at the call.
 */
export interface Transport {
  readonly peerId: PeerId
  subscribe (topic: string, onMessage: (message: TopicMessage) => void): () => void
  /** One validator per topic; runs on the receiver before delivery. */
  setTopicValidator (topic: string, validator: TopicValidator | undefined): void
  /** Resolves once the message is handed to the network (not when it is delivered). */
  publish (topic: string, data: Uint8Array): Promise<void>
  handle (protocol: string, handler: RequestHandler): void
  unhandle (protocol: string): void
  /**
   * Rejects with RequestTimeoutError, PeerUnreachableError or RemoteHandlerError; with
   * TransportBusyError at once when limits.transportRequestsInFlightMax are outstanding.
   */
  request (peer: PeerId, protocol: string, data: Uint8Array, options: RequestOptions): Promise<Uint8Array>
  /** Peers this one can currently reach directly. */
  connectedPeers (): PeerId[]
  /**
   * Calls `listener` each time this peer's last connection to another closes, as when that
   * process dies (its kernel closes its sockets) or stops; a partition or a hung process
   * closes nothing, so only a timeout tells those. Not a liveness verdict: the connection
   * may be redialled. Returns the unsubscribe. Optional: a transport that cannot tell
   * (a test double) leaves it out, and its users wait for their timeouts.
   */
  onPeerDisconnected? (listener: (peer: PeerId) => void): () => void
  counters (): TransportCounters
  stop (): Promise<void>
}

export class RequestTimeoutError extends CantripError {
  override name = 'RequestTimeoutError'
  constructor (peer: PeerId, protocol: string, timeoutMs: number) {
    super(`request to "${peer}" on "${protocol}": no response within ${timeoutMs} ms`)
  }
}

export class PeerUnreachableError extends CantripError {
  override name = 'PeerUnreachableError'
  constructor (peer: PeerId, reason: string) {
    super(`peer "${peer}": unreachable: ${reason}`)
  }
}

export class RemoteHandlerError extends CantripError {
  override name = 'RemoteHandlerError'
  constructor (peer: PeerId, protocol: string, message: string) {
    super(`peer "${peer}" failed "${protocol}": ${message}`)
  }
}

export class TransportStoppedError extends CantripError {
  override name = 'TransportStoppedError'
  constructor (peer: PeerId) {
    super(`transport of "${peer}": stopped`)
  }
}

/** Too many requests outstanding: refused at the call, before anything is sent. */
export class TransportBusyError extends CantripError {
  override name = 'TransportBusyError'
  constructor (peer: PeerId, protocol: string, inFlightMax: number) {
    super(`request to "${peer}" on "${protocol}": refused: ${inFlightMax} requests already in flight, the maximum`)
  }
}
