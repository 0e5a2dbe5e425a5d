/**
 * The agent's Ed25519 key as libp2p signs with it, imported into node:crypto once.
 * @libp2p/crypto 5.1.8 (the pinned build) rebuilds a KeyObject from a JWK for every
 * signature it makes: every gossipsub publication (StrictSign), every Noise handshake
 * and every signed peer record. On an idle controller that import cost more than the
 * signature itself. Ed25519 signatures are deterministic (RFC 8032), so a signature made
 * here is byte for byte the one the library would make: nothing about what is signed,
 * or by which key, changes.
 */
import { createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto'
import type { AbortOptions, Ed25519PrivateKey, PrivateKey } from '@libp2p/interface'
import { InvalidInputError } from '../../runtime/errors.ts'

/** libp2p keeps an Ed25519 private key as its 32-byte seed followed by the 32-byte public key. */
const seedBytes = 32
const rawBytes = 64

/** `key` with the same identity and bytes, signing through one KeyObject made here. */
export function withCachedSigning (key: PrivateKey): Ed25519PrivateKey {
  if (key.type !== 'Ed25519' || key.raw.byteLength !== rawBytes) {
    throw new InvalidInputError('peer key', 'a 64-byte Ed25519 private key', key.type)
  }
  const keyObject = importEd25519(key.raw)
  return {
    type: 'Ed25519',
    raw: key.raw,
    publicKey: key.publicKey,
    equals: (other?: unknown) => key.equals(other),
    sign: (data: Uint8Array | { subarray: () => Uint8Array }, options?: AbortOptions) => {
      options?.signal?.throwIfAborted()
      return sign(null, data instanceof Uint8Array ? data : data.subarray(), keyObject)
    }
  }
}

/** The seed as a KeyObject; refused unless the public half libp2p keeps beside it is the seed's own. */
function importEd25519 (raw: Uint8Array): KeyObject {
  const base64url = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64url')
  const publicHalf = base64url(raw.subarray(seedBytes))
  const keyObject = createPrivateKey({ format: 'jwk', key: { kty: 'OKP', crv: 'Ed25519', d: base64url(raw.subarray(0, seedBytes)), x: publicHalf } })
  // Peers verify with the public half (it is our peer id): a seed that does not match it
  // would sign what nobody can verify.
  const derived = createPublicKey(keyObject).export({ format: 'jwk' }).x
  if (derived !== publicHalf) throw new InvalidInputError('peer key', 'an Ed25519 private key whose public half is its own', 'a mismatched pair')
  return keyObject
}
