/**
 * Libp2pTransport beyond the Transport contract: the private network (pnet), what
 * gossip refuses and how the sender pays for it (bad signatures, malformed and
 * oversized envelopes, rejection scores), request streams and their bounds, stop, and
 * the identity, network key, frame and envelope helpers under agent/mesh/.
 */
import '../runtime/polyfill.ts'
import { chmod, mkdtemp, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { generateKeyPair, privateKeyToProtobuf } from '@libp2p/crypto/keys'
import { identify } from '@libp2p/identify'
import { preSharedKey } from '@libp2p/pnet'
import { tcp } from '@libp2p/tcp'
import { multiaddr } from '@multiformats/multiaddr'
import { createLibp2p } from 'libp2p'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { Libp2pTransport, requestProtocol } from '../agent/mesh/libp2p-transport.ts'
import { Libp2pWorld } from '../agent/mesh/libp2p-world.ts'
import {
  decodeGossipEnvelope,
  decodeRequestEnvelope,
  decodeResponseEnvelope,
  encodeGossipEnvelope,
  encodeRequestEnvelope,
  encodeResponseEnvelope,
  envelopeBytesMax
} from '../agent/mesh/mesh-envelopes.ts'
import { generateNetworkKey, parseNetworkKey, readNetworkKey, writeNetworkKey } from '../agent/mesh/network-key.ts'
import { generatePeerKey, loadOrCreatePeerKey, parsePeerKey, peerIdOfKey } from '../agent/mesh/peer-identity.ts'
import { frameHeader, readOnlyFrame, writeOnlyFrame } from '../agent/mesh/stream-frames.ts'
import { encode } from '../runtime/codec.ts'
import { limits } from '../runtime/limits.ts'
import type { TopicMessage, Transport } from '../runtime/transport.ts'
import { rejects } from './support/rejects.ts'

const test = suite('libp2p transport')

const text = (value: string): Uint8Array => new TextEncoder().encode(value)
const decodeText = (data: Uint8Array): string => new TextDecoder().decode(data)
const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))
const long = { timeoutMs: 10_000 }

/** A short heartbeat, so scores and meshes update within a test's patience. */
const heartbeatIntervalMs = 100

const inbox = (transport: Transport, topic: string): TopicMessage[] => {
  const messages: TopicMessage[] = []
  transport.subscribe(topic, message => { messages.push(message) })
  return messages
}

/** A world of `peers` transports, closed after the body whatever happens. */
async function withWorld (peers: number, body: (world: Libp2pWorld, t: Libp2pTransport[]) => Promise<void>): Promise<void> {
  const world = await Libp2pWorld.create({ peers, heartbeatIntervalMs, readyTimeoutMs: 10_000 })
  try {
    await body(world, world.transports)
  } finally {
    await world.close()
  }
}

/** The raw gossipsub service of a transport, for playing a peer that skips our envelope. */
const rawPubsub = (transport: Libp2pTransport) => transport.node.services.pubsub

// -------------------------------------------------------------------------------------
// The private network

