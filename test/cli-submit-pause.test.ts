/**
 * The CLI's pause between attempts of one command (agent/cli/submit-pause.ts): a
 * refusal naming another member as leader is followed at once, a bounded number of times
 * in a row; anything else waits the retry pause.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { submitPauseMs, submitRedirectsAtOnceMax, submitRetryPauseMs } from '../agent/cli/submit-pause.ts'

test('a refusal that names another member as leader is followed at once', () => {
  assert.is(submitPauseMs({ target: 'c1', leader: 'c2', redirectsInARow: 0 }), 0)
})

test('no leader named (an election under way, or no answer) waits the retry pause', () => {
  assert.is(submitPauseMs({ target: 'c1', leader: '', redirectsInARow: 0 }), submitRetryPauseMs)
  assert.ok(submitRetryPauseMs > 0)
})

test('a member naming itself (it leads but could not commit) waits the retry pause', () => {
  assert.is(submitPauseMs({ target: 'c1', leader: 'c1', redirectsInARow: 0 }), submitRetryPauseMs)
})

test('stale hints bouncing between members pause after submitRedirectsAtOnceMax redirects in a row', () => {
  let redirectsInARow = 0
  const pauses: number[] = []
  // Two members naming each other forever: the pattern is at most the maximum at once, then a pause.
  for (let i = 0; i < 2 * (submitRedirectsAtOnceMax + 1); i++) {
    const pause = submitPauseMs({ target: i % 2 === 0 ? 'c1' : 'c2', leader: i % 2 === 0 ? 'c2' : 'c1', redirectsInARow })
    pauses.push(pause)
    redirectsInARow = pause === 0 ? redirectsInARow + 1 : 0
  }
  const once = [...Array<number>(submitRedirectsAtOnceMax).fill(0), submitRetryPauseMs]
  assert.equal(pauses, [...once, ...once])
})

test.run()
