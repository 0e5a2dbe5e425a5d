/**
 * Hostile peers against a real libp2p node (issue 12, item 6). A victim, an honest peer
 * and an insider (an agent with the network key that misbehaves) on loopback, plus a
 * flooding insider in its own process; outsiders
 * with no or a wrong network key, and an impostor behind another peer's id. The victim
 * takes notices only from the honest peer (as agents take change notices only from
 * controllers). Every attack is refused and counted by the transport (`refusals()`), and
 * the honest peer's deliveries keep their latency: p99 under attack, with the insider
 * flooding at ten times the honest rate, stays within twice the baseline's.
 */
import '../../runtime/polyfill.ts'
import { spawn } from 'node:child_process'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { identify } from '@libp2p/identify'
import { tcp } from '@libp2p/tcp'
import { multiaddr } from '@multiformats/multiaddr'
import { createLibp2p } from 'libp2p'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { Libp2pTransport, requestProtocol } from '../../agent/mesh/libp2p-transport.ts'
import { Libp2pWorld } from '../../agent/mesh/libp2p-world.ts'
import { generateNetworkKey } from '../../agent/mesh/network-key.ts'
import { generatePeerKey, peerIdOfKey } from '../../agent/mesh/peer-identity.ts'
import { encodeFrame } from '../../agent/mesh/channel-frames.ts'
import { envelopeBytesMax } from '../../agent/mesh/mesh-envelopes.ts'
import { encode } from '../../runtime/codec.ts'
import { limits } from '../../runtime/limits.ts'
import { bundledChild } from '../support/bundled-child.ts'
import { chaosCount, chaosFraction, chaosFull, percentile, reportFigures } from './support/chaos-scale.ts'

const test = suite('hostile peers against a real libp2p node')
const topic = 'cantrip/changes/hostile'
const honestIntervalMs = 20
const honestMessages = chaosCount(2_000, 100)
/**
 * The sample's p99 over 100 honest messages is their noisiest one, which a single
 * scheduler stall on a shared 2-core machine decides (59 ms against a baseline of 8.7 once).
 * So the sample bounds the p99 only against a swamped delivery, and the full run checks
 * the p99 as promised (within twice the baseline's).
 */
const sampleP99MsMax = 250
const text = (value: string): Uint8Array => new TextEncoder().encode(value)

let world: Libp2pWorld
let victim: Libp2pTransport
let honest: Libp2pTransport
let insider: Libp2pTransport
const latencies: number[] = []
const figures: Record<string, number | string> = {}

type RawGossip = {
  publishConfig: { privateKey: unknown }
  topics: Map<string, Set<string>>
  mcache: { msgs: Map<string, { message: unknown }> }
  sendRpc: (id: string, rpc: { subscriptions: unknown[], messages: unknown[] }) => boolean
  publish: (topic: string, data: Uint8Array) => Promise<unknown>
}
const raw = (transport: Libp2pTransport): RawGossip => transport.node.services.pubsub as unknown as RawGossip

test.before(async () => {
  world = await Libp2pWorld.create({ peers: 3, heartbeatIntervalMs: 100, readyTimeoutMs: 15_000 })
  ;[victim, honest, insider] = world.transports as [Libp2pTransport, Libp2pTransport, Libp2pTransport]
  // Every honest subscriber runs the same validator, as agents do for change notices: a
  // relay that forwarded what the victim rejects would be penalised along with the sender.
  for (const peer of [victim, honest]) peer.setTopicValidator(topic, message => message.from === honest.peerId ? 'accept' : 'reject')
  victim.subscribe(topic, message => {
    const sent = Number(new TextDecoder().decode(message.data).split(' ')[1])
    if (Number.isFinite(sent)) latencies.push(performance.timeOrigin + performance.now() - sent)
  })
  honest.subscribe(topic, () => {})
  insider.subscribe(topic, () => {})
  await world.waitFor('the victim sees both peers on the topic', () => victim.topicPeers(topic).length === 2, 10_000)
})

test.after(async () => {
  await world.close()
  reportFigures('hostile-peers', figures)
})

