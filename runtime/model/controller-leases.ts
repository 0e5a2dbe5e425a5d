import { limits } from '../limits.ts'
import type { ControllerLeaseRecord } from './model-types.ts'

/**
 * Controller leases: which controller runs the singular workers (provisioner, cleanup).
 * Raft orders the claims, so the model grants a lease to one controller at a time; the
 * two rules of leadership leases (see leases.ts) then keep two controllers from acting
 * on it at once while their clocks are within half the drift margin of true time:
 *
 * - granting: another controller's claim succeeds only once the proposer's `now`
 *   (stamped into the command) has reached the current expiry; an extension never moves
 *   the expiry earlier;
 * - believing: the holder acts only while its own clock reads earlier than
 *   `expiry - margin`, so it stops a full margin before anyone else can be granted.
 */
export const controllerLeaseDriftMarginMs = limits.controllerLeaseClockDriftMarginMs

const leaseNamePattern = /^[a-z0-9-]{1,64}$/

/** Does `controller`, reading `now` on its own clock, believe it holds `lease`? */
export function believesControllerLease (lease: ControllerLeaseRecord | undefined, controller: string, now: number): boolean {
  return lease !== undefined && lease.holder === controller && now + controllerLeaseDriftMarginMs < lease.expiry
}

/** Is `lease` still in force at the granting controller's `now` (no other controller may claim it)? */
export function controllerLeaseHeld (lease: ControllerLeaseRecord, now: number): boolean {
  return now < lease.expiry
}

/** 1 to 64 characters of lower-case letters, digits and dashes (it is part of a delta key). */
export function isControllerLeaseName (name: string): boolean {
  return leaseNamePattern.test(name)
}

export function validControllerLeaseDuration (durationMs: number): boolean {
  return Number.isSafeInteger(durationMs) &&
    durationMs >= limits.controllerLeaseDurationMsMin &&
    durationMs <= limits.controllerLeaseDurationMsMax
}
