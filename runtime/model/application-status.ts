/**
 * The answer to `status-get --application` (juju-semantics §5.3): the application's status
 * and each of its units' workload statuses, for its leader only. As in Juju, where the
 * uniter asks the controller for it, it is read from the whole model at the controller,
 * not from the machine's view: that view carries only the machine's own units, so it
 * stays the size of the machine's share (a leader's view holding all 5,000 units of an
 * application was 1.5 MB, over the transport's message limit, and its agent went stale).
 *
 * The controller checks the lease itself, on its own clock: the asking unit must hold it
 * there (not merely believe it does). The units are listed in the application's order
 * up to limits.applicationStatusReplyBytesMax of encoded statuses; any past it are left
 * off and counted in `omitted`, so the answer always fits one message.
 */
import { encode } from '../codec.ts'
import { limits } from '../limits.ts'
import type { UnitName } from '../ids.ts'
import { leaseHeld } from './leases.ts'
import { readerOf } from './model-draft.ts'
import type { ModelContext, StatusRecord } from './model-types.ts'

/** One status as status-get prints it. */
export interface StatusEntry {
  status: string
  message: string
  data: Record<string, string | number>
}

export interface ApplicationStatus {
  /** null while no leader has set one (Juju reports it unknown). */
  application: StatusEntry | null
  /** Unit name → workload status, in the application's unit order. */
  units: Record<string, StatusEntry>
  /** Units left off to keep the answer under limits.applicationStatusReplyBytesMax. */
  omitted: number
}

/** The controller API's answer (`application-status`): the statuses, or a one-line refusal. */
export type ApplicationStatusReply =
  | ({ ok: true } & ApplicationStatus)
  | { ok: false, error: string }

/** Whether `unit` holds its application's lease at the controller's clock reading `now`. */
export function holdsLeaseAt (context: ModelContext, unit: UnitName, now: number): boolean {
  const reader = readerOf(context)
  const record = reader.unit(unit)
  if (record === undefined) return false
  const lease = reader.lease(record.application)
  return lease !== undefined && lease.holder === unit && leaseHeld(lease, now)
}

/**
 * What the controller answers `unit`'s agent: its application's statuses while the unit
 * holds the lease at the controller's clock reading `now` and, given `machine` (the
 * asking machine agent's), is hosted there; undefined otherwise (a refusal).
 */
export function leaderApplicationStatus (context: ModelContext, unit: UnitName, now: number, machine?: string): ApplicationStatus | undefined {
  if (!holdsLeaseAt(context, unit, now)) return undefined
  if (machine !== undefined && readerOf(context).unit(unit)?.machine !== machine) return undefined
  return applicationStatusOf(context, unit)
}

/**
 * The statuses of `unit`'s application; undefined when the unit is not in the model.
 * The caller checks leadership (holdsLeaseAt) first.
 */
export function applicationStatusOf (context: ModelContext, unit: UnitName, bytesMax: number = limits.applicationStatusReplyBytesMax): ApplicationStatus | undefined {
  const reader = readerOf(context)
  const record = reader.unit(unit)
  const app = record === undefined ? undefined : reader.application(record.application)
  if (app === undefined) return undefined
  const application = app.status === null ? null : entryOf(app.status)
  let bytes = application === null ? 0 : encode(application).length
  const units: Record<string, StatusEntry> = {}
  let omitted = 0
  for (const name of app.units) {
    const other = reader.unit(name)
    if (other === undefined) continue
    const entry = entryOf(other.workload)
    // The entry's encoding plus its key: what it adds to the reply's map.
    const size = encode(entry).length + encode(name).length
    if (omitted > 0 || bytes + size > bytesMax) {
      omitted++
      continue
    }
    bytes += size
    units[name] = entry
  }
  return { application, units, omitted }
}

function entryOf (status: StatusRecord<string>): StatusEntry {
  return { status: status.status, message: status.message, data: { ...(status.data ?? {}) } }
}
