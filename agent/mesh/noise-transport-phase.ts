/**
 * Noise's transport phase with less plumbing per message. @chainsafe/libp2p-noise 16
 * runs it as a duplex pair (two pushable queues) and a pipe of five stages, with the
 * length prefix decoded by it-length-prefixed into Uint8ArrayLists, and each encrypted
 * piece yielded as a list of two buffers: a dozen promise hops and several allocations
 * per message, which the per-message profiles (bench/mesh-message-cost.ts) showed as the
 * largest share of a request's CPU after the socket itself (issue 28). This is the same
 * wire format — each message a 2-byte big-endian length and a ChaCha20-Poly1305
 * ciphertext of at most 65,535 bytes, with the session's own encrypt and decrypt (its
 * nonces, keys and checks untouched) — as one generator each way and one buffer per
 * write.
 *
 * It reaches into the library's Noise object, so it checks the shape first and leaves a
 * Noise that does not look like 16.x's alone (correct, only slower).
 */

type Bytes = Uint8Array | { subarray: () => Uint8Array }

/** The session keys a finished XX handshake hands the transport phase (performHandshake.js). */
interface NoiseSession {
  encrypt: (plaintext: Uint8Array) => Bytes
  decrypt: (ciphertext: Uint8Array, dst?: Uint8Array) => Bytes
}

interface Duplex {
  source: AsyncIterable<Bytes>
  sink: (source: AsyncIterable<Uint8Array>) => Promise<unknown> | unknown
}

interface Noise16 {
  createSecureConnection: (connection: { unwrap: () => Duplex }, handshake: NoiseSession) => Promise<Duplex>
}

/** Largest Noise message, and the plaintext that fits one with its 16-byte tag. */
export const noiseMessageBytesMax = 65_535
const tagBytes = 16
const plaintextBytesMax = noiseMessageBytesMax - tagBytes
const lengthBytes = 2

function bytesOf (chunk: Bytes): Uint8Array {
  return chunk instanceof Uint8Array ? chunk : chunk.subarray()
}

/** Each chunk as one buffer of Noise messages (a chunk above one message's plaintext is cut up). */
export async function * sealed (source: AsyncIterable<Bytes>, session: NoiseSession): AsyncGenerator<Uint8Array> {
  for await (const chunk of source) {
    const plain = bytesOf(chunk)
    if (plain.byteLength <= plaintextBytesMax) {
      yield framed([bytesOf(session.encrypt(plain))])
      continue
    }
    const pieces: Uint8Array[] = []
    for (let at = 0; at < plain.byteLength; at += plaintextBytesMax) pieces.push(bytesOf(session.encrypt(plain.subarray(at, at + plaintextBytesMax))))
    yield framed(pieces)
  }
}

function framed (ciphertexts: readonly Uint8Array[]): Uint8Array {
  let total = 0
  for (const c of ciphertexts) total += lengthBytes + c.byteLength
  const out = new Uint8Array(total)
  let at = 0
  for (const c of ciphertexts) {
    out[at] = c.byteLength >> 8
    out[at + 1] = c.byteLength & 0xff
    out.set(c, at + lengthBytes)
    at += lengthBytes + c.byteLength
  }
  return out
}

/** The plaintext of each Noise message in `source`, however the socket cut them. */
export async function * opened (source: AsyncIterable<Bytes>, session: NoiseSession): AsyncGenerator<Uint8Array> {
  let pending: Uint8Array | undefined
  for await (const chunk of source) {
    let bytes = bytesOf(chunk)
    if (pending !== undefined) {
      const joined = new Uint8Array(pending.byteLength + bytes.byteLength)
      joined.set(pending)
      joined.set(bytes, pending.byteLength)
      bytes = joined
      pending = undefined
    }
    let at = 0
    while (bytes.byteLength - at >= lengthBytes) {
      const length = (bytes[at]! << 8) | bytes[at + 1]!
      if (length < tagBytes) throw new Error(`noise transport: expected a message of at least ${tagBytes} bytes, got a length of ${length}`)
      if (bytes.byteLength - at - lengthBytes < length) break
      const ciphertext = bytes.subarray(at + lengthBytes, at + lengthBytes + length)
      // Deciphered in place, as the library does: the socket's buffer is ours alone.
      yield bytesOf(session.decrypt(ciphertext, ciphertext.subarray(0, length - tagBytes)))
      at += lengthBytes + length
    }
    if (at < bytes.byteLength) pending = bytes.subarray(at)
  }
}

function isNoise16 (value: unknown): value is Noise16 {
  return typeof value === 'object' && value !== null && typeof (value as Partial<Noise16>).createSecureConnection === 'function' &&
    (value as Partial<Noise16>).createSecureConnection!.length === 2
}

/** Makes `noise` run its transport phase as above; false (and left alone) if it is not a 16.x Noise. */
export function withLeanTransportPhase (noise: unknown): boolean {
  if (!isNoise16(noise)) return false
  noise.createSecureConnection = async (connection, session) => {
    // Taken now: Noise then puts what this returns in the same object's place.
    const network = connection.unwrap()
    const networkSource = network.source
    const networkSink = network.sink.bind(network)
    return {
      source: opened(networkSource, session),
      sink: async source => { await networkSink(sealed(source, session)) }
    }
  }
  return true
}
