import type { ClusterConfig, Entry, HardState, RaftSnapshot } from './raft-types.ts'

/** What the host persisted, read back when a node starts. */
export interface RaftInitialState {
  hardState: HardState
  /**
   * The membership as of the storage's RaftSnapshot (index `firstIndex() - 1`). The node
   * replays the config-change entries after it itself, because a configuration takes
   * effect when it is appended (dissertation §4.1), not when it is applied.
   */
  config: ClusterConfig
}

/**
 * The stable part of the log, as the host persisted it; the Raft core only reads it.
 * Reads are synchronous: the host keeps what it persisted in memory or can read it
 * back at once. The host writes through its own implementation (see
 * `MemoryRaftStorage`) while handling a `Ready`, never from inside a RawNode call.
 *
 * Index ranges follow etcd: entries `firstIndex()..lastIndex()` are available, and
 * `firstIndex() - 1` is the index of the latest RaftSnapshot, whose term is still known.
 */
export interface RaftStorage {
  initialState (): RaftInitialState
  firstIndex (): number
  lastIndex (): number
  /** Term of the entry at `index`, for `firstIndex() - 1 <= index <= lastIndex()`. */
  term (index: number): number
  /**
   * Entries `[lo, hi)` for `firstIndex() <= lo < hi <= lastIndex() + 1`, stopping once
   * their size passes `maxBytes` but always returning at least one entry.
   */
  entries (lo: number, hi: number, maxBytes: number): Entry[]
  /** The latest RaftSnapshot, at index `firstIndex() - 1` or later. */
  snapshot (): RaftSnapshot
}
