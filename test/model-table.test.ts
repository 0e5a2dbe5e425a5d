/**
 * The model's tables (runtime/model/table.ts): a hash array mapped trie of plain data.
 * What they promise: reads see exactly the entries written (checked against a Map over
 * random sets and deletes, colliding keys and `__proto__` included), a draft never changes
 * its base and shares every node a write did not touch, `forEachChangedKey` reports the
 * keys a change touched and only those, the order of entries depends on the keys alone,
 * and a table read from disk or a peer is checked before it is trusted.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { decode, encode } from '../runtime/codec.ts'
import { hashString32, SeededRandom } from '../runtime/random.ts'
import {
  TableDraft, emptyTable, forEachChangedKey, isTableEntry, tableEntries, tableFrom, tableGet, tableHas, tableKeys,
  tableLevels, tableShapeProblem, tableWith, tableWithout, type Table, type TableNode
} from '../runtime/model/table.ts'

/** Two pairs of keys with equal 32-bit hashes: they share every level and a list below. */
const colliding = [['unit/app/375909', 'unit/app/1010614'], ['unit/app/375908', 'unit/app/1010615']] as const

function nodesOf<T> (table: Table<T>): Set<TableNode<T>> {
  const nodes = new Set<TableNode<T>>()
  const stack = [table.root]
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    nodes.add(node)
    for (const slot of node.slots) if (!isTableEntry(slot)) stack.push(slot)
  }
  return nodes
}

function assertMatches<T> (table: Table<T>, expected: Map<string, T>, note: string): void {
  assert.is(tableShapeProblem(table), undefined, note)
  assert.is(table.size, expected.size, note)
  assert.equal(new Map(tableEntries(table)), expected, note)
  for (const [key, value] of expected) {
    assert.ok(tableHas(table, key), `${note}: has ${key}`)
    assert.is(tableGet(table, key), value, `${note}: ${key}`)
  }
}

test('colliding keys really collide', () => {
  for (const [a, b] of colliding) assert.is(hashString32(a), hashString32(b))
})

test('random sets and deletes read back as a Map does, with the shape a fresh build gives', () => {
  const random = new SeededRandom(7)
  const keys = [...Array.from({ length: 3_000 }, (_, i) => `unit/app${i % 7}/${i}`), ...colliding.flat(), '__proto__', 'constructor', '']
  const expected = new Map<string, number>()
  let table = emptyTable<number>()
  for (let round = 0; round < 60; round++) {
    const draft = new TableDraft(table)
    const writes = random.int(1, round < 30 ? 200 : 20)
    for (let i = 0; i < writes; i++) {
      const key = keys[random.int(0, keys.length - 1)]!
      if (random.next() < 0.35) {
        assert.is(draft.delete(key), expected.delete(key), `delete ${key} says whether it was there`)
      } else {
        draft.set(key, i)
        expected.set(key, i)
      }
      assert.is(draft.get(key), expected.get(key))
      assert.is(draft.has(key), expected.has(key))
      assert.is(draft.size, expected.size)
    }
    table = draft.finish()
    assertMatches(table, expected, `round ${round}`)
  }
  assert.ok(table.size > 1_000, `${table.size} entries`)
  // The shape depends on the keys alone (colliding keys keep the order they came in).
  const fresh = tableFrom(tableEntries(table))
  assert.equal(fresh, table, 'deletes leave no empty or lone-entry node behind')
})

test('a draft never changes its base, and a write copies only the nodes on its path', () => {
  const base = tableFrom(Array.from({ length: 20_000 }, (_, i): [string, number] => [`k${i}`, i]))
  const before = encode(base, 'test')
  const baseNodes = nodesOf(base)
  const draft = new TableDraft(base)
  draft.set('k17', -1)
  draft.set('k17', -2)
  draft.set('new', 1)
  draft.delete('k5')
  const after = draft.finish()
  assert.equal(encode(base, 'test'), before, 'the base is unchanged')
  const copied = [...nodesOf(after)].filter(node => !baseNodes.has(node))
  assert.ok(copied.length <= 3 * (tableLevels + 1), `${copied.length} nodes copied of ${baseNodes.size}`)
  assert.is(tableGet(after, 'k17'), -2)
  assert.is(tableGet(base, 'k17'), 17)
  // Writes after finish copy again rather than change the finished table.
  draft.set('k18', -3)
  const later = draft.finish()
  assert.is(tableGet(after, 'k18'), 18)
  assert.is(tableGet(later, 'k18'), -3)
  assert.is(new TableDraft(base).finish(), base, 'a draft that wrote nothing is its base')
})

