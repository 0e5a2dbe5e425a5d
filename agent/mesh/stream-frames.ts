/**
 * Length-prefixed frames on libp2p streams: a u32 little-endian byte count, then that
 * many bytes. The request protocol carries exactly one frame each way per stream, each
 * followed by the end of the writer's side, so a reader takes one frame and then
 * requires the end of stream: trailing bytes are a protocol error, not a second message.
 *
 * Both directions are bounded: a writer refuses a payload above the maximum before
 * sending anything, and a reader refuses a header announcing more than the maximum
 * before buffering any of it (yamux's window keeps what the peer can push meanwhile
 * small).
 */
import { InvalidInputError } from '../../runtime/errors.ts'

const component = 'stream frames'
export const frameHeaderBytes = 4

/** What a libp2p 2 stream gives to read: Uint8ArrayList chunks (or plain bytes). */
export type FrameSource = AsyncIterable<{ subarray: () => Uint8Array } | Uint8Array>

/** What a libp2p 2 stream takes to write: its `sink`, which ends our side when the source ends. */
export interface FrameSink {
  sink: (source: Iterable<Uint8Array>) => Promise<void>
}

/** A frame that breaks the protocol: too large, cut short, or followed by more bytes. */
export class FrameError extends InvalidInputError {
  override name = 'FrameError'
}

/** The u32 LE header announcing a payload of `length` bytes. */
export function frameHeader (length: number): Uint8Array {
  if (!Number.isSafeInteger(length) || length < 0 || length > 0xffff_ffff) {
    throw new InvalidInputError(component, 'a frame length between 0 and 2^32 - 1', length)
  }
  const header = new Uint8Array(frameHeaderBytes)
  new DataView(header.buffer).setUint32(0, length, true)
  return header
}

/** Writes one frame and ends the writing side of the stream. */
export async function writeOnlyFrame (stream: FrameSink, payload: Uint8Array, bytesMax: number): Promise<void> {
  if (payload.byteLength > bytesMax) {
    throw new FrameError(component, `a frame payload of at most ${bytesMax} bytes`, payload)
  }
  await stream.sink([frameHeader(payload.byteLength), payload])
}

/**
 * Reads one frame's payload, then waits for the end of stream. Throws FrameError for a
 * header above `bytesMax`, a stream that ends inside the frame, or bytes after it; any
 * error of the stream itself (reset, abort) passes through unchanged.
 */
export async function readOnlyFrame (source: FrameSource, bytesMax: number): Promise<Uint8Array> {
  const pieces: Uint8Array[] = []
  let buffered = 0
  let length: number | undefined
  for await (const chunk of source) {
    const bytes = chunk instanceof Uint8Array ? chunk : chunk.subarray()
    if (bytes.byteLength === 0) continue
    if (length !== undefined && buffered >= frameHeaderBytes + length) {
      throw new FrameError(component, 'the end of stream after one frame', bytes)
    }
    pieces.push(bytes)
    buffered += bytes.byteLength
    if (length === undefined && buffered >= frameHeaderBytes) {
      const header = concat(pieces, buffered).subarray(0, frameHeaderBytes)
      length = new DataView(header.buffer, header.byteOffset, frameHeaderBytes).getUint32(0, true)
      if (length > bytesMax) {
        throw new FrameError(component, `a frame of at most ${bytesMax} bytes`, `a header announcing ${length} bytes`)
      }
    }
    if (length !== undefined && buffered > frameHeaderBytes + length) {
      throw new FrameError(component, 'the end of stream after one frame', `${buffered - frameHeaderBytes - length} more bytes`)
    }
  }
  if (length === undefined || buffered < frameHeaderBytes + length) {
    throw new FrameError(component, 'a whole frame before the end of stream',
      length === undefined ? `${buffered} bytes of header` : `${buffered - frameHeaderBytes} of ${length} bytes`)
  }
  return concat(pieces, buffered).subarray(frameHeaderBytes)
}

function concat (pieces: Uint8Array[], total: number): Uint8Array {
  if (pieces.length === 1) return pieces[0]!
  const joined = new Uint8Array(total)
  let offset = 0
  for (const piece of pieces) {
    joined.set(piece, offset)
    offset += piece.byteLength
  }
  // Later reads continue from the joined copy, so each byte is copied at most twice.
  pieces.length = 0
  pieces.push(joined)
  return joined
}
