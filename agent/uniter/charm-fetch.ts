/**
 * Deploys the charm a unit should run: looks up the URL's content address in the model,
 * fetches the archive's manifest and then its chunks from the controllers, checking each
 * chunk's length and sha256 against the manifest as it arrives and the whole against the
 * hash, and unpacks it (hash checked again, paths checked, everything written before it
 * appears) beside the unit's charm directory, then swaps it into place — so an upgrade
 * never leaves half a charm behind.
 */
import { randomUUID } from 'node:crypto'
import { rename, rm } from 'node:fs/promises'
import { unpackCharm } from '../charm/charm-archive.ts'
import { chunkProblem, sha256Hex } from '../charm/charm-chunks.ts'
import { charmChunkRange, isInvalidManifest, parseCharmManifest, type CharmManifest } from '../../runtime/charm/charm-manifest.ts'
import { CantripError } from '../../runtime/errors.ts'
import { readerOf } from '../../runtime/model/model-draft.ts'
import type { ModelContext } from '../../runtime/model/model-types.ts'

const component = 'charm fetch'

export interface CharmSource {
  model (): ModelContext
  /** The archive's manifest as a controller sent it (checked here), or undefined if no controller has it. */
  charmManifest (hash: string): Promise<unknown>
  charmChunk (hash: string, index: number): Promise<Uint8Array | undefined>
}

export async function deployCharmArchive (source: CharmSource, url: string, dir: string): Promise<void> {
  const record = readerOf(source.model()).charm(url)
  if (record === undefined) throw new Error(`charm ${JSON.stringify(url)}: not in the model`)
  const bytes = await fetchCharmArchive(source, record.hash, url)
  const fresh = `${dir}.new-${randomUUID()}`
  await unpackCharm(bytes, record.hash, fresh)
  const old = `${dir}.old-${randomUUID()}`
  await rename(dir, old).catch((error: NodeJS.ErrnoException) => { if (error.code !== 'ENOENT') throw error })
  await rename(fresh, dir)
  await rm(old, { recursive: true, force: true })
}

/** The archive `hash`, chunk by chunk into one buffer of the manifest's size; throws one line naming what is wrong. */
export async function fetchCharmArchive (source: Pick<CharmSource, 'charmManifest' | 'charmChunk'>, hash: string, url: string, subject = `${component}: charm ${JSON.stringify(url)}: archive ${JSON.stringify(hash.slice(0, 16))}`): Promise<Uint8Array> {
  const raw = await source.charmManifest(hash)
  if (raw === undefined) throw new CantripError(`${subject}: not in the controller's store`)
  const parsed = parseCharmManifest(raw, subject)
  if (isInvalidManifest(parsed)) throw new CantripError(parsed.invalid)
  const manifest: CharmManifest = parsed
  if (manifest.hash !== hash) throw new CantripError(`${subject}: expected its manifest, got that of ${JSON.stringify(manifest.hash.slice(0, 16))}`)
  const bytes = new Uint8Array(manifest.size)
  for (let index = 0; index < manifest.chunks.length; index++) {
    const chunk = await source.charmChunk(hash, index)
    if (chunk === undefined) throw new CantripError(`${subject}: chunk ${index} not in the controller's store`)
    const problem = chunkProblem(manifest, index, chunk)
    if (problem !== undefined) throw new CantripError(`${subject}: chunk ${index}: ${problem}`)
    bytes.set(chunk, charmChunkRange(manifest, index).start)
  }
  const actual = sha256Hex(bytes)
  if (actual !== hash) throw new CantripError(`${subject}: expected sha256 ${hash}, got sha256 ${actual}`)
  return bytes
}
