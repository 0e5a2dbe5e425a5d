/**
 * Charm uploads in chunks, through the controller API's operations into a controller's
 * store (agent/controller/charm-store.ts): a chunk is checked against the manifest as it
 * arrives, the whole archive against its sha256 before it becomes readable, a re-run sends
 * only the chunks still missing, and every bad input is refused with one line while
 * nothing half-applied is ever served. Juju uploads a local charm in one HTTP PUT
 * (apiserver/objects.go, `charm-sha256` checked against the body: core/charm/
 * downloader, internal/charm/charmdownloader); the chunking is cantrip's, because its
 * transport bounds one request at limits.transportMessageBytesMax.
 */
import { randomBytes } from 'node:crypto'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { controllerApiProtocol, serveApiRequest } from '../actors/controller/controller-api.ts'
import { decodeApiReply, type ApiRequest } from '../actors/controller/api-requests.ts'
import type { ModelReplica } from '../actors/controller/model-replica.ts'
import { charmChunk, charmManifestOf, sha256Hex } from '../agent/charm/charm-chunks.ts'
import { uploadCharm, type UploadTarget } from '../agent/charm/charm-upload.ts'
import { CharmStore } from '../agent/controller/charm-store.ts'
import type { CharmManifest } from '../runtime/charm/charm-manifest.ts'
import { decode, encode } from '../runtime/codec.ts'
import { limits } from '../runtime/limits.ts'
import { prefixUpperBound } from '../runtime/storage.ts'
import { SimStorage } from '../sim/sim-storage.ts'

const test = suite('charm upload')

// The charm operations never read the model.
const noNode = {} as unknown as ModelReplica

interface Controller {
  storage: SimStorage
  store: CharmStore
  /** The API as `caller` sees it (an admin by default). */
  ask: (body: ApiRequest | Record<string, unknown>, caller?: 'admin' | 'machine') => Promise<Record<string, unknown>>
  /** The same, answering the raw reply bytes. */
  raw: (body: ApiRequest) => Promise<Uint8Array>
  /** Every request the API received, by op. */
  received: string[]
}

function controller (storage = new SimStorage()): Controller {
  const store = new CharmStore(storage)
  const received: string[] = []
  const charms = {
    manifest: async (hash: string) => await store.manifest(hash),
    chunk: async (hash: string, index: number) => await store.chunk(hash, index),
    begin: async (manifest: CharmManifest) => await store.begin(manifest),
    putChunk: async (hash: string, index: number, bytes: Uint8Array) => { await store.putChunk(hash, index, bytes) },
    commit: async (hash: string) => { await store.commit(hash) }
  }
  const send = async (body: ApiRequest | Record<string, unknown>, caller: 'admin' | 'machine'): Promise<Uint8Array> => {
    received.push(String(body.op))
    const identify = (): { kind: 'user', name: string } | { kind: 'machine', id: string } => caller === 'admin' ? { kind: 'user', name: 'admin' } : { kind: 'machine', id: '0' }
    return await serveApiRequest(noNode, identify, { from: caller, protocol: controllerApiProtocol, data: encode(body) }, charms)
  }
  const ask: Controller['ask'] = async (body, caller = 'admin') => decode(await send(body, caller), 'test') as Record<string, unknown>
  return { storage, store, ask, raw: async body => await send(body, 'admin'), received }
}

/** An upload target over `c`'s API, optionally changing each chunk on its way. */
function target (c: Controller, alter: (index: number, bytes: Uint8Array) => Uint8Array = (_, bytes) => bytes): UploadTarget {
  return {
    begin: async manifest => decodeApiReply('put-charm-begin', await c.raw({ op: 'put-charm-begin', manifest }), 'test'),
    chunk: async (hash, index, bytes) => decodeApiReply('put-charm-chunk', await c.raw({ op: 'put-charm-chunk', hash, index, bytes: alter(index, bytes) }), 'test'),
    commit: async hash => decodeApiReply('put-charm-commit', await c.raw({ op: 'put-charm-commit', hash }), 'test')
  }
}

async function chunkKeys (c: Controller): Promise<number> {
  return (await c.storage.range({ gte: 'charm-chunk/', lt: prefixUpperBound('charm-chunk/'), limit: 10_000 })).length
}

async function refusal (promise: Promise<unknown>): Promise<Error> {
  try {
    await promise
  } catch (error) {
    return error as Error
  }
  throw new Error('expected a refusal')
}

const archive = randomBytes(10_000)
const small = 1_000 // Chunk size for these tests: ten chunks.

