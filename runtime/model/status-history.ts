/**
 * A unit's status history (`juju show-status-log`): every workload and agent status
 * change, oldest first, bounded so the replicated model stays small. A status set again
 * unchanged (same status and message as the last entry of its type) is not a change and
 * adds nothing, so an agent re-reporting `idle` does not push real history out.
 */
import { limits } from '../limits.ts'
import type { StatusHistoryEntry, StatusRecord } from './model-types.ts'

export function withStatusChange (history: readonly StatusHistoryEntry[], type: StatusHistoryEntry['type'], status: StatusRecord<string>, max: number = limits.modelStatusHistoryPerUnitMax): readonly StatusHistoryEntry[] {
  const last = findLast(history, type)
  if (last !== undefined && last.status === status.status && last.message === status.message) return history
  // Juju's status history keeps each entry's data (show-status-log's `data`).
  const data = status.data !== null && Object.keys(status.data).length > 0 ? { data: status.data } : {}
  const next = [...history, { type, status: status.status, message: status.message, since: status.since, ...data }]
  return next.length > max ? next.slice(next.length - max) : next
}

function findLast (history: readonly StatusHistoryEntry[], type: StatusHistoryEntry['type']): StatusHistoryEntry | undefined {
  for (let i = history.length - 1; i >= 0; i--) if (history[i]!.type === type) return history[i]
  return undefined
}