/** The honest peer publishes `count` notices at its steady rate; returns the p50 and p99 of their delivery latency at the victim. */
async function honestRun (count: number, label: string): Promise<{ p50: number, p99: number }> {
  latencies.length = 0
  for (let i = 0; i < count; i++) {
    await honest.publish(topic, text(`${label} ${performance.timeOrigin + performance.now()}`))
    await world.wait(honestIntervalMs)
  }
  await world.waitFor(`${count} ${label} notices delivered`, () => latencies.length >= count, 10_000)
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99) }
}

test('connections: no network key, a wrong one, and a Noise identity that is not the one dialled are refused and counted', async () => {
  const before = victim.refusals().handshake
  const open = await createLibp2p({ addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] }, transports: [tcp()], connectionEncrypters: [noise()], streamMuxers: [yamux()], services: { identify: identify() } })
  const outsider = await Libp2pTransport.create({ privateKey: await generatePeerKey(), networkKey: generateNetworkKey() })
  try {
    let openFailed = false
    await open.dial(multiaddr(victim.addresses()[0]!), { signal: AbortSignal.timeout(1_500) }).catch(() => { openFailed = true })
    assert.ok(openFailed, 'a node without the network key connected')
    await outsider.dial(victim.addresses()[0]!, { timeoutMs: 1_500 }).then(() => assert.unreachable('a wrong network key connected'), () => {})
    // The victim dials an address expecting one identity; the node there has the network key but another identity, which Noise proves.
    const expected = peerIdOfKey(await generatePeerKey())
    const impostor = await Libp2pTransport.create({ privateKey: await generatePeerKey(), networkKey: world.networkKey })
    try {
      const address = `${impostor.addresses()[0]!.replace(/\/p2p\/.*$/, '')}/p2p/${expected}`
      const reached = await victim.dial(address, { timeoutMs: 1_500 }).then(peer => peer, () => undefined)
      assert.is(reached, undefined, `the impostor ${impostor.peerId} passed as ${expected} (dial answered ${String(reached)})`)
    } finally {
      await impostor.stop()
    }
    await world.waitFor('three failed handshakes counted', () => victim.refusals().handshake - before >= 3, 10_000)
    assert.not.ok(victim.connectedPeers().includes(outsider.peerId))
    figures['handshakeRefused'] = victim.refusals().handshake - before
  } finally {
    await outsider.stop()
    await open.stop()
  }
})

test('reproducer: an impostor listening at a known peer\'s address gets neither its connection nor its requests', async () => {
  // Found here: libp2p 2.10 does not check that the peer a dial reaches is the one the
  // multiaddr (or the peer store) names, so a request meant for a peer that had gone went
  // to whoever took its address next. The transport's connection gater now refuses it.
  const before = victim.refusals().handshake
  const target = await Libp2pTransport.create({ privateKey: await generatePeerKey(), networkKey: world.networkKey })
  const address = target.addresses()[0]!
  await victim.dial(address, { timeoutMs: 5_000 })
  await target.stop()
  await world.waitFor('the victim noticed the target is gone', () => !victim.connectedPeers().includes(target.peerId), 5_000)
  const impostor = await Libp2pTransport.create({ privateKey: await generatePeerKey(), networkKey: world.networkKey, listen: address.replace(/\/p2p\/.*$/, '') })
  try {
    impostor.handle('echo', async () => text('the impostor answers'))
    const answer = await victim.request(target.peerId, 'echo', text('for the target'), { timeoutMs: 3_000 }).then(data => new TextDecoder().decode(data), (error: Error) => error.name)
    assert.ok(['PeerUnreachableError', 'RequestTimeoutError'].includes(answer), `the request went to the impostor: ${answer}`)
    assert.is(impostor.counters().requestsServed, 0)
    assert.not.ok(victim.connectedPeers().includes(impostor.peerId), 'no connection to the impostor under the target\'s name')
    await world.waitFor('the refused handshake counted', () => victim.refusals().handshake > before, 5_000)
  } finally {
    await impostor.stop()
  }
})

