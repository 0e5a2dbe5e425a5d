/**
 * Which machines one commit concerns (actors/controller/view-readers.ts): a controller
 * kept a view per machine and the keys each read (runtime/model/view-footprint.ts); after a
 * commit it looks again only at the machines whose view read a key the commit touched
 * (found by runtime/model/table.ts `forEachChangedKey`, which costs what changed), or at
 * all of them when a part every view reads whole (config, uuid, …) moved.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { MachineViewCache } from '../actors/controller/machine-view-cache.ts'
import { readerOf } from '../runtime/model/model-draft.ts'
import { emptyTable, forEachChangedKey, tableFrom, tableWith, tableWithout } from '../runtime/model/table.ts'
import { MemoryController } from './support/model-controller.ts'

function changedKeys<T> (a: ReturnType<typeof tableFrom<T>>, b: ReturnType<typeof tableFrom<T>>): string[] {
  const keys: string[] = []
  forEachChangedKey(a, b, key => { keys.push(key) })
  return keys.sort()
}

test('forEachChangedKey names the keys set, replaced or removed, and nothing else', () => {
  const base = tableFrom(Array.from({ length: 500 }, (_, i): [string, { n: number }] => [`u/${i}`, { n: i }]))
  assert.equal(changedKeys(base, base), [], 'one table: nothing changed')
  const replaced = tableWith(base, 'u/7', { n: 7 })
  assert.equal(changedKeys(base, replaced), ['u/7'], 'an equal record that is a new object counts as changed')
  const added = tableWith(replaced, 'u/new', { n: -1 })
  assert.equal(changedKeys(base, added), ['u/7', 'u/new'])
  const removed = tableWithout(added, 'u/3')
  assert.equal(changedKeys(base, removed), ['u/3', 'u/7', 'u/new'])
  assert.equal(changedKeys(removed, base), ['u/3', 'u/7', 'u/new'], 'either way round')
  assert.equal(changedKeys(emptyTable(), tableFrom([['a', 1]])), ['a'])
})

function world (): { c: MemoryController, machines: string[] } {
  const c = new MemoryController()
  c.run('add-charm', { url: 'local:web-0', hash: 'a'.repeat(16), metadata: { name: 'web' } })
  c.run('add-charm', { url: 'local:db-0', hash: 'b'.repeat(16), metadata: { name: 'db' } })
  c.run('deploy', { application: 'web', charm: 'local:web-0', config: {}, constraints: {}, numUnits: 2 })
  c.run('deploy', { application: 'db', charm: 'local:db-0', config: {}, constraints: {}, numUnits: 1 })
  const reader = readerOf(c.context)
  return { c, machines: ['web/0', 'web/1', 'db/0'].map(unit => reader.unit(unit)!.machine) }
}

test('a unit\'s own report concerns its machine only; a part every view reads concerns all', () => {
  const { c, machines } = world()
  const [web0, , db0] = machines as [string, string, string]
  assert.is(new Set(machines).size, 3, 'one machine per unit')
  const cache = new MachineViewCache()
  for (const machine of machines) cache.answer(c.context, machine, undefined)
  const before = c.context
  c.runAs('web/0', 'set-agent-status', { unit: 'web/0', status: 'executing', message: 'running install hook', now: 5 })
  assert.equal([...cache.affected(before, c.context) as Set<string>], [web0], 'the agent status report: its machine, to prove unchanged')
  const reported = c.context
  c.runAs('db/0', 'set-unit-status', { unit: 'db/0', status: 'active', message: '', now: 6 })
  assert.equal([...cache.affected(reported, c.context) as Set<string>], [db0])
  assert.equal([...cache.affected(before, c.context) as Set<string>].sort(), [web0, db0].sort(), 'from an older model: both commits')
  const active = c.context
  c.run('set-model-config', { config: { 'update-status-hook-interval': '10m' } })
  assert.is(cache.affected(active, c.context), 'all', 'the model config is in every view')
})

test.run()