test('an archive goes up in chunks and reads back whole; a second upload sends nothing', async () => {
  const c = controller()
  const manifest = charmManifestOf(archive, small)
  assert.is(manifest.chunks.length, 10)
  assert.equal(await uploadCharm(target(c), archive, manifest), { hash: sha256Hex(archive), sent: 10, skipped: 0 })
  assert.equal(await c.store.get(manifest.hash), new Uint8Array(archive))
  assert.equal(await c.ask({ op: 'charm-manifest', hash: manifest.hash }), { ok: true, manifest })
  assert.equal(await c.ask({ op: 'charm-chunk', hash: manifest.hash, index: 9 }), { ok: true, bytes: new Uint8Array(archive.subarray(9_000)) })
  assert.equal(await c.store.pendingUploads(), [])
  c.received.length = 0
  assert.equal(await uploadCharm(target(c), archive, manifest), { hash: manifest.hash, sent: 0, skipped: 10 })
  assert.equal(c.received, ['put-charm-begin'])
})

test('chunks are views of the archive, not copies', () => {
  const manifest = charmManifestOf(archive, small)
  const chunk = charmChunk(archive, manifest, 3)
  assert.is(chunk.buffer, archive.buffer)
  assert.is(chunk.byteOffset, archive.byteOffset + 3_000)
})

test('an interrupted upload resumes: the re-run sends only the missing chunks, even after a restart', async () => {
  const c = controller()
  const manifest = charmManifestOf(archive, small)
  // The first run dies after chunks 0, 1, 2 and 5.
  assert.equal(await c.ask({ op: 'put-charm-begin', manifest }), { ok: true, complete: false, missing: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] })
  for (const index of [0, 1, 2, 5]) assert.equal(await c.ask({ op: 'put-charm-chunk', hash: manifest.hash, index, bytes: charmChunk(archive, manifest, index) }), { ok: true })
  assert.is(await c.store.manifest(manifest.hash), undefined, 'not readable before the commit')
  assert.equal(await c.ask({ op: 'charm-chunk', hash: manifest.hash, index: 0 }), { ok: true, bytes: null })

  // The controller restarts (a new store over the same storage), then the deploy is run again.
  const again = controller(c.storage)
  assert.equal(await uploadCharm(target(again), archive, manifest), { hash: manifest.hash, sent: 6, skipped: 4 })
  assert.equal(again.received.filter(op => op === 'put-charm-chunk').length, 6)
  assert.equal(await again.store.get(manifest.hash), new Uint8Array(archive))
})

test('a corrupted chunk is refused with one line and is not stored; the upload can go on', async () => {
  const c = controller()
  const manifest = charmManifestOf(archive, small)
  const flip = (index: number, bytes: Uint8Array): Uint8Array => {
    if (index !== 4) return bytes
    const copy = new Uint8Array(bytes)
    copy[17] = copy[17]! ^ 0xff
    return copy
  }
  const corrupted = sha256Hex(flip(4, charmChunk(archive, manifest, 4)))
  const error = await refusal(uploadCharm(target(c, flip), archive, manifest))
  assert.is(error.name, 'CharmUploadRefusedError')
  assert.is(error.message, `charm store: cannot accept chunk 4 of charm archive "${manifest.hash}": expected sha256 ${manifest.chunks[4]!}, got sha256 ${corrupted}`)
  assert.is(await c.store.manifest(manifest.hash), undefined)
  // Chunks 0-3 are kept for a re-run, which sends the rest.
  assert.equal(await uploadCharm(target(c), archive, manifest), { hash: manifest.hash, sent: 6, skipped: 4 })
  assert.equal(await c.store.get(manifest.hash), new Uint8Array(archive))
})

test('a chunk of the wrong length, past the chunk maximum or out of range is refused', async () => {
  const c = controller()
  const manifest = charmManifestOf(archive, small)
  await c.ask({ op: 'put-charm-begin', manifest })
  assert.equal(await c.ask({ op: 'put-charm-chunk', hash: manifest.hash, index: 9, bytes: new Uint8Array(999) }),
    { ok: false, error: `charm store: cannot accept chunk 9 of charm archive "${manifest.hash}": expected 1000 bytes, got 999 bytes` })
  assert.equal(await c.ask({ op: 'put-charm-chunk', hash: manifest.hash, index: 10, bytes: new Uint8Array(1) }),
    { ok: false, error: `charm store: cannot accept chunk 10 of charm archive "${manifest.hash}": expected a chunk index from 0 to 9` })
  assert.equal(await c.ask({ op: 'put-charm-chunk', hash: manifest.hash, index: 0, bytes: new Uint8Array(limits.charmChunkBytesMax + 1) }),
    { ok: false, error: `charm store: expected a chunk of at most ${limits.charmChunkBytesMax} bytes, got ${limits.charmChunkBytesMax + 1} bytes` })
  assert.equal(await c.ask({ op: 'put-charm-chunk', hash: 'ab'.repeat(32), index: 0, bytes: new Uint8Array(1) }),
    { ok: false, error: `charm store: cannot accept chunk 0 of charm archive "${'ab'.repeat(32)}": expected an upload begun with its manifest, got none` })
  assert.is(await chunkKeys(c), 0)
})

