import { assert } from '../assert.ts'
import { limitSize } from './entry-size.ts'
import type { RaftStorage } from './raft-storage.ts'
import type { Entry, RaftSnapshot } from './raft-types.ts'
import { RaftUnstable } from './raft-unstable.ts'

/** Where a follower's log first disagrees with a leader's append, for fast back-off. */
export interface ConflictHint {
  index: number
  /** 0 when the term at `index` is no longer known (compacted). */
  term: number
}

export type AppendOutcome =
  | { kind: 'appended', lastNewIndex: number, appended: readonly Entry[] }
  | { kind: 'mismatch' }
  | { kind: 'contradicts-committed', index: number }

/**
 * One node's view of the log: the host's stable RaftStorage below, the unstable tail
 * above, and the commit and applied positions. Invariant:
 * `firstIndex() - 1 <= applied <= committed <= lastIndex()`.
 */
export class RaftLog {
  readonly storage: RaftStorage
  readonly unstable: RaftUnstable
  committed: number
  applied: number

  constructor (storage: RaftStorage) {
    this.storage = storage
    this.unstable = new RaftUnstable(storage.lastIndex() + 1)
    this.committed = storage.firstIndex() - 1
    this.applied = storage.firstIndex() - 1
  }

  firstIndex (): number {
    return this.unstable.firstIndex() ?? this.storage.firstIndex()
  }

  lastIndex (): number {
    return this.unstable.lastIndex() ?? this.storage.lastIndex()
  }

  lastTerm (): number {
    const term = this.term(this.lastIndex())
    assert(term !== undefined, `raft log: term of the last index ${this.lastIndex()} is unknown`)
    return term
  }

  /** The term at `index`, or undefined if it was compacted away or is beyond the log. */
  term (index: number): number | undefined {
    if (index < this.firstIndex() - 1 || index > this.lastIndex()) return undefined
    const unstable = this.unstable.term(index)
    if (unstable !== undefined) return unstable
    assert(index <= this.storage.lastIndex(),
      `raft log: entry ${index} is neither unstable nor stored (storage ends at ${this.storage.lastIndex()}); was a Ready not persisted before advance()?`)
    return this.storage.term(index)
  }

  matchTerm (index: number, term: number): boolean {
    return this.term(index) === term
  }

  /** Raft §5.4.1: a candidate's log is at least as up to date as ours. */
  isUpToDate (lastIndex: number, lastTerm: number): boolean {
    const ourTerm = this.lastTerm()
    return lastTerm > ourTerm || (lastTerm === ourTerm && lastIndex >= this.lastIndex())
  }

  /** The first entry whose term disagrees with ours or that we lack; 0 if we hold them all. */
  findConflict (entries: readonly Entry[]): number {
    for (const entry of entries) {
      if (!this.matchTerm(entry.index, entry.term)) return entry.index
    }
    return 0
  }

  /**
   * The largest index at or below `index` whose term is at most `term`: every entry
   * after it up to `index` certainly disagrees with a log whose entry at `index` has
   * `term`, so back-off can skip a whole term per round trip instead of an entry.
   */
  findConflictByTerm (index: number, term: number): ConflictHint {
    for (let i = index; i > 0; i--) {
      const ours = this.term(i)
      if (ours === undefined) return { index: i, term: 0 }
      if (ours <= term) return { index: i, term: ours }
    }
    return { index: 0, term: 0 }
  }

