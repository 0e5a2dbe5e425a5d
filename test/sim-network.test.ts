/**
 * SimNetwork beyond the Transport contract: latency, every fault, partition shapes
 * with exact reachability both ways, messages in flight when faults start, crash and
 * restart, bounds, and determinism for a seed.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { PeerId, TopicMessage, Transport } from '../runtime/transport.ts'
import { SimNetworkWorld } from '../sim/sim-network-world.ts'
import { SimNetwork, type LatencyDistribution } from '../sim/sim-network.ts'
import { SimClock } from '../sim/sim-clock.ts'
import { SeededRandom } from '../runtime/random.ts'

const test = suite('sim network')

const text = (value: string): Uint8Array => new TextEncoder().encode(value)
const decode = (data: Uint8Array): string => new TextDecoder().decode(data)
const fixed = (ms: number): LatencyDistribution => ({ kind: 'fixed', ms })
const long = { timeoutMs: 60_000 }

interface Received { at: number, to: PeerId, from: PeerId, data: string, id: string }

/** A world of named peers that all subscribe to "t" and record what they receive, with when. */
function gossipWorld (peers: PeerId[], options: { seed?: number, latency?: LatencyDistribution } = {}) {
  const events: string[] = []
  const world = new SimNetworkWorld({
    seed: options.seed ?? 1,
    peers,
    latency: options.latency ?? fixed(10),
    onEvent: line => { events.push(line) }
  })
  const received: Received[] = []
  const subscribe = (transport: Transport): (() => void) => transport.subscribe('t', (message: TopicMessage) => {
    received.push({ at: world.clock.now(), to: transport.peerId, from: message.from, data: decode(message.data), id: message.id })
  })
  const unsubscribe = new Map(world.transports.map(transport => [transport.peerId, subscribe(transport)]))
  const peer = (id: PeerId): Transport => world.network.transport(id)
  const got = (id: PeerId): string[] => received.filter(r => r.to === id).map(r => r.data)
  return { world, network: world.network, clock: world.clock, events, received, peer, got, subscribe, unsubscribe }
}

/** Every directed pair that can reach, as "a->b", in a stable order. */
function reachable (network: SimNetwork, peers: PeerId[]): string[] {
  const pairs: string[] = []
  for (const from of peers) for (const to of peers) if (network.canReach(from, to)) pairs.push(`${from}->${to}`)
  return pairs
}

const allPairs = (peers: PeerId[]): string[] => peers.flatMap(from => peers.filter(to => to !== from).map(to => `${from}->${to}`))

/** Pairs within each group, both ways. */
const within = (...groups: PeerId[][]): string[] => groups.flatMap(allPairs)

const sortPairs = (pairs: string[]): string[] => [...pairs].sort()

/** Publishes one message from each peer and returns who heard whom, as "from->to". */
async function heard (g: ReturnType<typeof gossipWorld>, peers: PeerId[]): Promise<string[]> {
  const before = g.received.length
  for (const id of peers) if (g.network.isRunning(id)) await g.peer(id).publish('t', text(`from ${id}`))
  g.clock.advance(1_000)
  return sortPairs(g.received.slice(before).map(r => `${r.from}->${r.to}`))
}

async function rejects (promise: Promise<unknown>, name: string): Promise<Error> {
  try {
    await promise
  } catch (error) {
    assert.is((error as Error).name, name, (error as Error).message)
    return error as Error
  }
  assert.unreachable(`expected a ${name}`)
  throw new Error('unreachable')
}

function throws (action: () => unknown, name: string, message?: string): void {
  try {
    action()
  } catch (error) {
    assert.is((error as Error).name, name, (error as Error).message)
    if (message !== undefined) assert.match((error as Error).message, message)
    return
  }
  assert.unreachable(`expected a ${name}`)
}

interface Tracked<T> { settled: boolean, value?: T, error?: Error }
function track<T> (promise: Promise<T>): Tracked<T> {
  const tracked: Tracked<T> = { settled: false }
  promise.then(value => { tracked.settled = true; tracked.value = value },
    (error: unknown) => { tracked.settled = true; tracked.error = error as Error })
  return tracked
}

// -----------------------------------------------------------------------------------
// Latency

