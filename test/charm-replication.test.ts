/**
 * Charm archives replicated between controllers: a put to one controller suffices, a
 * controller missing an archive fetches it from its peers (one hop, `local: true`),
 * checks its sha256, keeps it and answers; wrong bytes are refused, a hash nobody has
 * answers null in bounded time, and the fetches are bounded (limits.charmFetch*).
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { controllerApiProtocol, serveApiRequest, type CharmReply } from '../actors/controller/controller-api.ts'
import type { ModelReplica } from '../actors/controller/model-replica.ts'
import { charmArchiveHash } from '../agent/charm/charm-archive.ts'
import { CharmStore } from '../agent/controller/charm-store.ts'
import { ReplicatedCharmStore } from '../agent/controller/replicated-charm-store.ts'
import { decode, encode } from '../runtime/codec.ts'
import { limits } from '../runtime/limits.ts'
import { createMemoryLogger, type LogRecord } from '../runtime/logger.ts'
import type { Entity } from '../runtime/model/model-types.ts'
import type { IncomingRequest, RequestHandler } from '../runtime/transport.ts'
import { SimNetworkWorld } from '../sim/sim-network-world.ts'
import { SimStorage } from '../sim/sim-storage.ts'

const test = suite('charm replication')

const controllers = ['c0', 'c1', 'c2']
const bytesOf = (text: string): Uint8Array => new TextEncoder().encode(text)
// The charm operations never read the model.
const noNode = {} as unknown as ModelReplica

interface Controller {
  store: CharmStore
  charms: ReplicatedCharmStore
  /** Every charm-archive request this controller's API received, decoded, with who sent it. */
  asked: Array<{ from: string, body: Record<string, unknown> }>
}

/** Three controllers (c0..c2) and a machine agent (m0) on a simulated network, each controller serving the API over its replicated store. */
function cluster (options: { peers?: string[], timeoutMs?: number } = {}) {
  const world = new SimNetworkWorld({ seed: 7, peers: [...controllers, 'm0'], latency: { kind: 'fixed', ms: 5 } })
  const identify = (peer: string): Entity | undefined =>
    controllers.includes(peer) ? { kind: 'controller', id: peer } : peer === 'm0' ? { kind: 'machine', id: '0' } : peer === 'admin' ? { kind: 'user', name: 'admin' } : undefined
  const records: LogRecord[] = []
  const nodes = new Map<string, Controller>()
  for (const id of controllers) {
    const transport = world.network.transport(id)
    const store = new CharmStore(new SimStorage())
    const charms = new ReplicatedCharmStore({
      store,
      transport,
      self: id,
      peers: () => options.peers ?? controllers,
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      logger: createMemoryLogger(id, records)
    })
    const asked: Controller['asked'] = []
    transport.handle(controllerApiProtocol, async (request: IncomingRequest) => {
      asked.push({ from: request.from, body: decode(request.data, 'test') as Record<string, unknown> })
      return await serveApiRequest(noNode, identify, request, charms)
    })
    nodes.set(id, { store, charms, asked })
  }
  const node = (id: string): Controller => nodes.get(id)!
  /** Runs `promise` to completion on simulated time, failing if it takes longer than `ms`. */
  const settle = async <T>(promise: Promise<T>, ms: number): Promise<T> => {
    let outcome: { ok: true, value: T } | { ok: false, error: unknown } | undefined
    promise.then(value => { outcome = { ok: true, value } }, (error: unknown) => { outcome = { ok: false, error } })
    const started = world.clock.now()
    for (let step = 0; outcome === undefined && world.clock.now() - started < ms; step++) await world.wait(1)
    if (outcome === undefined) throw new Error(`not settled within ${ms} ms of simulated time`)
    if (!outcome.ok) throw outcome.error
    return outcome.value
  }
  /** A charm-archive request from the machine agent m0 to `controller`, through the network. */
  const machineAsks = async (controller: string, hash: string): Promise<CharmReply> =>
    decode(await settle(world.network.transport('m0').request(controller, controllerApiProtocol, encode({ op: 'charm-archive', hash }), { timeoutMs: 60_000 }), 60_000), 'test') as CharmReply
  return { world, node, settle, machineAsks, records }
}

