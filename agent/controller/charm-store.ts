/**
 * The controller's charm store (and, as `new CharmStore(storage, 'agent')`, its agent
 * binary store): archives by content address (sha256 of the archive), in
 * the controller's Storage beside its Raft state, one key per chunk
 * (runtime/charm/charm-manifest.ts). The model records only the URL → hash; whoever
 * fetches the archive gets its manifest and then its chunks, and checks both again.
 *
 * An upload is begun with the manifest, fed chunk by chunk (each checked against the
 * manifest's sha256 as it arrives, and written with a record of which chunks are in, in
 * one atomic batch), and committed: the whole archive is hashed again from the stored
 * chunks, one at a time, and only then does it become readable. A commit whose hash does
 * not match drops the upload and its chunks, so nothing half-applied is ever served. An
 * upload begun again with the same manifest (a re-run deploy) answers the chunks still
 * missing, so only those are sent. The store never holds more than one chunk in memory.
 */
import { chunkProblem, sha256Hex, charmManifestOf, charmChunk } from '../charm/charm-chunks.ts'
import { charmChunkCount, sha256Pattern, type CharmManifest, type CharmUploadState } from '../../runtime/charm/charm-manifest.ts'
import { decode, encode } from '../../runtime/codec.ts'
import { CantripError, InvalidInputError } from '../../runtime/errors.ts'
import { limits } from '../../runtime/limits.ts'
import { prefixUpperBound, type Storage } from '../../runtime/storage.ts'
import { createHash } from 'node:crypto'

/**
 * What a store holds: charm archives, or agent bundles (agent/tools/agent-bundle.ts),
 * which are kept the same way under keys of their own, so one controller Storage holds
 * both without either seeing the other's.
 */
export type StoreKind = 'charm' | 'agent'

const components: Record<StoreKind, string> = { charm: 'charm store', agent: 'agent binary store' }
const things: Record<StoreKind, string> = { charm: 'charm archive', agent: 'agent bundle' }

/** An upload the store refuses (a chunk that is not what the manifest says, a hash that does not match): one line. */
export class CharmUploadError extends CantripError {
  override name = 'CharmUploadError'
  constructor (hash: string, what: string, problem: string, kind: StoreKind = 'charm') {
    super(`${components[kind]}: cannot accept ${what}${things[kind]} ${JSON.stringify(hash)}: ${problem}`)
  }
}

/** An unfinished upload: the manifest, which chunks are in, and when it was begun (for eviction). */
interface Upload {
  manifest: CharmManifest
  received: boolean[]
  begun: number
}


export class CharmStore {
  readonly #storage: Storage
  readonly #kind: StoreKind
  readonly #component: string
  readonly #archivePrefix: string
  readonly #uploadPrefix: string
  readonly #chunkPrefix: string
  /** Mutations one at a time, so two chunks of one upload never race on its record. */
  #queue: Promise<unknown> = Promise.resolve()
  #uploads: Map<string, Upload> | undefined

  constructor (storage: Storage, kind: StoreKind = 'charm') {
    this.#storage = storage
    this.#kind = kind
    this.#component = components[kind]
    this.#archivePrefix = `${kind}-archive/`
    this.#uploadPrefix = `${kind}-upload/`
    this.#chunkPrefix = `${kind}-chunk/`
  }

