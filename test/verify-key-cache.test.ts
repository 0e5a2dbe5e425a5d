/**
 * Peers' signatures are checked against keys imported once (agent/mesh/verify-key-cache.ts):
 * every Ed25519 public key libp2p makes, also one made from a peer id as gossipsub does
 * for each message, must accept exactly what the library's own check accepts, and the
 * imported keys stay within their bound.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { generateKeyPair, publicKeyFromRaw } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey, peerIdFromString } from '@libp2p/peer-id'
import { installCachedVerify, VerifyKeyCache } from '../agent/mesh/verify-key-cache.ts'

const message = (size: number): Uint8Array => new Uint8Array(size).map((_, i) => (i * 13) & 0xff)

test('keys made from peer ids verify through the cache: good signatures pass, anything altered fails', async () => {
  // Another suite of this process may have installed it already (the mesh installs it per node).
  const cache = installCachedVerify()
  assert.is(installCachedVerify(), cache, 'installed once per process')
  const key = await generateKeyPair('Ed25519')
  const other = await generateKeyPair('Ed25519')
  const data = message(200)
  const signature = await key.sign(data)
  // As gossipsub gets a message's key: from the author's peer id, a new object each time.
  const fromPeerId = (): NonNullable<ReturnType<typeof peerIdFromString>['publicKey']> => peerIdFromString(peerIdFromPrivateKey(key).toString()).publicKey!
  const importsBefore = cache.imports
  for (let i = 0; i < 3; i++) {
    assert.ok(await fromPeerId().verify(data, signature), `a good signature, copy ${i}`)
    assert.not.ok(await fromPeerId().verify(message(201), signature), `other bytes, copy ${i}`)
    const flipped = Uint8Array.from(signature)
    flipped[i] = flipped[i]! ^ 1
    assert.not.ok(await fromPeerId().verify(data, flipped), `a flipped signature bit, copy ${i}`)
  }
  assert.not.ok(await other.publicKey.verify(data, signature), 'another key')
  assert.ok(await other.publicKey.verify(data, await other.sign(data)), 'its own signature')
  assert.is(cache.imports - importsBefore, 2, 'one import per key, not per check')
})

test('what the library refuses by shape it still refuses, and an aborted check throws', async () => {
  installCachedVerify()
  const key = await generateKeyPair('Ed25519')
  const data = message(10)
  const signature = await key.sign(data)
  assert.throws(() => key.publicKey.verify(data, signature.subarray(0, 63)), /64 bytes/)
  const controller = new AbortController()
  controller.abort(new Error('gave up'))
  assert.throws(() => key.publicKey.verify(data, signature, { signal: controller.signal }), /gave up/)
  // A key of the class with the wrong length never reaches the cache: the library refuses it.
  assert.throws(() => publicKeyFromRaw(new Uint8Array(31)))
})

test('the cache keeps at most its maximum, forgetting the least recently used key', async () => {
  const cache = new VerifyKeyCache(2)
  const keys = await Promise.all([0, 1, 2].map(async () => (await generateKeyPair('Ed25519')).publicKey.raw))
  cache.of(keys[0]!)
  cache.of(keys[1]!)
  cache.of(keys[0]!)
  assert.is(cache.imports, 2)
  cache.of(keys[2]!)
  assert.is(cache.size, 2, 'at the bound')
  cache.of(keys[0]!)
  assert.is(cache.imports, 3, 'the key used last was kept')
  cache.of(keys[1]!)
  assert.is(cache.imports, 4, 'the least recently used was forgotten')
  assert.throws(() => new VerifyKeyCache(0), /positive integer/)
})

test.run()
