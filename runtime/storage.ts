/**
 * Durable key/value storage, shaped after abstract-level (string keys, byte values,
 * ordered range iteration, atomic batches). `sync: true` means the write is on stable
 * storage when the promise resolves; the simulator loses unsynced writes on a crash.
 * Real: `LevelStorage` (classic-level) in agent/; simulated: `SimStorage` in sim/.
 */
import { InvalidInputError } from './errors.ts'
import { limits } from './limits.ts'

export type StorageValue = Uint8Array

export type StorageOperation =
  | { type: 'put', key: string, value: StorageValue }
  | { type: 'del', key: string }

export interface WriteOptions {
  /** Wait until the write is durable (fdatasync). */
  sync: boolean
}

export interface RangeOptions {
  gte?: string
  gt?: string
  lte?: string
  lt?: string
  reverse?: boolean
  /** At most this many entries; required so no scan is unbounded. */
  limit: number
}

export interface Storage {
  get (key: string): Promise<StorageValue | undefined>
  put (key: string, value: StorageValue, options: WriteOptions): Promise<void>
  del (key: string, options: WriteOptions): Promise<void>
  /** All operations apply atomically, or none do. */
  batch (operations: readonly StorageOperation[], options: WriteOptions): Promise<void>
  range (options: RangeOptions): Promise<Array<[key: string, value: StorageValue]>>
  close (): Promise<void>
}

/**
 * An upper bound for every key starting with `prefix`, for `lt` (or `lte`).
 *
 * Keys are ordered by their UTF-8 bytes, which is Unicode code point order, not
 * JavaScript's UTF-16 order: a key like `log!😀` sorts after `log!\uffff`. The bound
 * therefore appends the largest code point, U+10FFFF; only keys continuing with that
 * noncharacter itself fall outside.
 */
export function prefixUpperBound (prefix: string): string {
  return prefix + '\u{10FFFF}'
}

/** Orders keys as the stores do: by UTF-8 bytes, which is code point order. */
export function compareStorageKeys (a: string, b: string): number {
  const length = Math.min(a.length, b.length)
  for (let i = 0; i < length; i++) {
    let x = a.charCodeAt(i)
    let y = b.charCodeAt(i)
    if (x === y) continue
    // UTF-16 code units sort surrogates (0xD800-0xDFFF) below 0xE000-0xFFFF, but the
    // code points they encode are above 0xFFFF: move surrogates up past the BMP's top.
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000
    }
    return x - y
  }
  return a.length - b.length
}

const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/**
 * Checks shared by every `Storage` implementation, so the real and simulated stores
 * refuse the same inputs with the same errors instead of diverging on edge cases.
 */
export function checkStorageKey (component: string, key: unknown): asserts key is string {
  // A lone surrogate has no UTF-8 form: LevelDB would store U+FFFD and merge distinct keys.
  if (typeof key !== 'string' || loneSurrogate.test(key)) {
    throw new InvalidInputError(component, 'a well-formed string key', key)
  }
}

export function checkStorageValue (component: string, key: string, value: unknown): asserts value is StorageValue {
  if (!(value instanceof Uint8Array)) {
    throw new InvalidInputError(component, `a Uint8Array value for key ${JSON.stringify(key)}`, value)
  }
}

export function checkStorageOperations (component: string, operations: readonly StorageOperation[]): void {
  if (!Array.isArray(operations)) throw new InvalidInputError(component, 'an array of operations', operations)
  if (operations.length > limits.storageBatchOperationsMax) {
    throw new InvalidInputError(component, `at most ${limits.storageBatchOperationsMax} operations in a batch`, operations)
  }
  for (const operation of operations) {
    if (operation === null || typeof operation !== 'object') throw new InvalidInputError(component, 'a batch operation', operation)
    checkStorageKey(component, operation.key)
    if (operation.type === 'put') checkStorageValue(component, operation.key, operation.value)
    else if (operation.type !== 'del') throw new InvalidInputError(component, 'operation type "put" or "del"', (operation as { type: unknown }).type)
  }
}

/** Both lower (or both upper) bounds at once is ambiguous across stores, so it is refused. */
export function checkRangeOptions (component: string, options: RangeOptions): void {
  const { gt, gte, lt, lte, limit } = options
  if (gt !== undefined && gte !== undefined) throw new InvalidInputError(component, 'at most one of "gt" and "gte"', options)
  if (lt !== undefined && lte !== undefined) throw new InvalidInputError(component, 'at most one of "lt" and "lte"', options)
  for (const bound of [gt, gte, lt, lte]) if (bound !== undefined) checkStorageKey(component, bound)
  if (!Number.isSafeInteger(limit) || limit < 0 || limit > limits.storageRangeEntriesMax) {
    throw new InvalidInputError(component, `a range limit from 0 to ${limits.storageRangeEntriesMax}`, limit)
  }
}
