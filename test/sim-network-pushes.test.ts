/**
 * The simulated network's pushes (IncomingRequest.push) under its faults, beyond the
 * Transport contract: a request's pushes and answer are one ordered stream, which a
 * reorder fault cannot reorder, which a lost leg or partition cuts short (never leaving a
 * gap), which a reset connection breaks (the waiting request fails at once), and which
 * holds at most limits.transportRequestPushesUnwrittenMax pushes on their way.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { limits } from '../runtime/limits.ts'
import type { IncomingRequest } from '../runtime/transport.ts'
import { SimNetworkWorld } from '../sim/sim-network-world.ts'
import type { LatencyDistribution } from '../sim/sim-network.ts'

const test = suite('sim network pushes')

const text = (value: string): Uint8Array => new TextEncoder().encode(value)
const decode = (data: Uint8Array): string => new TextDecoder().decode(data)
const fixed = (ms: number): LatencyDistribution => ({ kind: 'fixed', ms })

interface Tracked { settled: boolean, value?: string, error?: Error }

function track (promise: Promise<Uint8Array>): Tracked {
  const tracked: Tracked = { settled: false }
  promise.then(value => {
    tracked.settled = true
    tracked.value = decode(value)
  }, (error: unknown) => {
    tracked.settled = true
    tracked.error = error as Error
  })
  return tracked
}

/**
 * Peers "a" (the caller) and "b", whose "watch" handler is held open until the test
 * answers it, handing the test its push.
 */
function pushWorld (options: { seed?: number, latency?: LatencyDistribution } = {}) {
  const world = new SimNetworkWorld({ seed: options.seed ?? 1, peers: ['a', 'b'], latency: options.latency ?? fixed(10) })
  const [a, b] = world.transports
  let served: { request: IncomingRequest, answer: (value: string) => void } | undefined
  b!.handle('watch', request => new Promise<Uint8Array>(resolve => {
    served = { request, answer: value => { resolve(text(value)) } }
  }))
  const pushed: string[] = []
  const watch = (timeoutMs = 60_000): Tracked => track(a!.request('b', 'watch', text('go'), { timeoutMs, onPush: data => { pushed.push(decode(data)) } }))
  const push = (value: string): boolean => served!.request.push!(text(value))
  return { world, network: world.network, a: a!, b: b!, pushed, watch, push, answer: (value: string) => { served!.answer(value) } }
}

test('pushes and the answer stay in order under the reorder fault', async () => {
  const w = pushWorld({ latency: { kind: 'uniform', minMs: 1, maxMs: 30 } })
  w.network.setReorder(0.5, 100)
  const answer = w.watch()
  // The request itself may be held back by the reorder fault.
  await w.world.wait(300)
  const sent: string[] = []
  for (let i = 0; i < 40; i++) {
    // The unwritten bound refuses some while earlier ones are on their way: those are never seen.
    if (w.push(`p${i}`)) sent.push(`p${i}`)
    await w.world.wait(40)
  }
  w.answer('done')
  await w.world.wait(2_000)
  assert.ok(sent.length >= 10, `only ${sent.length} pushes were taken`)
  assert.equal(w.pushed, sent)
  assert.is(answer.value, 'done')
})

test('at most the unwritten maximum of pushes is on its way; delivery makes room again', async () => {
  const w = pushWorld({ latency: fixed(100) })
  w.watch()
  await w.world.wait(100)
  const max = limits.transportRequestPushesUnwrittenMax
  const taken = Array.from({ length: max + 2 }, (_, i) => w.push(`p${i}`))
  assert.equal(taken, [...new Array<boolean>(max).fill(true), false, false])
  await w.world.wait(100)
  assert.equal(w.pushed, Array.from({ length: max }, (_, i) => `p${i}`))
  assert.ok(w.push('after'), 'room again once delivered')
  await w.world.wait(100)
  assert.is(w.pushed.at(-1), 'after')
})

test('a push after the answer, or to a caller that does not listen, is refused', async () => {
  const w = pushWorld()
  const answer = w.watch()
  await w.world.wait(10)
  w.answer('done')
  await w.world.wait(0)
  assert.is(w.push('late'), false)
  await w.world.wait(50)
  assert.is(answer.value, 'done')
  assert.equal(w.pushed, [])
  const deaf = track(w.a.request('b', 'watch', text('go'), { timeoutMs: 60_000 }))
  await w.world.wait(10)
  assert.is(w.push('unheard'), false)
  w.answer('done')
  await w.world.wait(50)
  assert.is(deaf.value, 'done')
})

