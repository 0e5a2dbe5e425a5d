/**
 * The frames of a request channel (request-channel.ts): many requests and their answers
 * on one long-lived libp2p stream, told apart by a request id. On the wire a frame is
 *
 *   u32 LE n | u8 kind | u32 LE id | n - 5 bytes of body
 *
 * `request` (caller → server; body: a request envelope), `cancel` (caller → server; no
 * body: the caller gave up on that id), `response` (server → caller; body: a response
 * envelope) and `push` (server → caller; body: the handler's bytes as they are, sent
 * ahead of the response of that id: IncomingRequest.push). Answers may come in any
 * order; a request's pushes come in order and before its response. `listening` (caller →
 * server; body: a request envelope) is a request whose caller listens for pushes
 * (RequestOptions.onPush): the server's push of any other request is refused at the
 * handler (IncomingRequest.push returns false), so a handler never believes it reached a
 * caller that drops what it sends.
 *
 * The reader is incremental and bounded: it refuses a header announcing more than the
 * maximum, or less than the kind and id, before buffering any of the frame (yamux's
 * window keeps what the peer can push meanwhile small).
 */
import { InvalidInputError } from '../../runtime/errors.ts'

const component = 'request channel frames'
export const lengthBytes = 4
/** Kind and id, inside the length. */
export const frameHeadBytes = 5

export const frameKinds = { request: 0, cancel: 1, response: 2, push: 3, listening: 4 } as const
export type FrameKind = keyof typeof frameKinds
const kindNames: readonly FrameKind[] = ['request', 'cancel', 'response', 'push', 'listening']

export interface ChannelFrame {
  kind: FrameKind
  id: number
  body: Uint8Array
}

/** A frame that breaks the protocol: too large, too small or of an unknown kind. */
export class FrameError extends InvalidInputError {
  override name = 'FrameError'
}

/** One frame's bytes, ready to write; refuses a body above `bodyBytesMax` before allocating. */
export function encodeFrame (kind: FrameKind, id: number, body: Uint8Array, bodyBytesMax: number): Uint8Array {
  if (body.byteLength > bodyBytesMax) throw new FrameError(component, `a frame body of at most ${bodyBytesMax} bytes`, body)
  if (!Number.isInteger(id) || id < 0 || id > 0xffff_ffff) throw new InvalidInputError(component, 'a request id between 0 and 2^32 - 1', id)
  const frame = new Uint8Array(lengthBytes + frameHeadBytes + body.byteLength)
  const view = new DataView(frame.buffer)
  view.setUint32(0, frameHeadBytes + body.byteLength, true)
  view.setUint8(4, frameKinds[kind])
  view.setUint32(5, id, true)
  frame.set(body, lengthBytes + frameHeadBytes)
  return frame
}

/**
 * Cuts a byte stream into frames. `push` returns the frames the chunk completed and
 * throws FrameError at the first bad header; after that the reader is spent.
 */
export class FrameReader {
  readonly #bodyBytesMax: number
  readonly #chunks: Uint8Array[] = []
  #buffered = 0
  /** n of the frame being read, once its length is in. */
  #length: number | undefined

  constructor (bodyBytesMax: number) {
    this.#bodyBytesMax = bodyBytesMax
  }

  /** True while part of a frame is buffered. */
  get partial (): boolean {
    return this.#buffered > 0
  }

  push (chunk: Uint8Array): ChannelFrame[] {
    const frames: ChannelFrame[] = []
    if (chunk.byteLength === 0) return frames
    this.#chunks.push(chunk)
    this.#buffered += chunk.byteLength
    for (;;) {
      if (this.#length === undefined) {
        if (this.#buffered < lengthBytes) return frames
        const length = readU32(this.#take(lengthBytes), 0)
        if (length < frameHeadBytes || length > frameHeadBytes + this.#bodyBytesMax) {
          throw new FrameError(component, `a frame of ${frameHeadBytes} to ${frameHeadBytes + this.#bodyBytesMax} bytes`, `a header announcing ${length} bytes`)
        }
        this.#length = length
      }
      if (this.#buffered < this.#length) return frames
      const bytes = this.#take(this.#length)
      this.#length = undefined
      const kind = kindNames[bytes[0]!]
      if (kind === undefined) throw new FrameError(component, 'a frame of kind request, cancel, response, push or listening', `kind ${bytes[0]!}`)
      frames.push({ kind, id: readU32(bytes, 1), body: bytes.subarray(frameHeadBytes) })
    }
  }

  /** The next `n` buffered bytes: a view when one chunk holds them, else a copy. */
  #take (n: number): Uint8Array {
    this.#buffered -= n
    const first = this.#chunks[0]!
    if (first.byteLength >= n) {
      if (first.byteLength === n) this.#chunks.shift()
      else this.#chunks[0] = first.subarray(n)
      return first.subarray(0, n)
    }
    const joined = new Uint8Array(n)
    let offset = 0
    while (offset < n) {
      const chunk = this.#chunks[0]!
      const used = Math.min(chunk.byteLength, n - offset)
      joined.set(chunk.subarray(0, used), offset)
      offset += used
      if (used === chunk.byteLength) this.#chunks.shift()
      else this.#chunks[0] = chunk.subarray(used)
    }
    return joined
  }
}

function readU32 (bytes: Uint8Array, at: number): number {
  return new DataView(bytes.buffer, bytes.byteOffset + at, 4).getUint32(0, true)
}