test('an archive past charmArchiveBytesMax is refused before any chunk, naming the maximum and the size', async () => {
  const c = controller()
  const size = limits.charmArchiveBytesMax + 1
  const count = Math.ceil(size / limits.charmChunkBytesMax)
  const manifest = { hash: 'ab'.repeat(32), size, chunkBytes: limits.charmChunkBytesMax, chunks: Array.from({ length: count }, () => 'cd'.repeat(32)) }
  assert.equal(await c.ask({ op: 'put-charm-begin', manifest }),
    { ok: false, error: `charm store: expected a charm archive of at most ${limits.charmArchiveBytesMax} bytes, got ${size} bytes` })
  assert.equal(await c.store.pendingUploads(), [])
  // A manifest whose chunk list does not fit its size, and a chunk size past the maximum.
  assert.equal(await c.ask({ op: 'put-charm-begin', manifest: { ...manifest, size: 10, chunkBytes: 4 } }),
    { ok: false, error: 'charm store: expected 3 chunk hashes for 10 bytes in chunks of 4, got ' + String(count) })
  assert.equal(await c.ask({ op: 'put-charm-begin', manifest: { ...manifest, size: 10, chunkBytes: limits.charmChunkBytesMax + 1, chunks: ['cd'.repeat(32)] } }),
    { ok: false, error: `charm store: expected a chunk size of 1 to ${limits.charmChunkBytesMax} bytes, got ${limits.charmChunkBytesMax + 1}` })
})

test('chunks that do not hash to the archive\'s sha256 are refused at the commit and dropped: nothing half-applied', async () => {
  const c = controller()
  // A manifest that names another archive's hash but these bytes' chunks.
  const honest = charmManifestOf(archive, small)
  const manifest = { ...honest, hash: sha256Hex(new TextEncoder().encode('another archive')) }
  const error = await refusal(uploadCharm(target(c), archive, manifest))
  assert.is(error.message, `charm store: cannot accept charm archive "${manifest.hash}": expected the chunks to hash to sha256 ${manifest.hash}, got sha256 ${honest.hash}; the upload was dropped`)
  assert.is(await c.store.manifest(manifest.hash), undefined)
  assert.equal(await c.ask({ op: 'charm-chunk', hash: manifest.hash, index: 0 }), { ok: true, bytes: null })
  assert.equal(await c.store.pendingUploads(), [])
  assert.is(await chunkKeys(c), 0, 'every chunk of the refused upload is gone')
})

test('a commit before every chunk is in is refused, naming the first missing chunk', async () => {
  const c = controller()
  const manifest = charmManifestOf(archive, small)
  await c.ask({ op: 'put-charm-begin', manifest })
  await c.ask({ op: 'put-charm-chunk', hash: manifest.hash, index: 0, bytes: charmChunk(archive, manifest, 0) })
  assert.equal(await c.ask({ op: 'put-charm-commit', hash: manifest.hash }),
    { ok: false, error: `charm store: cannot accept charm archive "${manifest.hash}": expected all 10 chunks, got 1 (chunk 1 is missing)` })
  assert.is(await c.store.manifest(manifest.hash), undefined)
})

test('unfinished uploads are bounded: beginning one more drops the oldest and its chunks', async () => {
  const c = controller()
  const manifests = Array.from({ length: limits.charmUploadsPendingMax + 1 }, (_, i) => charmManifestOf(new TextEncoder().encode(`archive ${i}`), 4))
  for (const manifest of manifests.slice(0, -1)) {
    await c.ask({ op: 'put-charm-begin', manifest })
    await c.ask({ op: 'put-charm-chunk', hash: manifest.hash, index: 0, bytes: new TextEncoder().encode('arch') })
  }
  assert.is((await c.store.pendingUploads()).length, limits.charmUploadsPendingMax)
  assert.is(await chunkKeys(c), limits.charmUploadsPendingMax)
  await c.ask({ op: 'put-charm-begin', manifest: manifests.at(-1)! })
  const pending = await c.store.pendingUploads()
  assert.is(pending.length, limits.charmUploadsPendingMax)
  assert.not.ok(pending.includes(manifests[0]!.hash), 'the oldest went')
  assert.is(await chunkKeys(c), limits.charmUploadsPendingMax - 1)
})

test('only admins and controllers may upload; machine agents may fetch', async () => {
  const c = controller()
  const manifest = charmManifestOf(archive, small)
  const refused = await c.ask({ op: 'put-charm-begin', manifest }, 'machine')
  assert.equal(refused, { ok: false, error: 'controller api: permission denied: peer "machine" may not add charms' })
  await uploadCharm(target(c), archive, manifest)
  assert.equal(await c.ask({ op: 'charm-manifest', hash: manifest.hash }, 'machine'), { ok: true, manifest })
})

test.run()
