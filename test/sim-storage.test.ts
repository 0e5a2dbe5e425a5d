/** SimStorage beyond the Storage contract: crash durability and injected faults. */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { SimStorage } from '../sim/sim-storage.ts'
import { StorageFailedError } from '../runtime/errors.ts'

const test = suite('sim storage')
const b = (...values: number[]): Uint8Array => new Uint8Array(values)
const unsynced = { sync: false }
const synced = { sync: true }

async function rejectsWith (promise: Promise<unknown>, check: (error: Error) => boolean): Promise<void> {
  try {
    await promise
  } catch (error) {
    assert.ok(error instanceof Error && check(error), String(error))
    return
  }
  assert.unreachable('expected a rejection')
}

test('a crash loses unsynced writes and keeps synced ones', async () => {
  const storage = new SimStorage()
  await storage.put('durable', b(1), synced)
  await storage.put('volatile', b(2), unsynced)
  await storage.batch([{ type: 'put', key: 'batched', value: b(3) }], unsynced)
  await storage.put('durable', b(9), unsynced)
  assert.is(storage.unsyncedCount, 3)
  storage.crash()
  assert.equal(await storage.range({ limit: 10 }), [['durable', b(1)]])
  assert.is(storage.unsyncedCount, 0)
  assert.is(storage.crashCount, 1)
})

test('a synced write makes every write before it durable', async () => {
  const storage = new SimStorage()
  await storage.put('a', b(1), unsynced)
  await storage.del('gone', unsynced)
  await storage.put('b', b(2), unsynced)
  await storage.batch([{ type: 'put', key: 'c', value: b(3) }, { type: 'del', key: 'a' }], synced)
  await storage.put('d', b(4), unsynced)
  storage.crash()
  assert.equal(await storage.range({ limit: 10 }), [['b', b(2)], ['c', b(3)]])
})

test('an unsynced delete comes back after a crash', async () => {
  const storage = new SimStorage()
  await storage.put('k', b(1), synced)
  await storage.del('k', unsynced)
  assert.is(await storage.get('k'), undefined)
  storage.crash()
  assert.equal(await storage.get('k'), b(1))
})

test('writes still in flight at the crash: synced ones and those before them survive', async () => {
  const storage = new SimStorage()
  const before = storage.put('before', b(1), unsynced)
  const kept = storage.put('kept', b(2), synced)
  const after = storage.put('after', b(3), unsynced)
  storage.crash()
  await Promise.all([before, kept, after])
  assert.equal(storage.snapshotDurable(), [['before', b(1)], ['kept', b(2)]])
  assert.equal(await storage.range({ limit: 10 }), [['before', b(1)], ['kept', b(2)]])
})

test('snapshotDurable is sorted by key bytes and is a copy', async () => {
  const storage = new SimStorage()
  await storage.batch([
    { type: 'put', key: '\u{1F600}', value: b(1) },
    { type: 'put', key: '\uffff', value: b(2) },
    { type: 'put', key: 'a', value: b(3) }
  ], synced)
  await storage.put('unsynced', b(4), unsynced)
  const snapshot = storage.snapshotDurable()
  assert.equal(snapshot.map(([key]) => key), ['a', '\uffff', '\u{1F600}'])
  snapshot[0]![1][0] = 99
  assert.equal(await storage.get('a'), b(3))
})

test('failNextWrites fails that many writes with no effect, then recovers', async () => {
  const storage = new SimStorage()
  const diskFull = new Error('ENOSPC: no space left on device')
  storage.failNextWrites(2, diskFull)
  await rejectsWith(storage.put('a', b(1), synced), error => error === diskFull)
  await rejectsWith(storage.batch([{ type: 'put', key: 'b', value: b(2) }], unsynced), error => error === diskFull)
  assert.equal(await storage.range({ limit: 10 }), [])
  await storage.put('c', b(3), synced)
  assert.equal(storage.snapshotDurable(), [['c', b(3)]])
})

test('failNextWrites without an error uses a StorageFailedError; reads still work', async () => {
  const storage = new SimStorage()
  await storage.put('k', b(1), synced)
  storage.failNextWrites(1)
  assert.equal(await storage.get('k'), b(1))
  await rejectsWith(storage.del('k', synced), error => error instanceof StorageFailedError && /injected/.test(error.message))
  assert.equal(await storage.get('k'), b(1))
})

test('a fault hook can fail only synced writes', async () => {
  const storage = new SimStorage()
  const events: string[] = []
  storage.setFaultHook(event => {
    events.push(`${event.operation}:${event.keys.join(',')}:${String(event.sync)}`)
    return event.sync ? new StorageFailedError('sim-storage', 'sync', 'fdatasync failed') : undefined
  })
  await storage.put('a', b(1), unsynced)
  await rejectsWith(storage.put('b', b(2), synced), error => error.name === 'StorageFailedError')
  await rejectsWith(storage.batch([{ type: 'del', key: 'a' }], synced), error => /fdatasync/.test(error.message))
  await storage.get('a')
  assert.equal(events, ['put:a:false', 'put:b:true', 'batch:a:true', 'get:a:false'])
  storage.setFaultHook(undefined)
  assert.equal(await storage.range({ limit: 10 }), [['a', b(1)]])
  storage.crash()
  assert.equal(await storage.range({ limit: 10 }), [])
})

test('a fault hook can fail reads', async () => {
  const storage = new SimStorage()
  storage.setFaultHook(event => event.operation === 'range' ? new Error('EIO') : undefined)
  await rejectsWith(storage.range({ limit: 1 }), error => error.message === 'EIO')
})

test('the unsynced tail is bounded: past the cap it is written back', async () => {
  const storage = new SimStorage({ unsyncedOperationsMax: 3 })
  await storage.put('a', b(1), unsynced)
  await storage.put('b', b(2), unsynced)
  assert.is(storage.unsyncedCount, 2)
  await storage.put('c', b(3), unsynced)
  assert.is(storage.unsyncedCount, 0)
  await storage.put('d', b(4), unsynced)
  storage.crash()
  assert.equal((await storage.range({ limit: 10 })).map(([key]) => key), ['a', 'b', 'c'])
})

test('a crash reopens a closed store', async () => {
  const storage = new SimStorage()
  await storage.put('k', b(1), synced)
  await storage.close()
  await rejectsWith(storage.get('k'), error => /closed/.test(error.message))
  storage.crash()
  assert.equal(await storage.get('k'), b(1))
})

test.run()
