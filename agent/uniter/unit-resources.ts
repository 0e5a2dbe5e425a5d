/**
 * The unit's copies of its application's resources (`resource-get`): a file resource
 * lives at `<agent dir>/resources/<name>/<filename>`, as Juju's ResourcesHookContext keeps
 * it (internal/worker/uniter/runner/context/resources/context.go). A copy whose sha256 is
 * the application's current content is used as it is; otherwise the content is fetched
 * from the controllers' store by its address, checked, written beside the copy and renamed
 * over it, so a hook never sees half a file.
 *
 * The errors are Juju's: a name the charm does not declare is `resource "x" not found`;
 * a declared resource the operator never supplied is what Juju's local-charm opener says
 * when the controller has no content and no store to ask
 * (core/resources/resourceadapters/opener.go, noopClient):
 * `getting resource from charmhub: resource "x" not found`.
 */
import { randomUUID } from 'node:crypto'
import { sha256Hex as sha256 } from '../charm/charm-chunks.ts'
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { readerOf } from '../../runtime/model/model-draft.ts'
import type { ModelContext } from '../../runtime/model/model-types.ts'

export interface UnitResourceSource {
  model: ModelContext
  application: string
  /** `<agent dir>/resources`. */
  dir: string
  /** Content by address from the controllers' chunked store (agent/uniter/charm-fetch.ts). */
  fetch: ((hash: string) => Promise<Uint8Array | undefined>) | undefined
}

export async function unitResourcePath (source: UnitResourceSource, name: string): Promise<string> {
  const reader = readerOf(source.model)
  const app = reader.application(source.application)
  const charm = app === undefined ? undefined : reader.charm(app.charm)
  const declared = charm?.metadata.resources?.[name]
  if (app === undefined || declared === undefined) throw new Error(`resource ${JSON.stringify(name)} not found`)
  const supplied = app.resources?.[name]
  if (supplied === undefined) throw new Error(`getting resource from charmhub: resource ${JSON.stringify(name)} not found`)
  const path = join(source.dir, name, declared.filename === '' ? name : declared.filename)
  const current = await readFile(path).catch(() => undefined)
  if (current !== undefined && sha256(current) === supplied.hash) return path
  const bytes = await source.fetch?.(supplied.hash)
  if (bytes === undefined) throw new Error(`resource ${JSON.stringify(name)} revision ${supplied.revision}: content ${supplied.hash.slice(0, 16)} is in no controller's store`)
  if (sha256(bytes) !== supplied.hash) throw new Error(`resource ${JSON.stringify(name)} revision ${supplied.revision}: the controller sent other content than ${supplied.hash.slice(0, 16)}`)
  await mkdir(join(source.dir, name), { recursive: true })
  const fresh = `${path}.new-${randomUUID()}`
  try {
    await writeFile(fresh, bytes)
    await rename(fresh, path)
  } finally {
    await rm(fresh, { force: true })
  }
  return path
}
