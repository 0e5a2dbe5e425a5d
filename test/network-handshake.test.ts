/**
 * The private network's handshake (agent/mesh/network-handshake.ts, network-noise.ts):
 * two peers of this version prove the network key through Noise's prologue and run no
 * second cipher; a peer of an older version (plain @libp2p/pnet) still connects both
 * ways, with pnet's cipher, so a rolling upgrade-controller keeps its quorum; and the
 * prologue is what stops a peer that skips the cipher without the key.
 */
import '../runtime/polyfill.ts'
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net'
import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { identify } from '@libp2p/identify'
import { ping } from '@libp2p/ping'
import { preSharedKey } from '@libp2p/pnet'
import { tcp } from '@libp2p/tcp'
import { multiaddr } from '@multiformats/multiaddr'
import { createLibp2p, type Libp2p } from 'libp2p'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { Libp2pTransport } from '../agent/mesh/libp2p-transport.ts'
import { hasOurTag, networkHandshake, networkSecret, nonceBytes, taggedNonce } from '../agent/mesh/network-handshake.ts'
import { generateNetworkKey } from '../agent/mesh/network-key.ts'
import { networkPrologue } from '../agent/mesh/network-noise.ts'
import { generatePeerKey } from '../agent/mesh/peer-identity.ts'

const test = suite('network handshake')
const networkKey = generateNetworkKey()
const secret = networkSecret(networkKey)
const dialMs = 5_000

test('a nonce is 16 random bytes and a tag only the key checks; a random (pnet) nonce has none', () => {
  const random = Uint8Array.from({ length: 16 }, (_, i) => i)
  const nonce = taggedNonce(secret, random)
  assert.is(nonce.byteLength, nonceBytes)
  assert.equal([...nonce.subarray(0, 16)], [...random])
  assert.ok(hasOurTag(secret, nonce))
  assert.not.ok(hasOurTag(networkSecret(generateNetworkKey()), nonce), 'another key checked the tag')
  const flipped = Uint8Array.from(nonce)
  flipped[0] = flipped[0]! ^ 1
  assert.not.ok(hasOurTag(secret, flipped), 'a changed nonce kept its tag')
  assert.not.ok(hasOurTag(secret, new Uint8Array(nonceBytes)), 'an all-zero (pnet-like) nonce passed as ours')
  // The prologue is the key's keyed hash: fixed per network, different across networks.
  assert.equal([...networkPrologue(networkKey)], [...networkPrologue(networkKey)])
  assert.not.equal([...networkPrologue(networkKey)], [...networkPrologue(generateNetworkKey())])
})

test('a key that is not in canonical swarm key form is refused in one line', () => {
  assert.throws(() => networkSecret(new TextEncoder().encode('not a key')), (error: Error) =>
    error.message === 'network handshake: expected a network key in canonical swarm key form (network-key.ts parseNetworkKey), got "not a key"')
})

/** A TCP relay in front of `target` that keeps what the dialler sent, to see what crosses the wire. */
async function relay (target: string): Promise<{ address: string, sent: () => Buffer, server: Server }> {
  const to = multiaddr(target).toOptions()
  const chunks: Buffer[] = []
  const sockets = new Set<Socket>()
  const server = createServer(inbound => {
    const outbound = createConnection({ host: to.host, port: to.port })
    for (const socket of [inbound, outbound]) {
      sockets.add(socket)
      socket.on('error', () => {})
      socket.on('close', () => { inbound.destroy(); outbound.destroy() })
    }
    inbound.on('data', (chunk: Buffer) => { chunks.push(chunk); outbound.write(chunk) })
    outbound.pipe(inbound)
  })
  server.on('close', () => { for (const socket of sockets) socket.destroy() })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return { address: target.replace(/\/tcp\/\d+/, `/tcp/${port}`), sent: () => Buffer.concat(chunks), server }
}

/** A bare libp2p node with the given protector and encrypter (an older version's, or a hostile mix). */
async function bareNode (kind: 'pnet' | 'handshake without prologue'): Promise<Libp2p<{ ping: ReturnType<ReturnType<typeof ping>> }>> {
  return await createLibp2p({
    addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
    transports: [tcp()],
    connectionProtector: kind === 'pnet' ? preSharedKey({ psk: networkKey }) : networkHandshake(networkKey),
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
    services: { identify: identify(), ping: ping() }
  })
}

