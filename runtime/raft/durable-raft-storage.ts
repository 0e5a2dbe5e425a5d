import { assert } from '../assert.ts'
import { decode, encode } from '../codec.ts'
import { InvalidInputError } from '../errors.ts'
import { limits } from '../limits.ts'
import type { Storage, StorageOperation } from '../storage.ts'
import { MemoryRaftStorage } from './memory-raft-storage.ts'
import { bootstrapRaftState } from './raft-bootstrap.ts'
import type { RaftInitialState, RaftStorage } from './raft-storage.ts'
import type { ClusterConfig, Entry, HardState, NodeId, RaftSnapshot, Ready } from './raft-types.ts'
import { raftSnapshotKey, readStoredSnapshot, snapshotWrites } from './stored-snapshot.ts'

export { raftSnapshotKey } from './stored-snapshot.ts'

const component = 'durable raft storage'

export const raftHardStateKey = 'raft/hard-state'
export const raftLogPrefix = 'raft/log/'

/** Zero-padded so that the store's key order is the log's index order. */
export function raftLogKey (index: number): string {
  assert(Number.isSafeInteger(index) && index >= 0, `${component}: log index must be a whole number, got ${String(index)}`)
  return raftLogPrefix + String(index).padStart(16, '0')
}

/**
 * `RaftStorage` backed by a `Storage`, with a `MemoryRaftStorage` mirror of exactly what
 * the store holds: the Raft core reads synchronously from the mirror, and every Ready is
 * written in one atomic batch before the mirror changes, so the mirror never claims
 * anything a crash could take away (once the batch was synced).
 */
/**
 * Changes of the persisted log remembered for `lowestIndexChangedSince`; a reader further
 * behind than this rereads the whole log.
 */
export const persistedLogChangesKept = 64

export class DurableRaftStorage implements RaftStorage {
  readonly #storage: Storage
  readonly #memory: MemoryRaftStorage
  /** Bumped by every change of the mirror (log, RaftSnapshot or hard state). */
  #version = 0
  /** The latest changes: the version each made and the lowest log index it rewrote. */
  readonly #changes: Array<{ version: number, from: number }> = []
  /** The mirror's hard state differs from the stored one in its commit index only (persistReady). */
  #commitUnwritten = false

  private constructor (storage: Storage, memory: MemoryRaftStorage) {
    this.#storage = storage
    this.#memory = memory
  }

  /**
   * Reads the snapshot, hard state and log back from `storage`. An empty store with
   * `bootstrapVoters` becomes a founding member (written and synced before returning);
   * an empty store without them is a node that will learn everything from a leader.
   */
  static async load (storage: Storage, options: { bootstrapVoters?: readonly NodeId[] } = {}): Promise<DurableRaftStorage> {
    const snapshotBytes = await storage.get(raftSnapshotKey)
    const hardStateBytes = await storage.get(raftHardStateKey)
    if (snapshotBytes === undefined && hardStateBytes === undefined) {
      if (options.bootstrapVoters === undefined) return new DurableRaftStorage(storage, new MemoryRaftStorage())
      const init = bootstrapRaftState(options.bootstrapVoters)
      await storage.batch([
        { type: 'put', key: raftSnapshotKey, value: encode(init.snapshot, component) },
        { type: 'put', key: raftHardStateKey, value: encode(init.hardState, component) }
      ], { sync: true })
      return new DurableRaftStorage(storage, new MemoryRaftStorage(init))
    }
    const snapshot = snapshotBytes === undefined ? undefined : await readStoredSnapshot(storage, snapshotBytes)
    const hardState = hardStateBytes === undefined ? undefined : checkHardState(decode(hardStateBytes, component))
    const memory = new MemoryRaftStorage({
      ...(snapshot === undefined ? {} : { snapshot }),
      ...(hardState === undefined ? {} : { hardState })
    })
    const entries: Entry[] = []
    // Paged so that no single read is unbounded; each page continues after the last key.
    let after: string | undefined
    for (;;) {
      const page = await storage.range({
        ...(after === undefined ? { gte: raftLogPrefix } : { gt: after }),
        lt: raftLogPrefix + '~',
        limit: limits.storageRangeEntriesMax
      })
      for (const [key, value] of page) {
        const entry = checkEntry(decode(value, component))
        assert(key === raftLogKey(entry.index), `${component}: key "${key}" holds entry ${entry.index}`)
        const previous = entries[entries.length - 1]
        assert(previous === undefined || previous.index + 1 === entry.index,
          `${component}: log has a gap between ${previous?.index ?? 0} and ${entry.index}`)
        entries.push(entry)
      }
      if (page.length < limits.storageRangeEntriesMax) break
      after = page[page.length - 1]![0]
    }
    if (entries.length > 0) {
      assert(entries[0]!.index <= memory.lastIndex() + 1,
        `${component}: log starts at ${entries[0]!.index} but the RaftSnapshot ends at ${memory.lastIndex()}`)
      memory.append(entries)
    }
    return new DurableRaftStorage(storage, memory)
  }

