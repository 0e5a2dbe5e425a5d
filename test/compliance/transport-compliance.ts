/**
 * The `Transport` contract, run against the simulated transport (SimNetwork) and, once
 * it exists, the libp2p one. The suite knows nothing of either: the harness makes a
 * world of N connected transports and lets that world's time pass (advancing the
 * SimClock, or really waiting), and says how long delivery and propagation take there.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { limits } from '../../runtime/limits.ts'
import type { PeerId, TopicMessage, Transport } from '../../runtime/transport.ts'
import { rejects } from '../support/rejects.ts'

export interface TransportWorld {
  /** Started transports, each able to reach every other one. */
  readonly transports: readonly Transport[]
  /** Lets `ms` of this world's time pass, running whatever falls due. */
  wait (ms: number): Promise<void>
  /** Stops every transport still running. */
  close (): Promise<void>
}

export interface TransportHarness {
  name: string
  create (count: number): Promise<TransportWorld>
  /** Time within which a message or one request leg arrives, with slack. */
  deliveryMs: number
  /** Time for a new subscription, handler or stop to become known to the other peers. */
  propagationMs: number
  /** A well-formed peer id that no world ever has. */
  unknownPeer: PeerId
  /** Whether a handler can push ahead of its answer (IncomingRequest.push): optional in the contract. */
  pushes: boolean
}

/** Long enough that a request which should be answered never times out first. */
const generousTimeoutMs = 60_000

const text = (value: string): Uint8Array => new TextEncoder().encode(value)
const decode = (data: Uint8Array): string => new TextDecoder().decode(data)

interface Tracked<T> {
  settled: boolean
  value?: T
  error?: Error
}

/** Follows a promise without awaiting it, so a test can check it is still pending. */
function track<T> (promise: Promise<T>): Tracked<T> {
  const tracked: Tracked<T> = { settled: false }
  promise.then(value => {
    tracked.settled = true
    tracked.value = value
  }, (error: unknown) => {
    tracked.settled = true
    tracked.error = error as Error
  })
  return tracked
}

function failedWith (tracked: Tracked<unknown>, name: string): Error {
  assert.ok(tracked.settled, `expected a ${name}, but the promise is still pending`)
  assert.ok(tracked.error !== undefined, `expected a ${name}, but it resolved`)
  assert.is(tracked.error.name, name, tracked.error.message)
  return tracked.error
}


function throws (action: () => unknown, name: string): void {
  try {
    action()
  } catch (error) {
    assert.is((error as Error).name, name, (error as Error).message)
    return
  }
  assert.unreachable(`expected a ${name}`)
}

