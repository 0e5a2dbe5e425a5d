import { hashString32 } from '../random.ts'

/**
 * A keyed collection of the model context as plain data: records keyed by name or id,
 * spread over a fixed two-level tree of buckets by a hash of the key (64 × 64 leaves).
 * Replacing one entry copies one leaf and two small bucket indexes, not the whole
 * collection, so a command costs about the same whether the model has ten units or a
 * hundred thousand.
 *
 * Tables are immutable values (msgpackr-serialisable: nested plain objects, no Maps).
 * Read them with the functions below; change them only through `TableDraft` (one
 * command's copy-on-write view) so a context handed to subscribers never changes.
 */
export interface Table<T> {
  readonly size: number
  /** Bucket → sub-bucket → entries; null where empty. Arrays, because copying them is cheap. */
  readonly buckets: ReadonlyArray<ReadonlyArray<Readonly<Record<string, T>> | null> | null>
}

/** Fixed: changing it changes where keys live, so it is part of the RaftSnapshot format. */
export const tableFanout = 64

/** The bucket and sub-bucket of a key. */
export function bucketsOf (key: string): [number, number] {
  const hash = hashString32(key)
  return [hash % tableFanout, (hash >>> 6) % tableFanout]
}

export function emptyTable<T> (): Table<T> {
  return { size: 0, buckets: emptyBuckets() }
}

/** `fill` rather than `Array.from` with a callback: every view fetch builds a dozen of these. */
function emptyBuckets<B> (): Array<B | null> {
  return new Array<B | null>(tableFanout).fill(null)
}

export function tableGet<T> (table: Table<T>, key: string): T | undefined {
  const [outer, inner] = bucketsOf(key)
  const leaf = table.buckets[outer]?.[inner]
  if (leaf == null || !Object.hasOwn(leaf, key)) return undefined
  return leaf[key]
}

export function tableHas<T> (table: Table<T>, key: string): boolean {
  const [outer, inner] = bucketsOf(key)
  const leaf = table.buckets[outer]?.[inner]
  return leaf != null && Object.hasOwn(leaf, key)
}

/**
 * Every entry, in a deterministic order (bucket, then insertion). Sort where order matters.
 * An array rather than a generator: tables are small and read on every view and
 * remote-state projection, where resuming a generator per entry cost more than the reads.
 */
export function tableEntries<T> (table: Table<T>): Array<[string, T]> {
  const entries: Array<[string, T]> = []
  forEachEntry(table, (key, value) => { entries.push([key, value]) })
  return entries
}

export function tableValues<T> (table: Table<T>): T[] {
  const values: T[] = []
  forEachEntry(table, (_key, value) => { values.push(value) })
  return values
}

export function tableKeys<T> (table: Table<T>): string[] {
  const keys: string[] = []
  forEachEntry(table, key => { keys.push(key) })
  return keys
}

/** Visits every entry in the order of `tableEntries`, without building a list. */
export function forEachTableEntry<T> (table: Table<T>, visit: (key: string, value: T) => void): void {
  forEachEntry(table, visit)
}

function forEachEntry<T> (table: Table<T>, visit: (key: string, value: T) => void): void {
  for (const middle of table.buckets) {
    if (middle === null) continue
    for (const leaf of middle) {
      if (leaf === null) continue
      for (const key of Object.keys(leaf)) visit(key, leaf[key] as T)
    }
  }
}

/**
 * Visits every key whose entry differs between two versions of one table (set, replaced
 * or removed), by identity. Copy-on-write shares every untouched bucket and leaf between
 * the versions, so this costs what changed, not the table's size: a watcher learns which
 * records one commit touched without scanning them all.
 */
export function forEachChangedKey<T> (before: Table<T>, after: Table<T>, visit: (key: string) => void): void {
  if (before === after) return
  for (let outer = 0; outer < tableFanout; outer++) {
    const a = before.buckets[outer] ?? null
    const b = after.buckets[outer] ?? null
    if (a === b) continue
    for (let inner = 0; inner < tableFanout; inner++) {
      const x = a?.[inner] ?? null
      const y = b?.[inner] ?? null
      if (x !== y) changedInLeaf(x, y, visit)
    }
  }
}