test('a lost push loses what follows it on the stream, the answer too: the caller sees a prefix and times out', async () => {
  const w = pushWorld({ latency: fixed(5) })
  const answer = w.watch(1_000)
  await w.world.wait(5)
  assert.ok(w.push('one'))
  await w.world.wait(10)
  w.network.setLoss(1)
  assert.ok(w.push('two'), 'handed to the network, lost on it')
  w.network.setLoss(0)
  await w.world.wait(10)
  assert.is(w.push('three'), false, 'the stream is broken')
  w.answer('done')
  await w.world.wait(1_000)
  assert.equal(w.pushed, ['one'])
  assert.is(answer.error?.name, 'RequestTimeoutError')
  assert.is(w.network.stats().droppedBroken, 1, 'the answer was dropped behind the lost push')
})

test('a partition while pushes are in flight drops them and everything after, even once healed', async () => {
  const w = pushWorld({ latency: fixed(50) })
  const answer = w.watch(2_000)
  await w.world.wait(50)
  assert.ok(w.push('one'))
  await w.world.wait(60)
  assert.ok(w.push('two'))
  await w.world.wait(20)
  w.network.partition([['a'], ['b']])
  await w.world.wait(40)
  w.network.heal()
  w.answer('done')
  await w.world.wait(2_000)
  assert.equal(w.pushed, ['one'])
  assert.is(answer.error?.name, 'RequestTimeoutError')
})

test('a reset connection fails the waiting request at once and drops its pushes in flight', async () => {
  const w = pushWorld({ latency: fixed(50) })
  const answer = w.watch()
  await w.world.wait(50)
  assert.ok(w.push('one'))
  await w.world.wait(60)
  assert.ok(w.push('two'))
  await w.world.wait(10)
  w.network.resetConnection('a', 'b')
  await w.world.wait(0)
  assert.is(answer.error?.name, 'PeerUnreachableError')
  assert.match(answer.error!.message, 'connection reset')
  assert.is(w.push('three'), false)
  await w.world.wait(200)
  assert.equal(w.pushed, ['one'])
  // The next request goes through, as on a redialled connection.
  const again = w.watch()
  await w.world.wait(50)
  assert.ok(w.push('fresh'))
  w.answer('done')
  await w.world.wait(100)
  assert.equal(w.pushed, ['one', 'fresh'])
  assert.is(again.value, 'done')
})

test('a request still on its way when its connection is reset never reaches the handler', async () => {
  const w = pushWorld({ latency: fixed(50) })
  let served = 0
  w.b.handle('count', async () => { served++; return text('x') })
  const answer = track(w.a.request('b', 'count', text('go'), { timeoutMs: 1_000 }))
  await w.world.wait(20)
  w.network.resetConnection('b', 'a')
  await w.world.wait(100)
  assert.is(answer.error?.name, 'PeerUnreachableError')
  assert.is(served, 0)
})

test('a duplicated request is served twice, but only the original stream pushes', async () => {
  const w = pushWorld({ latency: fixed(10) })
  const handled: Array<(data: Uint8Array) => boolean> = []
  w.b.handle('dup', request => {
    handled.push(request.push!)
    return new Promise<Uint8Array>(() => {})
  })
  w.network.setDuplication(1)
  const pushed: string[] = []
  void w.a.request('b', 'dup', text('go'), { timeoutMs: 1_000, onPush: data => { pushed.push(decode(data)) } }).catch(() => {})
  await w.world.wait(100)
  assert.is(handled.length, 2)
  assert.equal(handled.map(push => push(text('x'))), [true, false])
  await w.world.wait(100)
  assert.equal(pushed, ['x'])
  await w.world.wait(1_000)
})

test('the same seed gives the same pushes at the same times', async () => {
  const run = async (seed: number): Promise<string[]> => {
    const w = pushWorld({ seed, latency: { kind: 'uniform', minMs: 1, maxMs: 40 } })
    w.network.setReorder(0.5, 50)
    const at: string[] = []
    w.a.request('b', 'watch', text('go'), { timeoutMs: 60_000, onPush: data => { at.push(`${decode(data)}@${w.world.clock.now()}`) } }).catch(() => {})
    await w.world.wait(150)
    for (let i = 0; i < 20; i++) {
      w.push(`p${i}`)
      await w.world.wait(9)
    }
    return at
  }
  const first = await run(3)
  assert.ok(first.length > 0)
  assert.equal(await run(3), first)
})

test.run()