test('a peer with another network key cannot connect, gossip or request', async () => {
  await withWorld(2, async (world, [a, b]) => {
    const outsider = await Libp2pTransport.create({ privateKey: await generatePeerKey(), networkKey: generateNetworkKey(), heartbeatIntervalMs })
    const open = await createLibp2p({
      addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
      transports: [tcp()],
      connectionEncrypters: [noise()],
      streamMuxers: [yamux()],
      services: { identify: identify() }
    })
    try {
      const received = inbox(a!, 'status')
      a!.handle('echo', async request => request.data)
      // With the wrong key each side decrypts the other's handshake into garbage: the
      // dial fails at once, or stalls (a garbage length prefix waits for bytes that never
      // come) until its timeout. Either way nothing gets through.
      const refused = await rejects(outsider.dial(a!.addresses()[0]!, { timeoutMs: 1_000 }), 'PeerUnreachableError')
      assert.match(refused.message, a!.peerId)
      // A node without any network key fails the same way.
      let openDialFailed = false
      try {
        await open.dial(multiaddr(a!.addresses()[0]!), { signal: AbortSignal.timeout(1_000) })
      } catch {
        openDialFailed = true
      }
      assert.ok(openDialFailed, 'a node without the network key connected')
      // And the other way round: our node cannot dial into the outsider either.
      await rejects(a!.dial(outsider.addresses()[0]!, { timeoutMs: 1_000 }), 'PeerUnreachableError')
      // The outsider knows a's address now; its request fails in the dial, or times out in it.
      let requestError: Error | undefined
      try {
        await outsider.request(a!.peerId, 'echo', text('x'), { timeoutMs: 1_000 })
      } catch (error) {
        requestError = error as Error
      }
      assert.ok(requestError !== undefined && ['PeerUnreachableError', 'RequestTimeoutError'].includes(requestError.name), requestError?.message)
      outsider.subscribe('status', () => {})
      await outsider.publish('status', text('let me in'))
      await world.wait(300)
      assert.equal(received, [])
      assert.ok(!a!.connectedPeers().includes(outsider.peerId))
      assert.equal(outsider.connectedPeers(), [])
      assert.equal(open.getPeers(), [])
      assert.equal(a!.connectedPeers(), [b!.peerId], 'the members still see each other')
      assert.is(a!.counters().requestsServed, 0)
    } finally {
      await outsider.stop()
      await open.stop()
    }
  })
})

test('a seed in `bootstrap` is dialled at start, and again when it comes back', async () => {
  const networkKey = generateNetworkKey()
  const seedKey = await generatePeerKey()
  let seed = await Libp2pTransport.create({ privateKey: seedKey, networkKey, heartbeatIntervalMs })
  const seedAddress = seed.addresses()[0]!
  const joiner = await Libp2pTransport.create({
    privateKey: await generatePeerKey(), networkKey, bootstrap: [seedAddress, seedAddress.replace(/\/p2p\/.*/, `/p2p/${peerIdOfKey(await generatePeerKey())}`)], heartbeatIntervalMs
  })
  const connected = async (what: string): Promise<void> => {
    const deadline = performance.now() + 5_000
    while (!(joiner.connectedPeers().includes(seed.peerId) && seed.connectedPeers().includes(joiner.peerId))) {
      assert.ok(performance.now() < deadline, `${what}: not within 5 s`)
      await sleep(20)
    }
  }
  try {
    await connected('the joiner and its seed connected')
    // The seed restarts at the same address with the same key (a controller upgrade).
    await seed.stop()
    const port = multiaddr(seedAddress).toOptions().port
    seed = await Libp2pTransport.create({ privateKey: seedKey, networkKey, listen: `/ip4/127.0.0.1/tcp/${port}`, heartbeatIntervalMs })
    assert.is(seed.addresses()[0], seedAddress)
    await connected('the joiner redialled its seed')
    // A seed with the right address and the wrong peer id is never connected (noise checks the id).
    assert.equal(joiner.connectedPeers(), [seed.peerId])
  } finally {
    await Promise.all([joiner.stop(), seed.stop()])
  }
})

// -------------------------------------------------------------------------------------
// Gossip: what is refused, and what it costs the sender

test('a message with a bad signature is dropped and its sender penalised', async () => {
  await withWorld(3, async (world, [honest, receiver, forger]) => {
    const received = inbox(receiver!, 'status')
    await world.wait(200)
    // The forger signs with a key that is not the one its peer id (and the key field
    // gossipsub sends) names, as someone replaying another peer's identity would.
    const publishConfig = (rawPubsub(forger!) as unknown as { publishConfig: { privateKey: unknown } }).publishConfig
    publishConfig.privateKey = await generateKeyPair('Ed25519')
    await forger!.publish('status', text('forged'))
    await honest!.publish('status', text('honest'))
    await world.waitFor('the forger scored below zero', () => receiver!.peerScore(forger!.peerId) < 0, 3_000)
    await world.wait(200)
    assert.equal(received.map(message => decodeText(message.data)), ['honest'])
    assert.is(received[0]!.from, honest!.peerId)
    // Gossipsub drops it before any validator runs, so it is not in `rejected`.
    assert.equal(pick(receiver!), { delivered: 1, rejected: 0, ignored: 0 })
    assert.ok(receiver!.peerScore(honest!.peerId) >= 0)
  })
})

