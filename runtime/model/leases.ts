import { limits } from '../limits.ts'
import type { UnitName } from '../ids.ts'
import type { LeaseRecord } from './model-types.ts'

/**
 * Leadership leases (DESIGN.md §4). Two rules together keep two units from believing they
 * lead at once, as long as every clock (controllers' and agents') is within half the
 * drift margin of true time:
 *
 * - granting: a claim by another unit succeeds only when the proposing controller's clock
 *   (`now`, stamped into the command) has reached the current lease's expiry; an
 *   extension never moves the expiry earlier;
 * - believing: the holder believes only while its own clock reads earlier than
 *   `expiry - margin`, so it stops a full margin before anyone can be granted.
 *
 * Time enters only as data: the commands carry `now`, the view takes `now`.
 */
export const leaseDriftMarginMs = limits.leadershipClockDriftMarginMs

/** Does `unit`, reading `now` on its own clock, believe it holds `lease`? */
export function believesLeader (lease: LeaseRecord | undefined, unit: UnitName, now: number): boolean {
  return lease !== undefined && lease.holder === unit && now + leaseDriftMarginMs < lease.expiry
}

/** Is `lease` still in force at the granting controller's `now` (nobody else may claim it)? */
export function leaseHeld (lease: LeaseRecord, now: number): boolean {
  return now < lease.expiry
}

export function validLeaseDuration (durationMs: number): boolean {
  return Number.isSafeInteger(durationMs) &&
    durationMs >= limits.leadershipLeaseDurationMsMin &&
    durationMs <= limits.leadershipLeaseDurationMsMax
}
