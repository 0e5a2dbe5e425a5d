/**
 * The controller API's charm operations (api-requests.ts): an archive's manifest and
 * chunks for whoever may fetch it, and an upload in three steps for admins (begin with
 * the manifest, send the missing chunks, commit). Requests are typed here from the wire
 * body, or refused with one line naming the component, what was expected and what
 * arrived; the store (CharmArchives) checks every chunk and the whole archive itself.
 */
import { isInvalidManifest, parseCharmManifest, sha256Pattern } from '../../runtime/charm/charm-manifest.ts'
import { describeValue } from '../../runtime/errors.ts'
import { limits } from '../../runtime/limits.ts'
import type { ApiRequests, ApiReplyBase } from './api-requests.ts'
import type { CharmArchives } from './controller-api.ts'

const component = 'charm store'

type Parsed<T> = T | { invalid: string }
type Body = Readonly<Record<string, unknown>>

const refuse = (expected: string, got: unknown): { invalid: string } => ({ invalid: `${component}: expected ${expected}, got ${describeValue(got)}` })

function hashOf (body: Body): string | { invalid: string } {
  return typeof body.hash === 'string' && sha256Pattern.test(body.hash) ? body.hash : refuse('a charm archive sha256 in lower-case hex', body.hash)
}

function indexOf (body: Body): number | { invalid: string } {
  return typeof body.index === 'number' && Number.isSafeInteger(body.index) && body.index >= 0 ? body.index : refuse('a chunk index (an integer from 0)', body.index)
}

function localOf (body: Body): { local?: boolean } | { invalid: string } {
  if (body.local === undefined) return {}
  return typeof body.local === 'boolean' ? { local: body.local } : refuse('"local" to be a boolean', body.local)
}

export function parseCharmManifestRequest (body: Body): Parsed<ApiRequests['charm-manifest']> {
  const hash = hashOf(body)
  const local = localOf(body)
  if (typeof hash !== 'string') return hash
  if ('invalid' in local) return local
  return { op: 'charm-manifest', hash, ...local }
}

export function parseCharmChunkRequest (body: Body): Parsed<ApiRequests['charm-chunk']> {
  const hash = hashOf(body)
  const index = indexOf(body)
  const local = localOf(body)
  if (typeof hash !== 'string') return hash
  if (typeof index !== 'number') return index
  if ('invalid' in local) return local
  return { op: 'charm-chunk', hash, index, ...local }
}

export function parsePutCharmBegin (body: Body): Parsed<ApiRequests['put-charm-begin']> {
  const manifest = parseCharmManifest(body.manifest, component)
  return isInvalidManifest(manifest) ? manifest : { op: 'put-charm-begin', manifest }
}

export function parsePutCharmChunk (body: Body): Parsed<ApiRequests['put-charm-chunk']> {
  const hash = hashOf(body)
  const index = indexOf(body)
  if (typeof hash !== 'string') return hash
  if (typeof index !== 'number') return index
  if (!(body.bytes instanceof Uint8Array)) return refuse('chunk bytes', body.bytes)
  if (body.bytes.byteLength > limits.charmChunkBytesMax) return { invalid: `${component}: expected a chunk of at most ${limits.charmChunkBytesMax} bytes, got ${body.bytes.byteLength} bytes` }
  return { op: 'put-charm-chunk', hash, index, bytes: body.bytes }
}

export function parsePutCharmCommit (body: Body): Parsed<ApiRequests['put-charm-commit']> {
  const hash = hashOf(body)
  return typeof hash === 'string' ? { op: 'put-charm-commit', hash } : hash
}

/** Runs `use` against this controller's store; a refusal or failure is the reply's one line. */
export async function withCharms<R extends ApiReplyBase> (charms: CharmArchives | undefined, use: (store: CharmArchives) => Promise<R>): Promise<R | { ok: false, error: string }> {
  if (charms === undefined) return { ok: false, error: `controller api: this controller keeps no charm archives` }
  try {
    return await use(charms)
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) }
  }
}