/** Replaces `controller`'s API with one that answers every charm-archive request with `bytes`. */
function lie (c: ReturnType<typeof cluster>, controller: string, bytes: Uint8Array): void {
  const handler: RequestHandler = async () => encode({ ok: true, bytes })
  c.world.network.transport(controller).handle(controllerApiProtocol, handler)
}

test('an archive put to one controller is served by another, which then holds it itself', async () => {
  const c = cluster()
  const archive = bytesOf('the kv charm, packed')
  const hash = await c.node('c0').charms.put(archive)
  assert.is(hash, charmArchiveHash(archive))
  assert.is(await c.node('c2').store.get(hash), undefined)

  const reply = await c.machineAsks('c2', hash)
  assert.equal(reply, { ok: true, bytes: archive })
  assert.equal(await c.node('c2').store.get(hash), archive, 'c2 kept the archive it fetched')
  // c2 asked its peers for their own stores only, and c1 (which lacks it) did not ask on.
  const peerRequests = [...c.node('c0').asked, ...c.node('c1').asked]
  assert.ok(peerRequests.length >= 1)
  for (const { from, body } of peerRequests) assert.equal({ from, body }, { from: 'c2', body: { op: 'charm-archive', hash, local: true } })
  assert.is(c.node('c1').charms.fetchesInFlight(), 0)
  assert.is(await c.node('c1').store.get(hash), undefined, 'a local request does not make c1 fetch')

  // Served from c2's own store now: no peer is asked again.
  const before = c.node('c0').asked.length + c.node('c1').asked.length
  assert.equal(await c.settle(c.node('c2').charms.get(hash), 1_000), archive)
  assert.is(c.node('c0').asked.length + c.node('c1').asked.length, before)
  await c.world.close()
})

test('a local request is answered from the controller\'s own store only', async () => {
  const c = cluster()
  const archive = bytesOf('only c0 has this one')
  const hash = await c.node('c0').charms.put(archive)
  const sent = c.world.network.transport('c1').counters().requestsSent
  const reply = decode(await c.settle(c.world.network.transport('m0').request('c1', controllerApiProtocol, encode({ op: 'charm-archive', hash, local: true }), { timeoutMs: 10_000 }), 10_000), 'test')
  assert.equal(reply, { ok: true, bytes: null })
  assert.is(c.world.network.transport('c1').counters().requestsSent, sent, 'c1 asked nobody')
  assert.is(await c.node('c1').store.get(hash), undefined)
  assert.equal(await c.settle(c.node('c1').charms.get(hash, { local: true }), 1_000), undefined)
  const malformed = decode(await c.settle(c.world.network.transport('m0').request('c1', controllerApiProtocol, encode({ op: 'charm-archive', hash, local: 'yes' }), { timeoutMs: 10_000 }), 10_000), 'test') as CharmReply
  assert.is(malformed.ok, false)
  await c.world.close()
})

test('a peer sending other bytes is refused and the next peer asked', async () => {
  const c = cluster({ peers: ['c1', 'c0', 'c2'] })
  const archive = bytesOf('the real archive')
  const hash = await c.node('c0').charms.put(archive)
  lie(c, 'c1', bytesOf('something else entirely'))

  assert.equal(await c.settle(c.node('c2').charms.get(hash), 10_000), archive)
  assert.equal(await c.node('c2').store.get(hash), archive)
  assert.ok(c.records.some(r => r.level === 'warning' && r.message.includes('"c1"') && r.message.includes('refused')), 'the refusal is logged')
  await c.world.close()
})

test('wrong bytes from every peer leave nothing stored and answer null', async () => {
  const c = cluster()
  const hash = charmArchiveHash(bytesOf('nobody holds these bytes'))
  lie(c, 'c0', bytesOf('a forgery'))
  lie(c, 'c1', bytesOf('another forgery'))
  assert.equal(await c.machineAsks('c2', hash), { ok: true, bytes: null })
  assert.is(await c.node('c2').store.get(hash), undefined)
  await c.world.close()
})