test('fixed latency: each subscriber receives exactly that much later', async () => {
  const g = gossipWorld(['a', 'b', 'c'], { latency: fixed(25) })
  g.clock.advance(100)
  await g.peer('a').publish('t', text('x'))
  g.clock.advance(24)
  assert.equal(g.received, [])
  g.clock.advance(1)
  assert.equal(g.received.map(r => [r.to, r.at]), [['b', 125], ['c', 125]])
})

test('a directed link can have its own latency; the other direction keeps the default', async () => {
  const g = gossipWorld(['a', 'b'], { latency: fixed(5) })
  g.network.setLatency(fixed(300), { from: 'a', to: 'b' })
  await g.peer('a').publish('t', text('slow'))
  await g.peer('b').publish('t', text('fast'))
  g.clock.advance(1_000)
  assert.equal(g.received.map(r => [r.data, r.at]), [['fast', 5], ['slow', 300]])
})

test('uniform latency stays within its bounds and covers them', async () => {
  const g = gossipWorld(['a', 'b'], { latency: { kind: 'uniform', minMs: 10, maxMs: 20 } })
  // One message per 100 ms so FIFO never holds one back behind another.
  for (let i = 0; i < 2_000; i++) {
    const sentAt = g.clock.now()
    await g.peer('a').publish('t', text(String(sentAt)))
    g.clock.advance(100)
  }
  const delays = g.received.map(r => r.at - Number(r.data))
  assert.is(delays.length, 2_000)
  assert.is(Math.min(...delays), 10)
  assert.is(Math.max(...delays), 20)
  const mean = delays.reduce((sum, d) => sum + d, 0) / delays.length
  assert.ok(Math.abs(mean - 15) < 0.5, `mean ${mean}`)
})

test('exponential latency is at least its minimum, with the mean tail above it', async () => {
  const g = gossipWorld(['a', 'b'], { latency: { kind: 'exponential', minMs: 5, meanMs: 20 } })
  for (let i = 0; i < 4_000; i++) {
    await g.peer('a').publish('t', text(String(g.clock.now())))
    g.clock.advance(1_000)
  }
  const delays = g.received.map(r => r.at - Number(r.data))
  assert.is(delays.length, 4_000)
  assert.ok(Math.min(...delays) >= 5)
  const mean = delays.reduce((sum, d) => sum + d, 0) / delays.length
  assert.ok(Math.abs(mean - 25) < 1.5, `mean ${mean}, expected about 25`)
})

test('bad latency settings are refused, naming the component', () => {
  const clock = new SimClock()
  const random = new SeededRandom(1)
  throws(() => new SimNetwork({ clock, random, latency: { kind: 'uniform', minMs: 5, maxMs: 1 } }), 'InvalidInputError', 'sim-network: ')
  const network = new SimNetwork({ clock, random })
  throws(() => { network.setLatency({ kind: 'fixed', ms: -1 }) }, 'InvalidInputError', 'sim-network: ')
  throws(() => { network.setLatency({ kind: 'exponential', minMs: 0, meanMs: 0 }) }, 'InvalidInputError')
  throws(() => { network.setLatency({ kind: 'uniform', minMs: 0.5, maxMs: 2 }) }, 'InvalidInputError')
  throws(() => { network.setLatency({ kind: 'gaussian' } as never) }, 'InvalidInputError')
  throws(() => { network.setLatency(fixed(1), { from: 'a', to: 'a' }) }, 'InvalidInputError')
})

// -----------------------------------------------------------------------------------
// Ordering, loss, duplication, reordering

test('a link is FIFO: without reordering, messages arrive in the order sent', async () => {
  const g = gossipWorld(['a', 'b'], { latency: { kind: 'uniform', minMs: 1, maxMs: 50 } })
  for (let i = 0; i < 300; i++) {
    await g.peer('a').publish('t', text(String(i)))
    if (i % 7 === 0) g.clock.advance(3)
  }
  g.clock.advance(1_000)
  assert.equal(g.got('b'), Array.from({ length: 300 }, (_, i) => String(i)))
})

