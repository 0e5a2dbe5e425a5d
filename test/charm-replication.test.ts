/**
 * Charm archives replicated between controllers, chunk by chunk: an upload committed on
 * one controller is copied by a majority before the commit answers; a controller missing
 * an archive fetches its manifest and chunks from its peers (one hop, `local: true`),
 * checks each chunk and the whole sha256, keeps it and answers; wrong chunks are refused
 * (and the next peer asked for the rest), a hash nobody has answers null in bounded time,
 * and the fetches are bounded (limits.charmFetch*).
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { controllerApiProtocol, serveApiRequest, type CharmChunkReply, type CharmManifestReply } from '../actors/controller/controller-api.ts'
import type { ModelReplica } from '../actors/controller/model-replica.ts'
import { charmArchiveHash } from '../agent/charm/charm-archive.ts'
import { charmManifestOf } from '../agent/charm/charm-chunks.ts'
import { CharmStore } from '../agent/controller/charm-store.ts'
import { ReplicatedCharmStore } from '../agent/controller/replicated-charm-store.ts'
import { fetchCharmArchive } from '../agent/uniter/charm-fetch.ts'
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
  /** One API request from the machine agent m0 to `controller`, through the network. */
  const machineRequest = async <T>(controller: string, body: Record<string, unknown>): Promise<T> =>
    decode(await settle(world.network.transport('m0').request(controller, controllerApiProtocol, encode(body), { timeoutMs: 60_000 }), 60_000), 'test') as T
  /** The archive as a machine agent fetches it from `controller` (agent/uniter/charm-fetch.ts); undefined if it has none. */
  const machineFetches = async (controller: string, hash: string): Promise<Uint8Array | undefined> => {
    const manifest = await machineRequest<CharmManifestReply>(controller, { op: 'charm-manifest', hash })
    if (!manifest.ok || manifest.manifest === null) return undefined
    return await fetchCharmArchive({
      charmManifest: async () => manifest.manifest,
      charmChunk: async (h, index) => {
        const reply = await machineRequest<CharmChunkReply>(controller, { op: 'charm-chunk', hash: h, index })
        return reply.ok && reply.bytes !== null ? reply.bytes : undefined
      }
    }, hash, 'local:test-0')
  }
  return { world, node, settle, machineRequest, machineFetches, records }
}

/**
 * Replaces `controller`'s API with one that claims to hold the archive `real` (its true
 * manifest) but answers every chunk with `bytes`.
 */
function lie (c: ReturnType<typeof cluster>, controller: string, real: Uint8Array, bytes: Uint8Array, chunkBytes = 4): void {
  const manifest = charmManifestOf(real, chunkBytes)
  const handler: RequestHandler = async request => {
    const body = decode(request.data, 'test') as Record<string, unknown>
    return encode(body.op === 'charm-manifest' ? { ok: true, manifest } : { ok: true, bytes })
  }
  c.world.network.transport(controller).handle(controllerApiProtocol, handler)
}

test('an archive put to one controller is served by another, which then holds it itself', async () => {
  const c = cluster()
  const archive = bytesOf('the kv charm, packed in chunks of four bytes')
  // Into c0's own store only (no replication), in 11 chunks.
  const hash = await c.node('c0').store.put(archive, 4)
  assert.is(hash, charmArchiveHash(archive))
  assert.is(await c.node('c2').store.get(hash), undefined)

  assert.equal(await c.machineFetches('c2', hash), archive)
  assert.equal(await c.node('c2').store.get(hash), archive, 'c2 kept the archive it fetched')
  // c2 asked its peers for their own stores only, the manifest and then every chunk, and c1 (which lacks it) did not ask on.
  const peerRequests = [...c.node('c0').asked, ...c.node('c1').asked]
  assert.ok(peerRequests.length >= 12)
  for (const { from, body } of peerRequests) {
    assert.is(from, 'c2')
    assert.equal({ ...body, index: undefined }, { op: body.op, hash, local: true, index: undefined })
  }
  assert.is(c.node('c0').asked.filter(a => a.body.op === 'charm-chunk').length, 11)
  assert.is(c.node('c1').charms.fetchesInFlight(), 0)
  assert.is(await c.node('c1').store.get(hash), undefined, 'a local request does not make c1 fetch')

  // Served from c2's own store now: no peer is asked again.
  const before = c.node('c0').asked.length + c.node('c1').asked.length
  assert.equal(await c.settle(c.node('c2').charms.get(hash), 1_000), archive)
  assert.is(c.node('c0').asked.length + c.node('c1').asked.length, before)
  await c.world.close()
})