test('malformed and oversized envelopes are rejected, counted, and the sender is graylisted', async () => {
  await withWorld(3, async (world, [honest, receiver, sender]) => {
    const received = inbox(receiver!, 'status')
    await world.wait(200)
    const raw = rawPubsub(sender!)
    // Valid signatures around bad envelopes: not msgpack, an unknown version, extra
    // fields, and data one byte over the maximum.
    await raw.publish('status', new Uint8Array([0xc1]))
    await raw.publish('status', encode({ v: 2, data: text('from the future') }))
    await raw.publish('status', encode({ v: 1, data: text('x'), from: honest!.peerId }))
    await raw.publish('status', encode({ v: 1, data: new Uint8Array(limits.transportMessageBytesMax + 1) }))
    await world.waitFor('four rejections', () => receiver!.counters().rejected === 4, 3_000)
    assert.equal(received, [])
    assert.equal(pick(receiver!), { delivered: 0, rejected: 4, ignored: 0 })
    // Four invalid deliveries score -160, under the graylist threshold (-80): from now
    // on the receiver ignores everything the sender sends, even a well-formed message.
    await world.waitFor('the sender graylisted', () => receiver!.peerScore(sender!.peerId) < -80, 3_000)
    // Gossipsub skips the score check for a peer that scored >= 0 in the last second
    // (its acceptFrom whitelist, at most 128 messages); after that the graylist holds.
    await world.wait(1_100)
    await sender!.publish('status', text('well formed, too late'))
    await honest!.publish('status', text('honest'))
    await world.waitFor('the honest message', () => received.length === 1, 3_000)
    await world.wait(200)
    assert.equal(received.map(message => decodeText(message.data)), ['honest'])
    assert.is(receiver!.counters().rejected, 4, 'the graylisted sender\'s message never reached validation')
  })
})

test('a validator\'s reject lowers the sender\'s score, ignore does not', async () => {
  await withWorld(3, async (world, [rejected, ignored, receiver]) => {
    receiver!.setTopicValidator('status', message => message.from === rejected!.peerId ? 'reject' : 'ignore')
    const received = inbox(receiver!, 'status')
    await world.wait(200)
    await rejected!.publish('status', text('a'))
    await ignored!.publish('status', text('b'))
    await world.waitFor('the rejected sender scored below zero', () => receiver!.peerScore(rejected!.peerId) < 0, 3_000)
    assert.equal(received, [])
    assert.equal(pick(receiver!), { delivered: 0, rejected: 1, ignored: 1 })
    assert.is(receiver!.peerScore(ignored!.peerId), 0)
  })
})