test('reordering delays some messages so later ones overtake them; none is lost', async () => {
  const g = gossipWorld(['a', 'b'], { latency: fixed(10) })
  g.network.setReorder(0.3, 40)
  for (let i = 0; i < 300; i++) {
    await g.peer('a').publish('t', text(String(i)))
    g.clock.advance(2)
  }
  g.clock.advance(1_000)
  const order = g.got('b').map(Number)
  assert.is(order.length, 300)
  assert.equal([...order].sort((x, y) => x - y), Array.from({ length: 300 }, (_, i) => i))
  const inversions = order.filter((value, i) => i > 0 && value < order[i - 1]!).length
  assert.ok(inversions > 20, `only ${inversions} messages arrived out of order`)
  assert.ok(g.events.some(line => line === 'reorder 0.3 extra 1..40 ms'))
  g.network.setReorder(0, 0)
  const before = g.received.length
  for (let i = 0; i < 50; i++) await g.peer('a').publish('t', text(String(i)))
  g.clock.advance(100)
  assert.equal(g.received.slice(before).map(r => Number(r.data)), Array.from({ length: 50 }, (_, i) => i))
})

test('loss drops close to the set fraction of messages', async () => {
  const g = gossipWorld(['a', 'b'], { latency: fixed(1) })
  g.network.setLoss(0.2)
  const count = 10_000
  for (let i = 0; i < count; i++) await g.peer('a').publish('t', text('x'))
  g.clock.advance(10)
  const delivered = g.got('b').length
  // 3.75 standard deviations (sqrt(10000 * 0.2 * 0.8) = 40) either side.
  assert.ok(Math.abs(delivered - 8_000) < 150, `delivered ${delivered} of ${count} with loss 0.2`)
  assert.is(g.network.stats().lost, count - delivered)
  assert.is(g.network.stats().sent, count)
})

test('loss on one directed link leaves the other links and the other direction alone', async () => {
  const g = gossipWorld(['a', 'b', 'c'])
  g.network.setLoss(1, { from: 'a', to: 'b' })
  assert.equal(await heard(g, ['a', 'b', 'c']), sortPairs(['a->c', 'b->a', 'b->c', 'c->a', 'c->b']))
  assert.ok(g.events.includes('loss 1 a->b'))
})

test('duplication delivers a message twice, the copy later and with the same id', async () => {
  const g = gossipWorld(['a', 'b'], { latency: fixed(10) })
  g.network.setDuplication(1)
  await g.peer('a').publish('t', text('twice'))
  g.clock.advance(100)
  assert.equal(g.received.map(r => [r.data, r.at]), [['twice', 10], ['twice', 20]])
  assert.is(g.received[0]!.id, g.received[1]!.id)
  assert.is(g.peer('b').counters().delivered, 2)
  assert.ok(g.events.some(line => line.startsWith('deliver topic t a->b') && line.includes(' dup ')))
})

test('duplication happens at close to the set rate', async () => {
  const g = gossipWorld(['a', 'b'], { latency: fixed(1) })
  g.network.setDuplication(0.3)
  for (let i = 0; i < 5_000; i++) await g.peer('a').publish('t', text('x'))
  g.clock.advance(100)
  const extra = g.got('b').length - 5_000
  assert.ok(Math.abs(extra - 1_500) < 120, `${extra} duplicates of 5000 at 0.3`)
  assert.is(g.network.stats().duplicated, extra)
})

test('a duplicated request may run the handler twice, but the caller gets one answer', async () => {
  const world = new SimNetworkWorld({ seed: 3, peers: ['a', 'b'], latency: fixed(5) })
  world.network.setDuplication(1)
  let calls = 0
  world.transports[1]!.handle('count', async () => text(String(++calls)))
  const answer = track(world.transports[0]!.request('b', 'count', text('x'), long))
  await world.wait(100)
  assert.is(decode(answer.value!), '1')
  assert.is(calls, 2)
  // Two handler answers, each duplicated: one is taken, three are dropped.
  assert.is(world.network.stats().droppedStale, 3)
  assert.is(world.transports[0]!.counters().requestsFailed, 0)
})

// -----------------------------------------------------------------------------------
// Clogging

