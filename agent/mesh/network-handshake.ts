/**
 * The private network's gate on every raw connection (libp2p's connection protector), in
 * place of @libp2p/pnet. pnet proves the swarm key by encrypting everything after a nonce
 * exchange with XSalsa20 under it, a second stream cipher under Noise's; profiles of the
 * controllers put that cipher and the stream plumbing around it (a duplex pair, a pipe of
 * four stages, two copies per chunk) at 10–20 % of each mesh message's CPU (issue 28).
 *
 * Both ends start as pnet does: each sends a 24-byte nonce and reads the other's. Ours
 * is 16 random bytes and an 8-byte tag, HMAC(key, label ‖ those 16 bytes), so it still
 * looks random to anyone without the key, and a peer that holds the key can tell it came
 * from this version:
 *
 * - **both tags check** (two peers of this version, same key): no stream cipher. The key
 *   is proven by Noise instead, whose prologue is derived from it (network-noise.ts):
 *   the XX handshake fails unless both ends mixed the same prologue into it.
 * - **otherwise** (a peer of an older version, during an upgrade; or one with another key):
 *   pnet exactly — XSalsa20(own nonce, key) out, XSalsa20(their nonce, key) in, then Noise
 *   without a prologue, as older versions run it. A peer with another key reads garbage.
 *
 * The encrypter learns which of the two a connection took from `ciphered` below; one it
 * does not know gets the prologue (fails closed: a stranger cannot skip the key proof).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { AbortOptions, ComponentLogger, ConnectionProtector, MultiaddrConnection } from '@libp2p/interface'
import xsalsa20 from 'xsalsa20'
import { InvalidInputError } from '../../runtime/errors.ts'
import { limits } from '../../runtime/limits.ts'

const component = 'network handshake'
export const nonceBytes = 24
const randomPartBytes = 16
const tagLabel = 'cantrip mesh nonce v1'
/** pnet's key file prefix before the hex (network-key.ts's canonical form). */
const keyFileHeader = '/key/swarm/psk/1.0.0/\n/base16/\n'

type Chunk = Uint8Array | { subarray: () => Uint8Array }

/** Connections that took pnet's cipher (an older peer): their Noise runs without our prologue. */
const ciphered = new WeakSet<object>()

/** True when `connection` came out of the handshake with pnet's cipher on it. */
export function protectedByCipher (connection: object): boolean {
  return ciphered.has(connection)
}

/** The 32 key bytes of a network key file in network-key.ts's canonical form. */
export function networkSecret (keyFile: Uint8Array): Uint8Array {
  const text = new TextDecoder().decode(keyFile)
  const hex = text.startsWith(keyFileHeader) ? text.slice(keyFileHeader.length) : ''
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new InvalidInputError(component, 'a network key in canonical swarm key form (network-key.ts parseNetworkKey)', text.slice(0, 40))
  return Uint8Array.from(Buffer.from(hex, 'hex'))
}

/** Our nonce: random bytes, then their tag under the key. */
export function taggedNonce (secret: Uint8Array, random: Uint8Array = randomBytes(randomPartBytes)): Uint8Array {
  const nonce = new Uint8Array(nonceBytes)
  nonce.set(random)
  nonce.set(nonceTag(secret, random), randomPartBytes)
  return nonce
}

/** Whether `nonce` carries a tag made with this key (a peer of this version, same key). */
export function hasOurTag (secret: Uint8Array, nonce: Uint8Array): boolean {
  return timingSafeEqual(nonceTag(secret, nonce.subarray(0, randomPartBytes)), nonce.subarray(randomPartBytes, nonceBytes))
}

function nonceTag (secret: Uint8Array, random: Uint8Array): Uint8Array {
  return createHmac('sha256', secret).update(tagLabel).update(random).digest().subarray(0, nonceBytes - randomPartBytes)
}

class NetworkHandshake implements ConnectionProtector {
  readonly #secret: Uint8Array
  readonly [Symbol.toStringTag] = 'cantrip network handshake'

  constructor (secret: Uint8Array) {
    this.#secret = secret
  }

