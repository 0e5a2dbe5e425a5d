/**
 * The shrinker on synthetic predicates (each stands for "the simulation with this fault
 * list still fails the same way", without running one): ddmin finds the minimal failing
 * subset, simplification shortens what is left, the run cap is kept, and a list is never
 * run twice.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { shrinkFaults, shrinkList } from '../sim/scenario/shrink.ts'
import type { FaultEvent } from '../sim/scenario/scenario-types.ts'

const test = suite('sim shrink')

test('ddmin finds the two events that together fail, out of 40', async () => {
  const items = Array.from({ length: 40 }, (_, i) => i)
  const seen = new Set<string>()
  const result = await shrinkList(items, async list => {
    const key = JSON.stringify(list)
    assert.not.ok(seen.has(key), `ran ${key} twice`)
    seen.add(key)
    return list.includes(7) && list.includes(31)
  })
  assert.equal(result.items, [7, 31])
  assert.is(result.exhausted, false)
  assert.ok(result.runs < 60, `took ${result.runs} runs`)
})

test('a failure that needs no event at all shrinks to the empty list in one run', async () => {
  const result = await shrinkList([1, 2, 3], async () => true)
  assert.equal(result.items, [])
  assert.is(result.runs, 1)
})

test('the result is 1-minimal for a failure that needs three scattered events', async () => {
  const needed = [3, 18, 29]
  const items = Array.from({ length: 30 }, (_, i) => i)
  const fails = (list: number[]): boolean => needed.every(n => list.includes(n))
  const result = await shrinkList(items, async list => fails(list))
  assert.equal(result.items, needed)
  for (let i = 0; i < result.items.length; i++) assert.not.ok(fails(result.items.filter((_, j) => j !== i)))
})

test('the run cap is kept, and what it returns still fails', async () => {
  const items = Array.from({ length: 64 }, (_, i) => i)
  const fails = (list: number[]): boolean => list.filter(n => n % 8 === 0).length >= 6
  let calls = 0
  const result = await shrinkList(items, async list => { calls++; return fails(list) }, { maxRuns: 10 })
  assert.is(calls, 10)
  assert.is(result.runs, 10)
  assert.is(result.exhausted, true)
  assert.ok(fails(result.items))
  assert.ok(result.items.length < items.length, 'some progress within the cap')
})

test('fault events are simplified: shorter for, one failing write, one hook failure', async () => {
  const faults: FaultEvent[] = [
    { at: 1000, kind: 'loss', probability: 0.5, forMs: 8000 },
    { at: 2000, kind: 'disk-error', target: 'controller/1', writes: 20 },
    { at: 3000, kind: 'hook-fail', unit: 'kv/0', hook: 'install', times: 3 },
    { at: 4000, kind: 'crash', target: 'leader' },
    { at: 5000, kind: 'pause', target: 'machine/2', forMs: 3000 }
  ]
  // Stands for a bug that needs some loss lasting ≥ 1 s, a disk error and a failed install.
  const fails = async (list: FaultEvent[]): Promise<boolean> =>
    list.some(e => e.kind === 'loss' && (e.forMs ?? Infinity) >= 1000) &&
    list.some(e => e.kind === 'disk-error') &&
    list.some(e => e.kind === 'hook-fail')
  const result = await shrinkFaults(faults, fails)
  assert.equal(result.items, [
    { at: 1000, kind: 'loss', probability: 0.5, forMs: 1000 },
    { at: 2000, kind: 'disk-error', target: 'controller/1', writes: 1 },
    { at: 3000, kind: 'hook-fail', unit: 'kv/0', hook: 'install', times: 1 }
  ])
})

test.run()