test('a clogged link holds messages, not loses them, and releases them in order', async () => {
  const g = gossipWorld(['a', 'b'], { latency: { kind: 'uniform', minMs: 1, maxMs: 30 } })
  g.network.clog('a', 'b')
  for (let i = 0; i < 20; i++) await g.peer('a').publish('t', text(String(i)))
  await g.peer('b').publish('t', text('other way'))
  g.clock.advance(5_000)
  assert.equal(g.got('b'), [])
  assert.equal(g.got('a'), ['other way'])
  assert.is(g.network.stats().held, 20)
  assert.is(g.network.inFlightCount, 20)
  assert.ok(g.network.canReach('a', 'b'), 'a clog is not a partition')
  g.network.unclog('a', 'b')
  g.clock.advance(0)
  assert.equal(g.got('b'), Array.from({ length: 20 }, (_, i) => String(i)))
  assert.ok(g.received.filter(r => r.to === 'b').every(r => r.at === 5_000))
  assert.is(g.network.inFlightCount, 0)
  assert.ok(g.events.includes('unclog a->b releasing 20'))
})

test('what a clog releases into a partition is dropped', async () => {
  const g = gossipWorld(['a', 'b'])
  g.network.clog('a', 'b')
  await g.peer('a').publish('t', text('held'))
  g.clock.advance(100)
  g.network.partition([['a'], ['b']])
  g.network.unclog('a', 'b')
  g.clock.advance(100)
  assert.equal(g.got('b'), [])
  assert.is(g.network.stats().droppedUnreachable, 1)
})

test('resetFaults releases clogs and clears loss, duplication, reorder, latency and partitions', async () => {
  const g = gossipWorld(['a', 'b', 'c'], { latency: fixed(10) })
  g.network.clog('a', 'b')
  await g.peer('a').publish('t', text('held'))
  g.clock.advance(50)
  g.network.setLoss(1, { from: 'c', to: 'a' })
  g.network.setDuplication(1)
  g.network.setReorder(1, 100)
  g.network.setLatency(fixed(500))
  g.network.isolate('c')
  g.network.resetFaults()
  g.clock.advance(0)
  assert.equal(g.got('b'), ['held'])
  const before = g.received.length
  await g.peer('c').publish('t', text('clean'))
  g.clock.advance(10)
  assert.equal(g.received.slice(before).map(r => [r.to, r.data, r.at]), [['a', 'clean', 60], ['b', 'clean', 60]])
  g.clock.advance(1_000)
  assert.is(g.received.length, before + 2, 'a duplicate arrived after resetFaults')
})

// -----------------------------------------------------------------------------------
// Partitions

const five = ['a', 'b', 'c', 'd', 'e']

test('without faults every running peer reaches every other one, and not itself', async () => {
  const g = gossipWorld(five)
  assert.equal(reachable(g.network, five), allPairs(five))
  assert.equal(g.peer('c').connectedPeers(), ['a', 'b', 'd', 'e'])
  assert.equal(await heard(g, five), sortPairs(allPairs(five)))
})

test('symmetric partition: each group talks within itself only', async () => {
  const g = gossipWorld(five)
  g.network.partition([['a', 'b'], ['c', 'd', 'e']])
  const expected = sortPairs(within(['a', 'b'], ['c', 'd', 'e']))
  assert.equal(sortPairs(reachable(g.network, five)), expected)
  assert.equal(await heard(g, five), expected)
  assert.equal(g.peer('a').connectedPeers(), ['b'])
  assert.equal(g.peer('d').connectedPeers(), ['c', 'e'])
  assert.ok(g.events.includes('partition {a b} {c d e}'))
})

test('a partition cuts off peers in no group, including ones started later', async () => {
  const g = gossipWorld(['a', 'b', 'c'])
  g.network.partition([['a', 'b']])
  g.subscribe(g.peer('late'))
  const peers = ['a', 'b', 'c', 'late']
  assert.equal(sortPairs(reachable(g.network, peers)), sortPairs(within(['a', 'b'])))
  assert.equal(await heard(g, peers), sortPairs(within(['a', 'b'])))
  assert.equal(g.peer('c').connectedPeers(), [])
})

test('a partition puts a peer started later on the side its id was given', async () => {
  const g = gossipWorld(['a', 'b'])
  g.network.partition([['a', 'late'], ['b']])
  g.subscribe(g.peer('late'))
  assert.equal(await heard(g, ['a', 'b', 'late']), sortPairs(within(['a', 'late'])))
})

