/**
 * The one msgpack codec for the wire, the Raft log and stored state.
 *
 * Records (msgpackr's structure extension) are off: they are only safe when the
 * structures are versioned and stored with the data, and a peer must never be able to
 * make us depend on structures it sent earlier. A plain decoder still accepts the
 * record extension, so decoded values need schema checks like any other input.
 */
import { Packr } from 'msgpackr'
import { InvalidInputError } from './errors.ts'
import { limits } from './limits.ts'

const packr = new Packr({ useRecords: false })

/**
 * Encodes one value. The result is a plain Uint8Array view; it may share an
 * ArrayBuffer with other encodings, so copy it before handing out `.buffer`.
 */
export function encode (value: unknown, component = 'codec'): Uint8Array {
  let packed: Uint8Array
  try {
    packed = packr.pack(value)
  } catch (error) {
    throw new InvalidInputError(component, 'a value msgpack can encode', value, { cause: error })
  }
  // Refuse here what every decoder would refuse, so the writer sees the failure.
  if (packed.byteLength > limits.codecInputBytesMax) {
    throw new InvalidInputError(component, `an encoding of at most ${limits.codecInputBytesMax} bytes`, packed)
  }
  return new Uint8Array(packed.buffer, packed.byteOffset, packed.byteLength)
}

/**
 * Decodes exactly one value. msgpackr throws Error, RangeError and TypeError on bad
 * input (and could throw anything from a future version); all of them become one
 * InvalidInputError naming the component that received the bytes.
 */
export function decode (bytes: Uint8Array, component: string): unknown {
  if (!(bytes instanceof Uint8Array)) throw new InvalidInputError(component, 'msgpack bytes', bytes)
  if (bytes.byteLength > limits.codecInputBytesMax) {
    throw new InvalidInputError(component, `a msgpack value of at most ${limits.codecInputBytesMax} bytes`, bytes)
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
