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

export function answerDebugLog (self: string, identify: IdentifyPeer, request: IncomingRequest, body: Record<string, unknown>, logs: LogRing | undefined): DebugLogReply {
  const caller = identify(request.from)
  if (!apiPermits('debug-log', caller)) return { ok: false, error: apiRefusal(component, 'debug-log', request.from) }
  if (logs === undefined) return { ok: false, error: `${component}: this controller keeps no logs` }
  try {
    const after = body.after ?? 0
    if (!Number.isSafeInteger(after) || (after as number) < 0) throw new InvalidInputError(component, '"after" as a cursor (a whole number ≥ 0)', after)
    const lines = body.lines
    if (lines !== undefined && (!Number.isSafeInteger(lines) || (lines as number) < 0 || (lines as number) > limits.logRingRecordsMax)) {
      throw new InvalidInputError(component, `"lines" from 0 to ${limits.logRingRecordsMax}`, lines)
    }
    const filter = logFilter(component, body as LogFilterSpec)
    const page = logs.query({ after: after as number, filter, ...(lines === undefined ? {} : { lines: lines as number }) })
    return { ok: true, controller: self, ...page }
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) }
  }
}