test('one-way cut: messages go one way only, so requests both ways time out', async () => {
  const world = new SimNetworkWorld({ seed: 1, peers: ['a', 'b', 'c'], latency: fixed(5) })
  const [a, b, c] = world.transports
  world.network.cutOneWay('a', 'b')
  assert.equal(sortPairs(reachable(world.network, ['a', 'b', 'c'])), sortPairs(['a->c', 'b->a', 'b->c', 'c->a', 'c->b']))
  assert.equal(a!.connectedPeers(), ['c'])
  assert.equal(b!.connectedPeers(), ['a', 'c'])
  let servedByA = 0
  a!.handle('echo', async request => { servedByA++; return request.data })
  b!.handle('echo', async request => request.data)
  const aToB = track(a!.request('b', 'echo', text('x'), { timeoutMs: 100 }))
  // b's request reaches a, but a's answer cannot come back.
  const bToA = track(b!.request('a', 'echo', text('x'), { timeoutMs: 100 }))
  const cToA = track(c!.request('a', 'echo', text('x'), { timeoutMs: 100 }))
  await world.wait(200)
  assert.is(aToB.error?.name, 'RequestTimeoutError')
  assert.is(bToA.error?.name, 'RequestTimeoutError')
  assert.is(decode(cToA.value!), 'x')
  assert.is(servedByA, 2)
})

test('isolate-one: the isolated peer can neither send nor receive; the rest are whole', async () => {
  const g = gossipWorld(five)
  g.network.isolate('c')
  const rest = ['a', 'b', 'd', 'e']
  assert.equal(sortPairs(reachable(g.network, five)), sortPairs(within(rest)))
  assert.equal(await heard(g, five), sortPairs(within(rest)))
  assert.equal(g.peer('c').connectedPeers(), [])
  assert.equal(g.peer('a').connectedPeers(), ['b', 'd', 'e'])
  assert.ok(g.events.includes('isolate c'))
})

test('majority/minority: the first peers listed form the minority', async () => {
  const g = gossipWorld(five)
  g.network.majorityMinority(five, 2)
  const expected = sortPairs(within(['a', 'b'], ['c', 'd', 'e']))
  assert.equal(sortPairs(reachable(g.network, five)), expected)
  assert.equal(await heard(g, five), expected)
  assert.ok(g.events.includes('partition majority {c d e} minority {a b}'))
  g.network.majorityMinority(['c', 'a', 'b', 'd', 'e'], 1)
  assert.equal(sortPairs(reachable(g.network, five)), sortPairs(within(['a', 'b', 'd', 'e'])))
  throws(() => { g.network.majorityMinority(five, 0) }, 'InvalidInputError', 'sim-network: ')
  throws(() => { g.network.majorityMinority(five, 3) }, 'InvalidInputError')
  throws(() => { g.network.majorityMinority(['a', 'b', 'c', 'd'], 2) }, 'InvalidInputError')
  throws(() => { g.network.majorityMinority(['a', 'a', 'b'], 1) }, 'InvalidInputError')
})

test('bridge: the bridge peer reaches both sides, the sides cannot reach each other', async () => {
  const g = gossipWorld(five)
  g.network.bridge(['a', 'b'], ['d', 'e'], 'c')
  const expected = sortPairs(within(['a', 'b', 'c'], ['c', 'd', 'e']))
  assert.equal(sortPairs(reachable(g.network, five)), expected)
  assert.equal(await heard(g, five), expected)
  assert.equal(g.peer('c').connectedPeers(), ['a', 'b', 'd', 'e'])
  assert.equal(g.peer('a').connectedPeers(), ['b', 'c'])
  assert.ok(g.events.includes('bridge {a b c} {d e c} via c'))
  throws(() => { g.network.bridge(['a', 'b'], ['b', 'd'], 'c') }, 'InvalidInputError')
})

test('a new partition replaces the previous one; cuts and isolations add to it', async () => {
  const g = gossipWorld(five)
  g.network.partition([['a', 'b'], ['c', 'd', 'e']])
  g.network.partition([['a', 'b', 'c'], ['d', 'e']])
  g.network.cutOneWay('a', 'c')
  g.network.isolate('e')
  const expected = sortPairs(within(['a', 'b', 'c']).filter(pair => pair !== 'a->c'))
  assert.equal(sortPairs(reachable(g.network, five)), expected)
  assert.equal(await heard(g, five), expected)
  throws(() => { g.network.partition([['a', 'b'], ['b']]) }, 'InvalidInputError', 'at most one partition group')
})

