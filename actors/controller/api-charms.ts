/**
 * The controller API's charm operations (api-requests.ts), which also serve the agent
 * bundles (`store: 'agent'`, kept the same way): an archive's manifest and
 * chunks for whoever may fetch it, and an upload in three steps for admins (begin with
 * the manifest, send the missing chunks, commit). Requests are typed here from the wire
 * body, or refused with one line naming the component, what was expected and what
 * arrived; the store (CharmArchives) checks every chunk and the whole archive itself.
 */
import { isInvalidManifest, parseCharmManifest, sha256Pattern } from '../../runtime/charm/charm-manifest.ts'
import { describeValue } from '../../runtime/errors.ts'
import { limits } from '../../runtime/limits.ts'
import type { ApiRequests, ApiReplyBase, StoreSelector } from './api-requests.ts'
import type { ApiExtras, CharmArchives } from './controller-api.ts'

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

function storeOf (body: Body): { store?: 'agent' } | { invalid: string } {
  if (body.store === undefined || body.store === 'charm') return {}
  return body.store === 'agent' ? { store: 'agent' } : refuse('"store" to be "charm" or "agent"', body.store)
}

function localOf (body: Body): { local?: boolean } | { invalid: string } {
  if (body.local === undefined) return {}
  return typeof body.local === 'boolean' ? { local: body.local } : refuse('"local" to be a boolean', body.local)
}

export function parseCharmManifestRequest (body: Body): Parsed<ApiRequests['charm-manifest']> {
  const hash = hashOf(body)
  const local = localOf(body)
  const store = storeOf(body)
  if (typeof hash !== 'string') return hash
  if ('invalid' in local) return local
  if ('invalid' in store) return store
  return { op: 'charm-manifest', hash, ...local, ...store }
}

export function parseCharmChunkRequest (body: Body): Parsed<ApiRequests['charm-chunk']> {
  const hash = hashOf(body)
  const index = indexOf(body)
  const local = localOf(body)
  const store = storeOf(body)
  if (typeof hash !== 'string') return hash
  if (typeof index !== 'number') return index
  if ('invalid' in local) return local
  if ('invalid' in store) return store
  return { op: 'charm-chunk', hash, index, ...local, ...store }
}

export function parsePutCharmBegin (body: Body): Parsed<ApiRequests['put-charm-begin']> {
  const manifest = parseCharmManifest(body.manifest, component)
  const store = storeOf(body)
  if ('invalid' in store) return store
  return isInvalidManifest(manifest) ? manifest : { op: 'put-charm-begin', manifest, ...store }
}

export function parsePutCharmChunk (body: Body): Parsed<ApiRequests['put-charm-chunk']> {
  const hash = hashOf(body)
  const index = indexOf(body)
  const store = storeOf(body)
  if (typeof hash !== 'string') return hash
  if (typeof index !== 'number') return index
  if ('invalid' in store) return store
  if (!(body.bytes instanceof Uint8Array)) return refuse('chunk bytes', body.bytes)
  if (body.bytes.byteLength > limits.charmChunkBytesMax) return { invalid: `${component}: expected a chunk of at most ${limits.charmChunkBytesMax} bytes, got ${body.bytes.byteLength} bytes` }
  return { op: 'put-charm-chunk', hash, index, bytes: body.bytes, ...store }
}

export function parsePutCharmCommit (body: Body): Parsed<ApiRequests['put-charm-commit']> {
  const hash = hashOf(body)
  const store = storeOf(body)
  if ('invalid' in store) return store
  return typeof hash === 'string' ? { op: 'put-charm-commit', hash, ...store } : hash
}

/**
 * Runs `use` against the store the request names (charm archives, or agent bundles with
 * `store: 'agent'`); a refusal or failure is the reply's one line.
 */
export async function withCharms<R extends ApiReplyBase> (stores: { charms: CharmArchives | undefined, extras: ApiExtras }, request: StoreSelector, use: (store: CharmArchives) => Promise<R>): Promise<R | { ok: false, error: string }> {
  const charms = request.store === 'agent' ? stores.extras.agentBinaries : stores.charms
  if (charms === undefined) return { ok: false, error: `controller api: this controller keeps no ${request.store === 'agent' ? 'agent bundles' : 'charm archives'}` }
  try {
    return await use(charms)
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) }
  }
}
