/**
 * Simulated `Storage`: an ordered in-memory store with the semantics of abstract-level
 * (keys ordered by UTF-8 bytes, inclusive/exclusive bounds, reverse, limit, atomic
 * batches, missing key → undefined) plus a model of durability.
 *
 * Durability model, as for a LevelDB write-ahead log on a disk that loses its cache:
 * writes apply in order; a write with `sync: true` makes itself and every write before
 * it durable; `crash()` keeps the durable state and loses the unsynced tail.
 *
 * Everything happens synchronously when a method is called (the promise only reports
 * it), so the outcome never depends on how promises interleave and a crash between a
 * call and its await is well defined: an unsynced write is lost, a synced one is kept.
 * A sorted array is used rather than memory-level for exactly that reason.
 */
import { StorageFailedError } from '../runtime/errors.ts'
import { limits } from '../runtime/limits.ts'
import {
  checkRangeOptions, checkStorageKey, checkStorageOperations, checkStorageValue, compareStorageKeys,
  type RangeOptions, type Storage, type StorageOperation, type StorageValue, type WriteOptions
} from '../runtime/storage.ts'

const component = 'sim-storage'

export interface SimStorageFaultEvent {
  readonly operation: 'get' | 'put' | 'del' | 'batch' | 'range'
  /** Keys written or read; empty for a range. */
  readonly keys: readonly string[]
  /** Whether the write asked for durability; false for reads. */
  readonly sync: boolean
}

/** Return an error to make the operation fail without any effect; undefined lets it run. */
export type SimStorageFaultHook = (event: SimStorageFaultEvent) => Error | undefined

export interface SimStorageOptions {
  /** Unsynced writes held before an OS-style writeback makes them all durable. */
  unsyncedOperationsMax?: number
}

export class SimStorage implements Storage {
  #live = new SortedStore()
  /** The state a crash returns to. */
  readonly #durable = new Map<string, Uint8Array>()
  /** Writes applied to `#live` since the last synced write, in order. */
  #unsynced: StorageOperation[] = []
  readonly #unsyncedOperationsMax: number
  #open = true
  #faultHook: SimStorageFaultHook | undefined
  #failingWrites: { remaining: number, error: Error } | undefined
  #crashes = 0

  constructor (options: SimStorageOptions = {}) {
    this.#unsyncedOperationsMax = options.unsyncedOperationsMax ?? limits.simStorageUnsyncedOperationsMax
  }

  async get (key: string): Promise<StorageValue | undefined> {
    checkStorageKey(component, key)
    this.#admit({ operation: 'get', keys: [key], sync: false })
    return this.#live.get(key)?.slice()
  }

  async put (key: string, value: StorageValue, options: WriteOptions): Promise<void> {
    checkStorageKey(component, key)
    checkStorageValue(component, key, value)
    this.#write([{ type: 'put', key, value: value.slice() }], 'put', options.sync)
  }

  async del (key: string, options: WriteOptions): Promise<void> {
    checkStorageKey(component, key)
    this.#write([{ type: 'del', key }], 'del', options.sync)
  }

  async batch (operations: readonly StorageOperation[], options: WriteOptions): Promise<void> {
    // Validate every operation before applying any: the batch is all or nothing.
    checkStorageOperations(component, operations)
    const copied = operations.map((op): StorageOperation =>
      op.type === 'put' ? { type: 'put', key: op.key, value: op.value.slice() } : { type: 'del', key: op.key })
    this.#write(copied, 'batch', options.sync)
  }

  async range (options: RangeOptions): Promise<Array<[key: string, value: StorageValue]>> {
    checkRangeOptions(component, options)
    this.#admit({ operation: 'range', keys: [], sync: false })
    return this.#live.range(options).map(([key, value]) => [key, value.slice()])
  }

  async close (): Promise<void> {
    this.#open = false
  }

  /** Opens the store again after `close()`, with everything written so far. */
  reopen (): void {
    this.#open = true
  }

  /**
   * The machine lost power: every write not followed by a synced write is gone. The
   * store is open again afterwards, as a restarted agent would find its directory.
   */
  crash (): void {
    this.#unsynced = []
    this.#live = SortedStore.from(this.#durable)
    this.#open = true
    this.#crashes++
  }

  /** Makes the next `count` writes (put, del, batch) fail with `error` and no effect. */
  failNextWrites (count: number, error?: Error): void {
    if (!Number.isSafeInteger(count) || count < 0) throw new RangeError(`sim-storage: failNextWrites needs a count >= 0, got ${String(count)}`)
    this.#failingWrites = count === 0
      ? undefined
      : { remaining: count, error: error ?? new StorageFailedError(component, 'write', 'injected disk error') }
  }