test('a committed upload is on a majority before the commit answers, and survives losing its controller', async () => {
  const c = cluster()
  const archive = bytesOf('uploaded to c0, then c0 is lost')
  const manifest = charmManifestOf(archive, 8)
  const charms = c.node('c0').charms
  assert.equal(await c.settle(charms.begin(manifest), 1_000), { complete: false, missing: [0, 1, 2, 3] })
  for (const index of [0, 1, 2, 3]) await c.settle(charms.putChunk(manifest.hash, index, archive.subarray(index * 8, index * 8 + 8)), 1_000)
  await c.settle(charms.commit(manifest.hash), 10_000)
  const holders = await Promise.all(['c1', 'c2'].map(async id => await c.node(id).store.manifest(manifest.hash) !== undefined))
  assert.ok(holders.includes(true), `a peer holds it: ${JSON.stringify(holders)}`)
  c.world.network.crash('c0')
  assert.equal(await c.machineFetches('c1', manifest.hash), archive)
  assert.equal(await c.machineFetches('c2', manifest.hash), archive)
  await c.world.close()
})

test('a commit that no peer can copy says on how many controllers the archive is', async () => {
  const c = cluster({ timeoutMs: 1_000 })
  c.world.network.crash('c1')
  c.world.network.crash('c2')
  const archive = bytesOf('nobody else is up')
  const manifest = charmManifestOf(archive)
  const charms = c.node('c0').charms
  await c.settle(charms.begin(manifest), 1_000)
  await c.settle(charms.putChunk(manifest.hash, 0, archive), 1_000)
  try {
    await c.settle(charms.commit(manifest.hash), 200_000)
    assert.unreachable('expected CharmReplicationError')
  } catch (error) {
    assert.is((error as Error).name, 'CharmReplicationError')
    assert.match((error as Error).message, new RegExp(`^replicated charm store: charm archive "${manifest.hash}" is on 1 of 3 controllers, expected a majority \\(2\\): `))
  }
  assert.equal(await c.node('c0').store.get(manifest.hash), archive, 'the archive stays accepted here; a retried commit replicates again')
  await c.world.close()
})

test('a local request is answered from the controller\'s own store only', async () => {
  const c = cluster()
  const archive = bytesOf('only c0 has this one')
  const hash = await c.node('c0').store.put(archive)
  const sent = c.world.network.transport('c1').counters().requestsSent
  assert.equal(await c.machineRequest('c1', { op: 'charm-manifest', hash, local: true }), { ok: true, manifest: null })
  assert.equal(await c.machineRequest('c1', { op: 'charm-chunk', hash, index: 0, local: true }), { ok: true, bytes: null })
  assert.is(c.world.network.transport('c1').counters().requestsSent, sent, 'c1 asked nobody')
  assert.is(await c.node('c1').store.get(hash), undefined)
  assert.equal(await c.settle(c.node('c1').charms.manifest(hash, { local: true }), 1_000), undefined)
  const malformed = await c.machineRequest<CharmManifestReply>('c1', { op: 'charm-manifest', hash, local: 'yes' })
  assert.equal(malformed, { ok: false, error: 'charm store: expected "local" to be a boolean, got "yes"' })
  await c.world.close()
})

test('a peer sending other chunks is refused and the next peer asked', async () => {
  const c = cluster({ peers: ['c1', 'c0', 'c2'] })
  const archive = bytesOf('the real archive')
  const hash = await c.node('c0').store.put(archive, 4)
  lie(c, 'c1', archive, bytesOf('fake'))

  assert.equal(await c.settle(c.node('c2').charms.get(hash), 10_000), archive)
  assert.equal(await c.node('c2').store.get(hash), archive)
  assert.ok(c.records.some(r => r.level === 'warning' && r.message.includes('"c1"') && r.message.includes(`cannot accept chunk 0 of charm archive "${hash}": expected sha256`)), 'the refusal is logged')
  await c.world.close()
})

test('wrong chunks from every peer leave nothing stored and answer null', async () => {
  const c = cluster()
  const real = bytesOf('nobody holds these bytes')
  const hash = charmArchiveHash(real)
  lie(c, 'c0', real, bytesOf('forg'))
  lie(c, 'c1', real, bytesOf('ery!'))
  assert.equal(await c.machineRequest('c2', { op: 'charm-manifest', hash }), { ok: true, manifest: null })
  assert.is(await c.node('c2').store.get(hash), undefined)
  assert.is(await c.node('c2').store.manifest(hash), undefined)
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
  const hash = await c.node('c0').store.put(archive)
  const both = Promise.all([c.node('c2').charms.get(hash), c.node('c2').charms.get(hash), c.node('c2').charms.get(hash)])
  assert.equal(await c.settle(both, 10_000), [archive, archive, archive])
  assert.is(c.node('c0').asked.length, 2, 'one manifest and one chunk request')
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
  const reply = await c.machineRequest('c2', { op: 'charm-manifest', hash: '../../etc/passwd' })
  assert.equal(reply, { ok: false, error: 'charm store: expected a charm archive sha256 in lower-case hex, got "../../etc/passwd"' })
  assert.is(c.world.network.transport('c2').counters().requestsSent, sent)
  await c.world.close()
})

test.run()