  async protect (connection: MultiaddrConnection, options?: AbortOptions): Promise<MultiaddrConnection> {
    const localNonce = taggedNonce(this.#secret)
    const outgoing = new Outgoing(localNonce)
    // The socket's sink is taken once, for the nonce and everything after it.
    const sent = Promise.resolve(connection.sink(outgoing.source()))
    sent.catch(() => {})
    const reader = connection.source[Symbol.asyncIterator]()
    const signal = AbortSignal.any([AbortSignal.timeout(limits.transportNetworkHandshakeTimeoutMs), ...(options?.signal === undefined ? [] : [options.signal])])
    const [remoteNonce, rest] = await readNonce(reader, signal).catch((error: Error) => {
      outgoing.end()
      throw error
    })
    if (hasOurTag(this.#secret, remoteNonce)) {
      // A generator source that gave nothing beyond the nonce goes on as it is: no layer per chunk.
      const source = rest === undefined && isSame(reader, connection.source) ? connection.source : resumed(rest, reader)
      return { ...connection, source, sink: async source => { outgoing.follow(source, undefined); await sent } }
    }
    const protectedConnection: MultiaddrConnection = {
      ...connection,
      source: deciphered(rest, reader, xsalsa20(remoteNonce, this.#secret)),
      sink: async source => { outgoing.follow(source, xsalsa20(localNonce, this.#secret)); await sent }
    }
    ciphered.add(protectedConnection)
    return protectedConnection
  }
}

/** libp2p's `connectionProtector`: the network handshake for `keyFile` (canonical swarm key file bytes). */
export function networkHandshake (keyFile: Uint8Array): (components: { logger: ComponentLogger }) => ConnectionProtector {
  const secret = networkSecret(keyFile)
  return () => new NetworkHandshake(secret)
}

/** Reads until the peer's nonce is in; returns it and whatever came after it in the same chunk. */
async function readNonce (reader: AsyncIterator<Chunk>, signal: AbortSignal): Promise<[Uint8Array, Uint8Array | undefined]> {
  const chunks: Uint8Array[] = []
  let buffered = 0
  const aborted = new Promise<never>((_resolve, reject) => {
    const fail = (): void => { reject(new InvalidInputError(component, `a ${nonceBytes}-byte nonce within ${limits.transportNetworkHandshakeTimeoutMs} ms`, `${buffered} bytes`)) }
    if (signal.aborted) fail()
    else signal.addEventListener('abort', fail, { once: true })
  })
  aborted.catch(() => {})
  while (buffered < nonceBytes) {
    const next = await Promise.race([reader.next(), aborted])
    if (next.done === true) throw new InvalidInputError(component, `a ${nonceBytes}-byte nonce`, `the connection closed after ${buffered} bytes`)
    const bytes = bytesOf(next.value)
    chunks.push(bytes)
    buffered += bytes.byteLength
  }
  const all = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
  return [all.subarray(0, nonceBytes), all.byteLength > nonceBytes ? all.subarray(nonceBytes) : undefined]
}

function isSame (a: object, b: object): boolean {
  return a === b
}

function bytesOf (chunk: Chunk): Uint8Array {
  return chunk instanceof Uint8Array ? chunk : chunk.subarray()
}

/** The rest of the peer's bytes, as they come. */
async function * resumed (first: Uint8Array | undefined, reader: AsyncIterator<Chunk>): AsyncGenerator<Uint8Array> {
  if (first !== undefined) yield first
  for (;;) {
    const next = await reader.next()
    if (next.done === true) return
    yield bytesOf(next.value)
  }
}

interface StreamCipher { update: (input: Uint8Array) => Uint8Array }

/** The rest of the peer's bytes, deciphered as pnet enciphered them. */
async function * deciphered (first: Uint8Array | undefined, reader: AsyncIterator<Chunk>, cipher: StreamCipher): AsyncGenerator<Uint8Array> {
  for await (const chunk of resumed(first, reader)) yield cipher.update(chunk)
}

/** What goes to the socket: our nonce, then the upgraded connection's bytes (enciphered for an older peer). */
class Outgoing {
  readonly #nonce: Uint8Array
  #follow: ((value: { source: AsyncIterable<Chunk>, cipher: StreamCipher | undefined } | undefined) => void) | undefined
  readonly #next: Promise<{ source: AsyncIterable<Chunk>, cipher: StreamCipher | undefined } | undefined>

  constructor (nonce: Uint8Array) {
    this.#nonce = nonce
    this.#next = new Promise(resolve => { this.#follow = resolve })
  }

  follow (source: AsyncIterable<Chunk>, cipher: StreamCipher | undefined): void {
    this.#follow?.({ source, cipher })
    this.#follow = undefined
  }

  /** Ends the socket's source after the nonce: the handshake failed. */
  end (): void {
    this.#follow?.(undefined)
    this.#follow = undefined
  }

  async * source (): AsyncGenerator<Uint8Array> {
    yield this.#nonce
    const next = await this.#next
    if (next === undefined) return
    const { source, cipher } = next
    for await (const chunk of source) yield cipher === undefined ? bytesOf(chunk) : cipher.update(bytesOf(chunk))
  }
}
