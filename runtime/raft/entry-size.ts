import type { Entry } from './raft-types.ts'

/** A fixed allowance for an entry's term, index and type once encoded. */
const entryOverheadBytes = 16

/** An entry's size for message batching and per-Ready limits: close to, not exactly, its encoded size. */
export function entrySizeBytes (entry: Entry): number {
  const change = entry.configChange === undefined ? 0 : entryOverheadBytes + entry.configChange.node.length
  return entryOverheadBytes + entry.data.byteLength + change
}

/** The application payload of entries: what counts against the uncommitted-bytes limit. */
export function payloadBytes (entries: readonly Entry[]): number {
  let total = 0
  for (const entry of entries) total += entry.data.byteLength
  return total
}

/**
 * The longest prefix of `entries` whose size stays within `maxBytes`, but never fewer
 * than one entry: a single oversized entry must still make progress.
 */
export function limitSize (entries: Entry[], maxBytes: number): Entry[] {
  let size = 0
  for (let i = 0; i < entries.length; i++) {
    size += entrySizeBytes(entries[i]!)
    if (i > 0 && size > maxBytes) return entries.slice(0, i)
  }
  return entries
}