test('a hash nobody has answers null in bounded time, even with a peer down', async () => {
  const c = cluster({ timeoutMs: 1_000 })
  const hash = charmArchiveHash(bytesOf('never put anywhere'))
  const started = c.world.clock.now()
  assert.equal(await c.settle(c.node('c2').charms.get(hash), 1_000), undefined)
  assert.ok(c.world.clock.now() - started < 100, 'peers that answer at once are not waited for')

  // c1 stops answering (its handler hangs): c2 waits one peer timeout for it, no more.
  c.world.network.transport('c1').handle(controllerApiProtocol, async () => await new Promise<Uint8Array>(() => {}))
  const again = c.world.clock.now()
  assert.equal(await c.settle(c.node('c2').charms.get(hash), 5_000), undefined)
  const took = c.world.clock.now() - again
  assert.ok(took >= 1_000 && took < 1_200, `took ${took} ms`)

  // A crashed peer is skipped as well.
  c.world.network.crash('c0')
  assert.equal(await c.settle(c.node('c2').charms.get(hash), 5_000), undefined)
  await c.world.close()
})

test('concurrent gets of one hash share one fetch', async () => {
  const c = cluster({ peers: ['c0', 'c2'] })
  const archive = bytesOf('asked for twice at once')
  const hash = await c.node('c0').charms.put(archive)
  const both = Promise.all([c.node('c2').charms.get(hash), c.node('c2').charms.get(hash), c.node('c2').charms.get(hash)])
  assert.equal(await c.settle(both, 10_000), [archive, archive, archive])
  assert.is(c.node('c0').asked.length, 1)
  await c.world.close()
})

test('fetches are bounded: peers asked per fetch and archives fetched at once', async () => {
  const many = Array.from({ length: limits.charmFetchPeersMax + 4 }, (_, i) => `gone-${i}`)
  const c = cluster({ peers: ['c2', ...many], timeoutMs: 1_000 })
  assert.equal(await c.settle(c.node('c2').charms.get(charmArchiveHash(bytesOf('x'))), 60_000), undefined)
  // Each unreachable peer asked leaves one debug record; the peers past the maximum are not asked.
  const asked = c.records.filter(r => r.module === 'c2' && r.message.startsWith('cannot fetch')).map(r => r.fields?.peer)
  assert.equal(asked, many.slice(0, limits.charmFetchPeersMax))

  // One peer that never answers holds the fetches open; past the maximum, gets are refused at once.
  const hanging = cluster({ peers: ['c0', 'c2'], timeoutMs: 1_000 })
  hanging.world.network.transport('c0').handle(controllerApiProtocol, async () => await new Promise<Uint8Array>(() => {}))
  const charms = hanging.node('c2').charms
  const open = Array.from({ length: limits.charmFetchesInFlightMax }, async (_, i) => await charms.get(charmArchiveHash(bytesOf(`archive ${i}`))))
  await hanging.world.wait(10)
  assert.is(charms.fetchesInFlight(), limits.charmFetchesInFlightMax)
  try {
    await charms.get(charmArchiveHash(bytesOf('one too many')))
    assert.unreachable('expected CharmFetchBusyError')
  } catch (error) {
    assert.is((error as Error).name, 'CharmFetchBusyError')
  }
  // A hash already being fetched still joins its fetch.
  const joined = charms.get(charmArchiveHash(bytesOf('archive 0')))
  assert.equal(await hanging.settle(Promise.all([...open, joined]), 5_000), Array.from({ length: limits.charmFetchesInFlightMax + 1 }, () => undefined))
  assert.is(charms.fetchesInFlight(), 0)
  await c.world.close()
  await hanging.world.close()
})

test('a malformed hash is refused before any peer is asked', async () => {
  const c = cluster()
  const sent = c.world.network.transport('c2').counters().requestsSent
  const reply = await c.machineAsks('c2', '../../etc/passwd')
  assert.is(reply.ok, false)
  assert.is(c.world.network.transport('c2').counters().requestsSent, sent)
  await c.world.close()
})

test.run()