function changedInLeaf<T> (x: Readonly<Record<string, T>> | null, y: Readonly<Record<string, T>> | null, visit: (key: string) => void): void {
  if (x !== null) {
    for (const key of Object.keys(x)) if (y === null || !Object.hasOwn(y, key) || y[key] !== x[key]) visit(key)
  }
  if (y !== null) {
    for (const key of Object.keys(y)) if (x === null || !Object.hasOwn(x, key)) visit(key)
  }
}

/** Builds a table from entries. */
export function tableFrom<T> (entries: Iterable<[string, T]>): Table<T> {
  const draft = new TableDraft(emptyTable<T>())
  for (const [key, value] of entries) draft.set(key, value)
  return draft.finish()
}

/** A table with one entry set (or replaced): for small, one-off changes outside a draft. */
export function tableWith<T> (table: Table<T>, key: string, value: T): Table<T> {
  const draft = new TableDraft(table)
  draft.set(key, value)
  return draft.finish()
}

/** A table without `key`. */
export function tableWithout<T> (table: Table<T>, key: string): Table<T> {
  const draft = new TableDraft(table)
  draft.delete(key)
  return draft.finish()
}

function hasEntries (record: object): boolean {
  for (const key in record) if (Object.hasOwn(record, key)) return true
  return false
}

/** Sets an own data property, safe for keys such as `__proto__`. */
function defineEntry<T> (target: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
  } else {
    target[key] = value
  }
}

/**
 * Copy-on-write changes to one table within one command: the first write to a leaf
 * copies it, later writes change the copy. `finish()` returns the new table; the base
 * table is never modified.
 */
export class TableDraft<T> {
  readonly #base: Table<T>
  /** `outer * fanout + inner` → the copied leaf. */
  readonly #copied = new Map<number, Record<string, T>>()
  #size: number

  constructor (base: Table<T>) {
    this.#base = base
    this.#size = base.size
  }

  get size (): number { return this.#size }

  #leaf (outer: number, inner: number): Readonly<Record<string, T>> | undefined {
    return this.#copied.get(outer * tableFanout + inner) ?? this.#base.buckets[outer]?.[inner] ?? undefined
  }

  #writable (outer: number, inner: number): Record<string, T> {
    const id = outer * tableFanout + inner
    let leaf = this.#copied.get(id)
    if (leaf === undefined) {
      // Spread defines own data properties, so a `__proto__` key stays an entry.
      leaf = { ...this.#base.buckets[outer]?.[inner] }
      this.#copied.set(id, leaf)
    }
    return leaf
  }

  get (key: string): T | undefined {
    const [outer, inner] = bucketsOf(key)
    const leaf = this.#leaf(outer, inner)
    if (leaf === undefined || !Object.hasOwn(leaf, key)) return undefined
    return leaf[key]
  }

  has (key: string): boolean {
    const [outer, inner] = bucketsOf(key)
    const leaf = this.#leaf(outer, inner)
    return leaf !== undefined && Object.hasOwn(leaf, key)
  }

  set (key: string, value: T): void {
    const [outer, inner] = bucketsOf(key)
    const leaf = this.#writable(outer, inner)
    if (!Object.hasOwn(leaf, key)) this.#size++
    defineEntry(leaf, key, value)
  }

  delete (key: string): boolean {
    const [outer, inner] = bucketsOf(key)
    const existing = this.#leaf(outer, inner)
    if (existing === undefined || !Object.hasOwn(existing, key)) return false
    delete this.#writable(outer, inner)[key]
    this.#size--
    return true
  }

  finish (): Table<T> {
    if (this.#copied.size === 0) return this.#base
    const buckets = this.#base.buckets.slice()
    const copiedOuter = new Set<number>()
    for (const [id, leaf] of this.#copied) {
      const outer = Math.floor(id / tableFanout)
      const inner = id % tableFanout
      if (!copiedOuter.has(outer)) {
        buckets[outer] = buckets[outer]?.slice() ?? emptyBuckets()
        copiedOuter.add(outer)
      }
      const middle = buckets[outer] as Array<Readonly<Record<string, T>> | null>
      middle[inner] = hasEntries(leaf) ? leaf : null
    }
    for (const outer of copiedOuter) if (buckets[outer]!.every(leaf => leaf === null)) buckets[outer] = null
    return { size: this.#size, buckets }
  }
}