test('requests: bad frames and malformed envelopes are cut off or answered with an error, and counted', async () => {
  victim.handle('echo', async request => request.data)
  const before = victim.refusals()
  const send = async (bytes: Uint8Array[]): Promise<void> => {
    const stream = await insider.node.dialProtocol(multiaddr(victim.addresses()[0]!), requestProtocol, { signal: AbortSignal.timeout(3_000) })
    await stream.sink(bytes).catch(() => {})
    // Drain whatever comes back, bounded, then let go of the stream.
    const drain = (async () => { for await (const _ of stream.source) { /* the answer or nothing */ } })().catch(() => {})
    await Promise.race([drain, world.wait(1_000)])
    stream.abort(new Error('done'))
  }
  const header = (length: number): Uint8Array => { const bytes = new Uint8Array(4); new DataView(bytes.buffer).setUint32(0, length, true); return bytes }
  await send([header(limits.transportMessageBytesMax * 4)]) // a header announcing far too much
  await send([header(20), new Uint8Array([0, 1, 0, 0, 0]), text('short')]) // cut short
  await send([encodeFrame('response', 1, text('xy'), 16)]) // a kind the caller may not send
  const notEnvelope = encode({ v: 9, protocol: 'echo', data: text('x') })
  await send([encodeFrame('request', 1, notEnvelope, envelopeBytesMax)])
  await world.waitFor('request refusals counted', () => {
    const now = victim.refusals()
    return now.requestFrame - before.requestFrame >= 3 && now.requestEnvelope - before.requestEnvelope >= 1
  }, 5_000)
  assert.is(victim.counters().requestsServed, 0, 'no hostile request reached a handler')
  const after = victim.refusals()
  figures['requestFrameRefused'] = after.requestFrame - before.requestFrame
  figures['requestEnvelopeRefused'] = after.requestEnvelope - before.requestEnvelope
  // The honest peer's requests still work.
  assert.equal(await honest.request(victim.peerId, 'echo', text('hi'), { timeoutMs: 5_000 }), text('hi'))
})