test('a message is forwarded through a peer that is not directly connected', async () => {
  // a — relay — c, with no link a–c: delivery needs the relay's mesh to forward it,
  // after its validator accepted it.
  const networkKey = generateNetworkKey()
  const make = async (): Promise<Libp2pTransport> => await Libp2pTransport.create({ privateKey: await generatePeerKey(), networkKey, heartbeatIntervalMs })
  const [a, relay, c] = await Promise.all([make(), make(), make()])
  try {
    await a.dial(relay.addresses()[0]!)
    await c.dial(relay.addresses()[0]!)
    const atRelay = inbox(relay, 'status')
    const atC = inbox(c, 'status')
    a.subscribe('status', () => {})
    const deadline = performance.now() + 5_000
    while (!(relay.meshPeers('status').length === 2 && c.meshPeers('status').length === 1)) {
      assert.ok(performance.now() < deadline, 'no mesh a–relay–c within 5 s')
      await sleep(20)
    }
    await a.publish('status', text('hop'))
    while (atC.length === 0) {
      assert.ok(performance.now() < deadline + 2_000, 'the message did not reach c through the relay')
      await sleep(10)
    }
    assert.equal(atRelay.map(m => decodeText(m.data)), ['hop'])
    assert.equal(atC.map(m => m.from), [a.peerId], 'the author, not the relay, is the sender')
    assert.is(atC[0]!.id, atRelay[0]!.id)
    assert.ok(!c.connectedPeers().includes(a.peerId))
  } finally {
    await Promise.all([a.stop(), relay.stop(), c.stop()])
  }
})

// -------------------------------------------------------------------------------------
// Requests

test('a request that times out resets its stream, so the server holds nothing for it', async () => {
  await withWorld(2, async (world, [a, b]) => {
    b!.handle('hang', () => new Promise<Uint8Array>(() => {}))
    const started = performance.now()
    const error = await rejects(a!.request(b!.peerId, 'hang', text('x'), { timeoutMs: 300 }), 'RequestTimeoutError')
    const tookMs = performance.now() - started
    assert.ok(tookMs >= 295 && tookMs < 1_000, `timed out after ${tookMs.toFixed(0)} ms`)
    assert.match(error.message, '300 ms')
    assert.is(a!.requestsInFlight, 0)
    await world.waitFor('the server side of the stream closed', () => requestStreams(b!) === 0, 2_000)
    assert.equal(a!.counters().requestsFailed, 1)
  })
})

test('a request to a stopped peer fails with PeerUnreachableError, one to itself too', async () => {
  await withWorld(2, async (world, [a, b]) => {
    await b!.stop()
    await world.waitFor('b gone', () => !a!.connectedPeers().includes(b!.peerId), 2_000)
    await rejects(a!.request(b!.peerId, 'echo', text('x'), { timeoutMs: 2_000 }), 'PeerUnreachableError')
    await rejects(a!.request(a!.peerId, 'echo', text('x'), long), 'PeerUnreachableError')
    await rejects(a!.request('not-a-peer-id', 'echo', text('x'), long), 'InvalidInputError')
    assert.is(a!.counters().requestsFailed, 1, 'only the request handed to the network counts')
  })
})

test('a response above the maximum becomes a RemoteHandlerError; the largest allowed one arrives whole', async () => {
  await withWorld(2, async (_world, [a, b]) => {
    b!.handle('big', async request => new Uint8Array(Number(decodeText(request.data))).fill(7))
    const error = await rejects(a!.request(b!.peerId, 'big', text(String(limits.transportMessageBytesMax + 1)), long), 'RemoteHandlerError')
    assert.match(error.message, `exceeds the maximum of ${limits.transportMessageBytesMax}`)
    const largest = await a!.request(b!.peerId, 'big', text(String(limits.transportMessageBytesMax)), long)
    assert.is(largest.byteLength, limits.transportMessageBytesMax)
    assert.ok(largest.every(byte => byte === 7))
    const echoed = new Uint8Array(limits.transportMessageBytesMax).fill(3)
    b!.handle('echo', async request => request.data)
    assert.equal(await a!.request(b!.peerId, 'echo', echoed, long), echoed)
    assert.equal(b!.counters().requestsServed, 2)
  })
})

