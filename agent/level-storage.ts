/**
 * The real `Storage`: one LevelDB directory per agent through classic-level. Keys are
 * UTF-8 strings (ordered by their bytes), values raw bytes; `sync: true` reaches
 * LevelDB's fdatasync.
 */
import { ClassicLevel } from 'classic-level'
import { StorageFailedError } from '../runtime/errors.ts'
import { findLogDamage } from './level-log-check.ts'
import {
  checkRangeOptions, checkStorageKey, checkStorageOperations, checkStorageValue,
  type RangeOptions, type Storage, type StorageOperation, type StorageValue, type WriteOptions
} from '../runtime/storage.ts'

const component = 'level-storage'

/** The range query LevelStorage hands to the database's iterator. */
export interface LevelRangeQuery { gt?: string, gte?: string, lt?: string, lte?: string, reverse: boolean, limit: number }

/** A chained batch, as classic-level's. */
export interface LevelBatch {
  put (key: string, value: Uint8Array): unknown
  del (key: string): unknown
  write (options: { sync: boolean }): Promise<void>
  close (): Promise<void>
}

/**
 * The part of classic-level that LevelStorage uses, so a test can stand between the two
 * and see every write with its `sync` flag (test/support/power-cut-level.ts).
 */
export interface LevelDatabase {
  open (): Promise<void>
  get (key: string): Promise<Uint8Array | undefined>
  put (key: string, value: Uint8Array, options: { sync: boolean }): Promise<void>
  del (key: string, options: { sync: boolean }): Promise<void>
  batch (): LevelBatch
  iterator (query: LevelRangeQuery): { all (): Promise<Array<[string, Uint8Array]>> }
  close (): Promise<void>
}

export interface LevelStorageOptions {
  /** Wraps the opened-to-be classic-level database; tests only. */
  wrap?: (db: LevelDatabase) => LevelDatabase
}

export class LevelStorage implements Storage {
  readonly #db: LevelDatabase
  readonly location: string

  private constructor (db: LevelDatabase, location: string) {
    this.#db = db
    this.location = location
  }

  /**
   * Opens (creating if missing) the database in `dir`. Refused when a write-ahead log is
   * damaged before records that follow it (level-log-check.ts): LevelDB would drop the
   * damaged records silently, committed entries among them. A torn tail is LevelDB's to truncate.
   */
  static async open (dir: string, options: LevelStorageOptions = {}): Promise<LevelStorage> {
    const damage = findLogDamage(dir)
    if (damage !== undefined) {
      throw new StorageFailedError(component, `open ${JSON.stringify(dir)}`,
        `the log ${damage.file} is damaged at offset ${damage.offset} (${damage.why}) before records that follow it; refusing to drop them (restore this controller's directory from a peer)`)
    }
    const level: LevelDatabase = new ClassicLevel<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' })
    const db = options.wrap?.(level) ?? level
    try {
      await db.open()
    } catch (error) {
      throw new StorageFailedError(component, `open ${JSON.stringify(dir)}`, messageOf(error), { cause: error })
    }
    return new LevelStorage(db, dir)
  }

  async get (key: string): Promise<StorageValue | undefined> {
    checkStorageKey(component, key)
    let value: Uint8Array | undefined
    try {
      value = await this.#db.get(key)
    } catch (error) {
      throw failed(`get ${JSON.stringify(key)}`, error)
    }
    return value === undefined ? undefined : plain(value)
  }

  async put (key: string, value: StorageValue, options: WriteOptions): Promise<void> {
    checkStorageKey(component, key)
    checkStorageValue(component, key, value)
    try {
      await this.#db.put(key, value, { sync: options.sync })
    } catch (error) {
      throw failed(`put ${JSON.stringify(key)}`, error)
    }
  }

  async del (key: string, options: WriteOptions): Promise<void> {
    checkStorageKey(component, key)
    try {
      await this.#db.del(key, { sync: options.sync })
    } catch (error) {
      throw failed(`delete ${JSON.stringify(key)}`, error)
    }
  }

  async batch (operations: readonly StorageOperation[], options: WriteOptions): Promise<void> {
    // Validate everything first: a half-built chained batch is never written, but a
    // clear error before touching the database is easier to act on.
    checkStorageOperations(component, operations)
    if (operations.length === 0) return
    // The chained form is several times faster than db.batch(array) (DEPENDENCIES §6).
    const batch = this.#db.batch()
    try {
      for (const operation of operations) {
        if (operation.type === 'put') batch.put(operation.key, operation.value)
        else batch.del(operation.key)
      }
      await batch.write({ sync: options.sync })
    } catch (error) {
      // A batch that failed before write() is still open and holds its operations.
      await batch.close().catch(() => {})
      throw failed(`write a batch of ${operations.length}`, error)
    }
  }

  async range (options: RangeOptions): Promise<Array<[key: string, value: StorageValue]>> {
    checkRangeOptions(component, options)
    if (options.limit === 0) return []
    // Pass only the bounds that are set: an explicit undefined must not become a bound.
    const query: LevelRangeQuery = {
      reverse: options.reverse ?? false,
      limit: options.limit
    }
    if (options.gt !== undefined) query.gt = options.gt
    if (options.gte !== undefined) query.gte = options.gte
    if (options.lt !== undefined) query.lt = options.lt
    if (options.lte !== undefined) query.lte = options.lte
    let entries: Array<[string, Uint8Array]>
    try {
      entries = await this.#db.iterator(query).all()
    } catch (error) {
      throw failed('read a range', error)
    }
    return entries.map(([key, value]) => [key, plain(value)])
  }

  async close (): Promise<void> {
    try {
      await this.#db.close()
    } catch (error) {
      throw failed(`close ${JSON.stringify(this.location)}`, error)
    }
  }
}

function failed (operation: string, error: unknown): StorageFailedError {
  return new StorageFailedError(component, operation, messageOf(error), { cause: error })
}

function messageOf (error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/**
 * classic-level hands back Buffers; callers (and deep-equality in tests) should see the
 * same plain Uint8Array type from every Storage implementation. This is a view, not a copy.
 */
function plain (value: Uint8Array): Uint8Array {
  return value.constructor === Uint8Array ? value : new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
}
