/** runtime/utc-time.ts: the pure epoch-to-UTC formatter agrees with Date on a spread of instants (leap days, centuries, ends of days). */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { utcTimestamp } from '../runtime/utc-time.ts'

test('utcTimestamp matches Date\'s ISO time to the second', () => {
  const instants = [0, 999, 16_000, 951_782_400_000, 1_709_251_199_999, 1_795_741_323_456, 4_102_444_799_000, 253_402_300_799_000]
  for (let ms = 0; ms < 5e12; ms += 7_919_191_919) instants.push(ms)
  for (const ms of instants) assert.is(utcTimestamp(ms), new Date(ms).toISOString().slice(0, 19) + 'Z', String(ms))
})

test.run()