test('request streams: a bad frame is cut off, a malformed envelope is answered with an error, inbound streams are bounded', async () => {
  await withWorld(2, async (world, [a, b]) => {
    b!.handle('hang', () => new Promise<Uint8Array>(() => {}))
    b!.handle('echo', async request => request.data)
    const open = async () => await a!.node.dialProtocol(b!.node.peerId, requestProtocol)

    // A header announcing more than the maximum: the server resets without reading on.
    const oversized = await open()
    await oversized.sink([frameHeader(envelopeBytesMax + 1)])
    await rejects(readOnlyFrame(oversized.source, envelopeBytesMax), 'StreamResetError')

    // A whole frame that is not a request envelope: an error frame comes back.
    const garbage = await open()
    await writeOnlyFrame(garbage, new Uint8Array([0xc1]), envelopeBytesMax)
    const answer = decodeResponseEnvelope(await readOnlyFrame(garbage.source, envelopeBytesMax))
    assert.is(answer.ok, false)
    assert.match((answer as { error: string }).error, 'malformed request')

    // A well-formed request written by hand is served like any other.
    const manual = await open()
    await writeOnlyFrame(manual, encodeRequestEnvelope({ protocol: 'echo', data: text('by hand') }), envelopeBytesMax)
    assert.equal(decodeResponseEnvelope(await readOnlyFrame(manual.source, envelopeBytesMax)), { ok: true, data: text('by hand') })

    // The connection is still good for requests.
    assert.equal(decodeText(await a!.request(b!.peerId, 'echo', text('still here'), long)), 'still here')
  })
})

test('a peer opening more request streams than the maximum gets the extra ones reset', async () => {
  await withWorld(1, async (world, [server]) => {
    server!.handle('echo', async request => request.data)
    // A bare libp2p node in the network, not bound by our transport's stream caps.
    const hostile = await createLibp2p({
      addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
      transports: [tcp()],
      connectionProtector: preSharedKey({ psk: world.networkKey }),
      connectionEncrypters: [noise()],
      streamMuxers: [yamux()],
      services: { identify: identify() }
    })
    try {
      const target = multiaddr(server!.addresses()[0]!)
      const options = { maxOutboundStreams: 10 * limits.transportInboundRequestsPerPeerMax }
      const held = []
      for (let i = 0; i < limits.transportInboundRequestsPerPeerMax; i++) {
        // Nothing written: the server waits for a frame (up to its frame read timeout).
        held.push(await hostile.dialProtocol(target, requestProtocol, options))
      }
      await world.waitFor('the server holds the maximum of streams', () => requestStreams(server!) === limits.transportInboundRequestsPerPeerMax, 5_000)
      let refused: Error | undefined
      try {
        const extra = await hostile.dialProtocol(target, requestProtocol, options)
        await writeOnlyFrame(extra, encodeRequestEnvelope({ protocol: 'echo', data: text('one too many') }), envelopeBytesMax)
        await readOnlyFrame(extra.source, envelopeBytesMax)
      } catch (error) {
        refused = error as Error
      }
      // The reset shows as a failed write or a failed read, whichever comes first.
      assert.ok(refused !== undefined, 'the server answered a stream beyond its maximum')
      assert.is(requestStreams(server!), limits.transportInboundRequestsPerPeerMax)
      for (const stream of held) stream.abort(new Error('test done'))
      await world.waitFor('the held streams released', () => requestStreams(server!) === 0, 5_000)
      assert.is(server!.counters().requestsServed, 0)
    } finally {
      await hostile.stop()
    }
  })
})

// -------------------------------------------------------------------------------------
// Stop

test('stop closes the node once; concurrent and later stops are no-ops; counters survive', async () => {
  await withWorld(2, async (world, [a, b]) => {
    b!.handle('echo', async request => request.data)
    await a!.request(b!.peerId, 'echo', text('x'), long)
    await Promise.all([a!.stop(), a!.stop()])
    await a!.stop()
    assert.is(a!.node.status, 'stopped')
    assert.equal(a!.connectedPeers(), [])
    assert.equal(a!.gossipPeers(), [])
    assert.is(a!.counters().requestsSent, 1)
    a!.unhandle('echo')
    await rejects(a!.dial(b!.addresses()[0]!), 'TransportStoppedError')
    await world.waitFor('b sees a gone', () => b!.connectedPeers().length === 0, 2_000)
  })
})

