/**
 * The versioned msgpack envelopes of the mesh (runtime/codec.ts, records off): one
 * around every gossip message, one around every request and every response frame.
 * What comes off the network is checked against exactly these shapes; anything else is
 * refused with an InvalidInputError naming what was expected.
 *
 * The topic, the sender and the signature travel in gossipsub's own (signed) message,
 * and the caller of a request is the authenticated remote peer of the connection, so
 * none of them is repeated here, where a sender could lie about it.
 */
import { decode, encode } from '../../runtime/codec.ts'
import { InvalidInputError } from '../../runtime/errors.ts'
import { limits } from '../../runtime/limits.ts'

/** Bumped only with a migration plan: a receiver refuses versions it does not know. */
export const envelopeVersion = 1

/** The largest envelope (gossip message or frame payload) a receiver decodes. */
export const envelopeBytesMax = limits.transportMessageBytesMax + limits.transportEnvelopeOverheadBytesMax

const component = 'mesh envelope'

export interface RequestEnvelope {
  protocol: string
  data: Uint8Array
}

export type ResponseEnvelope = { ok: true, data: Uint8Array } | { ok: false, error: string }

export function encodeGossipEnvelope (data: Uint8Array): Uint8Array {
  return seal({ v: envelopeVersion, data })
}

/** The data of a gossip envelope; a copy, owned by the caller. */
export function decodeGossipEnvelope (bytes: Uint8Array): Uint8Array {
  const value = open(bytes, 'a gossip envelope', ['data', 'v'])
  return payload(value.data, 'gossip envelope data')
}

export function encodeRequestEnvelope (request: RequestEnvelope): Uint8Array {
  return seal({ v: envelopeVersion, protocol: request.protocol, data: request.data })
}

export function decodeRequestEnvelope (bytes: Uint8Array): RequestEnvelope {
  const value = open(bytes, 'a request envelope', ['data', 'protocol', 'v'])
  return { protocol: checkWireName(value.protocol, 'request protocol'), data: payload(value.data, 'request data') }
}

export function encodeResponseEnvelope (response: ResponseEnvelope): Uint8Array {
  return seal(response.ok
    ? { v: envelopeVersion, ok: true, data: response.data }
    : { v: envelopeVersion, ok: false, error: response.error.slice(0, limits.transportErrorMessageLengthMax) })
}

export function decodeResponseEnvelope (bytes: Uint8Array): ResponseEnvelope {
  if (bytes.byteLength > envelopeBytesMax) throw tooLarge(bytes)
  const value = decode(bytes, component)
  if (isRecord(value) && value.ok === false) {
    const fields = open(bytes, 'an error response envelope', ['error', 'ok', 'v'], value)
    if (typeof fields.error !== 'string' || fields.error.length > limits.transportErrorMessageLengthMax) {
      throw new InvalidInputError(component, `an error message of at most ${limits.transportErrorMessageLengthMax} characters`, fields.error)
    }
    return { ok: false, error: fields.error }
  }
  const fields = open(bytes, 'a response envelope', ['data', 'ok', 'v'], value)
  if (fields.ok !== true) throw new InvalidInputError(component, 'a response envelope with "ok" true or false', fields.ok)
  return { ok: true, data: payload(fields.data, 'response data') }
}

/** Checks a topic or protocol name: what the wire can carry inside the envelope overhead. */
export function checkWireName (value: unknown, what: string): string {
  if (typeof value !== 'string' || value.length === 0 || Buffer.byteLength(value) > limits.transportNameBytesMax) {
    throw new InvalidInputError(component, `a ${what} of 1 to ${limits.transportNameBytesMax} bytes`, value)
  }
  return value
}

function seal (value: Record<string, unknown>): Uint8Array {
  // A copy: codec output may share its ArrayBuffer with later encodings, and gossipsub
  // keeps published messages in its cache for IWANT replies.
  return encode(value, component).slice()
}

function open (bytes: Uint8Array, expected: string, keys: readonly string[], decoded?: unknown): Record<string, unknown> {
  if (!(bytes instanceof Uint8Array)) throw new InvalidInputError(component, `${expected} as bytes`, bytes)
  if (bytes.byteLength > envelopeBytesMax) throw tooLarge(bytes)
  const value = decoded === undefined ? decode(bytes, component) : decoded
  if (!isRecord(value)) throw new InvalidInputError(component, expected, value)
  const present = Object.keys(value).sort()
  if (present.length !== keys.length || present.some((key, i) => key !== keys[i])) {
    if (value.v !== envelopeVersion) throw new InvalidInputError(component, `envelope version ${envelopeVersion}`, value.v)
    throw new InvalidInputError(component, `${expected} with exactly the keys ${JSON.stringify(keys)}`, value)
  }
  if (value.v !== envelopeVersion) throw new InvalidInputError(component, `envelope version ${envelopeVersion}`, value.v)
  return value
}

function payload (value: unknown, what: string): Uint8Array {
  if (!(value instanceof Uint8Array)) throw new InvalidInputError(component, `${what} as bytes`, value)
  if (value.byteLength > limits.transportMessageBytesMax) {
    throw new InvalidInputError(component, `${what} of at most ${limits.transportMessageBytesMax} bytes`, value)
  }
  // A plain Uint8Array of its own: msgpackr hands out Buffer views into the frame.
  return new Uint8Array(value)
}

/** A plain msgpack map: not an array, bytes, or one of msgpackr's extension objects. */
function isRecord (value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false
  const prototype = Object.getPrototypeOf(value) as unknown
  return prototype === Object.prototype || prototype === null
}

function tooLarge (bytes: Uint8Array): InvalidInputError {
  return new InvalidInputError(component, `an envelope of at most ${envelopeBytesMax} bytes`, bytes)
}
