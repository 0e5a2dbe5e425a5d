/**
 * Ed25519 signature checks against node:crypto public keys imported once per peer.
 * @libp2p/crypto 5.1.8 (the pinned build) turns the peer's 32 raw bytes into a JWK and
 * imports it as a new KeyObject for every signature it verifies: every gossip message a
 * peer accepts (StrictSign), every Noise handshake, every signed peer record. A machine
 * agent verifies each change notice and each controller's presence heartbeat; in its
 * cold code the import cost about half as much again as the verification itself
 * (issue 28, perf profiles of the 10-agent notice bench). signing-key.ts does the same
 * for the signing side, where libp2p lets us pass our own key; public keys are made
 * inside libp2p from peer ids, so the one place to reach them all is the class's shared
 * `verify`.
 *
 * Nothing about what is accepted changes: the KeyObject is the one the library would
 * import from the same 32 bytes, and node:crypto's Ed25519 verification is what it would
 * then call. Anything other than a 32-byte key and a 64-byte signature goes to the
 * library's own code, which refuses it as before. The cache is bounded
 * (limits.meshVerifyKeysCachedMax, least recently used forgotten first).
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto'
import { publicKeyFromRaw } from '@libp2p/crypto/keys'
import type { Ed25519PublicKey } from '@libp2p/interface'
import { assert } from '../../runtime/assert.ts'
import { limits } from '../../runtime/limits.ts'

const publicKeyBytes = 32
const signatureBytes = 64

type Verify = Ed25519PublicKey['verify']

/** The prototype every Ed25519 public key of @libp2p/crypto shares. */
interface VerifyingPrototype { verify: Verify }

/** Raw public key (base64) → its KeyObject; Map order is least recently used first. */
export class VerifyKeyCache {
  readonly #keys = new Map<string, KeyObject>()
  readonly #max: number
  /** Keys imported (cache misses), for tests. */
  imports = 0

  constructor (max: number) {
    assert(Number.isSafeInteger(max) && max > 0, `verify key cache: max must be a positive integer, got ${String(max)}`)
    this.#max = max
  }

  get size (): number {
    return this.#keys.size
  }

  of (raw: Uint8Array): KeyObject {
    const id = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('base64')
    const known = this.#keys.get(id)
    if (known !== undefined) {
      this.#keys.delete(id)
      this.#keys.set(id, known)
      return known
    }
    const keyObject = createPublicKey({ format: 'jwk', key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(raw).toString('base64url') } })
    this.imports++
    this.#keys.set(id, keyObject)
    if (this.#keys.size > this.#max) this.#keys.delete(this.#keys.keys().next().value!)
    assert(this.#keys.size <= this.#max, `verify key cache: ${this.#keys.size} keys kept, the maximum is ${this.#max}`)
    return keyObject
  }
}

let installed: VerifyKeyCache | undefined

/**
 * Makes every Ed25519 public key of this process verify through the cache; once per
 * process (later calls answer the same cache). Answers the cache, for tests to look at.
 */
export function installCachedVerify (max: number = limits.meshVerifyKeysCachedMax): VerifyKeyCache {
  if (installed !== undefined) return installed
  const keys = new VerifyKeyCache(max)
  // Any 32 bytes make a key of the class; only its prototype is wanted.
  const prototype: VerifyingPrototype = Object.getPrototypeOf(publicKeyFromRaw(new Uint8Array(publicKeyBytes)))
  const library = prototype.verify
  prototype.verify = function (this: Ed25519PublicKey, data, signature, options) {
    if (this.raw?.byteLength !== publicKeyBytes || signature?.byteLength !== signatureBytes) return library.call(this, data, signature, options)
    options?.signal?.throwIfAborted()
    return verify(null, data instanceof Uint8Array ? data : data.subarray(), keys.of(this.raw), signature)
  }
  installed = keys
  return keys
}
