/**
 * Uploads a charm archive to one controller in chunks (runtime/charm/charm-manifest.ts):
 * the manifest first, whose reply lists the chunks the controller still lacks (all of
 * them, or only the rest when an earlier upload of the same archive was interrupted),
 * then those chunks one request each, then the commit, which the controller answers once
 * it has checked the whole archive and a majority of the controllers hold it. Chunks are
 * views of the archive, so the client holds the archive once, whatever its size.
 */
import type { CharmChunkPutReply, CharmCommitReply, CharmUploadReply } from '../../actors/controller/api-requests.ts'
import type { CharmManifest } from '../../runtime/charm/charm-manifest.ts'
import { CantripError } from '../../runtime/errors.ts'
import { charmChunk, charmManifestOf } from './charm-chunks.ts'

/** The controller being uploaded to, one request per call; transport failures reject. */
export interface UploadTarget {
  begin (manifest: CharmManifest): Promise<CharmUploadReply>
  chunk (hash: string, index: number, bytes: Uint8Array): Promise<CharmChunkPutReply>
  commit (hash: string): Promise<CharmCommitReply>
}

/** The controller refused the upload (a bad chunk, a hash that does not match, too large): final, one line. */
export class CharmUploadRefusedError extends CantripError {
  override name = 'CharmUploadRefusedError'
}

export interface UploadResult {
  readonly hash: string
  /** Chunks sent by this call. */
  readonly sent: number
  /** Chunks the controller held already (a resumed upload), or all of them for an archive it had. */
  readonly skipped: number
}

export async function uploadCharm (target: UploadTarget, bytes: Uint8Array, manifest: CharmManifest = charmManifestOf(bytes)): Promise<UploadResult> {
  const begun = refused(await target.begin(manifest))
  const total = manifest.chunks.length
  if (begun.complete) return { hash: manifest.hash, sent: 0, skipped: total }
  for (const index of begun.missing) {
    refused(await target.chunk(manifest.hash, index, charmChunk(bytes, manifest, index)))
  }
  const committed = refused(await target.commit(manifest.hash))
  return { hash: committed.hash, sent: begun.missing.length, skipped: total - begun.missing.length }
}

function refused<R extends { ok: boolean }> (reply: R): Extract<R, { ok: true }> {
  if (reply.ok) return reply as Extract<R, { ok: true }>
  const error = (reply as { error?: unknown }).error
  throw new CharmUploadRefusedError(typeof error === 'string' ? error : 'charm store: the upload was refused')
}
