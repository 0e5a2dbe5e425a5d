import { isPlainRecord } from './charm-summary.ts'
import { tableFrom, type Table } from './table.ts'

/**
 * Tables as RaftSnapshots of model version 1 held them: a fixed grid of 64 × 64 buckets
 * of plain records (`{size, buckets}`). A controller upgraded in place restores its last
 * snapshot, written in that shape, so restore rebuilds each one as a trie; nothing writes
 * the shape any more.
 */
export const legacyTableFanout = 64

/** The entries of a version 1 table, or a line saying what is wrong with it. */
function legacyEntries (value: unknown): Array<[string, unknown]> | string {
  const buckets = isPlainRecord(value) ? value.buckets : undefined
  if (!isPlainRecord(value) || !Number.isSafeInteger(value.size) || !Array.isArray(buckets) || buckets.length !== legacyTableFanout) return 'a table of 64 buckets'
  const entries: Array<[string, unknown]> = []
  for (const middle of buckets as unknown[]) {
    if (middle === null) continue
    if (!Array.isArray(middle) || middle.length !== legacyTableFanout) return 'buckets of 64 leaves'
    for (const leaf of middle as unknown[]) {
      if (leaf === null) continue
      if (!isPlainRecord(leaf)) return 'leaves that are records'
      for (const key of Object.keys(leaf)) entries.push([key, leaf[key]])
    }
  }
  if (entries.length !== value.size) return `${String(value.size)} entries`
  return entries
}

/** A version 1 table as a table today; throws `fail(expected, got)` when it is malformed. */
export function fromLegacyTable<T> (value: unknown, fail: (expected: string, got: unknown) => never): Table<T> {
  const entries = legacyEntries(value)
  if (typeof entries === 'string') return fail(entries, value)
  return tableFrom(entries as Array<[string, T]>)
}
