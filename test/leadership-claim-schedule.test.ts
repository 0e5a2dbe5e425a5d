/**
 * The unit leadership tracker's claim plan (actors/unit/leadership-claim-schedule.ts), as
 * Juju's worker/leadership/tracker.go: the holder extends every half lease; a unit that
 * does not hold the lease blocks until it is released and claims only then, never on a
 * timer while the holder keeps it.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { planClaim, releaseSeen } from '../actors/unit/leadership-claim-schedule.ts'
import { limits } from '../runtime/limits.ts'
import type { LeaseRecord } from '../runtime/model/model-types.ts'

const durationMs = 60_000
const lease = (holder: string, expiry: number): LeaseRecord => ({ application: 'kv', holder, start: expiry - durationMs, expiry, grantedAt: 1 })

test('the holder, or a unit with no lease in view, claims again at half the lease', () => {
  assert.equal(planClaim(lease('kv/0', 70_000), 'kv/0', 10_000, durationMs), { kind: 'claim-after', delayMs: 30_000 })
  assert.equal(planClaim(undefined, 'kv/1', 10_000, durationMs), { kind: 'claim-after', delayMs: 30_000 })
})

test('a follower waits for the holder\'s lease to run out, not half a lease', () => {
  const held = lease('kv/0', 70_000)
  assert.equal(planClaim(held, 'kv/1', 10_000, durationMs), { kind: 'until-released', lease: held, delayMs: 60_000 })
  assert.equal(planClaim(held, 'kv/1', 69_999, durationMs), { kind: 'until-released', lease: held, delayMs: 1 })
})

test('a lease run out on the follower\'s clock whose claim still lost: claimed again soon, never in a loop', () => {
  const plan = planClaim(lease('kv/0', 70_000), 'kv/1', 70_000, durationMs)
  assert.equal(plan, { kind: 'claim-after', delayMs: limits.leadershipReleasedRecheckMs })
  assert.ok(plan.delayMs > 0 && plan.delayMs < durationMs / 2)
})

test('while waiting: released when the lease is gone or another unit holds it; moved when extended; else unchanged', () => {
  const waiting = lease('kv/0', 70_000)
  assert.is(releaseSeen(waiting, undefined), 'released')
  assert.is(releaseSeen(waiting, lease('kv/2', 90_000)), 'released')
  assert.is(releaseSeen(waiting, lease('kv/0', 100_000)), 'moved')
  assert.is(releaseSeen(waiting, lease('kv/0', 70_000)), 'unchanged')
})

test.run()
