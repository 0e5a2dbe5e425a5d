/**
 * Libp2pTransport beyond the Transport contract: the private network (pnet), what
 * gossip refuses and how the sender pays for it (bad signatures, malformed and
 * oversized envelopes, rejection scores), request channels and their bounds, stop, and
 * the identity, network key, frame and envelope helpers under agent/mesh/.
 */
import '../runtime/polyfill.ts'
import { spawn, type ChildProcess } from 'node:child_process'
import { chmod, mkdtemp, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { createServer, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { YamuxStream } from '@chainsafe/libp2p-yamux/stream'
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
import { loopbackDialSource } from '../agent/mesh/loopback-dial-source.ts'
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
import { encodeFrame, FrameReader, type ChannelFrame } from '../agent/mesh/channel-frames.ts'
import { deferWindowUpdates } from '../agent/mesh/lazy-window-updates.ts'
import { encode } from '../runtime/codec.ts'
import { limits } from '../runtime/limits.ts'
import type { TopicMessage, Transport } from '../runtime/transport.ts'
import { rejects } from './support/rejects.ts'
import { bundledChild } from './support/bundled-child.ts'

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

// -------------------------------------------------------------------------------------
// Closed connections (Transport.onPeerDisconnected: how Raft learns its leader died)

/** A peer in a child process (support/libp2p-peer-child.ts) and the address it listens on. */
async function childPeer (privateKey: Uint8Array, networkKey: Uint8Array): Promise<{ child: ChildProcess, address: string }> {
  const base64 = (key: Uint8Array): string => Buffer.from(key).toString('base64')
  const child = spawn(process.execPath, [bundledChild(new URL('./support/libp2p-peer-child.ts', import.meta.url).pathname), base64(privateKey), base64(networkKey)], { stdio: ['ignore', 'pipe', 'inherit'] })
  const address = await new Promise<string>((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => { reject(new Error('child peer: no address within 30 s')) }, 30_000)
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      if (out.includes('\n')) { clearTimeout(timer); resolve(out.split('\n')[0]!) }
    })
    child.once('exit', code => { clearTimeout(timer); reject(new Error(`child peer: exited with ${String(code)} before listening`)) })
  })
  return { child, address }
}

for (const how of ['SIGKILL', 'SIGTERM'] as const) {
  test(`a peer whose process ends by ${how} is reported disconnected once, soon, and redials to it do not report it again`, async () => {
    const networkKey = generateNetworkKey()
    const childKey = await generatePeerKey()
    const { child, address } = await childPeer(childKey, networkKey)
    // The child is a bootstrap seed, so the watcher redials it with back-off after the close.
    const watcher = await Libp2pTransport.create({ privateKey: await generatePeerKey(), networkKey, bootstrap: [address], heartbeatIntervalMs })
    const closes: Array<{ peer: string, atMs: number }> = []
    const unsubscribe = watcher.onPeerDisconnected(peer => { closes.push({ peer, atMs: performance.now() }) })
    try {
      const childId = peerIdOfKey(childKey)
      const deadline = performance.now() + 10_000
      while (!watcher.connectedPeers().includes(childId)) {
        assert.ok(performance.now() < deadline, 'connected to the child within 10 s')
        await sleep(20)
      }
      const killedAt = performance.now()
      child.kill(how)
      while (closes.length === 0) {
        assert.ok(performance.now() < killedAt + 10_000, `the close reported within 10 s of ${how}`)
        await sleep(5)
      }
      assert.equal(closes.map(c => c.peer), [childId])
      // Redials of the dead seed (limits.transportSeedRedial*) fail to connect: nothing more is reported.
      await sleep(3_000)
      assert.is(closes.length, 1, `closes reported after ${how}: ${closes.length}`)
      process.stderr.write(`libp2p close after ${how}: reported ${(closes[0]!.atMs - killedAt).toFixed(1)} ms after the signal\n`)
    } finally {
      unsubscribe()
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await watcher.stop()
    }
  })
}

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