test('gossip: bad signatures, malformed, oversized, replayed, wrong-topic and unauthorised messages and a 10x flood are refused and counted; honest p99 holds', async () => {
  const baseline = await honestRun(honestMessages, 'baseline')
  const deliveredBefore = victim.counters().delivered
  const before = victim.refusals()
  const insiderGossip = raw(insider)
  // Replays: the insider re-sends honest messages it relayed, signatures intact.
  const relayed = [...insiderGossip.mcache.msgs.values()].map(entry => entry.message).slice(0, 20)
  assert.ok(relayed.length > 0, 'the insider holds honest messages to replay')
  insiderGossip.sendRpc(victim.peerId, { subscriptions: [], messages: relayed })
  // Malformed and oversized envelopes, validly signed by the insider.
  await insiderGossip.publish(topic, new Uint8Array([0xc1, 0xc1]))
  await insiderGossip.publish(topic, encode({ v: 1, data: new Uint8Array(limits.transportMessageBytesMax + 1) }))
  // A wrong topic: the insider believes the victim subscribes to one it does not.
  insiderGossip.topics.set('cantrip/not-yours', new Set([victim.peerId]))
  await insider.publish('cantrip/not-yours', text('nobody asked'))
  // A bad signature: signed with a key that is not the one its sender's id names.
  const forger = await Libp2pTransport.create({ privateKey: await generatePeerKey(), networkKey: world.networkKey, heartbeatIntervalMs: 100 })
  try {
    forger.subscribe(topic, () => {})
    await forger.dial(victim.addresses()[0]!, { timeoutMs: 5_000 })
    // Both ways: the forger floods its publications only to peers it knows subscribe.
    await world.waitFor('the victim and the forger see each other on the topic', () => victim.topicPeers(topic).includes(forger.peerId) && forger.topicPeers(topic).includes(victim.peerId), 5_000)
    raw(forger).publishConfig.privateKey = await generateKeyPair('Ed25519')
    for (let i = 0; i < 3; i++) await forger.publish(topic, text(`forged ${i}`))
    // The flood: an insider in its own process publishes well-formed notices the victim does not take from it, at ten times the honest rate, while the honest peer keeps its pace.
    const flooder = spawn(process.execPath, [bundledChild('test/chaos/support/hostile-flooder.ts'), Buffer.from(world.networkKey).toString('hex'), victim.addresses()[0]!, topic, '10', String(honestIntervalMs)], { stdio: ['pipe', 'pipe', 'pipe'] })
    let flooderOutput = ''
    flooder.stdout.setEncoding('utf8').on('data', (chunk: string) => { flooderOutput += chunk })
    flooder.stderr.setEncoding('utf8').on('data', (chunk: string) => { flooderOutput += chunk })
    const flooderExited = new Promise(resolve => { flooder.once('exit', resolve) })
    let attack: { p50: number, p99: number }
    let flooded = 0
    try {
      await world.waitFor('the flooder ready', () => flooderOutput.includes('ready'), 60_000).catch((error: Error) => { throw new Error(`${error.message}: ${flooderOutput.slice(-1000)}`) })
      const flooderId = /ready (\S+)/.exec(flooderOutput)![1]!
      await world.waitFor('the victim sees the flooder on the topic', () => victim.topicPeers(topic).includes(flooderId), 10_000)
      flooder.stdin.write('go\n')
      attack = await honestRun(honestMessages, 'attack')
      // The flood is ten times the honest rate where the flooder gets its share of the
      // cores; on a loaded machine it falls behind (410 for 100 once, beside another
      // npm test), so it goes on until it has sent five times the honest messages.
      const sentSoFar = (): number => Number([...flooderOutput.matchAll(/sent (\d+)/g)].at(-1)?.[1] ?? 0)
      await world.waitFor('the flood to reach five times the honest messages', () => sentSoFar() >= 5 * honestMessages, 120_000)
        .catch((error: Error) => { throw new Error(`${error.message}: ${sentSoFar()} sent`) })
      flooder.stdin.write('stop\n')
      flooded = sentSoFar()
    } finally {
      flooder.stdin.end()
      await Promise.race([flooderExited, world.wait(10_000)])
      if (flooder.exitCode === null && flooder.signalCode === null) flooder.kill('SIGKILL')
    }
    await world.waitFor('every kind of refusal counted', () => {
      const now = victim.refusals()
      return now.signature > before.signature && now.malformed > before.malformed && now.oversized > before.oversized &&
        now.wrongTopic > before.wrongTopic && now.duplicate > before.duplicate && now.validator > before.validator
    }, 5_000).catch((error: Error) => { throw new Error(`${error.message}: before ${JSON.stringify(before)}, now ${JSON.stringify(victim.refusals())}`) })
    const after = victim.refusals()
    assert.is(victim.counters().delivered - deliveredBefore, honestMessages, 'only the honest notices were delivered, each once')
    assert.ok(after.graylisted > before.graylisted, 'the flooding insider ended up graylisted')
    assert.ok(flooded >= 5 * honestMessages, `the flood kept up a multiple of the honest rate: ${flooded} for ${honestMessages}`)
    Object.assign(figures, {
      honestMessages,
      flooded,
      baselineP50Ms: Math.round(baseline.p50 * 10) / 10,
      attackP50Ms: Math.round(attack.p50 * 10) / 10,
      baselineP99Ms: Math.round(baseline.p99 * 10) / 10,
      attackP99Ms: Math.round(attack.p99 * 10) / 10,
      ...Object.fromEntries(Object.entries(after).filter(([kind]) => !kind.startsWith('request') && kind !== 'handshake').map(([kind, n]) => [`${kind}Refused`, n - before[kind as keyof typeof before]]))
    })
    // The promise is within twice the baseline (a floor of 5 ms keeps loopback's sub-millisecond baseline from making
    // scheduler noise a failure), on the p99, checked by the full chaos run (`npm run test:chaos`), which is a
    // measurement. The sample in `npm test` reports its figures (above) and checks only what does not depend on
    // the machine being idle, and a generous bound against a swamped delivery (sampleP99MsMax): its median under
    // attack was 12.5 ms against a 2.6 ms baseline with the load at ~25 on 2 cores, which failed the twice-the-median
    // check it had (issue 28: timing bounds belong in the bench; tests wait on events).
    if (chaosFull && chaosFraction === 1) {
      const allowed = 2 * Math.max(baseline.p99, 5)
      assert.ok(attack.p99 <= allowed, `honest p99 ${attack.p99.toFixed(1)} ms under attack, baseline ${baseline.p99.toFixed(1)} ms, allowed ${allowed.toFixed(1)} ms`)
    } else {
      assert.ok(attack.p99 <= sampleP99MsMax, `honest p99 ${attack.p99.toFixed(1)} ms under attack: delivery swamped (at most ${sampleP99MsMax} ms in the sample)`)
    }
  } finally {
    await forger.stop()
  }
})

test.run()