  /**
   * A follower takes entries after (`prevIndex`, `prevTerm`) if its log matches there.
   * On success: the last index the leader's message proves we share, and what was
   * appended. An entry that contradicts a committed one cannot come from a genuine
   * leader (Leader Completeness); it is reported rather than applied.
   */
  maybeAppend (prevIndex: number, prevTerm: number, leaderCommit: number, entries: readonly Entry[]): AppendOutcome {
    if (!this.matchTerm(prevIndex, prevTerm)) return { kind: 'mismatch' }
    const conflict = this.findConflict(entries)
    if (conflict !== 0 && conflict <= this.committed) return { kind: 'contradicts-committed', index: conflict }
    const lastNewIndex = prevIndex + entries.length
    let appended: readonly Entry[] = []
    if (conflict !== 0) {
      appended = entries.slice(conflict - prevIndex - 1)
      this.append(appended)
    }
    // Only what this message proves matches may be committed: our log beyond
    // lastNewIndex may still disagree with the leader's.
    this.commitTo(Math.min(leaderCommit, lastNewIndex))
    return { kind: 'appended', lastNewIndex, appended }
  }

  append (entries: readonly Entry[]): number {
    if (entries.length === 0) return this.lastIndex()
    const after = entries[0]!.index - 1
    assert(after >= this.committed, `raft log: append after ${after} would rewrite committed entries (committed ${this.committed})`)
    assert(after <= this.lastIndex(), `raft log: append after ${after} leaves a gap (last index ${this.lastIndex()})`)
    this.unstable.truncateAndAppend(entries)
    return this.lastIndex()
  }

  /** Entries from `lo` to the end, size-limited; undefined if `lo` was compacted. */
  entriesFrom (lo: number, maxBytes: number): Entry[] | undefined {
    if (lo > this.lastIndex()) return []
    return this.slice(lo, this.lastIndex() + 1, maxBytes)
  }

  /** Entries `[lo, hi)`, size-limited (at least one); undefined if `lo` was compacted. */
  slice (lo: number, hi: number, maxBytes: number): Entry[] | undefined {
    if (lo < this.firstIndex()) return undefined
    assert(lo <= hi && hi <= this.lastIndex() + 1, `raft log: slice [${lo}, ${hi}) is beyond the last index ${this.lastIndex()}`)
    if (lo === hi) return []
    const offset = this.unstable.offset
    let result: Entry[] = []
    if (lo < offset) {
      const stableHi = Math.min(hi, offset)
      result = this.storage.entries(lo, stableHi, maxBytes)
      assert(result.length > 0 && result[0]!.index === lo, `raft log: storage returned no entries from ${lo}`)
      if (result.length < stableHi - lo) return result
    }
    if (hi > offset) result = result.concat(this.unstable.slice(Math.max(lo, offset), hi))
    return limitSize(result, maxBytes)
  }

  commitTo (index: number): void {
    if (index <= this.committed) return
    assert(index <= this.lastIndex(),
      `raft log: commit ${index} is beyond the last index ${this.lastIndex()}; was the log truncated or lost?`)
    this.committed = index
  }

  /** Figure 8: a leader commits by counting replicas only for entries of its own term. */
  maybeCommit (index: number, term: number): boolean {
    if (index <= this.committed || this.term(index) !== term) return false
    this.commitTo(index)
    return true
  }

  appliedTo (index: number): void {
    assert(index >= this.applied && index <= this.committed,
      `raft log: applied ${index} is outside [${this.applied}, ${this.committed}]`)
    this.applied = index
  }

  hasNextCommittedEntries (): boolean {
    return this.unstable.snapshot === undefined && this.committed > this.applied
  }

  /** Committed entries not yet handed out, bounded in count and size; none while a RaftSnapshot is pending. */
  nextCommittedEntries (maxCount: number, maxBytes: number): Entry[] {
    if (!this.hasNextCommittedEntries()) return []
    const lo = this.applied + 1
    assert(lo >= this.firstIndex(),
      `raft log: committed entry ${lo} was compacted before it was applied; compact only up to the applied index`)
    return this.slice(lo, Math.min(this.committed + 1, lo + maxCount), maxBytes) ?? []
  }

  restore (snapshot: RaftSnapshot): void {
    this.committed = snapshot.metadata.index
    this.unstable.restore(snapshot)
  }

  /** The RaftSnapshot to send a lagging follower. */
  snapshot (): RaftSnapshot {
    return this.unstable.snapshot ?? this.storage.snapshot()
  }
}