  /** Consulted before every operation; see `SimStorageFaultHook`. */
  setFaultHook (hook: SimStorageFaultHook | undefined): void {
    this.#faultHook = hook
  }

  /** The durable state, ordered by key: what a crash now would leave. */
  snapshotDurable (): Array<[key: string, value: StorageValue]> {
    return [...this.#durable.keys()].sort(compareStorageKeys).map(key => [key, this.#durable.get(key)!.slice()])
  }

  /** The durable value of `key` (what a crash now would leave), not copied: do not modify it. */
  durableGet (key: string): Uint8Array | undefined {
    return this.#durable.get(key)
  }

  /** Writes that a crash now would lose. */
  get unsyncedCount (): number {
    return this.#unsynced.length
  }

  get crashCount (): number {
    return this.#crashes
  }

  #admit (event: SimStorageFaultEvent): void {
    if (!this.#open) throw new StorageFailedError(component, event.operation, 'the store is closed')
    if (event.operation === 'put' || event.operation === 'del' || event.operation === 'batch') {
      const failing = this.#failingWrites
      if (failing !== undefined) {
        if (--failing.remaining === 0) this.#failingWrites = undefined
        throw failing.error
      }
    }
    const error = this.#faultHook?.(event)
    if (error !== undefined) throw error
  }

  #write (operations: StorageOperation[], operation: 'put' | 'del' | 'batch', sync: boolean): void {
    this.#admit({ operation, keys: operations.map(op => op.key), sync })
    for (const op of operations) this.#live.apply(op)
    for (const op of operations) this.#unsynced.push(op)
    // A synced write flushes the log up to and including itself. Past the cap, model the
    // OS writing back its cache so the unsynced tail stays bounded.
    if (sync || this.#unsynced.length >= this.#unsyncedOperationsMax) this.#makeDurable()
  }

  #makeDurable (): void {
    for (const op of this.#unsynced) {
      if (op.type === 'put') this.#durable.set(op.key, op.value)
      else this.#durable.delete(op.key)
    }
    this.#unsynced = []
  }
}

/** Keys kept sorted by UTF-8 byte order beside a map of values. */
class SortedStore {
  #keys: string[] = []
  readonly #values = new Map<string, Uint8Array>()
  /**
   * Deleted keys still in `#keys`, dropped in one pass before the order is next needed:
   * a compaction deletes thousands of log keys at the front of the order, and taking
   * each out with a splice would cost the length of the store every time.
   */
  #stale = 0

  static from (entries: ReadonlyMap<string, Uint8Array>): SortedStore {
    const store = new SortedStore()
    store.#keys = [...entries.keys()].sort(compareStorageKeys)
    for (const [key, value] of entries) store.#values.set(key, value)
    return store
  }

  get (key: string): Uint8Array | undefined {
    return this.#values.get(key)
  }

  /** Values are stored as given; callers pass copies they will not touch again. */
  apply (op: StorageOperation): void {
    if (op.type === 'put') {
      if (!this.#values.has(op.key)) {
        this.#dropStale()
        this.#keys.splice(this.#lowerBound(op.key), 0, op.key)
      }
      this.#values.set(op.key, op.value)
    } else if (this.#values.delete(op.key)) {
      this.#stale++
    }
  }

  #dropStale (): void {
    if (this.#stale === 0) return
    this.#keys = this.#keys.filter(key => this.#values.has(key))
    this.#stale = 0
  }

  range (options: RangeOptions): Array<[string, Uint8Array]> {
    this.#dropStale()
    const { gt, gte, lt, lte } = options
    const from = gte !== undefined ? this.#lowerBound(gte) : gt !== undefined ? this.#upperBound(gt) : 0
    const to = lte !== undefined ? this.#upperBound(lte) : lt !== undefined ? this.#lowerBound(lt) : this.#keys.length
    const count = Math.min(options.limit, Math.max(0, to - from))
    const entries: Array<[string, Uint8Array]> = []
    for (let n = 0; n < count; n++) {
      const key = this.#keys[options.reverse === true ? to - 1 - n : from + n]!
      entries.push([key, this.#values.get(key)!])
    }
    return entries
  }

  /** First index whose key is >= `key`. */
  #lowerBound (key: string): number {
    let lo = 0
    let hi = this.#keys.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (compareStorageKeys(this.#keys[mid]!, key) < 0) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  /** First index whose key is > `key`. */
  #upperBound (key: string): number {
    let lo = 0
    let hi = this.#keys.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (compareStorageKeys(this.#keys[mid]!, key) <= 0) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}
