import { assert } from '../assert.ts'
import type { Entry, RaftSnapshot } from './raft-types.ts'

/**
 * The part of the log the host has not persisted yet (etcd's `unstable`): entries from
 * `offset` on, and possibly a RaftSnapshot received from the leader. Everything below
 * `offset` is in the host's RaftStorage. Entries here may replace a tail of storage
 * that lost to a new leader; reads prefer this part for indexes at or above `offset`.
 */
export class RaftUnstable {
  snapshot: RaftSnapshot | undefined
  entries: Entry[] = []
  offset: number

  constructor (offset: number) {
    this.offset = offset
  }

  /** The first index after an incoming RaftSnapshot, if there is one. */
  firstIndex (): number | undefined {
    return this.snapshot === undefined ? undefined : this.snapshot.metadata.index + 1
  }

  lastIndex (): number | undefined {
    if (this.entries.length > 0) return this.offset + this.entries.length - 1
    return this.snapshot?.metadata.index
  }

  term (index: number): number | undefined {
    if (index < this.offset) {
      return this.snapshot?.metadata.index === index ? this.snapshot.metadata.term : undefined
    }
    const last = this.lastIndex()
    if (last === undefined || index > last) return undefined
    return this.entries[index - this.offset]!.term
  }

  /**
   * The host persisted entries up to `index`. If the entry there was overwritten since
   * the Ready was taken (its term differs), the persisted one was stale: keep ours.
   */
  stableTo (index: number, term: number): void {
    if (index < this.offset || this.term(index) !== term) return
    this.entries = this.entries.slice(index + 1 - this.offset)
    this.offset = index + 1
  }

  stableSnapshotTo (index: number): void {
    if (this.snapshot?.metadata.index === index) this.snapshot = undefined
  }

  restore (snapshot: RaftSnapshot): void {
    this.snapshot = snapshot
    this.entries = []
    this.offset = snapshot.metadata.index + 1
  }

  /** Append, first dropping anything at or after the first new index. */
  truncateAndAppend (entries: readonly Entry[]): void {
    const after = entries[0]!.index
    if (this.snapshot !== undefined) {
      assert(after > this.snapshot.metadata.index, `raft log: append at ${after} would overwrite the incoming RaftSnapshot`)
    }
    if (after === this.offset + this.entries.length) {
      this.entries = this.entries.concat(entries)
    } else if (after <= this.offset) {
      // The new entries replace stable ones too; the host overwrites them on persist.
      this.offset = after
      this.entries = entries.slice()
    } else {
      this.entries = this.entries.slice(0, after - this.offset).concat(entries)
    }
  }

  slice (lo: number, hi: number): Entry[] {
    assert(this.offset <= lo && lo <= hi && hi <= this.offset + this.entries.length,
      `raft log: unstable slice [${lo}, ${hi}) is outside [${this.offset}, ${this.offset + this.entries.length})`)
    return this.entries.slice(lo - this.offset, hi - this.offset)
  }
}