test('forEachChangedKey reports what was set, replaced or removed, and nothing else', () => {
  const random = new SeededRandom(11)
  const keys = [...Array.from({ length: 2_000 }, (_, i) => `m/${i}`), ...colliding.flat()]
  let table = tableFrom(keys.filter((_, i) => i % 3 !== 0).map((key, i): [string, number] => [key, i]))
  for (let round = 0; round < 40; round++) {
    const draft = new TableDraft(table)
    const touched = new Set<string>()
    for (let i = random.int(0, 30); i > 0; i--) {
      const key = keys[random.int(0, keys.length - 1)]!
      const choice = random.next()
      if (choice < 0.3) {
        if (draft.delete(key)) touched.add(key)
      } else if (choice < 0.45 && draft.has(key)) {
        draft.set(key, draft.get(key)!) // the same value again: no change
      } else {
        draft.set(key, 10_000 + round * 100 + i)
        touched.add(key)
      }
    }
    const next = draft.finish()
    const was = new Map(tableEntries(table))
    const now = new Map(tableEntries(next))
    const changed = [...touched].filter(key => was.get(key) !== now.get(key)).sort()
    const reported: string[] = []
    forEachChangedKey(table, next, key => { reported.push(key) })
    assert.equal(reported.sort(), changed, `round ${round}`)
    table = next
  }
  const none: string[] = []
  forEachChangedKey(table, table, key => { none.push(key) })
  assert.equal(none, [])
})

test('colliding keys live in one list below the last level, and leave it one at a time', () => {
  const [a, b] = colliding[0]
  const both = tableFrom([[a, 1], [b, 2], ['other', 3]])
  assert.is(tableShapeProblem(both), undefined)
  assert.is(tableGet(both, a), 1)
  assert.is(tableGet(both, b), 2)
  const onlyB = tableWithout(both, a)
  assert.equal(tableEntries(onlyB).sort(), [['other', 3], [b, 2]].sort())
  assert.equal(onlyB, tableFrom([['other', 3], [b, 2]]), 'the lone entry moves back up')
  const changed: string[] = []
  forEachChangedKey(both, tableWith(onlyB, b, 5), key => { changed.push(key) })
  assert.equal(changed.sort(), [a, b].sort())
})

test('the order of entries depends on the keys, not the order they were written in', () => {
  const entries = Array.from({ length: 500 }, (_, i): [string, number] => [`unit/${i}`, i])
  const forwards = tableFrom(entries)
  const backwards = tableFrom([...entries].reverse())
  assert.equal(tableKeys(forwards), tableKeys(backwards))
  assert.equal(encode(forwards, 'test'), encode(backwards, 'test'))
})

test('a table from disk or a peer is checked: size, shape, depth and where each key sits', () => {
  const table = tableFrom(Array.from({ length: 300 }, (_, i): [string, number] => [`k${i}`, i]))
  const wire = decode(encode(table, 'test'), 'test') as { size: number, root: { bitmap: number, slots: unknown[] } }
  assert.is(tableShapeProblem(wire), undefined)
  assert.match(tableShapeProblem({ ...wire, size: 301 }) ?? '', /301 entries/)
  assert.match(tableShapeProblem({ size: 0, buckets: [] }) ?? '', /a table/)
  assert.match(tableShapeProblem({ size: 0, root: { bitmap: 3, slots: [] } }) ?? '', /as many slots as bits/)
  // An entry moved to the slot of another chunk.
  const k = 'k1'
  const chunk = hashString32(k) & 31
  const wrongBit = 1 << ((chunk + 1) & 31)
  assert.match(tableShapeProblem({ size: 1, root: { bitmap: wrongBit, slots: [[k, 1]] } }) ?? '', /where its hash puts it/)
  assert.match(tableShapeProblem({ size: 1, root: { bitmap: 1, slots: [['k', 1, 2]] } }) ?? '', /a key and a value/)
  // Nested deeper than the levels allow.
  let deep: unknown = { bitmap: 0, slots: [[k, 1]] }
  for (let i = 0; i < tableLevels + 3; i++) deep = { bitmap: 1, slots: [deep] }
  assert.ok(tableShapeProblem({ size: 1, root: deep }) !== undefined, 'too deep')
})

test.run()
