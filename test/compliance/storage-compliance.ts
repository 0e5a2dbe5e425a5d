/**
 * The `Storage` contract, run against LevelStorage (LevelDB on disk) and SimStorage,
 * so the simulator's store behaves like the real one in everything but durability.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { prefixUpperBound, type RangeOptions, type Storage } from '../../runtime/storage.ts'
import { limits } from '../../runtime/limits.ts'
import { rejects } from '../support/rejects.ts'

export interface StorageHarness<S extends Storage = Storage> {
  name: string
  /** A new, empty store. */
  open (): Promise<S>
  /** Close the store cleanly and open the same data again. */
  reopen (storage: S): Promise<S>
}

const bytes = (...values: number[]): Uint8Array => new Uint8Array(values)
const text = (value: string): Uint8Array => new TextEncoder().encode(value)
const unsynced = { sync: false }
const synced = { sync: true }


export function storageCompliance<S extends Storage> (harness: StorageHarness<S>): void {
  const test = suite(`storage compliance: ${harness.name}`)
  const opened: Storage[] = []
  const open = async (): Promise<S> => {
    const storage = await harness.open()
    opened.push(storage)
    return storage
  }
  test.after(async () => {
    for (const storage of opened) await storage.close().catch(() => {})
  })

  const keysOf = async (storage: Storage, options: RangeOptions): Promise<string[]> =>
    (await storage.range(options)).map(([key]) => key)

  const withKeys = async (keys: string[]): Promise<S> => {
    const storage = await open()
    await storage.batch(keys.map(key => ({ type: 'put' as const, key, value: text(key) })), synced)
    return storage
  }

  test('a missing key reads as undefined', async () => {
    const storage = await open()
    assert.is(await storage.get('nothing'), undefined)
  })

  test('put then get returns the exact bytes as a plain Uint8Array', async () => {
    const storage = await open()
    const all = new Uint8Array(256).map((_, i) => i)
    await storage.put('all', all, unsynced)
    await storage.put('empty', new Uint8Array(0), synced)
    const back = await storage.get('all')
    assert.ok(back !== undefined)
    assert.is(back.constructor, Uint8Array)
    assert.equal(back, all)
    assert.equal(await storage.get('empty'), new Uint8Array(0))
  })

  test('put overwrites; del removes; deleting a missing key is fine', async () => {
    const storage = await open()
    await storage.put('k', bytes(1), unsynced)
    await storage.put('k', bytes(2), synced)
    assert.equal(await storage.get('k'), bytes(2))
    await storage.del('k', synced)
    assert.is(await storage.get('k'), undefined)
    await storage.del('never', unsynced)
  })

  test('stored values are copies: mutating what went in or came out changes nothing', async () => {
    const storage = await open()
    const value = bytes(1, 2, 3)
    await storage.put('k', value, unsynced)
    value[0] = 9
    const first = await storage.get('k')
    first![1] = 9
    assert.equal(await storage.get('k'), bytes(1, 2, 3))
  })

  test('a batch applies all its operations in order', async () => {
    const storage = await open()
    await storage.put('gone', bytes(0), unsynced)
    await storage.batch([
      { type: 'put', key: 'a', value: bytes(1) },
      { type: 'put', key: 'b', value: bytes(2) },
      { type: 'del', key: 'gone' },
      { type: 'put', key: 'c', value: bytes(3) },
      { type: 'del', key: 'c' },
      { type: 'del', key: 'd' },
      { type: 'put', key: 'd', value: bytes(4) },
      { type: 'put', key: 'a', value: bytes(5) }
    ], synced)
    assert.equal(await storage.range({ limit: 10 }), [['a', bytes(5)], ['b', bytes(2)], ['d', bytes(4)]])
    await storage.batch([], unsynced)
  })

  test('a batch with one bad operation applies none', async () => {
    const storage = await open()
    const bad = [
      { type: 'put', key: 'a', value: bytes(1) },
      { type: 'put', key: 'b', value: 'not bytes' }
    ] as never
    await rejects(storage.batch(bad, synced), 'InvalidInputError')
    await rejects(storage.batch([{ type: 'put', key: 'a', value: bytes(1) }, { type: 'merge', key: 'x' }] as never, synced), 'InvalidInputError')
    assert.is(await storage.get('a'), undefined)
    assert.equal(await storage.range({ limit: 10 }), [])
  })

  test('a batch above the operation maximum is refused whole', async () => {
    const storage = await open()
    const operations = Array.from({ length: limits.storageBatchOperationsMax + 1 }, () => ({ type: 'del' as const, key: 'k' }))
    operations[0] = { type: 'put', key: 'first', value: bytes(1) } as never
    await rejects(storage.batch(operations, synced), 'InvalidInputError')
    assert.is(await storage.get('first'), undefined)
  })

  test('keys and values are checked', async () => {
    const storage = await open()
    await rejects(storage.put(42 as never, bytes(1), unsynced), 'InvalidInputError')
    await rejects(storage.put('lone \ud800 surrogate', bytes(1), unsynced), 'InvalidInputError')
    await rejects(storage.put('k', [1, 2] as never, unsynced), 'InvalidInputError')
    await rejects(storage.get(undefined as never), 'InvalidInputError')
  })

  test('range honours gte/gt/lte/lt in every combination', async () => {
    const storage = await withKeys(['a', 'b', 'c', 'd', 'e'])
    assert.equal(await keysOf(storage, { limit: 10 }), ['a', 'b', 'c', 'd', 'e'])
    assert.equal(await keysOf(storage, { gte: 'b', lt: 'd', limit: 10 }), ['b', 'c'])
    assert.equal(await keysOf(storage, { gt: 'b', lte: 'd', limit: 10 }), ['c', 'd'])
    assert.equal(await keysOf(storage, { gte: 'b', lte: 'd', limit: 10 }), ['b', 'c', 'd'])
    assert.equal(await keysOf(storage, { gt: 'b', lt: 'd', limit: 10 }), ['c'])
    assert.equal(await keysOf(storage, { gt: 'bb', limit: 10 }), ['c', 'd', 'e'])
    assert.equal(await keysOf(storage, { lt: 'bb', limit: 10 }), ['a', 'b'])
    assert.equal(await keysOf(storage, { gte: 'e', limit: 10 }), ['e'])
    assert.equal(await keysOf(storage, { gt: 'e', limit: 10 }), [])
    assert.equal(await keysOf(storage, { gt: 'c', lt: 'b', limit: 10 }), [])
    assert.equal(await keysOf(storage, { gte: 'c', lte: 'c', limit: 10 }), ['c'])
  })

  test('range in reverse, with bounds and limit', async () => {
    const storage = await withKeys(['a', 'b', 'c', 'd', 'e'])
    assert.equal(await keysOf(storage, { reverse: true, limit: 10 }), ['e', 'd', 'c', 'b', 'a'])
    assert.equal(await keysOf(storage, { gt: 'b', lte: 'd', reverse: true, limit: 10 }), ['d', 'c'])
    assert.equal(await keysOf(storage, { lt: 'd', reverse: true, limit: 2 }), ['c', 'b'])
    assert.equal(await keysOf(storage, { reverse: true, limit: 1 }), ['e'])
  })

  test('range limit: stops early, 0 gives nothing, above the maximum is refused', async () => {
    const storage = await withKeys(['a', 'b', 'c', 'd', 'e'])
    assert.equal(await keysOf(storage, { limit: 2 }), ['a', 'b'])
    assert.equal(await keysOf(storage, { gte: 'b', limit: 2 }), ['b', 'c'])
    assert.equal(await keysOf(storage, { limit: 0 }), [])
    await rejects(storage.range({ limit: limits.storageRangeEntriesMax + 1 }), 'InvalidInputError')
    await rejects(storage.range({ limit: -1 }), 'InvalidInputError')
    await rejects(storage.range({ limit: Number.POSITIVE_INFINITY }), 'InvalidInputError')
  })

  test('range refuses two lower or two upper bounds', async () => {
    const storage = await open()
    await rejects(storage.range({ gt: 'a', gte: 'a', limit: 1 }), 'InvalidInputError')
    await rejects(storage.range({ lt: 'a', lte: 'a', limit: 1 }), 'InvalidInputError')
  })

  test('range returns keys with their values', async () => {
    const storage = await withKeys(['x', 'y'])
    assert.equal(await storage.range({ limit: 5 }), [['x', text('x')], ['y', text('y')]])
  })

  test('keys sort by UTF-8 bytes (code points), not UTF-16 units', async () => {
    const keys = ['z', '\u00e9', '\uffff', '\u{1F600}', 'Z', '']
    const storage = await withKeys(keys)
    assert.equal(await keysOf(storage, { limit: 10 }), ['', 'Z', 'z', '\u00e9', '\uffff', '\u{1F600}'])
    assert.equal(await keysOf(storage, { gt: '\uffff', limit: 10 }), ['\u{1F600}'])
  })

  test('prefixUpperBound bounds every key with the prefix and nothing else', async () => {
    const storage = await withKeys(['lof', 'log', 'log!', 'log!1', 'log!2\u0000', 'log!\uffff', 'log!\u{1F600}x', 'log"', 'logz'])
    assert.equal(await keysOf(storage, { gte: 'log!', lt: prefixUpperBound('log!'), limit: 100 }),
      ['log!', 'log!1', 'log!2\u0000', 'log!\uffff', 'log!\u{1F600}x'])
    assert.equal(await keysOf(storage, { gt: 'log!', lt: prefixUpperBound('log!'), reverse: true, limit: 1 }), ['log!\u{1F600}x'])
  })

  test('zero-padded numeric keys scan in numeric order', async () => {
    const storage = await open()
    const key = (index: number): string => `log!${String(index).padStart(16, '0')}`
    const operations = Array.from({ length: 1000 }, (_, i) => ({ type: 'put' as const, key: key(999 - i), value: bytes(i % 256) }))
    await storage.batch(operations, synced)
    const keys = await keysOf(storage, { gte: key(0), lte: key(999), limit: 1000 })
    assert.equal(keys, Array.from({ length: 1000 }, (_, i) => key(i)))
    assert.equal(await keysOf(storage, { gt: key(500), limit: 2 }), [key(501), key(502)])
  })

  test('data survives a clean close and reopen, synced or not', async () => {
    let storage = await open()
    await storage.put('synced', bytes(1), synced)
    await storage.put('unsynced', bytes(2), unsynced)
    await storage.batch([{ type: 'put', key: 'batched', value: bytes(3) }], unsynced)
    storage = await harness.reopen(storage)
    opened.push(storage)
    assert.equal(await storage.range({ limit: 10 }), [['batched', bytes(3)], ['synced', bytes(1)], ['unsynced', bytes(2)]])
  })

  test('a closed store refuses operations', async () => {
    const storage = await open()
    await storage.close()
    await rejects(storage.get('k'), 'StorageFailedError')
    await rejects(storage.put('k', bytes(1), synced), 'StorageFailedError')
  })

  test.run()
}
