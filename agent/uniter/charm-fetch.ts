/**
 * Deploys the charm a unit should run: looks up the URL's content address in the model,
 * fetches the archive by it, and unpacks it (hash checked, paths checked, everything
 * written before it appears) beside the unit's charm directory, then swaps it into place
 * — so an upgrade never leaves half a charm behind.
 */
import { randomUUID } from 'node:crypto'
import { rename, rm } from 'node:fs/promises'
import { unpackCharm } from '../charm/charm-archive.ts'
import { readerOf } from '../../runtime/model/model-draft.ts'
import type { ModelContext } from '../../runtime/model/model-types.ts'

export interface CharmSource {
  model (): ModelContext
  charmArchive (hash: string): Promise<Uint8Array | undefined>
}

export async function deployCharmArchive (source: CharmSource, url: string, dir: string): Promise<void> {
  const record = readerOf(source.model()).charm(url)
  if (record === undefined) throw new Error(`charm ${JSON.stringify(url)}: not in the model`)
  const bytes = await source.charmArchive(record.hash)
  if (bytes === undefined) throw new Error(`charm ${JSON.stringify(url)}: archive ${record.hash.slice(0, 16)} not in the controller's store`)
  const fresh = `${dir}.new-${randomUUID()}`
  await unpackCharm(bytes, record.hash, fresh)
  const old = `${dir}.old-${randomUUID()}`
  await rename(dir, old).catch((error: NodeJS.ErrnoException) => { if (error.code !== 'ENOENT') throw error })
  await rename(fresh, dir)
  await rm(old, { recursive: true, force: true })
}
