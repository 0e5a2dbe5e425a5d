import { assert, assertSafeInteger } from '../assert.ts'
import { limitSize } from './entry-size.ts'
import { bootstrapRaftState } from './raft-bootstrap.ts'
import type { RaftInitialState, RaftStorage } from './raft-storage.ts'
import type { ClusterConfig, Entry, HardState, NodeId, RaftSnapshot } from './raft-types.ts'

/**
 * `RaftStorage` held in memory, with the writes a host makes while handling a `Ready`:
 * `append`, `setHardState`, `applySnapshot`, and, for log compaction, `createSnapshot`
 * followed by `compact`. Tests use it directly; a durable host can keep one as its
 * in-memory mirror of what it has synced to disk.
 */
export class MemoryRaftStorage implements RaftStorage {
  #hardState: HardState
  #snapshot: RaftSnapshot
  /** `#entries[0]` stands for the RaftSnapshot: it carries only its index and term. */
  #entries: Entry[]

  /** Without arguments: an empty node that will learn everything from a leader. */
  constructor (init: { snapshot?: RaftSnapshot, hardState?: HardState } = {}) {
    this.#snapshot = init.snapshot ?? { metadata: { index: 0, term: 0, config: { voters: [] } }, data: new Uint8Array(0) }
    this.#hardState = { ...(init.hardState ?? { term: 0, vote: '', commit: 0 }) }
    this.#entries = [placeholder(this.#snapshot)]
  }

  /** A founding member of a new group (see `bootstrapRaftState`). */
  static bootstrap (voters: readonly NodeId[]): MemoryRaftStorage {
    return new MemoryRaftStorage(bootstrapRaftState(voters))
  }

  initialState (): RaftInitialState {
    return { hardState: { ...this.#hardState }, config: this.#snapshot.metadata.config }
  }

  firstIndex (): number {
    return this.#offset() + 1
  }

  lastIndex (): number {
    return this.#offset() + this.#entries.length - 1
  }

  term (index: number): number {
    assert(index >= this.#offset() && index <= this.lastIndex(),
      `raft storage: term of ${index} is outside [${this.#offset()}, ${this.lastIndex()}]`)
    return this.#entries[index - this.#offset()]!.term
  }

  entries (lo: number, hi: number, maxBytes: number): Entry[] {
    assert(lo >= this.firstIndex() && lo < hi && hi <= this.lastIndex() + 1,
      `raft storage: entries [${lo}, ${hi}) are outside [${this.firstIndex()}, ${this.lastIndex() + 1})`)
    const offset = this.#offset()
    return limitSize(this.#entries.slice(lo - offset, hi - offset), maxBytes)
  }

  snapshot (): RaftSnapshot {
    return this.#snapshot
  }

  hardState (): HardState {
    return { ...this.#hardState }
  }

  setHardState (hardState: HardState): void {
    assertSafeInteger(hardState.term, 'raft storage: hard state term')
    assertSafeInteger(hardState.commit, 'raft storage: hard state commit')
    this.#hardState = { ...hardState }
  }

  /**
   * Persist entries from a Ready. They may overwrite the tail of the log (a follower
   * whose uncommitted entries lost to a new leader): everything from the first new
   * index on is replaced. Entries at or below the RaftSnapshot are already covered.
   */
  append (entries: readonly Entry[]): void {
    if (entries.length === 0) return
    const first = this.firstIndex()
    const last = entries[entries.length - 1]!.index
    if (last < first) return
    const fresh = entries[0]!.index < first ? entries.slice(first - entries[0]!.index) : entries
    const at = fresh[0]!.index - this.#offset()
    assert(at <= this.#entries.length,
      `raft storage: cannot append at ${fresh[0]!.index}: the log ends at ${this.lastIndex()}`)
    // In place: copying the whole log on every append made a long log (the agents keep
    // 10,000 entries between RaftSnapshots) cost its length on every Ready. Readers only
    // ever get copies (entries() slices), so nobody sees the array change.
    this.#entries.length = at
    for (const entry of fresh) this.#entries.push(entry)
  }

  /** Replace the whole log by a RaftSnapshot received from the leader (Ready.snapshot). */
  applySnapshot (snapshot: RaftSnapshot): void {
    assert(snapshot.metadata.index >= this.#snapshot.metadata.index,
      `raft storage: RaftSnapshot at ${snapshot.metadata.index} is older than the one held at ${this.#snapshot.metadata.index}`)
    this.#snapshot = snapshot
    this.#entries = [placeholder(snapshot)]
  }

  /**
   * Record a RaftSnapshot of the applied state machine at `index` (at most the applied
   * index), with the membership as of `index`. Lagging followers are sent the latest one.
   */
  createSnapshot (index: number, config: ClusterConfig, data: Uint8Array): RaftSnapshot {
    assert(index >= this.#snapshot.metadata.index,
      `raft storage: RaftSnapshot at ${index} would be older than the one held at ${this.#snapshot.metadata.index}`)
    assert(index <= this.lastIndex(), `raft storage: RaftSnapshot at ${index} is beyond the last index ${this.lastIndex()}`)
    this.#snapshot = { metadata: { index, term: this.term(index), config: { voters: [...config.voters].sort() } }, data }
    return this.#snapshot
  }

  /**
   * Discard entries up to and including `index`. A RaftSnapshot covering `index` must
   * exist first, or a follower that needs those entries could never catch up.
   */
  compact (index: number): void {
    const offset = this.#offset()
    if (index <= offset) return
    assert(index <= this.#snapshot.metadata.index,
      `raft storage: cannot compact to ${index}: take a RaftSnapshot there first (latest is at ${this.#snapshot.metadata.index})`)
    const kept = this.#entries[index - offset]!
    const stub: Entry = { term: kept.term, index: kept.index, type: 'normal', data: new Uint8Array(0) }
    this.#entries = [stub].concat(this.#entries.slice(index - offset + 1))
  }

  #offset (): number {
    return this.#entries[0]!.index
  }
}

function placeholder (snapshot: RaftSnapshot): Entry {
  return { term: snapshot.metadata.term, index: snapshot.metadata.index, type: 'normal', data: new Uint8Array(0) }
}
