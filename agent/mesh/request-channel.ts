/**
 * The caller's side of a request channel: one long-lived libp2p stream to one peer on
 * which many requests are in flight at once, each under its own id (channel-frames.ts),
 * answered in whatever order the server finishes them. Opening a stream costs a yamux
 * stream, protocol negotiation and a peer-store update; a channel pays that once per
 * peer instead of once per request.
 *
 * A channel dies with its stream (the connection closed, the peer reset it, a frame
 * broke the protocol): every request waiting on it fails with PeerUnreachableError and
 * the owner drops it, so the next request opens a fresh one. A request the caller gives
 * up on (timeout) is cancelled with a frame, so the server stops holding it; its slot
 * here stays taken until that frame is written, so the server, which reads frames in
 * order, never sees more than limits.transportChannelRequestsInFlightMax.
 */
import { limits } from '../../runtime/limits.ts'
import { PeerUnreachableError, TransportBusyError, type PeerId } from '../../runtime/transport.ts'
import { encodeFrame, FrameError, FrameReader } from './channel-frames.ts'
import { FrameWriter } from './frame-writer.ts'
import { envelopeBytesMax } from './mesh-envelopes.ts'

/** What a channel needs of a libp2p stream. */
export interface ChannelStream {
  source: AsyncIterable<{ subarray: () => Uint8Array } | Uint8Array>
  sink: (source: AsyncIterable<Uint8Array>) => Promise<void>
  abort: (error: Error) => void
}

/** Called once per request: with the response envelope's bytes, or with why none will come. */
export type Answer = (error: Error | undefined, body?: Uint8Array) => void

/** Called with each push frame's body of a request until it is answered (IncomingRequest.push). */
export type OnPush = (body: Uint8Array) => void

const noBody = new Uint8Array(0)

export class RequestChannel {
  readonly peer: PeerId
  readonly #stream: ChannelStream
  readonly #writer = new FrameWriter()
  readonly #reader = new FrameReader(envelopeBytesMax)
  readonly #pending = new Map<number, Answer>()
  /** The requests that listen for pushes (a subset of #pending's ids). */
  readonly #pushes = new Map<number, OnPush>()
  readonly #onClose: (channel: RequestChannel) => void
  /** Requests waiting for an answer, plus cancellations not yet written. */
  #occupied = 0
  #nextId = 0
  #closed: Error | undefined

  constructor (peer: PeerId, stream: ChannelStream, onClose: (channel: RequestChannel) => void) {
    this.peer = peer
    this.#stream = stream
    this.#onClose = onClose
    this.#stream.sink(this.#writer.source()).catch((error: Error) => { this.close(this.#broken(error)) })
    void this.#read()
  }

  /** Why this channel carries nothing more, once it does not. */
  get closed (): Error | undefined {
    return this.#closed
  }

  /** No room for another request until an answer or a cancellation frees one. */
  get full (): boolean {
    return this.#occupied >= limits.transportChannelRequestsInFlightMax
  }

  /**
   * Sends a request envelope for `protocol`, refusing it first when the channel is closed
   * (its error) or full (TransportBusyError): what every transport's request does.
   */
  request (protocol: string, envelope: Uint8Array, answer: Answer, onPush?: OnPush): () => void {
    if (this.#closed !== undefined) throw this.#closed
    if (this.full) throw new TransportBusyError(this.peer, protocol, limits.transportChannelRequestsInFlightMax)
    return this.send(envelope, answer, onPush)
  }

  /**
   * Sends a request envelope; `answer` is called exactly once unless the returned cancel
   * runs first. The caller checks `closed` and `full` before (or calls `request`).
   */
  send (envelope: Uint8Array, answer: Answer, onPush?: OnPush): () => void {
    if (this.#closed !== undefined) throw this.#closed
    let id = this.#nextId
    while (this.#pending.has(id)) id = (id + 1) >>> 0
    this.#nextId = (id + 1) >>> 0
    // The server must know whether anyone listens, or its pushes would report sent.
    const frame = encodeFrame(onPush === undefined ? 'request' : 'listening', id, envelope, envelopeBytesMax)
    this.#pending.set(id, answer)
    if (onPush !== undefined) this.#pushes.set(id, onPush)
    this.#occupied++
    this.#writer.write(frame)
    return () => { this.#cancel(id) }
  }

  /** Fails every waiting request with `error` and ends the stream. Idempotent. */
  close (error: Error): void {
    if (this.#closed !== undefined) return
    this.#closed = error
    this.#writer.close(true)
    this.#stream.abort(error)
    const answers = [...this.#pending.values()]
    this.#pending.clear()
    this.#pushes.clear()
    this.#onClose(this)
    for (const answer of answers) answer(error)
  }

  #cancel (id: number): void {
    this.#pushes.delete(id)
    if (!this.#pending.delete(id) || this.#closed !== undefined) return
    this.#writer.write(encodeFrame('cancel', id, noBody, 0), () => { this.#occupied-- })
  }

  async #read (): Promise<void> {
    try {
      for await (const chunk of this.#stream.source) {
        for (const frame of this.#reader.push(chunk instanceof Uint8Array ? chunk : chunk.subarray())) {
          if (frame.kind === 'push') {
            // A push to a request answered or cancelled meanwhile: nobody listens any more.
            this.#pushes.get(frame.id)?.(frame.body)
            continue
          }
          if (frame.kind !== 'response') throw new FrameError('request channel', 'only response or push frames from the server', `a ${frame.kind} frame`)
          const answer = this.#pending.get(frame.id)
          // An answer to a request cancelled meanwhile: nobody waits for it.
          if (answer === undefined) continue
          this.#pending.delete(frame.id)
          this.#pushes.delete(frame.id)
          this.#occupied--
          answer(undefined, frame.body)
        }
      }
      this.close(this.#broken(new Error('the peer closed the channel')))
    } catch (error) {
      this.close(this.#broken(error as Error))
    }
  }

  /** The error a request on a lost channel gets: the one a lost stream gave before channels. */
  #broken (error: Error): Error {
    const reason = error.name === 'Error' ? error.message : `${error.name}: ${error.message}`
    return new PeerUnreachableError(this.peer, `stream broke before the answer: ${reason}`)
  }
}
