/**
 * The server's side of a request channel (request-channel.ts): reads request and cancel
 * frames from one caller's stream and runs every request at once, each answer written
 * when its handler is done, so a slow handler holds up nobody else on the channel.
 *
 * Bounded: a request counts until its answer was handed to yamux or the caller cancelled
 * it, and a caller with more than limits.transportChannelRequestsInFlightMax counted is
 * breaking the protocol (an honest one never gets there), like one sending a bad frame
 * or leaving a frame half sent for limits.transportRequestFrameReadTimeoutMs: its channel
 * is cut off. Reading never waits for a handler, so a cancellation behind many slow
 * requests still arrives.
 */
import { limits } from '../../runtime/limits.ts'
import type { PeerId } from '../../runtime/transport.ts'
import { encodeFrame, FrameError, FrameReader } from './channel-frames.ts'
import { FrameWriter } from './frame-writer.ts'
import { envelopeBytesMax } from './mesh-envelopes.ts'
import type { ChannelStream } from './request-channel.ts'

/**
 * Answers one request envelope with a response envelope; never rejects. `push` sends a
 * push frame of that request ahead of its answer (IncomingRequest.push).
 */
export type Serve = (envelope: Uint8Array, from: PeerId, push: (body: Uint8Array) => boolean) => Promise<Uint8Array>

export interface ServingChannelOptions {
  serve: Serve
  /** A frame broke the protocol; the channel is being cut off. */
  onBadFrame: (error: Error) => void
  onClose: (channel: ServingChannel) => void
}

interface Active {
  answered: boolean
  /** Pushes handed to the writer and not yet written (limits.transportRequestPushesUnwrittenMax). */
  pushesUnwritten: number
}

export class ServingChannel {
  readonly from: PeerId
  readonly #stream: ChannelStream
  readonly #options: ServingChannelOptions
  readonly #writer = new FrameWriter()
  readonly #reader = new FrameReader(envelopeBytesMax)
  readonly #active = new Map<number, Active>()
  #timer: ReturnType<typeof setTimeout> | undefined
  #closed = false
  /** The caller ended its side: answer what is active, then end ours. */
  #ending = false

  constructor (stream: ChannelStream, from: PeerId, options: ServingChannelOptions) {
    this.from = from
    this.#stream = stream
    this.#options = options
    this.#stream.sink(this.#writer.source()).catch((error: Error) => { this.close(error) })
    void this.#read()
  }

  /** True once the channel takes no more requests (and writes no more answers but those queued). */
  get closed (): boolean {
    return this.#closed
  }

  /** Requests being handled or answered but not yet written. */
  get serving (): number {
    return this.#active.size
  }

  close (error: Error): void {
    if (this.#closed) return
    this.#closed = true
    clearTimeout(this.#timer)
    this.#writer.close(true)
    this.#active.clear()
    this.#stream.abort(error)
    this.#options.onClose(this)
  }

  async #read (): Promise<void> {
    try {
      for await (const chunk of this.#stream.source) {
        const frames = this.#reader.push(chunk instanceof Uint8Array ? chunk : chunk.subarray())
        for (const frame of frames) {
          if (frame.kind === 'request' || frame.kind === 'listening') this.#start(frame.id, frame.body, frame.kind === 'listening')
          else if (frame.kind === 'cancel') this.#cancel(frame.id)
          else throw new FrameError('request channel', 'request, listening or cancel frames from the caller', `a ${frame.kind} frame`)
        }
        this.#watchPartial(frames.length > 0)
      }
      if (this.#reader.partial) throw new FrameError('request channel', 'a whole frame before the end of stream', 'part of one')
      this.#ending = true
      this.#finishIfDone()
    } catch (error) {
      if (error instanceof FrameError) this.#options.onBadFrame(error)
      this.close(error as Error)
    }
  }

  /** `listening`: the caller gave an onPush; pushes to any other caller are refused. */
  #start (id: number, envelope: Uint8Array, listening: boolean): void {
    if (this.#active.has(id)) throw new FrameError('request channel', 'a request id not in flight', id)
    if (this.#active.size >= limits.transportChannelRequestsInFlightMax) {
      throw new FrameError('request channel', `at most ${limits.transportChannelRequestsInFlightMax} requests in flight`, 'one more')
    }
    const active: Active = { answered: false, pushesUnwritten: 0 }
    this.#active.set(id, active)
    const push = (body: Uint8Array): boolean => {
      if (!listening || this.#closed || active.answered || this.#active.get(id) !== active) return false
      if (active.pushesUnwritten >= limits.transportRequestPushesUnwrittenMax || body.byteLength > limits.transportMessageBytesMax) return false
      active.pushesUnwritten++
      this.#writer.write(encodeFrame('push', id, body, envelopeBytesMax), () => { active.pushesUnwritten-- })
      return true
    }
    void this.#options.serve(envelope, this.from, push).then(response => {
      if (this.#closed || this.#active.get(id) !== active) return
      active.answered = true
      this.#writer.write(encodeFrame('response', id, response, envelopeBytesMax), () => {
        this.#active.delete(id)
        this.#finishIfDone()
      })
    }).catch((error: Error) => { this.close(error) })
  }

  #cancel (id: number): void {
    const active = this.#active.get(id)
    // Already answered: the answer is on its way and frees the slot when written.
    if (active !== undefined && !active.answered) this.#active.delete(id)
  }

  /** After the caller's end of writing, ends the channel once every answer is written. */
  #finishIfDone (): void {
    if (!this.#ending || this.#closed || this.#active.size > 0) return
    this.#closed = true
    clearTimeout(this.#timer)
    // Ends our side once the queue is written; the stream then closes on both sides.
    this.#writer.close()
    this.#options.onClose(this)
  }

  /** A frame begun must be finished within the read timeout, counted from the last whole frame. */
  #watchPartial (progressed: boolean): void {
    if (progressed || !this.#reader.partial) {
      clearTimeout(this.#timer)
      this.#timer = undefined
    }
    if (this.#reader.partial && this.#timer === undefined) {
      this.#timer = setTimeout(() => {
        const error = new FrameError('request channel', `a whole frame within ${limits.transportRequestFrameReadTimeoutMs} ms`, 'part of one')
        this.#options.onBadFrame(error)
        this.close(error)
      }, limits.transportRequestFrameReadTimeoutMs)
    }
  }
}
