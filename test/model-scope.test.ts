/**
 * Several models on one mesh (actors/controller/model-scope.ts): a model's view of the
 * transport serves and asks on its own protocol names, so two models' handlers of one
 * protocol live side by side on a peer; stopping a model's view drops only its handlers.
 */
import '../runtime/polyfill.ts'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { modelProtocol, modelTransport } from '../actors/controller/model-scope.ts'
import { Libp2pWorld } from '../agent/mesh/libp2p-world.ts'

const text = (s: string): Uint8Array => new TextEncoder().encode(s)
const read = (b: Uint8Array): string => new TextDecoder().decode(b)

test('protocol names: "default" keeps the bare name, another model a suffix', () => {
  assert.is(modelProtocol('raft/1', 'default'), 'raft/1')
  assert.is(modelProtocol('raft/1', 'two'), 'raft/1@two')
})

test('each model serves its own handler of one protocol; a stopped view leaves the others', async () => {
  const world = await Libp2pWorld.create({ peers: 2 })
  try {
    const [server, client] = world.transports as [typeof world.transports[0], typeof world.transports[0]]
    assert.is(modelTransport(server, 'default'), server, 'the default model uses the mesh itself')
    const two = modelTransport(server, 'two')
    const three = modelTransport(server, 'three')
    server.handle('api', async () => text('default'))
    two.handle('api', async request => text(`two saw ${request.protocol}`))
    three.handle('api', async () => text('three'))
    const ask = async (model: string): Promise<string> => read(await modelTransport(client, model).request(server.peerId, 'api', text('?'), { timeoutMs: 5_000 }))
    assert.is(await ask('default'), 'default')
    assert.is(await ask('two'), 'two saw api', 'the handler sees the name it registered')
    assert.is(await ask('three'), 'three')
    await two.stop()
    await ask('two').then(() => assert.unreachable('model two stopped'), (error: Error) => { assert.match(error.message, /api@two/) })
    assert.is(await ask('default'), 'default')
    assert.is(await ask('three'), 'three')
    assert.is(server.connectedPeers().includes(client.peerId), true, 'the mesh itself runs on')
  } finally {
    await world.close()
  }
})

test.run()
