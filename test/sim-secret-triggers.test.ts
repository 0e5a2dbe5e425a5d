import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { latenessMaxMs, runSecretTriggerFailover } from '../sim/scenarios/secret-trigger-failover.ts'

/**
 * Secret rotation and expiry fire at the right simulated time across a controller
 * failover (sim/scenarios/secret-trigger-failover.ts): the controller running the clock
 * worker is killed between the owner's `secret-add --rotate hourly --expire …` and the
 * deadlines, and every trigger is still marked once, never early and within a minute,
 * after which the owner's resolver runs secret-expired then secret-rotate.
 * Juju sources followed: internal/worker/secretrotate, internal/worker/secretexpire,
 * internal/worker/uniter/secrets/resolver.go.
 *
 * `npm test` runs two seeds whose failover overlaps a deadline (an hour of simulated time
 * each, a few CPU-seconds) and the mutation; `npm run test:long` 40 seeds.
 * CANTRIP_SEED=N replays one seed.
 */
const long = process.env['CANTRIP_LONG'] === '1'
const only = process.env['CANTRIP_SEED']
/** Seeds whose kill lands just before a deadline, so the trigger waits for the failover. */
const sample = [12, 19]
const seeds = only !== undefined ? [Number(only)] : long ? Array.from({ length: 40 }, (_, i) => i + 1) : sample

test(`rotate and expire fire on time across a controller failover: seeds ${seeds.length > 3 ? `1-${seeds.length}` : seeds.join(', ')}`, async () => {
  let overlapped = 0
  for (const seed of seeds) {
    const result = await runSecretTriggerFailover({ seed, keepTrace: only !== undefined })
    assert.is(result.failure, undefined, result.failure)
    assert.ok(result.workerStarts >= 2, `seed ${seed}: the worker started on another controller after the kill`)
    if (Math.max(...result.latenessMs) > 5_000) overlapped++
    assert.ok(result.latenessMs.every(ms => ms >= 0 && ms <= latenessMaxMs))
  }
  if (only === undefined) assert.ok(overlapped > 0, 'no seed had a failover delay a trigger')
})

test('mutation: a worker that keeps deadlines in memory loses them in the failover, and the scenario says so', async () => {
  const result = await runSecretTriggerFailover({ seed: sample[0]!, deadlinesInMemory: true })
  assert.match(result.failure ?? '', /was never marked/)
  assert.match(result.failure ?? '', /replay: CANTRIP_SEED=12 node --import tsx test\/sim-secret-triggers.test.ts/)
})

test.run()
