import { decode, encode } from '../codec.ts'
import { InvalidInputError } from '../errors.ts'
import { limits } from '../limits.ts'
import type { Storage, StorageOperation } from '../storage.ts'
import type { RaftSnapshot } from './raft-types.ts'

/**
 * How a RaftSnapshot sits in a Storage. One that fits in a chunk is one value under
 * `raft/snapshot` (metadata and data), as it always was. A larger one keeps its metadata
 * and chunk count there, with empty data, and its data in chunks of
 * limits.raftSnapshotChunkBytes under `raft/snapshot-data/<n>`: no stored value, and no
 * single encode or decode, grows with the model (a 10,000-machine model is far past the
 * codec's 16 MiB frame). Every write of a snapshot goes in the caller's one atomic batch,
 * with the chunks of the previous one it no longer needs deleted.
 */
const component = 'durable raft storage'

export const raftSnapshotKey = 'raft/snapshot'
const chunkPrefix = 'raft/snapshot-data/'

function chunkKey (n: number): string {
  return chunkPrefix + String(n).padStart(8, '0')
}

/** Chunks the data of a snapshot of `bytes` bytes takes in storage: 0 when it is stored inline. */
export function storedChunkCount (bytes: number): number {
  return bytes <= limits.raftSnapshotChunkBytes ? 0 : Math.ceil(bytes / limits.raftSnapshotChunkBytes)
}

/** The writes that store `snapshot` in place of one whose data had `previousBytes` bytes. */
export function snapshotWrites (snapshot: RaftSnapshot, previousBytes: number): StorageOperation[] {
  const data = snapshot.data
  if (data.byteLength > limits.raftSnapshotBytesMax) {
    throw new InvalidInputError(component, `a RaftSnapshot of at most ${limits.raftSnapshotBytesMax} bytes`, data)
  }
  const chunks = storedChunkCount(data.byteLength)
  const operations: StorageOperation[] = []
  if (chunks === 0) {
    operations.push({ type: 'put', key: raftSnapshotKey, value: encode(snapshot, component) })
  } else {
    operations.push({ type: 'put', key: raftSnapshotKey, value: encode({ metadata: snapshot.metadata, data: new Uint8Array(0), chunks, bytes: data.byteLength }, component) })
    const size = limits.raftSnapshotChunkBytes
    for (let n = 0; n < chunks; n++) operations.push({ type: 'put', key: chunkKey(n), value: data.subarray(n * size, Math.min(data.byteLength, (n + 1) * size)) })
  }
  for (let n = chunks; n < storedChunkCount(previousBytes); n++) operations.push({ type: 'del', key: chunkKey(n) })
  return operations
}

/** The stored snapshot whose head is `headBytes` (read from raftSnapshotKey), its chunks read back and checked. */
export async function readStoredSnapshot (storage: Storage, headBytes: Uint8Array): Promise<RaftSnapshot> {
  const head = checkSnapshot(decode(headBytes, component))
  const { chunks, bytes } = head as { chunks?: unknown, bytes?: unknown }
  if (chunks === undefined) return head
  if (!Number.isSafeInteger(chunks) || !Number.isSafeInteger(bytes) || storedChunkCount(bytes as number) !== chunks || (bytes as number) > limits.raftSnapshotBytesMax) {
    throw new InvalidInputError(component, `a chunked RaftSnapshot of at most ${limits.raftSnapshotBytesMax} bytes in chunks of ${limits.raftSnapshotChunkBytes}`, { chunks, bytes })
  }
  const data = new Uint8Array(bytes as number)
  let offset = 0
  for (let n = 0; n < (chunks as number); n++) {
    const chunk = await storage.get(chunkKey(n))
    const expected = Math.min(limits.raftSnapshotChunkBytes, data.byteLength - offset)
    if (chunk === undefined || chunk.byteLength !== expected) {
      throw new InvalidInputError(component, `RaftSnapshot chunk ${n} of ${expected} bytes`, chunk)
    }
    data.set(chunk, offset)
    offset += chunk.byteLength
  }
  return { metadata: head.metadata, data }
}

function isRecord (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isIndex (value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0
}

function checkSnapshot (value: unknown): RaftSnapshot {
  const metadata = isRecord(value) ? value.metadata : undefined
  const config = isRecord(metadata) ? metadata.config : undefined
  if (!isRecord(value) || !isRecord(metadata) || !isIndex(metadata.index) || !isIndex(metadata.term) ||
    !isRecord(config) || !Array.isArray(config.voters) || !config.voters.every(v => typeof v === 'string') ||
    !(value.data instanceof Uint8Array)) {
    throw new InvalidInputError(component, 'a stored RaftSnapshot', value)
  }
  return value as unknown as RaftSnapshot
}
