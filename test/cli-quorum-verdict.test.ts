/**
 * When the CLI believes a controller group lost (agent/cli/quorum-verdict.ts), on a fake
 * clock. Members that only time out may be a slow host: the verdict waits for a time of
 * such checks in a row, not a number of them (once four checks, about 12 s, declared a
 * single controller lost under extreme load). A member that refused is gone at once.
 * Juju's CLI waits on its API connection for a time (api/apiclient.go, DefaultDialOpts:
 * Timeout 10 minutes, RetryDelay 2 s) rather than counting tries.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { quorumVerdict, type VerdictTiming } from '../agent/cli/quorum-verdict.ts'

const lost = 'controller group "demo": 0 of 1 controllers reachable, 1 needed to commit; reachable: none'

/** A fake clock where each check also costs `checkMs` (a starved host answers slowly). */
function fakeTiming (checkMs: number): { timing: VerdictTiming, clock: { now: number }, tick: () => void } {
  const clock = { now: 0 }
  return {
    clock,
    tick: () => { clock.now += checkMs },
    timing: { afterMs: 1_000, timedOutMs: 60_000, now: () => clock.now, sleep: async ms => { clock.now += ms } }
  }
}

test('checks that only time out: no verdict before 60 s of them in a row, however few or many checks that is', async () => {
  for (const checkMs of [0, 2_000, 10_000]) {
    const { timing, clock, tick } = fakeTiming(checkMs)
    const checksAt: number[] = []
    const verdict = await quorumVerdict(async () => { checksAt.push(clock.now); tick(); return { message: lost, onlyTimedOut: true } }, () => false, timing)
    assert.is(verdict, lost)
    const last = checksAt.at(-1)! + checkMs
    assert.ok(last - checksAt[0]! >= 60_000, `verdict after ${last - checksAt[0]!} ms of timed-out checks (check ${checkMs} ms)`)
    assert.ok(checksAt.length > 4, `${checksAt.length} checks: the old count of 4 is not what decides`)
  }
})

test('a slow controller that answers within the minute: no verdict, the call goes on', async () => {
  const { timing, clock, tick } = fakeTiming(2_000)
  const verdict = await quorumVerdict(async () => {
    tick()
    // The old bound (4 timed-out checks) would have ended the call here, at about 12 s.
    return clock.now < 20_000 ? { message: lost, onlyTimedOut: true } : undefined
  }, () => false, timing)
  assert.is(verdict, undefined)
})

test('a member that refused (a stopped process): the verdict at the first check', async () => {
  const { timing } = fakeTiming(0)
  let checks = 0
  assert.is(await quorumVerdict(async () => { checks++; return { message: lost, onlyTimedOut: false } }, () => false, timing), lost)
  assert.is(checks, 1)
})

test('the call settled first: no check and no verdict', async () => {
  const { timing } = fakeTiming(0)
  let checks = 0
  assert.is(await quorumVerdict(async () => { checks++; return { message: lost, onlyTimedOut: true } }, () => true, timing), undefined)
  assert.is(checks, 0)
})

test.run()