test('two peers of this version connect with no second cipher: Noise negotiation shows after the nonce', async () => {
  const a = await Libp2pTransport.create({ privateKey: await generatePeerKey(), networkKey })
  const b = await Libp2pTransport.create({ privateKey: await generatePeerKey(), networkKey })
  const wire = await relay(a.addresses()[0]!)
  try {
    a.handle('echo', async request => request.data)
    assert.is(await b.dial(wire.address, { timeoutMs: dialMs }), a.peerId)
    const answer = await b.request(a.peerId, 'echo', new TextEncoder().encode('over Noise only'), { timeoutMs: dialMs })
    assert.is(new TextDecoder().decode(answer), 'over Noise only')
    const sent = wire.sent()
    assert.ok(hasOurTag(secret, sent.subarray(0, nonceBytes)), 'the dialler did not open with a tagged nonce')
    assert.ok(sent.subarray(nonceBytes).includes('/multistream/1.0.0'), 'the bytes after the nonce were enciphered')
  } finally {
    wire.server.close()
    await b.stop()
    await a.stop()
  }
})

// Juju's analogue is the agents' API connection surviving a controller upgrade
// (juju/juju worker/upgrader: agents keep talking to a controller of a newer version until
// they upgrade themselves); here the wire itself must stay compatible.
test('a peer of an older version (pnet) connects both ways with the cipher, as during a rolling upgrade', async () => {
  const current = await Libp2pTransport.create({ privateKey: await generatePeerKey(), networkKey })
  const older = await bareNode('pnet')
  const wire = await relay(current.addresses()[0]!)
  try {
    const inbound = await older.dial(multiaddr(wire.address), { signal: AbortSignal.timeout(dialMs) })
    assert.is(inbound.remotePeer.toString(), current.peerId)
    assert.ok(await older.services.ping.ping(multiaddr(wire.address), { signal: AbortSignal.timeout(dialMs) }) >= 0)
    const sent = wire.sent()
    assert.not.ok(hasOurTag(secret, sent.subarray(0, nonceBytes)), 'an older peer\'s random nonce passed as ours')
    assert.not.ok(sent.includes('/multistream/1.0.0'), 'the older peer\'s bytes crossed unenciphered')
    await inbound.close()
    const outbound = `${older.getMultiaddrs()[0]!.toString()}`
    assert.is(await current.dial(outbound, { timeoutMs: dialMs }), older.peerId.toString())
  } finally {
    wire.server.close()
    await older.stop()
    await current.stop()
  }
})

test('a peer that skips the cipher but not the key proof of Noise is refused and counted', async () => {
  const victim = await Libp2pTransport.create({ privateKey: await generatePeerKey(), networkKey })
  // Our handshake with the right key (so both go without a cipher), then Noise with no prologue:
  // what a peer that copied the nonces but not the key would look like to the victim.
  const skipper = await bareNode('handshake without prologue')
  try {
    const before = victim.refusals().handshake
    let failed = false
    await skipper.dial(multiaddr(victim.addresses()[0]!), { signal: AbortSignal.timeout(dialMs) }).catch(() => { failed = true })
    assert.ok(failed, 'Noise without the network prologue completed')
    assert.is(victim.connectedPeers().length, 0)
    // Counted once the victim's side of the connection is closed.
    const until = Date.now() + dialMs
    while (victim.refusals().handshake === before && Date.now() < until) await new Promise(resolve => setTimeout(resolve, 20))
    assert.is(victim.refusals().handshake, before + 1)
    // And the victim dialling it fails the same way.
    let dialFailed = false
    await victim.dial(skipper.getMultiaddrs()[0]!.toString(), { timeoutMs: dialMs }).catch(() => { dialFailed = true })
    assert.ok(dialFailed, 'the victim completed Noise without the prologue')
  } finally {
    await skipper.stop()
    await victim.stop()
  }
})

test.run()