test('one host may open a burst of connections at once (CLI runs in a loop, agents starting together)', async () => {
  // libp2p refuses a sixth new connection from one host within a second by default; ten
  // clients dialling together, as ten quick `cantrip` runs or machine agents on one host
  // do, must all get through (limits.transportInboundConnectionsPerHostPerSecond).
  const burst = 10
  await withWorld(1, async (world, [controller]) => {
    controller!.handle('echo', async request => request.data)
    const clients = await Promise.all(Array.from({ length: burst }, async () => await Libp2pTransport.create({ privateKey: await generatePeerKey(), networkKey: world.networkKey, heartbeatIntervalMs })))
    try {
      const dialled = await Promise.allSettled(clients.map(async client => { await client.dial(controller!.addresses()[0]!, long) }))
      assert.equal(dialled.map(d => d.status), Array<string>(burst).fill('fulfilled'), dialled.map(d => d.status === 'rejected' ? String(d.reason) : '').join(' '))
      const echoed = await Promise.all(clients.map(async (client, i) => decodeText(await client.request(controller!.peerId, 'echo', text(`c${i}`), long))))
      assert.equal(echoed, clients.map((_, i) => `c${i}`))
    } finally {
      await Promise.all(clients.map(async client => { await client.stop() }))
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

test('an agent listening on its own loopback address dials from it, so peers see it as its own host', async () => {
  // A plain TCP server stands in for the seed: it only records where each dial came from.
  const sources: string[] = []
  const server = createServer(socket => { sources.push(socket.remoteAddress ?? '?'); socket.destroy() })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  const seed = `/ip4/127.0.0.1/tcp/${port}/p2p/${peerIdOfKey(await generatePeerKey())}`
  const networkKey = generateNetworkKey()
  const joiners: Libp2pTransport[] = []
  try {
    for (const listen of ['/ip4/127.0.0.23/tcp/0', '/ip4/127.0.0.1/tcp/0']) {
      joiners.push(await Libp2pTransport.create({ privateKey: await generatePeerKey(), networkKey, listen, bootstrap: [seed], heartbeatIntervalMs }))
      const deadline = performance.now() + 5_000
      while (sources.length < joiners.length) {
        assert.ok(performance.now() < deadline, `no dial from ${listen} within 5 s`)
        await sleep(20)
      }
    }
    assert.equal(sources.slice(0, 2), ['127.0.0.23', '127.0.0.1'])
  } finally {
    await Promise.all(joiners.map(async joiner => { await joiner.stop() }))
    await new Promise(resolve => server.close(resolve))
  }
})

test('loopbackDialSource: only a single loopback host other than 127.0.0.1', () => {
  const of = (...addresses: string[]): string | undefined => loopbackDialSource(addresses.map(address => multiaddr(address)))
  assert.is(of('/ip4/127.0.0.9/tcp/0'), '127.0.0.9')
  assert.is(of('/ip4/127.0.0.9/tcp/4001', '/ip4/127.0.0.9/tcp/4002'), '127.0.0.9')
  assert.is(of('/ip4/127.0.0.1/tcp/0'), undefined)
  assert.is(of('/ip4/0.0.0.0/tcp/0'), undefined)
  assert.is(of('/ip4/10.0.0.5/tcp/0'), undefined)
  assert.is(of('/ip4/127.0.0.9/tcp/0', '/ip4/127.0.0.10/tcp/0'), undefined)
  assert.is(of('/ip6/::1/tcp/0'), undefined)
  assert.is(of(), undefined)
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

test('a request that times out is cancelled, so the server holds nothing for it; the channel stays', async () => {
  await withWorld(2, async (world, [a, b]) => {
    b!.handle('hang', () => new Promise<Uint8Array>(() => {}))
    b!.handle('echo', async request => request.data)
    const started = performance.now()
    const error = await rejects(a!.request(b!.peerId, 'hang', text('x'), { timeoutMs: 300 }), 'RequestTimeoutError')
    const tookMs = performance.now() - started
    // Never before its 300 ms; the handler never answers, so any end at all is the timeout
    // (how late is no verdict: a loaded machine stalls the event loop for seconds).
    assert.ok(tookMs >= 295 && tookMs < 30_000, `timed out after ${tookMs.toFixed(0)} ms`)
    assert.match(error.message, '300 ms')
    assert.is(a!.requestsInFlight, 0)
    await world.waitFor('the server dropped the cancelled request', () => b!.requestsServing === 0, 2_000)
    assert.equal(a!.counters().requestsFailed, 1)
    assert.equal(decodeText(await a!.request(b!.peerId, 'echo', text('after'), long)), 'after')
    assert.is(requestStreams(b!), 1, 'one channel carried both requests')
  })
})

test('many concurrent requests share one channel, answered out of order, a slow one blocking none', async () => {
  await withWorld(2, async (_world, [a, b]) => {
    const count = 100
    // Request i waits (count - i) ms: the last sent is answered first.
    b!.handle('delay', async request => {
      const i = Number(decodeText(request.data))
      await sleep(count - i)
      return text(`answer ${i}`)
    })
    const slow = Promise.withResolvers<Uint8Array>()
    b!.handle('slow', async () => await slow.promise)
    const slowAnswer = a!.request(b!.peerId, 'slow', text('x'), long)
    const finished: number[] = []
    const answers = await Promise.all(Array.from({ length: count }, async (_, i) => {
      const answer = decodeText(await a!.request(b!.peerId, 'delay', text(String(i)), long))
      finished.push(i)
      return answer
    }))
    assert.equal(answers, Array.from({ length: count }, (_, i) => `answer ${i}`), 'each answer went to its own request')
    assert.ok(finished[0]! > finished[count - 1]!, `answered in the order sent: ${finished.slice(0, 5).join(', ')}…`)
    assert.is(a!.requestsInFlight, 1, 'the slow request still waits')
    slow.resolve(text('slow done'))
    assert.equal(decodeText(await slowAnswer), 'slow done')
    assert.equal(a!.requestChannels, { outbound: 1, inbound: 0 })
    assert.equal(b!.requestChannels, { outbound: 0, inbound: 1 })
    assert.is(requestStreams(b!), 1)
    assert.is(b!.counters().requestsServed, count + 1)
  })
})

test('large requests both ways at once on the channels do not stall: yamux windows refill as the readers go', async () => {
  await withWorld(2, async (_world, [a, b]) => {
    for (const t of [a!, b!]) t.handle('echo', async request => request.data)
    const big = (seed: number): Uint8Array => new Uint8Array(limits.transportMessageBytesMax).fill(seed)
    const started = performance.now()
    const exchanges = Array.from({ length: 8 }, async (_, i) => {
      const [from, to] = i % 2 === 0 ? [a!, b!] : [b!, a!]
      const answer = await from.request(to.peerId, 'echo', big(i), { timeoutMs: 30_000 })
      return answer.byteLength === limits.transportMessageBytesMax && answer.every(byte => byte === i)
    })
    const small = Array.from({ length: 20 }, async (_, i) => decodeText(await a!.request(b!.peerId, 'echo', text(`small ${i}`), { timeoutMs: 30_000 })))
    assert.equal(await Promise.all(exchanges), Array.from({ length: 8 }, () => true))
    assert.equal(await Promise.all(small), Array.from({ length: 20 }, (_, i) => `small ${i}`))
    assert.ok(performance.now() - started < 20_000, 'the transfers finished well within their timeout')
    assert.equal(a!.requestChannels, { outbound: 1, inbound: 1 })
  })
})

test(`a handler's pushes reach the caller in order ahead of its answer, at most ${limits.transportRequestPushesUnwrittenMax} unwritten, none after it`, async () => {
  await withWorld(2, async (world, [a, b]) => {
    const results: boolean[] = []
    let late: (() => boolean) | undefined
    b!.handle('pusher', async request => {
      assert.ok(request.push !== undefined, 'libp2p requests carry pushes')
      // Synchronously, so none is written yet: the bound says no to the one past it.
      for (let i = 0; i <= limits.transportRequestPushesUnwrittenMax; i++) results.push(request.push!(text(`p${i}`)))
      late = () => request.push!(text('late'))
      return text('done')
    })
    const pushed: string[] = []
    const answer = decodeText(await a!.request(b!.peerId, 'pusher', text('go'), { ...long, onPush: data => { pushed.push(decodeText(data)) } }))
    assert.is(answer, 'done')
    // All arrived before the answer resolved the request, in the order pushed.
    const expected = Array.from({ length: limits.transportRequestPushesUnwrittenMax }, (_, i) => `p${i}`)
    assert.equal(pushed, expected)
    assert.equal(results, [...expected.map(() => true), false])
    assert.is(late!(), false, 'a push after the answer is not sent')
    // A caller that does not listen still gets its answer; the pushes are dropped on its side.
    assert.is(decodeText(await a!.request(b!.peerId, 'pusher', text('go'), long)), 'done')
    assert.equal(pushed, expected)
  })
})

test('a channel whose connection drops fails its waiting requests; the next request opens a fresh one', async () => {
  await withWorld(2, async (world, [a, b]) => {
    b!.handle('hang', () => new Promise<Uint8Array>(() => {}))
    b!.handle('echo', async request => request.data)
    assert.equal(decodeText(await a!.request(b!.peerId, 'echo', text('before'), long)), 'before')
    const waiting = Array.from({ length: 3 }, () => a!.request(b!.peerId, 'hang', text('x'), long).then(() => undefined, (error: Error) => error))
    await world.waitFor('the server has the requests', () => b!.requestsServing === 3, 2_000)
    const started = performance.now()
    await a!.node.hangUp(b!.node.peerId)
    const errors = await Promise.all(waiting)
    assert.ok(performance.now() - started < 2_000, 'the requests failed when the connection went, not at their timeout')
    for (const error of errors) {
      assert.is(error?.name, 'PeerUnreachableError')
      assert.match(error!.message, 'stream broke before the answer')
    }
    assert.equal(a!.requestChannels.outbound, 0, 'the dead channel is forgotten')
    assert.equal(decodeText(await a!.request(b!.peerId, 'echo', text('after'), long)), 'after')
    assert.is(a!.requestChannels.outbound, 1)
    await world.waitFor('the server dropped the dead channel', () => b!.requestChannels.inbound === 1 && b!.requestsServing === 0, 2_000)
  })
})

test('stop fails the requests waiting on channels and closes them on both sides', async () => {
  await withWorld(2, async (world, [a, b]) => {
    b!.handle('hang', () => new Promise<Uint8Array>(() => {}))
    const waiting = a!.request(b!.peerId, 'hang', text('x'), long).then(() => undefined, (error: Error) => error)
    await world.waitFor('the server has the request', () => b!.requestsServing === 1, 2_000)
    await a!.stop()
    assert.is((await waiting)?.name, 'TransportStoppedError')
    assert.equal(a!.requestChannels, { outbound: 0, inbound: 0 })
    await world.waitFor('the server dropped the channel', () => b!.requestChannels.inbound === 0 && b!.requestsServing === 0, 2_000)
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

test('request channels: an oversized or unknown frame cuts the channel off, a malformed envelope is answered with an error, both counted', async () => {
  await withWorld(2, async (world, [a, b]) => {
    b!.handle('echo', async request => request.data)
    const open = async () => await a!.node.dialProtocol(b!.node.peerId, requestProtocol)

    // A header announcing more than the maximum: the server resets without reading on.
    const before = b!.refusals()
    const oversized = await open()
    const header = new Uint8Array(4)
    new DataView(header.buffer).setUint32(0, 5 + envelopeBytesMax + 1, true)
    await oversized.sink([header])
    await rejects(readFrames(oversized.source, 1), 'StreamResetError')
    assert.is(b!.refusals().requestFrame, before.requestFrame + 1)
    // So does a frame of a kind the caller may not send.
    const wrongKind = await open()
    await wrongKind.sink([encodeFrame('response', 1, text('x'), envelopeBytesMax)])
    await rejects(readFrames(wrongKind.source, 1), 'StreamResetError')
    assert.is(b!.refusals().requestFrame, before.requestFrame + 2)
    // The sender refuses an oversized body before building the frame.
    assert.throws(() => encodeFrame('request', 1, new Uint8Array(envelopeBytesMax + 1), envelopeBytesMax), (error: Error) => error.name === 'FrameError')

    // Whole frames by hand: a malformed envelope gets an error answer, a good one is
    // served, on one channel, each answer under its own id.
    const manual = await open()
    await manual.sink([
      encodeFrame('request', 7, new Uint8Array([0xc1]), envelopeBytesMax),
      encodeFrame('request', 9, encodeRequestEnvelope({ protocol: 'echo', data: text('by hand') }), envelopeBytesMax)
    ])
    const frames = await readFrames(manual.source, 2)
    const byId = new Map(frames.map(frame => [frame.id, decodeResponseEnvelope(frame.body)]))
    assert.equal(frames.map(frame => frame.kind), ['response', 'response'])
    assert.is(byId.get(7)?.ok, false)
    assert.match((byId.get(7) as { error: string }).error, 'malformed request')
    assert.equal(byId.get(9), { ok: true, data: text('by hand') })
    assert.is(b!.refusals().requestEnvelope, before.requestEnvelope + 1)

    // The connection is still good for requests.
    assert.equal(decodeText(await a!.request(b!.peerId, 'echo', text('still here'), long)), 'still here')
    await world.waitFor('the hand-made channels are gone', () => b!.requestChannels.inbound === 1, 2_000)
  })
})

test('gossip streams send window updates only once half the window is used, as request channels do', async () => {
  // Counts the updates yamux itself would send, beneath the deferral, on every stream of this process.
  const prototype = YamuxStream.prototype as unknown as { sendWindowUpdate: () => void }
  const original = prototype.sendWindowUpdate
  let sent = 0
  prototype.sendWindowUpdate = function (this: unknown) { sent++; original.call(this) }
  try {
    await withWorld(2, async (world, [a, b]) => {
      const received = inbox(b!, 'lazy')
      inbox(a!, 'lazy')
      await world.waitForMesh('lazy', 10_000)
      const before = sent
      const count = 50
      for (let i = 0; i < count; i++) {
        await a!.publish('lazy', text(`small message ${i}`))
        await world.waitFor(`message ${i} delivered`, () => received.length > i, 5_000)
      }
      assert.ok(sent - before <= 4, `${sent - before} window updates for ${count} small gossip messages`)
    })
  } finally {
    prototype.sendWindowUpdate = original
  }
})

test(`a caller with more than ${limits.transportChannelRequestsInFlightMax} requests in flight on a channel is cut off`, async () => {
  await withWorld(2, async (_world, [a, b]) => {
    b!.handle('hang', () => new Promise<Uint8Array>(() => {}))
    const before = b!.refusals().requestFrame
    const stream = await a!.node.dialProtocol(b!.node.peerId, requestProtocol)
    const request = encodeRequestEnvelope({ protocol: 'hang', data: text('x') })
    await stream.sink(Array.from({ length: limits.transportChannelRequestsInFlightMax + 1 }, (_, i) => encodeFrame('request', i, request, envelopeBytesMax)))
    await rejects(readFrames(stream.source, 1), 'StreamResetError')
    assert.is(b!.refusals().requestFrame, before + 1)
    assert.is(b!.requestsServing, 0)
  })
})

test('request channel streams send a yamux window update only once half the window is used', async () => {
  await withWorld(2, async (_world, [a, b]) => {
    b!.handle('echo', async request => request.data)
    const stream = await a!.node.dialProtocol(b!.node.peerId, requestProtocol)
    const raw = stream as unknown as { sendWindowUpdate: () => void }
    let sent = 0
    const update = raw.sendWindowUpdate.bind(stream)
    raw.sendWindowUpdate = () => { sent++; update() }
    assert.ok(deferWindowUpdates(stream), 'the installed yamux streams have the shape the patch expects')
    assert.not.ok(deferWindowUpdates({ sink: () => {} }), 'anything else is left alone')
    const request = encodeRequestEnvelope({ protocol: 'echo', data: text('x') })
    const count = 50
    // One request at a time, each sent once the previous answer was read: every answer is a read of its own.
    let answered = Promise.withResolvers<void>()
    void stream.sink((async function * () {
      for (let j = 0; j < count; j++) {
        yield encodeFrame('request', j, request, envelopeBytesMax)
        await answered.promise
        answered = Promise.withResolvers<void>()
      }
    })()).catch(() => {})
    const reader = new FrameReader(envelopeBytesMax)
    let answers = 0
    for await (const chunk of stream.source) {
      answers += reader.push(chunk.subarray()).length
      answered.resolve()
      if (answers === count) break
    }
    assert.is(answers, count)
    assert.ok(sent <= 2, `${sent} window updates for ${count} small answers`)
    stream.abort(new Error('test done'))
  })
})

test('the wire capture sees each request and response envelope carried on a channel', async () => {
  const networkKey = generateNetworkKey()
  const seen: Array<{ at: string, kind: string, bytes: Uint8Array }> = []
  const server = await Libp2pTransport.create({ privateKey: await generatePeerKey(), networkKey, capture: (kind, bytes) => { seen.push({ at: 'server', kind, bytes: bytes.slice() }) } })
  const client = await Libp2pTransport.create({ privateKey: await generatePeerKey(), networkKey, bootstrap: server.addresses(), capture: (kind, bytes) => { seen.push({ at: 'client', kind, bytes: bytes.slice() }) } })
  try {
    server.handle('echo', async request => request.data)
    for (const word of ['one', 'two']) assert.equal(decodeText(await client.request(server.peerId, 'echo', text(word), long)), word)
    const requests = seen.filter(entry => entry.kind === 'request')
    const responses = seen.filter(entry => entry.kind === 'response')
    assert.equal(requests.map(entry => [entry.at, decodeRequestEnvelope(entry.bytes)]), [
      ['server', { protocol: 'echo', data: text('one') }], ['server', { protocol: 'echo', data: text('two') }]
    ])
    assert.equal(responses.map(entry => [entry.at, decodeResponseEnvelope(entry.bytes)]), [
      ['client', { ok: true, data: text('one') }], ['client', { ok: true, data: text('two') }]
    ])
  } finally {
    await client.stop()
    await server.stop()
  }
})

test('a peer opening more request channels than the maximum gets the extra ones reset', async () => {
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
      const options = { maxOutboundStreams: 10 * limits.transportRequestChannelsPerPeerMax }
      const held = []
      for (let i = 0; i < limits.transportRequestChannelsPerPeerMax; i++) {
        // Nothing written: an idle channel is kept.
        held.push(await hostile.dialProtocol(target, requestProtocol, options))
      }
      await world.waitFor('the server holds the maximum of channels', () => requestStreams(server!) === limits.transportRequestChannelsPerPeerMax, 5_000)
      let refused: Error | undefined
      try {
        const extra = await hostile.dialProtocol(target, requestProtocol, options)
        await extra.sink([encodeFrame('request', 1, encodeRequestEnvelope({ protocol: 'echo', data: text('one too many') }), envelopeBytesMax)])
        await readFrames(extra.source, 1)
      } catch (error) {
        refused = error as Error
      }
      // The reset shows as a failed write or a failed read, whichever comes first.
      assert.ok(refused !== undefined, 'the server answered on a channel beyond its maximum')
      assert.is(requestStreams(server!), limits.transportRequestChannelsPerPeerMax)
      for (const stream of held) stream.abort(new Error('test done'))
      await world.waitFor('the held channels released', () => requestStreams(server!) === 0 && server!.requestChannels.inbound === 0, 5_000)
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

test('channel frames: split and joined chunks, and every way a frame can be wrong', () => {
  const first = encodeFrame('request', 1, text('hello frames'), 100)
  const second = encodeFrame('response', 0xffff_ffff, new Uint8Array(0), 100)
  const third = encodeFrame('cancel', 3, new Uint8Array(0), 0)
  const all = new Uint8Array([...first, ...second, ...third])
  const expected: ChannelFrame[] = [
    { kind: 'request', id: 1, body: text('hello frames') },
    { kind: 'response', id: 0xffff_ffff, body: new Uint8Array(0) },
    { kind: 'cancel', id: 3, body: new Uint8Array(0) }
  ]
  const readAll = (chunks: Uint8Array[]): ChannelFrame[] => {
    const reader = new FrameReader(100)
    const frames = chunks.flatMap(chunk => reader.push(chunk)).map(frame => ({ ...frame, body: new Uint8Array(frame.body) }))
    assert.is(reader.partial, false)
    return frames
  }
  assert.equal(readAll([all]), expected, 'all in one chunk')
  assert.equal(readAll([...all].map(byte => new Uint8Array([byte]))), expected, 'a byte at a time')
  assert.equal(readAll([all.subarray(0, 2), new Uint8Array(0), all.subarray(2, 20), all.subarray(20)]), expected)
  assert.equal([...first.subarray(0, 9)], [5 + 12, 0, 0, 0, 0, 1, 0, 0, 0], 'little endian length, kind, id')
  const partial = new FrameReader(100)
  assert.equal(partial.push(first.subarray(0, 7)), [])
  assert.is(partial.partial, true)
  const fails = (bytes: number[], pattern: RegExp): void => {
    assert.throws(() => new FrameReader(100).push(new Uint8Array(bytes)), (error: Error) => error.name === 'FrameError' && pattern.test(error.message))
  }
  fails([106, 0, 0, 0], /a frame of 5 to 105 bytes/)
  fails([0xff, 0xff, 0xff, 0xff], /a header announcing 4294967295 bytes/)
  fails([4, 0, 0, 0], /a frame of 5 to 105 bytes/)
  fails([5, 0, 0, 0, 9, 0, 0, 0, 0], /kind request, cancel, response, push or listening/)
  assert.equal(new FrameReader(100).push(encodeFrame('listening', 4, text('l'), 100)).map(frame => frame.kind), ['listening'], 'a request whose caller listens for pushes')
  assert.throws(() => encodeFrame('request', 1, new Uint8Array(101), 100), (error: Error) => error.name === 'FrameError' && /at most 100 bytes/.test(error.message))
  assert.throws(() => encodeFrame('request', -1, new Uint8Array(0), 100), (error: Error) => error.name === 'InvalidInputError')
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

/** Reads `count` channel frames off a stream, or fails with the stream's error. */
async function readFrames (source: AsyncIterable<{ subarray: () => Uint8Array }>, count: number): Promise<ChannelFrame[]> {
  const reader = new FrameReader(envelopeBytesMax)
  const frames: ChannelFrame[] = []
  for await (const chunk of source) {
    frames.push(...reader.push(chunk.subarray()))
    if (frames.length >= count) return frames
  }
  throw new Error(`expected ${count} frames, got ${frames.length} before the end of stream`)
}

/** Request channel streams open on the transport's side of its connections. */
function requestStreams (transport: Libp2pTransport): number {
  return transport.node.getConnections()
    .flatMap(connection => connection.streams)
    .filter(stream => stream.protocol === requestProtocol && stream.status === 'open').length
}

test.run()