test('heal removes partitions, cuts and isolations, but keeps loss and clogs', async () => {
  const g = gossipWorld(five)
  g.network.partition([['a'], ['b', 'c']])
  g.network.cutOneWay('b', 'c')
  g.network.isolate('d')
  g.network.setLoss(1, { from: 'e', to: 'a' })
  g.network.clog('b', 'a')
  g.network.heal()
  assert.equal(reachable(g.network, five), allPairs(five))
  const pairs = await heard(g, five)
  assert.equal(pairs, sortPairs(allPairs(five).filter(pair => pair !== 'e->a' && pair !== 'b->a')))
  assert.ok(g.events.includes('heal'))
})

// -----------------------------------------------------------------------------------
// Messages in flight when things change

test('a partition that starts while a message is in flight drops it', async () => {
  const g = gossipWorld(['a', 'b'], { latency: fixed(100) })
  await g.peer('a').publish('t', text('in flight'))
  g.clock.advance(50)
  g.network.partition([['a'], ['b']])
  g.clock.advance(100)
  assert.equal(g.got('b'), [])
  assert.is(g.network.stats().droppedUnreachable, 1)
  assert.ok(g.events.includes('drop unreachable topic t a->b a#1'))
})

test('a partition that heals before the message arrives does not drop it', async () => {
  const g = gossipWorld(['a', 'b'], { latency: fixed(100) })
  await g.peer('a').publish('t', text('in flight'))
  g.clock.advance(40)
  g.network.isolate('b')
  g.clock.advance(20)
  g.network.heal()
  g.clock.advance(100)
  assert.equal(g.received.map(r => [r.data, r.at]), [['in flight', 100]])
})

test('a message sent across a partition is not sent at all, so healing does not bring it back', async () => {
  const g = gossipWorld(['a', 'b'], { latency: fixed(100) })
  g.network.partition([['a'], ['b']])
  await g.peer('a').publish('t', text('never'))
  g.network.heal()
  g.clock.advance(1_000)
  assert.equal(g.got('b'), [])
})

test('a request in flight when a partition starts times out', async () => {
  const world = new SimNetworkWorld({ seed: 1, peers: ['a', 'b'], latency: fixed(50) })
  world.transports[1]!.handle('echo', async request => request.data)
  const answer = track(world.transports[0]!.request('b', 'echo', text('x'), { timeoutMs: 500 }))
  await world.wait(75)
  world.network.partition([['a'], ['b']])
  await world.wait(500)
  assert.is(answer.error?.name, 'RequestTimeoutError')
  assert.is(world.network.stats().droppedUnreachable, 1, 'the answer was dropped on arrival')
})

test('a message that arrives after its subscriber left is dropped', async () => {
  const g = gossipWorld(['a', 'b'], { latency: fixed(100) })
  await g.peer('a').publish('t', text('late'))
  g.clock.advance(50)
  g.unsubscribe.get('b')!()
  g.clock.advance(100)
  assert.equal(g.got('b'), [])
  assert.is(g.network.stats().droppedUnsubscribed, 1)
})

// -----------------------------------------------------------------------------------
// Crash and restart

test('a crash drops what is in flight to the peer and rejects its waiting requests', async () => {
  const world = new SimNetworkWorld({ seed: 1, peers: ['a', 'b'], latency: fixed(50) })
  const [a, b] = world.transports
  const inbox: string[] = []
  b!.subscribe('t', message => inbox.push(decode(message.data)))
  a!.handle('hang', () => new Promise<Uint8Array>(() => {}))
  await a!.publish('t', text('in flight'))
  const waiting = track(b!.request('a', 'hang', text('x'), long))
  await world.wait(10)
  world.network.crash('b')
  await world.wait(100)
  assert.equal(inbox, [])
  assert.is(waiting.error?.name, 'TransportStoppedError')
  assert.is(world.network.stats().droppedStopped, 1)
  assert.is(world.network.isRunning('b'), false)
  assert.is(world.network.canReach('a', 'b'), false)
  assert.equal(a!.connectedPeers(), [])
})

