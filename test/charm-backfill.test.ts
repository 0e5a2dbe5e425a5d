/**
 * The charm backfill (agent/controller/charm-backfill.ts): a controller copies every
 * archive the model names that its own store lacks, from its start and then on every
 * interval, so a controller that joined after the deploys holds them before the one that
 * had them can die (as Juju's new controllers take the blob store with the database).
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { CharmBackfill } from '../agent/controller/charm-backfill.ts'
import { ManualClock } from './support/manual-clock.ts'
import type { Logger } from '../runtime/logger.ts'

const settle = async (): Promise<void> => { for (let i = 0; i < 20; i++) await new Promise(resolve => setImmediate(resolve)) }

function world (model: string[], heldAtStart: string[], peersHave: Set<string>): { backfill: CharmBackfill, clock: ManualClock, store: Set<string>, fetched: string[], looked: string[], lines: string[] } {
  const clock = new ManualClock()
  const store = new Set(heldAtStart)
  const fetched: string[] = []
  const looked: string[] = []
  const lines: string[] = []
  const logger: Logger = { module: 'test', log: (level, message) => { lines.push(`${level} ${message}`) }, child: () => logger }
  const backfill = new CharmBackfill({
    clock,
    hashes: () => model,
    held: async hash => {
      looked.push(hash)
      return store.has(hash)
    },
    fetch: async hash => {
      fetched.push(hash)
      if (hash === 'broken') throw new Error('peer "c0": unreachable')
      if (!peersHave.has(hash)) return false
      store.add(hash)
      return true
    },
    logger,
    intervalMs: 10_000
  })
  return { backfill, clock, store, fetched, looked, lines }
}

test('a pass copies what the store lacks, asks nothing for what it holds, and names what no peer had', async () => {
  const w = world(['a', 'b', 'c', 'b'], ['a'], new Set(['b']))
  assert.equal(await w.backfill.pass(), ['c'])
  assert.equal(w.fetched, ['b', 'c'], 'each missing archive asked for once; the held one not at all')
  assert.ok(w.store.has('b'))
  assert.equal(w.lines, [], 'a copy is logged by the store, with its peer')
})

test('a failing peer is logged in one line and the archive stays missing, not lost from later passes', async () => {
  const w = world(['broken', 'a'], [], new Set(['a']))
  assert.equal(await w.backfill.pass(), ['broken'])
  assert.equal(w.lines.filter(line => line.startsWith('warning')), ['warning cannot copy charm archive "broken" from a peer controller: peer "c0": unreachable'])
  assert.ok(w.store.has('a'))
})

test('start: a pass at once, then one every interval, so an archive named later or held by a peer later is copied; stop ends it', async () => {
  const model = ['a']
  const peersHave = new Set<string>()
  const w = world(model, [], peersHave)
  w.backfill.start()
  w.clock.advance(0)
  await settle()
  assert.equal(w.fetched, ['a'], 'first pass at start')
  assert.not.ok(w.store.has('a'))
  peersHave.add('a')
  model.push('b')
  peersHave.add('b')
  w.clock.advance(9_999)
  await settle()
  assert.equal(w.fetched, ['a'], 'nothing before the interval')
  w.clock.advance(1)
  await settle()
  assert.equal(w.fetched, ['a', 'a', 'b'])
  assert.ok(w.store.has('a') && w.store.has('b'))
  assert.is(w.clock.pending, 0, 'nothing missing: no further pass until the charms change')
  const lookups = w.looked.length
  model.push('c')
  peersHave.add('c')
  w.backfill.changed()
  w.clock.advance(0)
  await settle()
  assert.equal(w.fetched, ['a', 'a', 'b', 'c'], 'held archives are not asked for again')
  assert.equal(w.looked.slice(lookups), ['c'], 'nor looked up in the store again')
  w.backfill.stop()
  assert.is(w.clock.pending, 0)
})

test('changed: the charms the model names changed, so a pass runs now, not at the next interval', async () => {
  const model: string[] = []
  const w = world(model, [], new Set(['late']))
  w.backfill.start()
  w.clock.advance(0)
  await settle()
  assert.equal(w.fetched, [], 'a joining controller\'s model names nothing yet')
  model.push('late')
  w.backfill.changed()
  w.clock.advance(0)
  await settle()
  assert.equal(w.fetched, ['late'])
  assert.ok(w.store.has('late'))
  w.backfill.stop()
  assert.is(w.clock.pending, 0)
})

test.run()
