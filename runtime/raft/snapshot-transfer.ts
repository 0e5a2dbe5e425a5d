import { decode, encode } from '../codec.ts'
import { InvalidInputError } from '../errors.ts'
import { limits } from '../limits.ts'
import type { Transport } from '../transport.ts'
import type { Message, NodeId } from './raft-types.ts'

/**
 * A leader's RaftSnapshot message travels in chunks, as the Raft paper's InstallSnapshot
 * RPC (offset, data, done) and etcd's snapshot sender stream it: the model a RaftSnapshot
 * carries outgrows one transport message (1 MiB) long before it outgrows memory, and sent
 * whole it was refused at the sender, so a follower that fell behind the leader's
 * compaction never caught up. The core still sees one `snapshot` message: the sender
 * splits its data, the receiver puts it together and steps the whole message.
 *
 * Each chunk is one request carrying the message with empty data, the offset, the total
 * size and the chunk's bytes; chunks go one at a time, each waiting for the answer to the
 * last, so a receiver holds one snapshot per sender at most.
 */
export const raftSnapshotProtocol = 'raft-snapshot/1'

const component = 'raft snapshot transfer'

interface Chunk { message: Message, offset: number, bytes: number, chunk: Uint8Array }

/**
 * Sends `message` (type `snapshot`) to `peer` chunk by chunk; resolves once the last chunk
 * is answered. `current` is asked before each chunk: a transfer a newer one replaced stops
 * quietly (resolving false).
 */
export async function sendSnapshotInChunks (transport: Transport, peer: NodeId, message: Message, timeoutMs: number, current: () => boolean): Promise<boolean> {
  const data = message.snapshot?.data ?? new Uint8Array(0)
  const header: Message = { ...message, snapshot: { metadata: message.snapshot!.metadata, data: new Uint8Array(0) } }
  const size = limits.raftSnapshotChunkBytes
  let offset = 0
  do {
    if (!current()) return false
    const chunk = data.subarray(offset, Math.min(data.byteLength, offset + size))
    const body: Chunk = { message: header, offset, bytes: data.byteLength, chunk }
    await transport.request(peer, raftSnapshotProtocol, encode(body, component), { timeoutMs })
    offset += chunk.byteLength
  } while (offset < data.byteLength)
  return true
}

interface Assembly { key: string, header: Message, data: Uint8Array, received: number }

/**
 * The receiving side: chunks from each sender in order, into one buffer per sender
 * (at most limits.raftSnapshotAssembliesMax senders at once). A chunk that does not fit
 * what is being assembled is refused with an InvalidInputError, which fails the sender's
 * request: the leader reports the snapshot failed and sends it again from the start.
 */
export class SnapshotAssembler {
  readonly #assemblies = new Map<NodeId, Assembly>()

  /** The whole `snapshot` message once `body` completed it; undefined while chunks are missing. */
  accept (from: NodeId, body: Uint8Array): Message | undefined {
    const { message, offset, bytes, chunk } = parseChunk(from, decode(body, component))
    const metadata = message.snapshot!.metadata
    const key = `${message.term}/${metadata.index}/${metadata.term}/${bytes}`
    let assembly = this.#assemblies.get(from)
    if (offset === 0) {
      this.#assemblies.delete(from)
      assembly = { key, header: message, data: new Uint8Array(bytes), received: 0 }
      this.#assemblies.set(from, assembly)
      // The oldest assembly goes first: Map keeps insertion order.
      while (this.#assemblies.size > limits.raftSnapshotAssembliesMax) this.#assemblies.delete(this.#assemblies.keys().next().value!)
    } else if (assembly === undefined || assembly.key !== key || assembly.received !== offset) {
      const expected = assembly === undefined || assembly.key !== key ? 'offset 0 (no snapshot being assembled)' : `offset ${assembly.received}`
      throw new InvalidInputError(component, `a chunk of RaftSnapshot ${key} from "${from}" at ${expected}`, `offset ${offset}`)
    }
    assembly.data.set(chunk, offset)
    assembly.received += chunk.byteLength
    if (assembly.received < bytes) return undefined
    this.#assemblies.delete(from)
    return { ...assembly.header, snapshot: { metadata, data: assembly.data } }
  }

  /** Senders with a snapshot half assembled (for tests and status). */
  get pending (): number {
    return this.#assemblies.size
  }
}

function parseChunk (from: NodeId, value: unknown): Chunk {
  const fail = (expected: string, got: unknown): never => { throw new InvalidInputError(component, expected, got) }
  if (typeof value !== 'object' || value === null) return fail('a RaftSnapshot chunk', value)
  const { message, offset, bytes, chunk } = value as Record<string, unknown>
  if (typeof message !== 'object' || message === null) return fail('a snapshot message in the chunk', message)
  const m = message as Partial<Message>
  if (m.type !== 'snapshot' || m.from !== from || typeof m.snapshot !== 'object' || m.snapshot === null || typeof m.snapshot.metadata !== 'object' || m.snapshot.metadata === null) {
    return fail(`a snapshot message from "${from}"`, `${String(m.type)} from ${String(m.from)}`)
  }
  if (!Number.isSafeInteger(bytes) || (bytes as number) < 0 || (bytes as number) > limits.raftSnapshotBytesMax) {
    return fail(`a RaftSnapshot of at most ${limits.raftSnapshotBytesMax} bytes`, bytes)
  }
  if (!Number.isSafeInteger(offset) || (offset as number) < 0 || (offset as number) > (bytes as number)) return fail(`an offset within ${String(bytes)} bytes`, offset)
  const expected = Math.min(limits.raftSnapshotChunkBytes, (bytes as number) - (offset as number))
  if (!(chunk instanceof Uint8Array) || chunk.byteLength !== expected) return fail(`a chunk of ${expected} bytes at offset ${String(offset)}`, chunk)
  return { message: m as Message, offset: offset as number, bytes: bytes as number, chunk }
}
