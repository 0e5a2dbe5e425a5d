import type { RangeOptions, Storage, StorageOperation, StorageValue, WriteOptions } from '../../runtime/storage.ts'
import { SimStorage } from '../../sim/sim-storage.ts'

/**
 * A SimStorage behind a Storage that tests change only in `batch` (to hold, delay or fail
 * a write): every other call goes straight through.
 */
export class SimStorageWrapper implements Storage {
  protected readonly inner = new SimStorage()

  async batch (operations: readonly StorageOperation[], options: WriteOptions): Promise<void> { await this.inner.batch(operations, options) }
  async get (key: string): Promise<StorageValue | undefined> { return await this.inner.get(key) }
  async put (key: string, value: StorageValue, options: WriteOptions): Promise<void> { await this.inner.put(key, value, options) }
  async del (key: string, options: WriteOptions): Promise<void> { await this.inner.del(key, options) }
  async range (options: RangeOptions): Promise<Array<[key: string, value: StorageValue]>> { return await this.inner.range(options) }
  async close (): Promise<void> { await this.inner.close() }
}