// -------------------------------------------------------------------------------------
// Helpers: identity, network key, frames, envelopes

test('peer keys: generated, persisted 0600, reloaded, and they fix the peer id', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cantrip-peer-key-'))
  try {
    const path = join(dir, 'peer.key')
    const created = await loadOrCreatePeerKey(path)
    assert.is((await stat(path)).mode & 0o777, 0o600)
    assert.equal(await loadOrCreatePeerKey(path), created)
    const transport = await Libp2pTransport.create({ privateKey: created, networkKey: generateNetworkKey() })
    try {
      assert.is(transport.peerId, peerIdOfKey(created))
      assert.ok(transport.peerId.startsWith('12D3KooW'), transport.peerId)
      assert.ok(transport.addresses()[0]!.endsWith(`/p2p/${transport.peerId}`))
    } finally {
      await transport.stop()
    }
    assert.throws(() => parsePeerKey(text('not a key')), (error: Error) => error.name === 'InvalidInputError')
    const secp = privateKeyToProtobuf(await generateKeyPair('secp256k1'))
    assert.throws(() => parsePeerKey(secp), (error: Error) => error.name === 'InvalidInputError' && /Ed25519/.test(error.message))
    await writeFile(join(dir, 'broken.key'), 'garbage')
    await rejects(loadOrCreatePeerKey(join(dir, 'broken.key')), 'InvalidInputError')
    await rejects(Libp2pTransport.create({ privateKey: secp, networkKey: generateNetworkKey() }), 'InvalidInputError')
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

test('network keys: the swarm key file format, persisted 0600 and checked', async () => {
  const key = generateNetworkKey()
  const lines = decodeText(key).split('\n')
  assert.is(lines[0], '/key/swarm/psk/1.0.0/')
  assert.is(lines[1], '/base16/')
  assert.match(lines[2]!, /^[0-9a-f]{64}$/)
  assert.is(key.byteLength, 95)
  assert.equal(parseNetworkKey(key), key)
  // CRLF line ends, upper-case hex and a final newline (as editors leave them) are fine.
  assert.equal(parseNetworkKey(`/key/swarm/psk/1.0.0/\r\n/base16/\r\n${lines[2]!.toUpperCase()}\r\n`), key)
  for (const bad of ['', 'swarm', '/key/swarm/psk/1.0.0/\n/base16/\nabc', '/key/swarm/psk/1.0.0/\n/base64/\n' + 'a'.repeat(64)]) {
    assert.throws(() => parseNetworkKey(bad), (error: Error) => error.name === 'InvalidInputError', JSON.stringify(bad))
  }
  await rejects(Libp2pTransport.create({ privateKey: await generatePeerKey(), networkKey: 'nope' }), 'InvalidInputError')
  const dir = await mkdtemp(join(tmpdir(), 'cantrip-network-key-'))
  try {
    const path = join(dir, 'swarm.key')
    await writeNetworkKey(path, key)
    assert.is((await stat(path)).mode & 0o777, 0o600)
    assert.equal(await readNetworkKey(path), key)
    await writeFile(path, 'tampered')
    await chmod(path, 0o600)
    await rejects(readNetworkKey(path), 'InvalidInputError')
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

test('frames: split and joined chunks, and every way a frame can be wrong', async () => {
  const source = (...chunks: Uint8Array[]) => (async function * () { yield * chunks })()
  const payload = text('hello frames')
  const whole = new Uint8Array([...frameHeader(payload.length), ...payload])
  assert.equal(await readOnlyFrame(source(whole), 100), payload)
  assert.equal(await readOnlyFrame(source(...[...whole].map(byte => new Uint8Array([byte]))), 100), payload)
  assert.equal(await readOnlyFrame(source(whole.subarray(0, 2), new Uint8Array(0), whole.subarray(2)), 100), payload)
  assert.equal(await readOnlyFrame(source(frameHeader(0)), 0), new Uint8Array(0))
  assert.equal([...frameHeader(0x01020304)], [4, 3, 2, 1], 'little endian')
  const fails = async (chunks: Uint8Array[], bytesMax: number, pattern: RegExp) => {
    const error = await rejects(readOnlyFrame(source(...chunks), bytesMax), 'FrameError')
    assert.match(error.message, pattern)
  }
  await fails([frameHeader(101)], 100, /at most 100 bytes/)
  await fails([whole, new Uint8Array([1])], 100, /end of stream after one frame/)
  await fails([new Uint8Array([...whole, 1])], 100, /end of stream after one frame/)
  await fails([whole.subarray(0, 7)], 100, /whole frame/)
  await fails([whole.subarray(0, 2)], 100, /whole frame/)
  await fails([], 100, /whole frame/)
  const written: Uint8Array[] = []
  await writeOnlyFrame({ sink: async chunks => { written.push(...chunks) } }, payload, 100)
  assert.equal(await readOnlyFrame(source(...written), 100), payload)
  await rejects(writeOnlyFrame({ sink: async () => {} }, new Uint8Array(101), 100), 'FrameError')
})

test('envelopes: exact shapes round-trip, everything else is refused', () => {
  const data = text('d')
  assert.equal(decodeGossipEnvelope(encodeGossipEnvelope(data)), data)
  assert.equal(decodeRequestEnvelope(encodeRequestEnvelope({ protocol: 'p', data })), { protocol: 'p', data })
  assert.equal(decodeResponseEnvelope(encodeResponseEnvelope({ ok: true, data })), { ok: true, data })
  assert.equal(decodeResponseEnvelope(encodeResponseEnvelope({ ok: false, error: 'e' })), { ok: false, error: 'e' })
  const long = decodeResponseEnvelope(encodeResponseEnvelope({ ok: false, error: 'x'.repeat(5_000) }))
  assert.is((long as { error: string }).error.length, limits.transportErrorMessageLengthMax)
  const refused = (action: () => unknown, pattern: RegExp): void => {
    assert.throws(action, (error: Error) => error.name === 'InvalidInputError' && pattern.test(error.message))
  }
  refused(() => decodeGossipEnvelope(new Uint8Array([0x92])), /a msgpack value/)
  refused(() => decodeGossipEnvelope(new Uint8Array([0xc1])), /a gossip envelope/)
  refused(() => decodeGossipEnvelope(encode([1, data])), /gossip envelope/)
  refused(() => decodeGossipEnvelope(encode({ v: 2, data })), /envelope version 1/)
  refused(() => decodeGossipEnvelope(encode({ v: 2, data, more: 1 })), /envelope version 1/)
  refused(() => decodeGossipEnvelope(encode({ v: 1, data: 'text' })), /as bytes/)
  refused(() => decodeGossipEnvelope(encode({ v: 1 })), /exactly the keys/)
  refused(() => decodeGossipEnvelope(new Uint8Array(envelopeBytesMax + 1)), /at most/)
  refused(() => decodeRequestEnvelope(encode({ v: 1, protocol: '', data })), /request protocol/)
  refused(() => decodeRequestEnvelope(encode({ v: 1, protocol: 'p'.repeat(limits.transportNameBytesMax + 1), data })), /request protocol/)
  refused(() => decodeResponseEnvelope(encode({ v: 1, ok: 'yes', data })), /true or false/)
  refused(() => decodeResponseEnvelope(encode({ v: 1, ok: false, error: 7 })), /error message/)
})

function pick (transport: Transport): { delivered: number, rejected: number, ignored: number } {
  const { delivered, rejected, ignored } = transport.counters()
  return { delivered, rejected, ignored }
}

/** Request streams open on the transport's side of its connections. */
function requestStreams (transport: Libp2pTransport): number {
  return transport.node.getConnections()
    .flatMap(connection => connection.streams)
    .filter(stream => stream.protocol === requestProtocol && stream.status === 'open').length
}

test.run()
