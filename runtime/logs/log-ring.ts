/**
 * A controller's in-memory log store for `debug-log`: the last limits.logRingRecordsMax
 * records within limits.logRingBytesMax, oldest dropped first. Each record gets this controller's cursor (counting up
 * from 1), so a reader pages through with `after` and never sees a record twice from the
 * same controller; a record that arrives twice (by gossip and in an agent's acknowledged
 * final batch) is kept once. Not replicated: each controller keeps what it received; after a
 * restart it starts empty (as Juju's debug-log shows only what its logsink kept).
 */
import { limits } from '../limits.ts'
import { logEntryBytes, logRecordKey, type LogEntry, type StoredLogEntry } from './log-entry.ts'
import type { LogFilter } from './log-filter.ts'

export interface LogQuery {
  /** Only records after this cursor (0: from the oldest kept). */
  after: number
  /** Only the last this many matching records (after `after`); undefined: all. */
  lines?: number
  filter: LogFilter
  /** Stop adding records once this many bytes (estimated) are in the answer. */
  bytesMax?: number
}

export interface LogPage {
  records: StoredLogEntry[]
  /** The cursor to ask `after` next: the last record returned, or `after` if none. */
  next: number
  /** More matching records follow `next` already. */
  more: boolean
  /** The newest cursor in the ring: where a reader that switches to this controller starts. */
  latest: number
}

export class LogRing {
  readonly #max: number
  readonly #bytesMax: number
  #records: StoredLogEntry[] = []
  #start = 0
  #cursor = 0
  /** Bytes (logEntryBytes) of the records kept. */
  #bytes = 0
  /** The keys of the records kept: one arriving twice (gossip and the final batch's request) is kept once. */
  readonly #keys = new Set<string>()

  constructor (max: number = limits.logRingRecordsMax, bytesMax: number = limits.logRingBytesMax) {
    this.#max = max
    this.#bytesMax = bytesMax
  }

  /** Bytes of the records kept, as logEntryBytes estimates them. */
  get bytes (): number {
    return this.#bytes
  }

  get size (): number {
    return this.#records.length - this.#start
  }

  /** Appends the records not kept already (by logRecordKey); returns how many were new. */
  append (origin: string, entries: readonly LogEntry[]): number {
    let added = 0
    for (const entry of entries) {
      const key = logRecordKey(entry)
      if (this.#keys.has(key)) continue
      this.#keys.add(key)
      this.#records.push({ ...entry, origin, cursor: ++this.#cursor })
      this.#bytes += logEntryBytes(entry)
      added++
    }
    // The oldest go while either bound is passed; the newest record always stays.
    while (this.size > 1 && (this.size > this.#max || this.#bytes > this.#bytesMax)) {
      const oldest = this.#records[this.#start++]!
      this.#keys.delete(logRecordKey(oldest))
      this.#bytes -= logEntryBytes(oldest)
    }
    // Compact now and then rather than shifting on every append.
    if (this.#start > this.#max) {
      this.#records = this.#records.slice(this.#start)
      this.#start = 0
    }
    return added
  }

  query (query: LogQuery): LogPage {
    const bytesMax = query.bytesMax ?? limits.debugLogReplyBytesMax
    const matching: StoredLogEntry[] = []
    for (let i = this.#start; i < this.#records.length; i++) {
      const record = this.#records[i]!
      if (record.cursor > query.after && query.filter(record)) matching.push(record)
    }
    const window = query.lines === undefined ? matching : matching.slice(Math.max(0, matching.length - query.lines))
    const records: StoredLogEntry[] = []
    let bytes = 0
    for (const record of window) {
      bytes += logEntryBytes(record)
      // Always at least one record, so a reader paging on makes progress.
      if (records.length > 0 && bytes > bytesMax) break
      records.push(record)
    }
    return { records, next: records.at(-1)?.cursor ?? query.after, more: records.length < window.length, latest: this.#cursor }
  }
}