export function transportCompliance (harness: TransportHarness): void {
  const test = suite(`transport compliance: ${harness.name}`)
  const { deliveryMs, propagationMs } = harness

  /** A world of `count` transports, closed after the test whatever happens. */
  const withWorld = (count: number, body: (world: TransportWorld, t: readonly Transport[]) => Promise<void>) => async () => {
    const world = await harness.create(count)
    assert.is(world.transports.length, count)
    try {
      await body(world, world.transports)
    } finally {
      await world.close()
    }
  }

  /** Records what one transport receives on a topic. */
  const inbox = (transport: Transport, topic: string): { messages: TopicMessage[], unsubscribe: () => void } => {
    const messages: TopicMessage[] = []
    const unsubscribe = transport.subscribe(topic, message => { messages.push(message) })
    return { messages, unsubscribe }
  }

  test('each transport reaches every other one, and not itself', withWorld(3, async (world, t) => {
    await world.wait(propagationMs)
    for (const transport of t) {
      const others = t.filter(other => other !== transport).map(other => other.peerId).sort()
      assert.equal([...transport.connectedPeers()].sort(), others, `connected peers of "${transport.peerId}"`)
    }
  }))

  test('publish reaches every subscriber once, but not the publisher', withWorld(3, async (world, [a, b, c]) => {
    const boxes = [a!, b!, c!].map(transport => inbox(transport, 'status'))
    await world.wait(propagationMs)
    await a!.publish('status', text('hello'))
    await world.wait(deliveryMs)
    assert.is(boxes[0]!.messages.length, 0, 'the publisher received its own message')
    for (const box of boxes.slice(1)) {
      assert.is(box.messages.length, 1)
      const [message] = box.messages
      assert.is(message!.topic, 'status')
      assert.is(message!.from, a!.peerId)
      assert.is(decode(message!.data), 'hello')
      assert.type(message!.id, 'string')
      assert.ok(message!.id.length > 0)
    }
    assert.is(boxes[1]!.messages[0]!.id, boxes[2]!.messages[0]!.id, 'one publication has one id')
    assert.is(a!.counters().published, 1)
    assert.is(b!.counters().delivered, 1)
    assert.is(c!.counters().delivered, 1)
  }))

  test('only subscribers of the topic receive it, and publishing with none is fine', withWorld(3, async (world, [a, b, c]) => {
    const status = inbox(b!, 'status')
    const presence = inbox(c!, 'presence')
    await world.wait(propagationMs)
    await a!.publish('status', text('s'))
    await a!.publish('nobody-listens', text('n'))
    await world.wait(deliveryMs)
    assert.is(status.messages.length, 1)
    assert.is(presence.messages.length, 0)
    assert.is(a!.counters().published, 2)
  }))

  test('each publication gets its own id', withWorld(2, async (world, [a, b]) => {
    const box = inbox(b!, 'status')
    await world.wait(propagationMs)
    await a!.publish('status', text('one'))
    await a!.publish('status', text('two'))
    await world.wait(deliveryMs)
    assert.equal(box.messages.map(m => decode(m.data)).sort(), ['one', 'two'])
    assert.is.not(box.messages[0]!.id, box.messages[1]!.id)
  }))

  test('what was published is not changed by changing the caller\'s buffer afterwards', withWorld(2, async (world, [a, b]) => {
    const box = inbox(b!, 'status')
    await world.wait(propagationMs)
    const data = text('original')
    await a!.publish('status', data)
    data.fill(0)
    await world.wait(deliveryMs)
    assert.is(decode(box.messages[0]!.data), 'original')
  }))

  test('unsubscribe stops delivery; unsubscribing twice is harmless', withWorld(2, async (world, [a, b]) => {
    const box = inbox(b!, 'status')
    await world.wait(propagationMs)
    await a!.publish('status', text('before'))
    await world.wait(deliveryMs)
    box.unsubscribe()
    box.unsubscribe()
    await world.wait(propagationMs)
    await a!.publish('status', text('after'))
    await world.wait(deliveryMs)
    assert.equal(box.messages.map(m => decode(m.data)), ['before'])
  }))

  test('validators accept, reject or ignore, and each outcome is counted', withWorld(4, async (world, [a, rejecting, ignoring, accepting]) => {
    const seen: TopicMessage[] = []
    rejecting!.setTopicValidator('status', message => { seen.push(message); return 'reject' })
    ignoring!.setTopicValidator('status', () => 'ignore')
    accepting!.setTopicValidator('status', () => 'accept')
    const boxes = [rejecting!, ignoring!, accepting!].map(transport => inbox(transport, 'status'))
    await world.wait(propagationMs)
    await a!.publish('status', text('checked'))
    await world.wait(deliveryMs)
    assert.equal(boxes.map(box => box.messages.length), [0, 0, 1])
    assert.is(seen.length, 1, 'the validator saw the message once')
    assert.is(seen[0]!.from, a!.peerId)
    assert.is(seen[0]!.topic, 'status')
    assert.is(decode(seen[0]!.data), 'checked')
    assert.equal(pick(rejecting!), { delivered: 0, rejected: 1, ignored: 0 })
    assert.equal(pick(ignoring!), { delivered: 0, rejected: 0, ignored: 1 })
    assert.equal(pick(accepting!), { delivered: 1, rejected: 0, ignored: 0 })
  }))

  test('removing a validator lets messages through again', withWorld(2, async (world, [a, b]) => {
    b!.setTopicValidator('status', () => 'ignore')
    const box = inbox(b!, 'status')
    await world.wait(propagationMs)
    await a!.publish('status', text('ignored'))
    await world.wait(deliveryMs)
    b!.setTopicValidator('status', undefined)
    await a!.publish('status', text('accepted'))
    await world.wait(deliveryMs)
    assert.equal(box.messages.map(m => decode(m.data)), ['accepted'])
  }))

  test('a request is answered by the handler of its protocol', withWorld(2, async (world, [a, b]) => {
    const served: Array<{ from: PeerId, protocol: string, data: string }> = []
    b!.handle('echo', async request => {
      served.push({ from: request.from, protocol: request.protocol, data: decode(request.data) })
      return text(decode(request.data).toUpperCase())
    })
    await world.wait(propagationMs)
    const answer = track(a!.request(b!.peerId, 'echo', text('ping'), { timeoutMs: generousTimeoutMs }))
    await world.wait(2 * deliveryMs)
    assert.ok(answer.settled, 'no answer within two deliveries')
    assert.is(answer.error, undefined, answer.error?.message)
    assert.is(decode(answer.value!), 'PING')
    assert.equal(served, [{ from: a!.peerId, protocol: 'echo', data: 'ping' }])
    assert.is(a!.counters().requestsSent, 1)
    assert.is(a!.counters().requestsFailed, 0)
    assert.is(b!.counters().requestsServed, 1)
  }))

  test(`pushes ${harness.pushes ? 'reach a listening caller in order, ahead of the answer' : 'are not carried: the handler has none and answers once'}`, withWorld(2, async (world, [a, b]) => {
    let sent: boolean[] = []
    let offered: boolean | undefined
    b!.handle('pusher', async request => {
      offered = request.push !== undefined
      if (request.push !== undefined) sent = [request.push(text('one')), request.push(text('two'))]
      return text('done')
    })
    await world.wait(propagationMs)
    const pushed: string[] = []
    let pushedBeforeAnswer = -1
    const answer = track(a!.request(b!.peerId, 'pusher', text('go'), { timeoutMs: generousTimeoutMs, onPush: data => { pushed.push(decode(data)) } }).then(data => {
      pushedBeforeAnswer = pushed.length
      return data
    }))
    await world.wait(2 * deliveryMs)
    assert.ok(answer.settled, 'no answer within two deliveries')
    assert.is(answer.error, undefined, answer.error?.message)
    assert.is(decode(answer.value!), 'done')
    assert.is(offered, harness.pushes)
    assert.equal(sent, harness.pushes ? [true, true] : [])
    assert.equal(pushed, harness.pushes ? ['one', 'two'] : [])
    assert.is(pushedBeforeAnswer, pushed.length, 'every push arrived before the answer')
  }))

  if (harness.pushes) {
    test('a push once the handler has answered is refused and never reaches the caller', withWorld(2, async (world, [a, b]) => {
      let push: ((data: Uint8Array) => boolean) | undefined
      b!.handle('answers', async request => {
        push = request.push
        return text('done')
      })
      await world.wait(propagationMs)
      const pushed: string[] = []
      const answer = track(a!.request(b!.peerId, 'answers', text('go'), { timeoutMs: generousTimeoutMs, onPush: data => { pushed.push(decode(data)) } }))
      await world.wait(2 * deliveryMs)
      assert.ok(answer.settled, 'no answer within two deliveries')
      assert.is(decode(answer.value!), 'done')
      assert.is(push?.(text('late')), false)
      await world.wait(2 * deliveryMs)
      assert.equal(pushed, [])
    }))

    test('a push to a caller that gave no onPush is refused, and the request is answered', withWorld(2, async (world, [a, b]) => {
      let sent: boolean[] = []
      b!.handle('unheard', async request => {
        sent = [request.push!(text('one')), request.push!(text('two'))]
        return text('done')
      })
      await world.wait(propagationMs)
      const answer = track(a!.request(b!.peerId, 'unheard', text('go'), { timeoutMs: generousTimeoutMs }))
      await world.wait(2 * deliveryMs)
      assert.ok(answer.settled, 'no answer within two deliveries')
      assert.is(answer.error, undefined, answer.error?.message)
      assert.is(decode(answer.value!), 'done')
      assert.equal(sent, [false, false], 'IncomingRequest.push says false when the caller does not listen')
    }))
  }

  test('a handler that throws gives the caller a RemoteHandlerError with its message', withWorld(2, async (world, [a, b]) => {
    b!.handle('fails', async () => { throw new Error('disk on fire') })
    await world.wait(propagationMs)
    const answer = track(a!.request(b!.peerId, 'fails', text('x'), { timeoutMs: generousTimeoutMs }))
    await world.wait(2 * deliveryMs)
    const error = failedWith(answer, 'RemoteHandlerError')
    assert.match(error.message, 'disk on fire')
    assert.is(a!.counters().requestsFailed, 1)
  }))

  test('a protocol nobody handles, or no longer handles, gives a RemoteHandlerError', withWorld(2, async (world, [a, b]) => {
    const nobody = track(a!.request(b!.peerId, 'nobody', text('x'), { timeoutMs: generousTimeoutMs }))
    b!.handle('gone', async () => text('y'))
    b!.unhandle('gone')
    await world.wait(propagationMs)
    const gone = track(a!.request(b!.peerId, 'gone', text('x'), { timeoutMs: generousTimeoutMs }))
    await world.wait(2 * deliveryMs)
    failedWith(nobody, 'RemoteHandlerError')
    failedWith(gone, 'RemoteHandlerError')
  }))

  test('a request without an answer times out, not before its timeout', withWorld(2, async (world, [a, b]) => {
    b!.handle('hang', () => new Promise<Uint8Array>(() => {}))
    await world.wait(propagationMs)
    const timeoutMs = 4 * deliveryMs
    const answer = track(a!.request(b!.peerId, 'hang', text('x'), { timeoutMs }))
    await world.wait(2 * deliveryMs)
    assert.is(answer.settled, false, 'gave up before the timeout')
    await world.wait(2 * deliveryMs + deliveryMs)
    const error = failedWith(answer, 'RequestTimeoutError')
    assert.match(error.message, b!.peerId)
    assert.is(a!.counters().requestsFailed, 1)
  }))

  test('a request to a peer nobody knows fails with PeerUnreachableError', withWorld(1, async (world, [a]) => {
    const answer = track(a!.request(harness.unknownPeer, 'echo', text('x'), { timeoutMs: 4 * deliveryMs }))
    await world.wait(5 * deliveryMs)
    failedWith(answer, 'PeerUnreachableError')
  }))

  test('messages and requests above the size maximum are refused at the call', withWorld(2, async (world, [a, b]) => {
    const box = inbox(b!, 'status')
    b!.handle('echo', async request => request.data)
    await world.wait(propagationMs)
    const oversized = new Uint8Array(limits.transportMessageBytesMax + 1)
    const published = await rejects(a!.publish('status', oversized), 'InvalidInputError')
    assert.match(published.message, `${limits.transportMessageBytesMax + 1} bytes`)
    await rejects(a!.request(b!.peerId, 'echo', oversized, { timeoutMs: generousTimeoutMs }), 'InvalidInputError')
    await world.wait(2 * deliveryMs)
    assert.is(box.messages.length, 0)
    assert.is(a!.counters().published, 0)
    assert.is(b!.counters().requestsServed, 0)
  }))

  test(`requests beyond ${limits.transportRequestsInFlightMax} in flight are refused at once`, withWorld(2, async (world, [a, b]) => {
    b!.handle('hang', () => new Promise<Uint8Array>(() => {}))
    await world.wait(propagationMs)
    const waiting = Array.from({ length: limits.transportRequestsInFlightMax },
      () => track(a!.request(b!.peerId, 'hang', text('x'), { timeoutMs: generousTimeoutMs })))
    await rejects(a!.request(b!.peerId, 'hang', text('x'), { timeoutMs: generousTimeoutMs }), 'TransportBusyError')
    await world.wait(deliveryMs)
    assert.ok(waiting.every(request => !request.settled), 'a waiting request settled')
    await a!.stop()
    await world.wait(0)
    for (const request of waiting) failedWith(request, 'TransportStoppedError')
  }))

  test('stop rejects waiting requests, and then every call fails with TransportStoppedError', withWorld(2, async (world, [a, b]) => {
    b!.handle('hang', () => new Promise<Uint8Array>(() => {}))
    await world.wait(propagationMs)
    const waiting = track(a!.request(b!.peerId, 'hang', text('x'), { timeoutMs: generousTimeoutMs }))
    await world.wait(deliveryMs)
    assert.is(waiting.settled, false)
    await a!.stop()
    await world.wait(0)
    failedWith(waiting, 'TransportStoppedError')
    await rejects(a!.publish('status', text('x')), 'TransportStoppedError')
    await rejects(a!.request(b!.peerId, 'hang', text('x'), { timeoutMs: generousTimeoutMs }), 'TransportStoppedError')
    throws(() => a!.subscribe('status', () => {}), 'TransportStoppedError')
    throws(() => a!.handle('echo', async () => text('y')), 'TransportStoppedError')
    throws(() => { a!.setTopicValidator('status', () => 'accept') }, 'TransportStoppedError')
    assert.equal(a!.connectedPeers(), [])
    assert.is(a!.counters().requestsSent, 1)
    await a!.stop()
  }))

  test('a stopped peer receives nothing and the others stop listing it', withWorld(3, async (world, [a, b, c]) => {
    const stoppedBox = inbox(b!, 'status')
    const liveBox = inbox(c!, 'status')
    await world.wait(propagationMs)
    await b!.stop()
    await world.wait(propagationMs + deliveryMs)
    assert.ok(!a!.connectedPeers().includes(b!.peerId), `"${a!.peerId}" still lists stopped "${b!.peerId}"`)
    await a!.publish('status', text('after stop'))
    await world.wait(deliveryMs)
    assert.is(stoppedBox.messages.length, 0)
    assert.is(liveBox.messages.length, 1)
  }))

  test('a peer that stops is reported disconnected, once, to the peers that listen; unsubscribed listeners hear nothing', withWorld(3, async (world, [a, b, c]) => {
    const heard: PeerId[] = []
    const unheard: PeerId[] = []
    assert.ok(a!.onPeerDisconnected !== undefined && c!.onPeerDisconnected !== undefined, 'the transport reports closed connections')
    a!.onPeerDisconnected(peer => { heard.push(peer) })
    c!.onPeerDisconnected(peer => { unheard.push(peer) })()
    await world.wait(propagationMs)
    await b!.stop()
    await world.wait(propagationMs + deliveryMs)
    assert.equal(heard, [b!.peerId])
    assert.equal(unheard, [])
    await world.wait(propagationMs)
    assert.equal(heard, [b!.peerId], 'reported once')
  }))

  test.run()
}

function pick (transport: Transport): { delivered: number, rejected: number, ignored: number } {
  const { delivered, rejected, ignored } = transport.counters()
  return { delivered, rejected, ignored }
}
