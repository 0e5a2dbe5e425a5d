/**
 * The `Clock` contract, run against SystemClock (real time) and SimClock (simulated).
 * The harness says how to let time pass on its clock and how late a real timer may be.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Clock } from '../../runtime/clock.ts'

export interface ClockHarness<C extends Clock = Clock> {
  name: string
  create (): C
  /** Let `ms` of this clock's time pass, running the timers that fall due. */
  wait (clock: C, ms: number): Promise<void>
  /**
   * How early a timer may fire against `now()` (Node measures timer starts from the
   * event loop's cached time) and how late it may still be reported as on time.
   */
  earlyToleranceMs: number
  lateToleranceMs: number
}

export function clockCompliance<C extends Clock> (harness: ClockHarness<C>): void {
  const test = suite(`clock compliance: ${harness.name}`)
  const { earlyToleranceMs: early, lateToleranceMs: late } = harness

  test('now() never goes backwards and moves with time', async () => {
    const clock = harness.create()
    let previous = clock.now()
    for (let i = 0; i < 1000; i++) {
      const now = clock.now()
      assert.ok(now >= previous, `now() went from ${previous} to ${now}`)
      previous = now
    }
    const before = clock.now()
    await harness.wait(clock, 20)
    assert.ok(clock.now() - before >= 20 - early, `20 ms passed but now() moved ${clock.now() - before}`)
  })

  test('a timer fires once, not before its delay', async () => {
    const clock = harness.create()
    const scheduledAt = clock.now()
    const firedAt: number[] = []
    clock.setTimeout(() => { firedAt.push(clock.now()) }, 40)
    await harness.wait(clock, 10)
    assert.equal(firedAt, [], 'fired 30 ms early')
    await harness.wait(clock, 30 + late)
    assert.is(firedAt.length, 1)
    assert.ok(firedAt[0]! - scheduledAt >= 40 - early, `fired after ${firedAt[0]! - scheduledAt} ms, asked for 40`)
    await harness.wait(clock, 50)
    assert.is(firedAt.length, 1, 'fired twice')
  })

  test('timers fire in order of due time, not of scheduling', async () => {
    const clock = harness.create()
    const order: number[] = []
    for (const delay of [30, 10, 20, 0]) clock.setTimeout(() => { order.push(delay) }, delay)
    await harness.wait(clock, 30 + late)
    assert.equal(order, [0, 10, 20, 30])
  })

  test('timers due at the same time fire in scheduling order', async () => {
    const clock = harness.create()
    const order: number[] = []
    for (let i = 0; i < 5; i++) clock.setTimeout(() => { order.push(i) }, 10)
    await harness.wait(clock, 10 + late)
    assert.equal(order, [0, 1, 2, 3, 4])
  })

  test('clearTimeout stops a timer; clearing again, late or with junk is harmless', async () => {
    const clock = harness.create()
    const fired: string[] = []
    const a = clock.setTimeout(() => { fired.push('a') }, 10)
    const b = clock.setTimeout(() => { fired.push('b') }, 10)
    clock.clearTimeout(a)
    clock.clearTimeout(a)
    clock.clearTimeout(undefined)
    await harness.wait(clock, 10 + late)
    assert.equal(fired, ['b'])
    clock.clearTimeout(b)
    await harness.wait(clock, 5)
    assert.equal(fired, ['b'])
  })

  test('a callback can cancel a timer due at the same time', async () => {
    const clock = harness.create()
    const fired: string[] = []
    let second: unknown
    clock.setTimeout(() => { fired.push('first'); clock.clearTimeout(second) }, 10)
    second = clock.setTimeout(() => { fired.push('second') }, 10)
    await harness.wait(clock, 10 + late)
    assert.equal(fired, ['first'])
  })

  test('a timer scheduled by a callback counts its delay from then', async () => {
    const clock = harness.create()
    const start = clock.now()
    const firedAt: number[] = []
    clock.setTimeout(() => {
      firedAt.push(clock.now() - start)
      clock.setTimeout(() => { firedAt.push(clock.now() - start) }, 15)
    }, 10)
    await harness.wait(clock, 25 + 2 * late)
    assert.is(firedAt.length, 2)
    assert.ok(firedAt[1]! - firedAt[0]! >= 15 - early, `nested timer fired ${firedAt[1]! - firedAt[0]!} ms after its parent`)
  })

  test('zero, negative and NaN delays fire as soon as time moves', async () => {
    const clock = harness.create()
    const fired: string[] = []
    clock.setTimeout(() => { fired.push('zero') }, 0)
    clock.setTimeout(() => { fired.push('negative') }, -5)
    clock.setTimeout(() => { fired.push('nan') }, Number.NaN)
    await harness.wait(clock, 1 + late)
    assert.equal(fired, ['zero', 'negative', 'nan'])
  })

  test.run()
}