  initialState (): RaftInitialState { return this.#memory.initialState() }
  firstIndex (): number { return this.#memory.firstIndex() }
  lastIndex (): number { return this.#memory.lastIndex() }
  term (index: number): number { return this.#memory.term(index) }
  entries (lo: number, hi: number, maxBytes: number): Entry[] { return this.#memory.entries(lo, hi, maxBytes) }
  snapshot (): RaftSnapshot { return this.#memory.snapshot() }
  hardState (): HardState { return this.#memory.hardState() }

  /**
   * A number that grows with every change of what this storage holds, so that checkers
   * following the log (sim/invariants/raft-safety.ts) can tell an unchanged log at once.
   */
  get version (): number { return this.#version }

  /**
   * The lowest log index whose entry was written or removed by the changes after
   * `version`: Infinity when none were (only the hard state, or compaction of a prefix
   * that is read through firstIndex), 0 when a RaftSnapshot replaced the log or `version`
   * is older than the changes kept.
   */
  lowestIndexChangedSince (version: number): number {
    if (version >= this.#version) return Infinity
    const oldest = this.#changes[0]
    if (oldest === undefined || oldest.version > version + 1) return 0
    let lowest = Infinity
    for (const change of this.#changes) if (change.version > version && change.from < lowest) lowest = change.from
    return lowest
  }

  #changed (from: number): void {
    this.#version++
    this.#changes.push({ version: this.#version, from })
    if (this.#changes.length > persistedLogChangesKept) this.#changes.shift()
  }

  /**
   * Persists the snapshot, entries and hard state of `ready` in one atomic batch, synced
   * when `ready.mustSync`, then updates the mirror. Resolves once the batch is written.
   */
  async persistReady (ready: Ready): Promise<void> {
    const operations: StorageOperation[] = []
    // Track what the log would look like, to know which stored keys to delete.
    let first = this.#memory.firstIndex()
    let last = this.#memory.lastIndex()
    if (ready.snapshot !== undefined) {
      // The RaftSnapshot replaces the whole log.
      for (let index = first; index <= last; index++) operations.push({ type: 'del', key: raftLogKey(index) })
      operations.push(...snapshotWrites(ready.snapshot, this.#memory.snapshot().data.byteLength))
      first = ready.snapshot.metadata.index + 1
      last = ready.snapshot.metadata.index
    }
    const fresh = ready.entries.filter(entry => entry.index >= first)
    if (fresh.length > 0) {
      const newLast = fresh[fresh.length - 1]!.index
      assert(fresh[0]!.index <= last + 1, `${component}: cannot append at ${fresh[0]!.index}: the log ends at ${last}`)
      for (const entry of fresh) operations.push({ type: 'put', key: raftLogKey(entry.index), value: encode(entry, component) })
      // A new leader's entries replace a conflicting tail: everything past them goes.
      for (let index = newLast + 1; index <= last; index++) operations.push({ type: 'del', key: raftLogKey(index) })
    }
    const hardState = ready.hardState ?? (this.#commitUnwritten && operations.length > 0 ? this.#memory.hardState() : undefined)
    if (hardState !== undefined && (operations.length > 0 || !this.#onlyCommitMoved(ready))) {
      operations.push(this.#hardStateWrite(hardState))
    } else if (ready.hardState !== undefined) {
      // Only the commit index moved: it is kept in the mirror and written with the next
      // batch (or by flushCommit at a graceful stop), not in a write of its own. A restart
      // that finds an older one learns it again from the leader, as it would have after a
      // crash before this unsynced write reached the disk (Raft thesis §3.8: commitIndex is
      // volatile state). This saves each controller a LevelDB write per committed write.
      this.#memory.setHardState(ready.hardState)
      this.#commitUnwritten = true
      this.#changed(Infinity)
      return
    }
    if (operations.length === 0) return
    assert(operations.length <= limits.storageBatchOperationsMax,
      `${component}: one Ready needs ${operations.length} writes, more than ${limits.storageBatchOperationsMax}`)
    await this.#storage.batch(operations, { sync: ready.mustSync })
    if (ready.snapshot !== undefined) this.#memory.applySnapshot(ready.snapshot)
    if (fresh.length > 0) this.#memory.append(fresh)
    if (ready.hardState !== undefined) this.#memory.setHardState(ready.hardState)
    this.#changed(ready.snapshot !== undefined ? 0 : fresh.length > 0 ? fresh[0]!.index : Infinity)
  }

  /** Whether `ready` changes nothing but the commit index (no entries, snapshot, term or vote; no sync needed). */
  #onlyCommitMoved (ready: Ready): boolean {
    if (ready.mustSync || ready.snapshot !== undefined || ready.entries.length > 0 || ready.hardState === undefined) return false
    const stored = this.#memory.hardState()
    return ready.hardState.term === stored.term && ready.hardState.vote === stored.vote
  }

  /** Writes the commit index kept only in the mirror (see persistReady), if any: at a graceful stop. */
  async flushCommit (): Promise<void> {
    if (!this.#commitUnwritten) return
    this.#commitUnwritten = false
    await this.#storage.batch([this.#hardStateWrite(this.#memory.hardState())], { sync: true })
  }

  /** The put of `hardState`; whatever commit index was kept back goes with it. */
  #hardStateWrite (hardState: HardState): StorageOperation {
    this.#commitUnwritten = false
    return { type: 'put', key: raftHardStateKey, value: encode(hardState, component) }
  }

  /**
   * Log compaction: records a RaftSnapshot of the applied state machine at `index` (with
   * the membership as of `index`) and deletes every stored entry up to it, in one synced
   * batch, then does the same to the mirror. The stored log then starts right after the
   * RaftSnapshot, exactly as the mirror does; a follower that still needs the deleted
   * entries is sent the RaftSnapshot instead. Call it only between Readies, at or below
   * the applied index.
   */
  async compact (index: number, config: ClusterConfig, data: Uint8Array): Promise<RaftSnapshot> {
    const previous = this.#memory.snapshot().metadata.index
    assert(index > previous, `${component}: RaftSnapshot at ${index} is not newer than the one at ${previous}`)
    assert(index <= this.#memory.lastIndex(), `${component}: cannot take a RaftSnapshot at ${index}: the log ends at ${this.#memory.lastIndex()}`)
    const snapshot: RaftSnapshot = {
      metadata: { index, term: this.#memory.term(index), config: { voters: [...config.voters].sort() } },
      data
    }
    const operations: StorageOperation[] = snapshotWrites(snapshot, this.#memory.snapshot().data.byteLength)
    // A RaftSnapshot on disk past the stored commit index would claim less committed than it holds.
    if (this.#commitUnwritten) operations.push(this.#hardStateWrite(this.#memory.hardState()))
    for (let at = this.#memory.firstIndex(); at <= index; at++) operations.push({ type: 'del', key: raftLogKey(at) })
    assert(operations.length <= limits.storageBatchOperationsMax,
      `${component}: compacting to ${index} needs ${operations.length} writes, more than ${limits.storageBatchOperationsMax}`)
    await this.#storage.batch(operations, { sync: true })
    this.#memory.createSnapshot(index, snapshot.metadata.config, data)
    this.#memory.compact(index)
    this.#changed(Infinity)
    return snapshot
  }
}

function isRecord (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isIndex (value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0
}

function checkHardState (value: unknown): HardState {
  if (!isRecord(value) || !isIndex(value.term) || typeof value.vote !== 'string' || !isIndex(value.commit)) {
    throw new InvalidInputError(component, 'a stored hard state', value)
  }
  return { term: value.term, vote: value.vote, commit: value.commit }
}

function checkEntry (value: unknown): Entry {
  if (!isRecord(value) || !isIndex(value.index) || !isIndex(value.term) ||
    (value.type !== 'normal' && value.type !== 'config-change') || !(value.data instanceof Uint8Array)) {
    throw new InvalidInputError(component, 'a stored log entry', value)
  }
  return value as unknown as Entry
}
