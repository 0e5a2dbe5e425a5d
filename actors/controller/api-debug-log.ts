/**
 * The `debug-log` API op (controller-api.ts dispatches it): the records this controller
 * keeps (runtime/logs/log-ring.ts) that pass the filter, oldest first, paged by its own
 * cursor. Admins and controllers only: logs may say more about the model than its agents
 * should read of each other.
 */
import { apiPermits, apiRefusal } from './api-policy.ts'
import { InvalidInputError } from '../../runtime/errors.ts'
import { limits } from '../../runtime/limits.ts'
import type { StoredLogEntry } from '../../runtime/logs/log-entry.ts'
import { logFilter, type LogFilterSpec } from '../../runtime/logs/log-filter.ts'
import type { LogRing } from '../../runtime/logs/log-ring.ts'
import type { IncomingRequest } from '../../runtime/transport.ts'
import type { IdentifyPeer } from './controller-api.ts'
import { isInvalid, type Invalid, type WireBody } from './api-operations.ts'

const component = 'controller api'

export interface DebugLogRequest extends LogFilterSpec {
  op: 'debug-log'
  /** This controller's cursor to continue after (0 or absent: from the oldest kept). */
  after?: number
  /** Only the last this many matching records. */
  lines?: number
}

export type DebugLogReply =
  | { ok: true, controller: string, records: StoredLogEntry[], next: number, more: boolean, latest: number }
  | { ok: false, error: string }

/** The wire body as a `debug-log` request: a cursor, a count and a filter, each checked. */
export function parseDebugLogRequest (body: WireBody): DebugLogRequest | Invalid {
  try {
    const after = body.after ?? 0
    if (!Number.isSafeInteger(after) || (after as number) < 0) throw new InvalidInputError(component, '"after" as a cursor (a whole number ≥ 0)', after)
    const lines = body.lines
    if (lines !== undefined && (!Number.isSafeInteger(lines) || (lines as number) < 0 || (lines as number) > limits.logRingRecordsMax)) {
      throw new InvalidInputError(component, `"lines" from 0 to ${limits.logRingRecordsMax}`, lines)
    }
    const spec: LogFilterSpec = {
      ...optional('include', stringList('include', body.include)),
      ...optional('exclude', stringList('exclude', body.exclude)),
      ...optional('includeModule', stringList('include-module', body.includeModule)),
      ...optional('excludeModule', stringList('exclude-module', body.excludeModule)),
      ...optional('level', body.level === undefined || typeof body.level === 'string' ? body.level : invalidLevel(body.level))
    }
    // The filter's own checks (patterns, counts, the level's name) refuse here, not mid-query.
    logFilter(component, spec)
    return { ...spec, op: 'debug-log', after: after as number, ...(lines === undefined ? {} : { lines: lines as number }) }
  } catch (error) {
    return { invalid: error instanceof Error ? error.message : String(error) }
  }
}

function stringList (flag: string, value: unknown): readonly string[] | undefined {
  if (value === undefined) return undefined
  if (!Array.isArray(value) || !value.every((item: unknown) => typeof item === 'string')) throw new InvalidInputError(component, `--${flag} as a list of strings`, value)
  return value
}

function invalidLevel (value: unknown): never {
  throw new InvalidInputError(component, 'a level as a string', value)
}

/** `{ [key]: value }`, or nothing when the value is undefined (the codec drops no keys for us). */
function optional<K extends string, V> (key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : { [key]: value } as Partial<Record<K, V>>
}

/** One page of the records `logs` keeps that pass the request's filter. */
export function queryDebugLog (self: string, request: DebugLogRequest, logs: LogRing | undefined): DebugLogReply {
  if (logs === undefined) return { ok: false, error: `${component}: this controller keeps no logs` }
  try {
    const filter = logFilter(component, request)
    const page = logs.query({ after: request.after ?? 0, filter, ...(request.lines === undefined ? {} : { lines: request.lines }) })
    return { ok: true, controller: self, ...page }
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) }
  }
}

/** The op end to end for one caller, as the table runs it but with the logs checked first (the tests' entry). */
export function answerDebugLog (self: string, identify: IdentifyPeer, request: IncomingRequest, body: WireBody, logs: LogRing | undefined): DebugLogReply {
  const caller = identify(request.from)
  if (!apiPermits('debug-log', caller)) return { ok: false, error: apiRefusal(component, 'debug-log', request.from) }
  if (logs === undefined) return { ok: false, error: `${component}: this controller keeps no logs` }
  const parsed = parseDebugLogRequest(body)
  return isInvalid(parsed) ? { ok: false, error: parsed.invalid } : queryDebugLog(self, parsed, logs)
}
