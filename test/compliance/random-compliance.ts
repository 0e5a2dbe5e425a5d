/**
 * The `Random` contract: deterministic for a seed, in range, and with named streams
 * that are independent of each other and of the parent's draws.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Random } from '../../runtime/random.ts'

export interface RandomHarness {
  name: string
  create (seed: number): Random
}

export function randomCompliance (harness: RandomHarness): void {
  const test = suite(`random compliance: ${harness.name}`)
  const draws = (random: Random, count: number): number[] => Array.from({ length: count }, () => random.next())

  test('the same seed gives the same sequence; another seed another', () => {
    assert.equal(draws(harness.create(42), 1000), draws(harness.create(42), 1000))
    assert.not.equal(draws(harness.create(42), 10), draws(harness.create(43), 10))
  })

  test('seed is kept for replay lines', () => {
    assert.is(harness.create(1234).seed, 1234)
  })

  test('next() is in [0, 1) and roughly uniform', () => {
    const buckets = new Array<number>(10).fill(0)
    for (const value of draws(harness.create(7), 10_000)) {
      assert.ok(value >= 0 && value < 1, `next() gave ${value}`)
      buckets[Math.floor(value * 10)]!++
    }
    for (const count of buckets) assert.ok(count > 850 && count < 1150, `bucket counts ${JSON.stringify(buckets)}`)
  })

  test('int(min, max) is inclusive at both ends and covers the range', () => {
    const random = harness.create(9)
    const seen = new Set<number>()
    for (let i = 0; i < 2000; i++) {
      const value = random.int(-2, 3)
      assert.ok(Number.isInteger(value) && value >= -2 && value <= 3, `int(-2, 3) gave ${value}`)
      seen.add(value)
    }
    assert.equal([...seen].sort((a, b) => a - b), [-2, -1, 0, 1, 2, 3])
    assert.is(random.int(5, 5), 5)
  })

  test('int refuses an empty or non-integer range', () => {
    const random = harness.create(1)
    assert.throws(() => random.int(3, 2))
    assert.throws(() => random.int(0.5, 2))
    assert.throws(() => random.int(0, Number.MAX_SAFE_INTEGER + 2))
  })

  test('a named stream depends only on the seed and the name', () => {
    const fresh = harness.create(5)
    const used = harness.create(5)
    draws(used, 100)
    used.stream('network').next()
    assert.equal(draws(fresh.stream('disk'), 50), draws(used.stream('disk'), 50))
  })

  test('different names give different streams, and streams differ from the parent', () => {
    const random = harness.create(5)
    const network = draws(random.stream('network'), 20)
    assert.not.equal(network, draws(random.stream('disk'), 20))
    assert.not.equal(network, draws(harness.create(5), 20))
    assert.not.equal(network, draws(harness.create(6).stream('network'), 20))
  })

  test.run()
}
