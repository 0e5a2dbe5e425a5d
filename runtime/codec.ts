/**
 * The one msgpack codec for the wire, the Raft log and stored state.
 *
 * Records (msgpackr's structure extension) are off: they are only safe when the
 * structures are versioned and stored with the data, and a peer must never be able to
 * make us depend on structures it sent earlier. A plain decoder still accepts the
 * record extension, so decoded values need schema checks like any other input.
 */
import { Packr, RESET_BUFFER_MODE } from 'msgpackr'
import { InvalidInputError } from './errors.ts'
import { limits } from './limits.ts'

const packr = new Packr({ useRecords: false })

/**
 * Encodes one value into an ArrayBuffer of its own. msgpackr by default hands out views
 * into its shared write buffer (at least 4 MiB once one value outgrew the first 8 KiB), so
 * one small encoding kept for long (a Raft entry, a stored record, a queued message)
 * pinned the whole buffer: 500 kept 20-byte encodings between 4 MB ones pinned 384 MB, and
 * the 1,000-agent simulation held 2 GB of such buffers. Packing with RESET_BUFFER_MODE
 * reuses the one buffer from its start each time, and the result is copied out exactly.
 *
 * `bytesMax` is raised only for values that never travel as one message: RaftSnapshot
 * data (limits.raftSnapshotBytesMax), which is stored and sent in chunks.
 */
export function encode (value: unknown, component = 'codec', bytesMax: number = limits.codecInputBytesMax): Uint8Array {
  let packed: Uint8Array
  try {
    // A copy into a plain Uint8Array: a Buffer's slice (what pack returns) would be another view.
    packed = new Uint8Array(packr.pack(value, RESET_BUFFER_MODE))
  } catch (error) {
    throw new InvalidInputError(component, 'a value msgpack can encode', value, { cause: error })
  }
  // Refuse here what every decoder would refuse, so the writer sees the failure.
  if (packed.byteLength > bytesMax) {
    throw new InvalidInputError(component, `an encoding of at most ${bytesMax} bytes`, packed)
  }
  return packed
}

/**
 * Decodes exactly one value. msgpackr throws Error, RangeError and TypeError on bad
 * input (and could throw anything from a future version); all of them become one
 * InvalidInputError naming the component that received the bytes.
 */
export function decode (bytes: Uint8Array, component: string, bytesMax: number = limits.codecInputBytesMax): unknown {
  if (!(bytes instanceof Uint8Array)) throw new InvalidInputError(component, 'msgpack bytes', bytes)
  if (bytes.byteLength > bytesMax) {
    throw new InvalidInputError(component, `a msgpack value of at most ${bytesMax} bytes`, bytes)
  }
  try {
    return packr.unpack(bytes)
  } catch (error) {
    throw new InvalidInputError(component, 'a msgpack value', bytes, { cause: error })
  }
}

/** The fields of a map in `bytes`, or undefined when they do not decode or hold no map (gossip parsers reject, never throw). */
export function decodeFields (bytes: Uint8Array, component: string): Record<string, unknown> | undefined {
  let value: unknown
  try {
    value = decode(bytes, component)
  } catch {
    return undefined
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined
}
