/**
 * The `ship-logs` API op: an agent's final batch of log records, sent as a request so
 * that it is acknowledged (agent/log-shipper.ts). Gossip carries the records in normal
 * running, but gossip is a hint: a unit's last lines (its stop and remove hooks' output)
 * gossiped just before its agent marks it dead arrive after the unit has left the model,
 * and a controller no longer lets the machine speak for it, so `debug-log --replay`
 * lost them; and an agent exiting on SIGTERM could close the mesh under its last batch.
 * Juju's agents stream their records to the controller's logsink over one ordered
 * connection (worker/logsender), so the lines are in before the unit's death is; here the
 * agent waits for this answer before it sends `unit-dead` or exits.
 *
 * Machine agents for themselves and their units (as the gossip path checks, against the
 * model as this controller has it), controllers for anyone. The controller keeps each
 * record once (runtime/logs/log-ring.ts): one that also came by gossip is not doubled.
 */
import { limits } from '../../runtime/limits.ts'
import { machineMayLogAs, parseLogRecords, type LogEntry } from '../../runtime/logs/log-entry.ts'
import type { LogRing } from '../../runtime/logs/log-ring.ts'
import { readerOf } from '../../runtime/model/model-draft.ts'
import type { Entity } from '../../runtime/model/model-types.ts'
import type { ApiContext, Invalid, WireBody } from './api-operations.ts'

const component = 'controller api'

export interface ShipLogsRequest {
  op: 'ship-logs'
  records: LogEntry[]
}

export type ShipLogsReply =
  | { ok: true, kept: number }
  | { ok: false, error: string }

/** The wire body as a batch of records (1 to limits.logShipBatchRecordsMax, each as the gossip path checks them). */
export function parseShipLogsRequest (body: WireBody): ShipLogsRequest | Invalid {
  const records = parseLogRecords(body.records)
  if (records === undefined) {
    return { invalid: `${component}: expected "records" as 1 to ${limits.logShipBatchRecordsMax} log records {entity, time, level, module, message, seq}, got ${describeRecords(body.records)}` }
  }
  return { op: 'ship-logs', records }
}

function describeRecords (value: unknown): string {
  if (!Array.isArray(value)) return value === undefined ? 'nothing' : typeof value
  return `${value.length} item${value.length === 1 ? '' : 's'} that ${value.length === 0 || value.length > limits.logShipBatchRecordsMax ? 'are too many or too few' : 'are not all records'}`
}

/** The op as the table runs it: against the model as this controller has it now. */
export function shipLogs ({ node, caller, request, extras }: ApiContext, shipped: ShipLogsRequest): ShipLogsReply {
  const reader = readerOf(node.host.state())
  return keepShippedLogs(extras.logs, request.from, caller, shipped.records, unit => reader.unit(unit)?.machine)
}

/**
 * Keeps what the caller may say (a machine: itself and the units `unitMachine` puts on
 * it) in `logs`, under the sending peer like its gossip; `kept` counts the records
 * accepted, whether new or already there.
 */
export function keepShippedLogs (logs: LogRing | undefined, from: string, caller: Entity | undefined, records: readonly LogEntry[], unitMachine: (unit: string) => string | undefined): ShipLogsReply {
  if (logs === undefined) return { ok: false, error: `${component}: this controller keeps no logs` }
  const allowed = caller?.kind === 'machine' ? records.filter(r => machineMayLogAs(caller.id, r.entity, unitMachine)) : records
  logs.append(from, allowed)
  return { ok: true, kept: allowed.length }
}
