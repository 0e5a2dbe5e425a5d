import { createHash } from 'node:crypto'
import { charmChunkCount, charmChunkRange, type CharmManifest } from '../../runtime/charm/charm-manifest.ts'
import { limits } from '../../runtime/limits.ts'

/**
 * The chunk manifest of an archive held in memory (runtime/charm/charm-manifest.ts):
 * its sha256, its size and each chunk's sha256. The chunks are views of `bytes`, never
 * copies, so cutting a 30 MB archive costs no second 30 MB.
 */

export function sha256Hex (bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex')
}

export function charmManifestOf (bytes: Uint8Array, chunkBytes: number = limits.charmChunkBytesMax): CharmManifest {
  const hash = sha256Hex(bytes)
  const size = bytes.byteLength
  const chunks: string[] = []
  for (let index = 0; index < charmChunkCount(size, chunkBytes); index++) chunks.push(sha256Hex(charmChunk(bytes, { size, chunkBytes }, index)))
  return { hash, size, chunkBytes, chunks }
}

/** Chunk `index` of `bytes`, as a view. */
export function charmChunk (bytes: Uint8Array, manifest: Pick<CharmManifest, 'size' | 'chunkBytes'>, index: number): Uint8Array {
  const { start, end } = charmChunkRange(manifest, index)
  return bytes.subarray(start, end)
}

/**
 * Why `bytes` is not chunk `index` of `manifest` (its length, then its sha256), as the
 * "expected …, got …" half of a refusal; undefined when it is.
 */
export function chunkProblem (manifest: CharmManifest, index: number, bytes: Uint8Array): string | undefined {
  const { start, end } = charmChunkRange(manifest, index)
  if (bytes.byteLength !== end - start) return `expected ${end - start} bytes, got ${bytes.byteLength} bytes`
  const actual = sha256Hex(bytes)
  const expected = manifest.chunks[index]!
  return actual === expected ? undefined : `expected sha256 ${expected}, got sha256 ${actual}`
}
