/**
 * Noise's crypto for the CLI's client transport: the library's default (X25519 and
 * SHA-256 from node:crypto, ChaCha20-Poly1305 from WebAssembly or node:crypto by size)
 * with HKDF from node:crypto too, where the default computes it in JavaScript (@noble
 * hashes). A one-shot command runs one handshake, so the JavaScript HMAC runs cold
 * (un-optimised) every time: in a profile of `cantrip config` it was the handshake's
 * largest part. The result is the same HKDF (RFC 5869 with Noise's empty info), which
 * test/client-transport.test.ts checks against the library's own.
 */
import { hkdfSync } from 'node:crypto'
import { defaultCrypto } from '@chainsafe/libp2p-noise/crypto'
import type { ICryptoInterface } from '@chainsafe/libp2p-noise'

/** Noise's HKDF(ck, ikm): three 32-byte outputs of HKDF-SHA256 with `ck` as the salt. */
export function nodeHkdf (ck: Uint8Array, ikm: Uint8Array): [Uint8Array, Uint8Array, Uint8Array] {
  const okm = new Uint8Array(hkdfSync('sha256', ikm, ck, new Uint8Array(0), 96))
  return [okm.subarray(0, 32), okm.subarray(32, 64), okm.subarray(64, 96)]
}

export const clientNoiseCrypto: ICryptoInterface = { ...defaultCrypto, getHKDF: nodeHkdf }
