/**
 * When a unit's leadership tracker claims next, as Juju's (worker/leadership/tracker.go):
 * the leader extends its lease every half lease; a unit that is not the leader does not
 * claim on a timer, it blocks until the leader's lease is released
 * (BlockUntilLeadershipReleased) and claims only then. Here "released" is read from the
 * machine's view of the model: the lease gone, handed to another unit, moved, or run out
 * on this unit's clock (the clock its claims are stamped with). Before, every follower
 * claimed every half lease and the leading controller refused each one from its applied
 * leases: no log entry, but a request and an answer per follower per 30 s for nothing.
 */
import type { UnitName } from '../../runtime/ids.ts'
import { limits } from '../../runtime/limits.ts'
import type { LeaseRecord } from '../../runtime/model/model-types.ts'

/** What the tracker does after a claim, and after each change of the view while it waits. */
export type ClaimPlan =
  /** Claim again after `delayMs`: to extend a lease held (or just won), or to retry one whose answer is not in the view. */
  | { readonly kind: 'claim-after', readonly delayMs: number }
  /** Another unit holds `lease`: claim once it runs out (`delayMs` on this unit's clock) or the view shows it released. */
  | { readonly kind: 'until-released', readonly lease: LeaseRecord, readonly delayMs: number }

/** The plan for `unit`, the view holding `lease` for its application, at `now` on the unit's clock. */
export function planClaim (lease: LeaseRecord | undefined, unit: UnitName, now: number, durationMs: number): ClaimPlan {
  const extendEvery = Math.floor(durationMs / 2)
  if (lease === undefined || lease.holder === unit) return { kind: 'claim-after', delayMs: extendEvery }
  // Run out on this clock, yet the claim lost (the view is behind an extension it has not
  // heard of): look again soon rather than claim at once in a loop, or wait half a lease.
  if (now >= lease.expiry) return { kind: 'claim-after', delayMs: Math.min(extendEvery, limits.leadershipReleasedRecheckMs) }
  return { kind: 'until-released', lease, delayMs: lease.expiry - now }
}

/**
 * While waiting `until-released` on `waiting`: whether the view's `lease` says it was
 * released (claim now), moved (plan again), or is as it was (keep waiting).
 */
export function releaseSeen (waiting: LeaseRecord, lease: LeaseRecord | undefined): 'released' | 'moved' | 'unchanged' {
  if (lease === undefined || lease.holder !== waiting.holder) return 'released'
  return lease.expiry === waiting.expiry ? 'unchanged' : 'moved'
}