  /** Begins (or resumes) the upload `manifest` describes; answers what is still to send. */
  async begin (manifest: CharmManifest): Promise<CharmUploadState> {
    return await this.#serial(async () => {
      if (await this.manifest(manifest.hash) !== undefined) return { complete: true, missing: [] }
      const uploads = await this.#pending()
      const held = uploads.get(manifest.hash)
      if (held !== undefined && sameManifest(held.manifest, manifest)) return { complete: false, missing: missingOf(held) }
      if (held !== undefined) await this.#drop(manifest.hash)
      while (uploads.size >= limits.charmUploadsPendingMax) {
        const oldest = [...uploads.entries()].sort((a, b) => a[1].begun - b[1].begun)[0]![0]
        await this.#drop(oldest)
      }
      const begun = Math.max(0, ...[...uploads.values()].map(u => u.begun)) + 1
      const upload: Upload = { manifest, received: manifest.chunks.map(() => false), begun }
      await this.#storage.put(this.#uploadPrefix + manifest.hash, encodeUpload(upload, this.#component), { sync: false })
      uploads.set(manifest.hash, upload)
      return { complete: false, missing: missingOf(upload) }
    })
  }

  /** Stores chunk `index` of the upload of `hash` after checking its length and sha256 against the manifest. */
  async putChunk (hash: string, index: number, bytes: Uint8Array): Promise<void> {
    await this.#serial(async () => {
      if (await this.manifest(hash) !== undefined) return
      const upload = (await this.#pending()).get(hash)
      if (upload === undefined) throw this.#error(hash, `chunk ${index} of `, 'expected an upload begun with its manifest, got none')
      const count = upload.manifest.chunks.length
      if (!Number.isSafeInteger(index) || index < 0 || index >= count) throw this.#error(hash, `chunk ${index} of `, `expected a chunk index from 0 to ${count - 1}`)
      const problem = chunkProblem(upload.manifest, index, bytes)
      if (problem !== undefined) throw this.#error(hash, `chunk ${index} of `, problem)
      if (upload.received[index] === true) return
      upload.received[index] = true
      await this.#storage.batch([
        { type: 'put', key: this.#chunkKey(hash, index), value: bytes },
        { type: 'put', key: this.#uploadPrefix + hash, value: encodeUpload(upload, this.#component) }
      ], { sync: false })
    })
  }

  /**
   * Makes the upload of `hash` readable once every chunk is in and the stored chunks hash
   * to `hash`; otherwise refuses, and a wrong whole hash drops the upload. Synced.
   */
  async commit (hash: string): Promise<void> {
    await this.#serial(async () => {
      if (await this.manifest(hash) !== undefined) return
      const uploads = await this.#pending()
      const upload = uploads.get(hash)
      if (upload === undefined) throw this.#error(hash, '', 'expected an upload begun with its manifest, got none')
      const missing = missingOf(upload)
      if (missing.length > 0) throw this.#error(hash, '', `expected all ${upload.manifest.chunks.length} chunks, got ${upload.manifest.chunks.length - missing.length} (chunk ${missing[0]!} is missing)`)
      const whole = createHash('sha256')
      for (let index = 0; index < upload.manifest.chunks.length; index++) {
        const chunk = await this.#storage.get(this.#chunkKey(hash, index))
        if (chunk === undefined) throw this.#error(hash, '', `expected chunk ${index} in the store, got none`)
        whole.update(chunk)
      }
      const actual = whole.digest('hex')
      if (actual !== hash) {
        await this.#drop(hash)
        throw this.#error(hash, '', `expected the chunks to hash to sha256 ${hash}, got sha256 ${actual}; the upload was dropped`)
      }
      await this.#storage.batch([
        { type: 'put', key: this.#archivePrefix + hash, value: encode(upload.manifest, this.#component) },
        { type: 'del', key: this.#uploadPrefix + hash }
      ], { sync: true })
      uploads.delete(hash)
    })
  }

  /** The manifest of a stored (committed) archive, or undefined. */
  async manifest (hash: string): Promise<CharmManifest | undefined> {
    checkHash(hash, this.#component)
    const bytes = await this.#storage.get(this.#archivePrefix + hash)
    return bytes === undefined ? undefined : decode(bytes, this.#component) as CharmManifest
  }

  /** Chunk `index` of a stored (committed) archive, or undefined. */
  async chunk (hash: string, index: number): Promise<Uint8Array | undefined> {
    const manifest = await this.manifest(hash)
    if (manifest === undefined || !Number.isSafeInteger(index) || index < 0 || index >= manifest.chunks.length) return undefined
    return await this.#storage.get(this.#chunkKey(hash, index))
  }

  /** Unfinished uploads this store keeps (for tests and the bound). */
  async pendingUploads (): Promise<string[]> {
    return [...(await this.#pending()).keys()].sort()
  }

  /** Stores a whole archive held in memory (tests, fixtures); answers its hash. */
  async put (bytes: Uint8Array, chunkBytes: number = limits.charmChunkBytesMax): Promise<string> {
    if (bytes.byteLength > limits.charmArchiveBytesMax) {
      throw new InvalidInputError(this.#component, `a ${things[this.#kind]} of at most ${limits.charmArchiveBytesMax} bytes`, `${bytes.byteLength} bytes`)
    }
    const manifest = charmManifestOf(bytes, chunkBytes)
    const { missing } = await this.begin(manifest)
    for (const index of missing) await this.putChunk(manifest.hash, index, charmChunk(bytes, manifest, index))
    await this.commit(manifest.hash)
    return manifest.hash
  }

  /** A stored archive whole, in memory (tests, fixtures); undefined if not stored. */
  async get (hash: string): Promise<Uint8Array | undefined> {
    const manifest = await this.manifest(hash)
    if (manifest === undefined) return undefined
    const bytes = new Uint8Array(manifest.size)
    for (let index = 0; index < manifest.chunks.length; index++) {
      const chunk = await this.#storage.get(this.#chunkKey(hash, index))
      if (chunk === undefined) return undefined
      bytes.set(chunk, index * manifest.chunkBytes)
    }
    return sha256Hex(bytes) === hash ? bytes : undefined
  }

  #error (hash: string, what: string, problem: string): CharmUploadError {
    return new CharmUploadError(hash, what, problem, this.#kind)
  }

  #chunkKey (hash: string, index: number): string {
    return `${this.#chunkPrefix}${hash}/${String(index).padStart(6, '0')}`
  }

  async #serial<T> (run: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(run, run)
    this.#queue = next.catch(() => undefined)
    return await next
  }

  /** The unfinished uploads, read from storage once (they survive a restart, for resuming). */
  async #pending (): Promise<Map<string, Upload>> {
    if (this.#uploads !== undefined) return this.#uploads
    const uploads = new Map<string, Upload>()
    const records = await this.#storage.range({ gte: this.#uploadPrefix, lt: prefixUpperBound(this.#uploadPrefix), limit: limits.charmUploadsPendingMax * 2 })
    for (const [key, value] of records) uploads.set(key.slice(this.#uploadPrefix.length), decode(value, this.#component) as Upload)
    this.#uploads = uploads
    return uploads
  }

  /** Removes an unfinished upload and every chunk it received. */
  async #drop (hash: string): Promise<void> {
    const uploads = await this.#pending()
    const upload = uploads.get(hash)
    const count = upload === undefined ? 0 : charmChunkCount(upload.manifest.size, upload.manifest.chunkBytes)
    const operations = Array.from({ length: count }, (_, index) => ({ type: 'del' as const, key: this.#chunkKey(hash, index) }))
    await this.#storage.batch([...operations, { type: 'del', key: this.#uploadPrefix + hash }], { sync: false })
    uploads.delete(hash)
  }
}

function checkHash (hash: string, component: string): void {
  if (typeof hash !== 'string' || !sha256Pattern.test(hash)) throw new InvalidInputError(component, 'a sha256 hex digest', hash)
}

function encodeUpload (upload: Upload, component: string): Uint8Array {
  return encode(upload, component)
}

function missingOf (upload: Upload): number[] {
  return upload.received.flatMap((received, index) => received ? [] : [index])
}

function sameManifest (a: CharmManifest, b: CharmManifest): boolean {
  return a.size === b.size && a.chunkBytes === b.chunkBytes && a.chunks.length === b.chunks.length && a.chunks.every((chunk, i) => chunk === b.chunks[i])
}
