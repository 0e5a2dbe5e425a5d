import { describeValue } from '../errors.ts'
import { limits } from '../limits.ts'

/**
 * How a charm archive travels: in chunks of `chunkBytes` (the last one shorter), each
 * named by its sha256, the whole named by the archive's sha256 (its content address, as
 * Juju names a charm by the sha256 of its archive). The uploader sends the manifest
 * first; the controller checks every chunk against it as it arrives and the whole
 * archive against `hash` before it accepts the archive, and answers the manifest to
 * whoever fetches the archive (peer controllers, machine agents), who check the same.
 * Pure: the hashing itself is done where node:crypto is (agent/charm/charm-chunks.ts).
 */
export interface CharmManifest {
  /** sha256 of the whole archive, lower-case hex. */
  readonly hash: string
  /** Bytes in the whole archive. */
  readonly size: number
  /** Bytes in every chunk but the last; at most limits.charmChunkBytesMax. */
  readonly chunkBytes: number
  /** sha256 of each chunk, in order. */
  readonly chunks: readonly string[]
}

export const sha256Pattern = /^[0-9a-f]{64}$/

/** Chunks an archive of `size` bytes is cut into (an empty archive is one empty chunk). */
export function charmChunkCount (size: number, chunkBytes: number): number {
  return Math.max(1, Math.ceil(size / chunkBytes))
}

/** Where chunk `index` starts and ends in the archive. */
export function charmChunkRange (manifest: Pick<CharmManifest, 'size' | 'chunkBytes'>, index: number): { start: number, end: number } {
  const start = index * manifest.chunkBytes
  return { start, end: Math.min(manifest.size, start + manifest.chunkBytes) }
}

/**
 * The manifest, or the one line saying what is wrong with it (`component: expected …,
 * got …`). An archive over limits.charmArchiveBytesMax is refused here, before any chunk.
 */
export function parseCharmManifest (value: unknown, component: string): CharmManifest | { invalid: string } {
  // `got` is a value from the wire (quoted, one line) or a figure rendered here (Rendered,
  // which nothing decoded from the wire can be).
  const fail = (expected: string, got: unknown): { invalid: string } =>
    ({ invalid: `${component}: expected ${expected}, got ${got instanceof Rendered ? got.text : describeValue(got)}` })
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('a charm manifest {hash, size, chunkBytes, chunks}', value)
  const { hash, size, chunkBytes, chunks } = value as Record<string, unknown>
  if (typeof hash !== 'string' || !sha256Pattern.test(hash)) return fail('a charm archive sha256 in lower-case hex', hash)
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) return fail('an archive size in bytes', size)
  if (size > limits.charmArchiveBytesMax) return fail(`a charm archive of at most ${limits.charmArchiveBytesMax} bytes`, new Rendered(`${size} bytes`))
  if (typeof chunkBytes !== 'number' || !Number.isSafeInteger(chunkBytes) || chunkBytes < 1 || chunkBytes > limits.charmChunkBytesMax) {
    return fail(`a chunk size of 1 to ${limits.charmChunkBytesMax} bytes`, chunkBytes)
  }
  const count = charmChunkCount(size, chunkBytes)
  if (!Array.isArray(chunks) || chunks.length !== count) return fail(`${count} chunk hashes for ${size} bytes in chunks of ${chunkBytes}`, Array.isArray(chunks) ? new Rendered(`${chunks.length}`) : chunks)
  for (const chunk of chunks) {
    if (typeof chunk !== 'string' || !sha256Pattern.test(chunk)) return fail('chunk hashes as sha256 in lower-case hex', chunk)
  }
  return { hash, size, chunkBytes, chunks: [...chunks as string[]] }
}

class Rendered {
  constructor (readonly text: string) {}
}

export function isInvalidManifest (parsed: CharmManifest | { invalid: string }): parsed is { invalid: string } {
  return 'invalid' in parsed
}

/** What a controller answers to the start of an upload. */
export interface CharmUploadState {
  /** The archive is stored whole already: nothing to send. */
  readonly complete: boolean
  /** Chunk indexes still to send, in order (all of them for a new upload, fewer when resuming). */
  readonly missing: readonly number[]
}
