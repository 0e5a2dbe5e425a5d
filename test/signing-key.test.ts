/**
 * The mesh signs with a key imported once (agent/mesh/signing-key.ts): its signatures
 * must be the very bytes @libp2p/crypto's own key makes (Ed25519 is deterministic),
 * and a key it cannot sign with is refused with one clear line.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { generateKeyPair, privateKeyFromRaw } from '@libp2p/crypto/keys'
import { parsePeerKey, generatePeerKey } from '../agent/mesh/peer-identity.ts'
import { withCachedSigning } from '../agent/mesh/signing-key.ts'

test('signatures are byte for byte the library\'s own, and verify under the same public key', async () => {
  const key = parsePeerKey(await generatePeerKey())
  const cached = withCachedSigning(key)
  assert.is(cached.type, 'Ed25519')
  assert.ok(cached.equals(key) && cached.publicKey.equals(key.publicKey), 'the same identity')
  for (const size of [0, 1, 64, 4096]) {
    const message = new Uint8Array(size).map((_, i) => (i * 7) & 0xff)
    const signature = await cached.sign(message)
    assert.equal(signature, await key.sign(message), `${size} bytes`)
    assert.ok(await key.publicKey.verify(message, signature), `${size} bytes verify`)
  }
})

test('a signature is refused once its abort signal fired', async () => {
  const cached = withCachedSigning(parsePeerKey(await generatePeerKey()))
  const controller = new AbortController()
  controller.abort(new Error('gave up'))
  assert.throws(() => cached.sign(new Uint8Array(1), { signal: controller.signal }), /gave up/)
})

test('a key that is not a 64-byte Ed25519 key is refused with one line naming the component', async () => {
  const secp = await generateKeyPair('secp256k1')
  assert.throws(() => withCachedSigning(secp), (error: Error) =>
    error.message.split('\n').length === 1 && /peer key/.test(error.message) && /64-byte Ed25519 private key/.test(error.message) && /secp256k1/.test(error.message))
})

test('a private key whose public half is not its own is refused: peers could not verify what it signs', async () => {
  const key = parsePeerKey(await generatePeerKey())
  const other = parsePeerKey(await generatePeerKey())
  // libp2p itself takes the 64 bytes as given, without checking the halves belong together.
  const forged = privateKeyFromRaw(new Uint8Array([...key.raw.subarray(0, 32), ...other.raw.subarray(32)]))
  assert.throws(() => withCachedSigning(forged), (error: Error) =>
    error.message.split('\n').length === 1 && /peer key/.test(error.message) && /public half is its own/.test(error.message))
})

test.run()
