/**
 * Log records as agents ship them to the controllers (Juju's logsink) for `debug-log`:
 * who logged (an entity tag: `unit-kv-0`, `machine-1`, `controller-1a2b3c4d`), when (the
 * agent's clock, ms), the level, a Juju-like module (`unit.kv/0.juju-log`,
 * `juju.worker.uniter`) and the one-line message. `seq` counts up per shipping agent, so
 * a reader that sees a record twice (replay, then the live topic) can tell.
 *
 * Batches travel on a per-model gossip topic, signed by the sender; only controllers
 * and registered machine agents are entitled to publish (the receivers' validators).
 */
import { decodeFields } from '../codec.ts'
import { limits } from '../limits.ts'
import { logLevelOrder, type LogLevel } from '../logger.ts'

const component = 'log shipping'

export function logTopic (modelUuid: string): string {
  return `cantrip/${modelUuid}/logs/1`
}

export interface LogEntry {
  readonly entity: string
  readonly time: number
  readonly level: LogLevel
  readonly module: string
  readonly message: string
  readonly seq: number
}

/** One record as kept by a controller: the sending peer and the controller's own cursor added. */
export interface StoredLogEntry extends LogEntry {
  readonly origin: string
  readonly cursor: number
}

export interface LogBatch {
  readonly v: 1
  readonly records: readonly LogEntry[]
}

const entityPattern = /^(unit-[a-z][a-z0-9-]*-\d+|machine-\d+(\/[a-z]+\/\d+)*|controller-[A-Za-z0-9]+)$/
const moduleCharsMax = 200

/** The batch in a gossip message, or undefined if it is not one (shape, version, sizes). */
export function parseLogBatch (data: Uint8Array): LogBatch | undefined {
  const value = decodeFields(data, component)
  if (value === undefined) return undefined
  const { v, records } = value
  if (v !== 1) return undefined
  const parsed = parseLogRecords(records)
  return parsed === undefined ? undefined : { v: 1, records: parsed }
}

/** One batch's records (1 to limits.logShipBatchRecordsMax, each checked), or undefined. */
export function parseLogRecords (records: unknown): LogEntry[] | undefined {
  if (!Array.isArray(records) || records.length === 0 || records.length > limits.logShipBatchRecordsMax) return undefined
  const parsed: LogEntry[] = []
  for (const record of records) {
    const entry = parseLogEntry(record)
    if (entry === undefined) return undefined
    parsed.push(entry)
  }
  return parsed
}

/**
 * What makes a record the same record however it arrived (gossip, the final batch's
 * request, both): the shipping agent's entity, its sequence number and its time (a
 * restarted agent counts again from 1, at a later time).
 */
export function logRecordKey (entry: LogEntry): string {
  return `${entry.entity}/${entry.seq}/${entry.time}`
}

function parseLogEntry (value: unknown): LogEntry | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const { entity, time, level, module, message, seq } = value as Record<string, unknown>
  if (typeof entity !== 'string' || !entityPattern.test(entity)) return undefined
  if (!Number.isSafeInteger(time) || (time as number) < 0 || !Number.isSafeInteger(seq) || (seq as number) < 0) return undefined
  if (typeof level !== 'string' || !Object.hasOwn(logLevelOrder, level)) return undefined
  if (typeof module !== 'string' || module.length === 0 || module.length > moduleCharsMax) return undefined
  if (typeof message !== 'string' || message.length > limits.logMessageCharsMax) return undefined
  return { entity, time: time as number, level: level as LogLevel, module, message, seq: seq as number }
}

/** The unit an entity tag names (`unit-kv-extra-0` → `kv-extra/0`), or undefined for other tags. */
export function unitOfTag (tag: string): string | undefined {
  const match = /^unit-([a-z][a-z0-9-]*)-(\d+)$/.exec(tag)
  return match === null ? undefined : `${match[1]!}/${match[2]!}`
}

/**
 * Whether the agent of `machine` may log as `entity`: as itself or as a unit the model
 * puts on its machine (`unitMachine` answers where a unit is). Records claiming anyone
 * else are not kept, so one machine's agent cannot speak for another's units.
 */
export function machineMayLogAs (machine: string, entity: string, unitMachine: (unit: string) => string | undefined): boolean {
  if (entity === `machine-${machine}` || entity.startsWith(`machine-${machine}/`)) return true
  const unit = unitOfTag(entity)
  return unit !== undefined && unitMachine(unit) === machine
}

/**
 * A message as one record carries it: whole, its lines kept (Juju's debug-log prints a
 * multi-line juju-log message, a traceback, as the lines it has), only carriage returns
 * shown as `\\r` so a line cannot overwrite another on a terminal. Past
 * limits.logMessageCharsMax it is cut, and its end says so and how much went.
 */
export function boundedLogMessage (message: string, charsMax: number = limits.logMessageCharsMax): string {
  const text = message.replace(/\r/g, '\\r')
  if (text.length <= charsMax) return text
  const note = (kept: number): string => `\n[log message truncated: ${text.length - kept} of ${text.length} characters not shown]`
  // Sized for the longest note (every character dropped), so the result never passes the max.
  const kept = Math.max(0, charsMax - note(0).length)
  return `${text.slice(0, kept)}${note(kept)}`
}

/** Rough bytes a record takes encoded (UTF-8 worst case for the text), for reply budgets. */
export function logEntryBytes (entry: LogEntry): number {
  return 64 + entry.entity.length + entry.module.length + entry.message.length * 3
}