test('a request to a crashed peer times out; to a peer never started it fails at once', async () => {
  const world = new SimNetworkWorld({ seed: 1, peers: ['a', 'b'], latency: fixed(5) })
  const [a] = world.transports
  world.network.crash('b')
  const crashed = track(a!.request('b', 'echo', text('x'), { timeoutMs: 100 }))
  const unknown = track(a!.request('nobody', 'echo', text('x'), { timeoutMs: 100 }))
  const self = track(a!.request('a', 'echo', text('x'), { timeoutMs: 100 }))
  await world.wait(0)
  assert.is(unknown.error?.name, 'PeerUnreachableError')
  assert.is(self.error?.name, 'PeerUnreachableError')
  assert.is(crashed.settled, false)
  await world.wait(100)
  assert.is(crashed.error?.name, 'RequestTimeoutError')
  assert.is(a!.counters().requestsSent, 1, 'refused requests are not counted as sent')
})

test('a server that crashes before answering leaves the caller to time out', async () => {
  const world = new SimNetworkWorld({ seed: 1, peers: ['a', 'b'], latency: fixed(5) })
  const [a, b] = world.transports
  let answerNow: ((data: Uint8Array) => void) | undefined
  b!.handle('slow', () => new Promise<Uint8Array>(resolve => { answerNow = resolve }))
  const answer = track(a!.request('b', 'slow', text('x'), { timeoutMs: 100 }))
  await world.wait(10)
  world.network.crash('b')
  answerNow!(text('too late'))
  await world.wait(200)
  assert.is(answer.error?.name, 'RequestTimeoutError')
})

test('a restarted peer is a new incarnation: old messages stay lost, new ones arrive', async () => {
  const world = new SimNetworkWorld({ seed: 1, peers: ['a', 'b'], latency: fixed(50) })
  const [a, b] = world.transports
  b!.subscribe('t', () => { throw new Error('delivered to the dead incarnation') })
  await a!.publish('t', text('before crash'))
  await world.wait(10)
  world.network.crash('b')
  const reborn = world.network.transport('b')
  assert.is.not(reborn, b)
  assert.is(reborn.incarnation, 2)
  assert.is(world.network.transport('b'), reborn, 'a running peer is returned, not restarted')
  const inbox: string[] = []
  reborn.subscribe('t', message => inbox.push(decode(message.data)))
  await world.wait(100)
  assert.equal(inbox, [], 'a message sent to the old incarnation reached the new one')
  await a!.publish('t', text('after restart'))
  reborn.handle('echo', async request => request.data)
  const answer = track(a!.request('b', 'echo', text('hi'), long))
  await world.wait(200)
  assert.equal(inbox, ['after restart'])
  assert.is(decode(answer.value!), 'hi')
  assert.equal(a!.connectedPeers(), ['b'])
  assert.ok(b!.stopped)
})

test('message ids stay unique across a restart', async () => {
  const g = gossipWorld(['a', 'b'])
  await g.peer('a').publish('t', text('1'))
  g.network.crash('a')
  await g.peer('a').publish('t', text('2'))
  g.clock.advance(100)
  assert.equal(g.received.map(r => r.id), ['a#1', 'a#2'])
})

// -----------------------------------------------------------------------------------
// Validation penalties and bounds

test('rejections penalise the sender, once per rejecting receiver, across restarts; ignores do not', async () => {
  const g = gossipWorld(['a', 'b', 'c', 'd'])
  g.peer('b').setTopicValidator('t', () => 'reject')
  g.peer('c').setTopicValidator('t', () => 'reject')
  g.peer('d').setTopicValidator('t', () => 'ignore')
  await g.peer('a').publish('t', text('bad'))
  g.clock.advance(100)
  assert.is(g.network.penalty('a'), 2)
  g.network.crash('a')
  await g.peer('a').publish('t', text('still bad'))
  g.clock.advance(100)
  assert.is(g.network.penalty('a'), 4)
  assert.is(g.network.penalty('b'), 0)
  assert.is(g.network.penalty('nobody'), 0)
  assert.equal(g.received, [])
  assert.ok(g.events.includes('deliver topic t a->b a#1 reject'))
})

