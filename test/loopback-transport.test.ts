/**
 * LoopbackTransport (cantripd --role both): a request to this very peer reaches the
 * handler registered through the wrapper; a publication on an echo topic also reaches
 * this process's own subscribers once its validator accepts it; everything else goes
 * through libp2p as before.
 */
import '../runtime/polyfill.ts'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { Libp2pWorld } from '../agent/mesh/libp2p-world.ts'
import { LoopbackTransport } from '../agent/mesh/loopback-transport.ts'
import type { TopicMessage } from '../runtime/transport.ts'

const text = (s: string): Uint8Array => new TextEncoder().encode(s)
const read = (b: Uint8Array): string => new TextDecoder().decode(b)

test('self requests are served locally; echo topics reach local subscribers through the validator; the rest passes through', async () => {
  const world = await Libp2pWorld.create({ peers: 2 })
  try {
    const [inner, other] = world.transports as [typeof world.transports[0], typeof world.transports[0]]
    const both = new LoopbackTransport(inner, { echoTopics: ['notices'] })
    both.handle('echo', async request => text(`${request.from === both.peerId ? 'self' : 'remote'}:${read(request.data)}`))
    assert.is(read(await both.request(both.peerId, 'echo', text('a'), { timeoutMs: 1_000 })), 'self:a')
    assert.is(read(await other.request(both.peerId, 'echo', text('b'), { timeoutMs: 5_000 })), 'remote:b', 'handlers are still served to the mesh')
    other.handle('echo', async request => text(`other:${read(request.data)}`))
    assert.is(read(await both.request(other.peerId, 'echo', text('c'), { timeoutMs: 5_000 })), 'other:c')
    await both.request(both.peerId, 'nothing-here', text('d'), { timeoutMs: 1_000 }).then(
      () => assert.unreachable('a protocol nobody serves'),
      (error: Error) => { assert.is(error.name, 'PeerUnreachableError'); assert.match(error.message, /serves no "nothing-here"/) })
    both.handle('slow', async () => await new Promise<Uint8Array>(() => {}))
    await both.request(both.peerId, 'slow', text('e'), { timeoutMs: 50 }).then(
      () => assert.unreachable('a handler that never answers'),
      (error: Error) => { assert.is(error.name, 'RequestTimeoutError') })

    const local: TopicMessage[] = []
    const remote: TopicMessage[] = []
    const plain: TopicMessage[] = []
    both.subscribe('notices', message => { local.push(message) })
    both.subscribe('plain', message => { plain.push(message) })
    other.subscribe('notices', message => { remote.push(message) })
    await world.waitForMesh('notices', 10_000)
    let verdict: 'accept' | 'reject' = 'accept'
    both.setTopicValidator('notices', () => verdict)
    await both.publish('notices', text('n1'))
    await world.waitFor('n1 here and there', () => local.length === 1 && remote.length === 1, 10_000)
    assert.is(local[0]!.from, both.peerId)
    assert.is(read(local[0]!.data), 'n1')
    verdict = 'reject'
    await both.publish('notices', text('n2'))
    await both.publish('plain', text('p1'))
    await world.waitFor('n2 at the other peer', () => remote.length === 2, 10_000)
    await world.wait(50)
    assert.is(local.length, 1, 'a publication the local validator rejects is not delivered locally')
    assert.is(plain.length, 0, 'a topic that is not echoed keeps libp2p\'s no-self-delivery')
  } finally {
    await world.close()
  }
})

test.run()