test('the network asserts when more messages are in flight than its maximum', async () => {
  const clock = new SimClock()
  const network = new SimNetwork({ clock, random: new SeededRandom(1), latency: fixed(10), inFlightMax: 10 })
  const a = network.transport('a')
  network.transport('b').subscribe('t', () => {})
  for (let i = 0; i < 10; i++) await a.publish('t', text('x'))
  assert.is(network.inFlightCount, 10)
  await rejects(a.publish('t', text('one too many')), 'AssertionFailedError')
  clock.advance(10)
  assert.is(network.inFlightCount, 0)
  await a.publish('t', text('fine again'))
})

test('bad fault settings are refused, naming the component', () => {
  const network = new SimNetwork({ clock: new SimClock(), random: new SeededRandom(1) })
  throws(() => { network.setLoss(1.5) }, 'InvalidInputError', 'sim-network: expected a probability')
  throws(() => { network.setLoss(Number.NaN) }, 'InvalidInputError')
  throws(() => { network.setDuplication(-0.1) }, 'InvalidInputError')
  throws(() => { network.setReorder(0.5, 0) }, 'InvalidInputError')
  throws(() => { network.clog('a', 'a') }, 'InvalidInputError')
  throws(() => { network.partition([['a'], 'b' as never]) }, 'InvalidInputError')
  throws(() => { network.isolate('') }, 'InvalidInputError')
  throws(() => network.transport(''), 'InvalidInputError')
})

// -----------------------------------------------------------------------------------
// Determinism

interface RunResult { trace: string[], hash: string }

/**
 * A busy run with every fault, on one seed. Math.random and Date.now throw for its
 * duration, which proves the network draws only from the stream it was given.
 */
async function busyRun (seed: number): Promise<RunResult> {
  const trace: string[] = []
  const clock = new SimClock()
  const world = new SimNetworkWorld({
    seed,
    clock,
    peers: ['a', 'b', 'c', 'd', 'e'],
    latency: { kind: 'exponential', minMs: 2, meanMs: 15 },
    onEvent: line => { trace.push(`${clock.now()} ${line}`) }
  })
  const { network } = world
  const realRandom = Math.random
  const realNow = Date.now
  Math.random = () => { throw new Error('sim-network used Math.random') }
  Date.now = () => { throw new Error('sim-network used Date.now') }
  try {
    for (const transport of world.transports) {
      transport.subscribe('status', message => {
        trace.push(`${world.clock.now()} got ${transport.peerId} ${message.id} ${decode(message.data)}`)
      })
      transport.handle('echo', async request => request.data)
    }
    network.setLoss(0.1)
    network.setDuplication(0.1)
    network.setReorder(0.2, 30)
    network.setLatency({ kind: 'uniform', minMs: 1, maxMs: 40 }, { from: 'a', to: 'b' })
    const answers: Array<Tracked<Uint8Array>> = []
    for (let round = 0; round < 30; round++) {
      for (const transport of world.transports) {
        if (!transport.stopped) await transport.publish('status', text(`r${round}`))
      }
      const [from, to] = [world.transports[round % 5]!, world.transports[(round + 2) % 5]!]
      if (!from.stopped) answers.push(track(from.request(to.peerId, 'echo', text(`q${round}`), { timeoutMs: 200 })))
      if (round === 5) network.majorityMinority(['e', 'a', 'b', 'c', 'd'], 2)
      if (round === 10) network.clog('c', 'd')
      if (round === 12) network.heal()
      if (round === 14) network.unclog('c', 'd')
      if (round === 16) network.crash('d')
      if (round === 18) network.bridge(['a'], ['c'], 'b')
      if (round === 20) network.resetFaults()
      await world.wait(17)
    }
    await world.wait(1_000)
    for (const answer of answers) trace.push(answer.error?.name ?? decode(answer.value ?? text('pending')))
  } finally {
    Math.random = realRandom
    Date.now = realNow
  }
  return { trace, hash: trace.join('\n') }
}

test('the same seed and calls give the identical trace; another seed does not', async () => {
  const first = await busyRun(1234)
  const second = await busyRun(1234)
  const other = await busyRun(1235)
  assert.ok(first.trace.length > 500, `only ${first.trace.length} trace lines`)
  assert.ok(first.trace.some(line => line.includes(' deliver ')))
  assert.ok(first.trace.some(line => line.includes(' drop lost ')))
  assert.ok(first.trace.some(line => line.includes(' dup')))
  assert.equal(second.trace, first.trace)
  assert.is.not(other.hash, first.hash)
})

test.run()
