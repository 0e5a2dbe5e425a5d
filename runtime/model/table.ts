import { hashString32 } from '../random.ts'

/**
 * A keyed collection of the model context as plain data: records keyed by name or id, in
 * a hash array mapped trie. Each node branches on five bits of the key's 32-bit hash and
 * holds only the slots in use (a bitmap says which), so replacing one entry copies the
 * nodes on one path, about log32(size) arrays of at most 32 slots: a write costs nearly
 * the same at a thousand keys as at a hundred thousand, and a table of three entries is
 * one small node, not a fixed grid of buckets.
 *
 * Tables are immutable values (msgpackr-serialisable: nested plain objects and arrays, no
 * Maps). Read them with the functions below; change them only through `TableDraft` (one
 * command's copy-on-write view) so a context handed to subscribers never changes.
 */
export interface Table<T> {
  readonly size: number
  readonly root: TableNode<T>
}

/**
 * Slot `i` of `slots` belongs to the `i`-th set bit of `bitmap` (the hash chunks in use,
 * in increasing order). Below the last level that branches, `bitmap` is 0 and `slots`
 * lists the entries whose hashes are all equal, in the order they were added.
 */
export interface TableNode<T> {
  readonly bitmap: number
  readonly slots: ReadonlyArray<TableSlot<T>>
}

export type TableEntry<T> = readonly [key: string, value: T]
export type TableSlot<T> = TableNode<T> | TableEntry<T>

/** Hash bits each level branches on. */
const chunkBits = 5
const chunkMask = (1 << chunkBits) - 1
/**
 * Levels that branch on a chunk of the hash: six of five bits and a seventh on the last
 * two. The node below the seventh holds colliding keys in a list. Part of the snapshot
 * format, since it decides where keys live.
 */
export const tableLevels = Math.ceil(32 / chunkBits)

interface DraftNode<T> {
  bitmap: number
  slots: Array<TableSlot<T>>
}

const emptyRoot: TableNode<never> = Object.freeze({ bitmap: 0, slots: Object.freeze([]) })
const empty: Table<never> = Object.freeze({ size: 0, root: emptyRoot })

/** One shared empty table: tables never change, and every view fetch starts a dozen. */
export function emptyTable<T> (): Table<T> {
  return empty
}

export function isTableEntry<T> (slot: TableSlot<T>): slot is TableEntry<T> {
  return Array.isArray(slot)
}

/** The bit for `hash` at `depth` (depth below `tableLevels`). */
function bitAt (hash: number, depth: number): number {
  return 1 << ((hash >>> (depth * chunkBits)) & chunkMask)
}

/** Set bits below `bit` in `bitmap`: the slot index of `bit`. */
function slotIndex (bitmap: number, bit: number): number {
  let n = bitmap & (bit - 1)
  n = n - ((n >>> 1) & 0x55555555)
  n = (n & 0x33333333) + ((n >>> 2) & 0x33333333)
  return Math.imul((n + (n >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24
}

function findEntry<T> (root: TableNode<T>, key: string): TableEntry<T> | undefined {
  const hash = hashString32(key)
  let node = root
  for (let depth = 0; depth < tableLevels; depth++) {
    const bit = bitAt(hash, depth)
    if ((node.bitmap & bit) === 0) return undefined
    const slot = node.slots[slotIndex(node.bitmap, bit)]!
    if (isTableEntry(slot)) return slot[0] === key ? slot : undefined
    node = slot
  }
  for (const slot of node.slots) if ((slot as TableEntry<T>)[0] === key) return slot as TableEntry<T>
  return undefined
}

export function tableGet<T> (table: Table<T>, key: string): T | undefined {
  return findEntry(table.root, key)?.[1]
}

export function tableHas<T> (table: Table<T>, key: string): boolean {
  return findEntry(table.root, key) !== undefined
}

/**
 * Every entry, in a deterministic order: by the key's hash, low bits first (keys with
 * equal hashes in the order they were added). Sort where order matters. An array rather
 * than a generator: tables are read on every view and remote-state projection, where
 * resuming a generator per entry cost more than the reads.
 */
export function tableEntries<T> (table: Table<T>): Array<[string, T]> {
  const entries: Array<[string, T]> = []
  forEachTableEntry(table, (key, value) => { entries.push([key, value]) })
  return entries
}

export function tableValues<T> (table: Table<T>): T[] {
  const values: T[] = []
  forEachTableEntry(table, (_key, value) => { values.push(value) })
  return values
}

export function tableKeys<T> (table: Table<T>): string[] {
  const keys: string[] = []
  forEachTableEntry(table, key => { keys.push(key) })
  return keys
}

/** Visits every entry in the order of `tableEntries`, without building a list. */
export function forEachTableEntry<T> (table: Table<T>, visit: (key: string, value: T) => void): void {
  visitNode(table.root, 0, visit)
}

/** Recursion is bounded by the levels: a deeper node (from a bad peer) is refused. */
function visitNode<T> (node: TableNode<T>, depth: number, visit: (key: string, value: T) => void): void {
  if (depth > tableLevels) throw new Error(`table node below level ${tableLevels}`)
  for (const slot of node.slots) {
    if (isTableEntry(slot)) visit(slot[0], slot[1])
    else visitNode(slot, depth + 1, visit)
  }
}

/**
 * Visits every key whose entry differs between two versions of one table (set, replaced
 * or removed), by identity of the value. Copy-on-write shares every untouched node between
 * the versions, so this costs what changed, not the table's size: a watcher learns which
 * records one commit touched without scanning them all.
 */
export function forEachChangedKey<T> (before: Table<T>, after: Table<T>, visit: (key: string) => void): void {
  if (before === after) return
  changedInSlot(before.root, after.root, 0, visit)
}

function changedInSlot<T> (a: TableSlot<T> | undefined, b: TableSlot<T> | undefined, depth: number, visit: (key: string) => void): void {
  if (a === b) return
  if (a !== undefined && b !== undefined && !isTableEntry(a) && !isTableEntry(b) && depth < tableLevels) {
    let indexA = 0
    let indexB = 0
    for (let rest = a.bitmap | b.bitmap; rest !== 0; rest &= rest - 1) {
      const bit = rest & -rest
      const x = (a.bitmap & bit) !== 0 ? a.slots[indexA++] : undefined
      const y = (b.bitmap & bit) !== 0 ? b.slots[indexB++] : undefined
      changedInSlot(x, y, depth + 1, visit)
    }
    return
  }
  // The usual change, one entry replaced by another: no maps.
  if (a !== undefined && b !== undefined && isTableEntry(a) && isTableEntry(b)) {
    if (a[0] !== b[0]) visit(a[0])
    if (a[0] !== b[0] || a[1] !== b[1]) visit(b[0])
    return
  }
  // An entry against a node (keys pushed down or pulled up), two entries, or collision
  // lists: compare what each side holds, which is a few entries.
  const was = new Map<string, T>()
  if (a !== undefined) collect(a, depth, was)
  const now = new Map<string, T>()
  if (b !== undefined) collect(b, depth, now)
  for (const [key, value] of was) if (!now.has(key) || now.get(key) !== value) visit(key)
  for (const key of now.keys()) if (!was.has(key)) visit(key)
}

function collect<T> (slot: TableSlot<T>, depth: number, into: Map<string, T>): void {
  if (isTableEntry(slot)) into.set(slot[0], slot[1])
  else visitNode(slot, depth, (key, value) => { into.set(key, value) })
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

/**
 * Copy-on-write changes to one table within one command: the first write under a node
 * copies it (and the nodes above it), later writes change the copies in place. `finish()`
 * returns the new table; the base table is never modified.
 */
export class TableDraft<T> {
  readonly #base: Table<T>
  #root: TableNode<T>
  /**
   * Nodes this draft made since the last `finish`: the only ones it may change in place.
   * Made at the first write: a command drafts every table and writes one or two.
   */
  #owned: Set<TableNode<T>> | undefined
  #size: number

  constructor (base: Table<T>) {
    this.#base = base
    this.#root = base.root
    this.#size = base.size
  }

  get size (): number { return this.#size }

  get (key: string): T | undefined {
    return findEntry(this.#root, key)?.[1]
  }

  has (key: string): boolean {
    return findEntry(this.#root, key) !== undefined
  }

  #own (node: TableNode<T>): DraftNode<T> {
    if (this.#owned?.has(node) === true) return node as DraftNode<T>
    const copy: DraftNode<T> = { bitmap: node.bitmap, slots: node.slots.slice() }
    ;(this.#owned ??= new Set()).add(copy)
    return copy
  }

  #ownedRoot (): DraftNode<T> {
    const root = this.#own(this.#root)
    this.#root = root
    return root
  }

  set (key: string, value: T): void {
    const hash = hashString32(key)
    let node = this.#ownedRoot()
    for (let depth = 0; depth < tableLevels; depth++) {
      const bit = bitAt(hash, depth)
      const index = slotIndex(node.bitmap, bit)
      if ((node.bitmap & bit) === 0) {
        node.slots.splice(index, 0, [key, value])
        node.bitmap |= bit
        this.#size++
        return
      }
      const slot = node.slots[index]!
      if (isTableEntry(slot)) {
        if (slot[0] === key) {
          if (slot[1] !== value) node.slots[index] = [key, value]
        } else {
          node.slots[index] = this.#split(slot, hashString32(slot[0]), [key, value], hash, depth + 1)
          this.#size++
        }
        return
      }
      const child = this.#own(slot)
      node.slots[index] = child
      node = child
    }
    const index = node.slots.findIndex(slot => (slot as TableEntry<T>)[0] === key)
    if (index >= 0) {
      node.slots[index] = [key, value]
    } else {
      node.slots.push([key, value])
      this.#size++
    }
  }

  /** A node at `depth` holding two entries whose hashes agree on every level above it. */
  #split (a: TableEntry<T>, hashA: number, b: TableEntry<T>, hashB: number, depth: number): DraftNode<T> {
    const node: DraftNode<T> = { bitmap: 0, slots: [] }
    ;(this.#owned ??= new Set()).add(node)
    if (depth >= tableLevels) {
      node.slots.push(a, b)
      return node
    }
    const bitA = bitAt(hashA, depth)
    const bitB = bitAt(hashB, depth)
    if (bitA === bitB) {
      node.bitmap = bitA
      node.slots.push(this.#split(a, hashA, b, hashB, depth + 1))
    } else {
      node.bitmap = bitA | bitB
      // Slots follow their bits in increasing order; bit 31 is the sign bit, so compare as unsigned.
      if ((bitA >>> 0) < (bitB >>> 0)) node.slots.push(a, b)
      else node.slots.push(b, a)
    }
    return node
  }

  delete (key: string): boolean {
    if (findEntry(this.#root, key) === undefined) return false
    const hash = hashString32(key)
    const path: Array<DraftNode<T>> = []
    let node = this.#ownedRoot()
    for (let depth = 0; ; depth++) {
      path.push(node)
      if (depth >= tableLevels) {
        node.slots.splice(node.slots.findIndex(slot => (slot as TableEntry<T>)[0] === key), 1)
        break
      }
      const bit = bitAt(hash, depth)
      const index = slotIndex(node.bitmap, bit)
      const slot = node.slots[index]!
      if (isTableEntry(slot)) {
        node.slots.splice(index, 1)
        node.bitmap &= ~bit
        break
      }
      const child = this.#own(slot)
      node.slots[index] = child
      node = child
    }
    this.#size--
    this.#collapse(path, hash)
    return true
  }

  /**
   * Pulls a lone entry up, and drops empty nodes, from the bottom of `path`: the trie keeps
   * the shape inserting its keys afresh would give, so equal tables iterate alike.
   */
  #collapse (path: Array<DraftNode<T>>, hash: number): void {
    for (let depth = path.length - 1; depth > 0; depth--) {
      const node = path[depth]!
      const parent = path[depth - 1]!
      const bit = bitAt(hash, depth - 1)
      const index = slotIndex(parent.bitmap, bit)
      if (node.slots.length === 0) {
        parent.slots.splice(index, 1)
        parent.bitmap &= ~bit
      } else if (node.slots.length === 1 && isTableEntry(node.slots[0]!)) {
        parent.slots[index] = node.slots[0]!
      } else {
        return
      }
    }
  }

  finish (): Table<T> {
    if (this.#root === this.#base.root && this.#size === this.#base.size) return this.#base
    // What this draft made is now part of a table that never changes: later writes copy.
    this.#owned = undefined
    return { size: this.#size, root: this.#root }
  }
}

/** Nodes a table read from disk or a peer may hold: far above any model's. */
const checkedNodesMax = 1 << 24

/**
 * What is wrong with `value` as a table (undefined when nothing): the bytes came from disk
 * or a peer, so every node is checked, every key sits where its hash says, and the
 * entries add up to `size`. A loop over an explicit stack, since the data is untrusted.
 */
export function tableShapeProblem (value: unknown): string | undefined {
  if (!isRecord(value) || !Number.isSafeInteger(value.size) || !isRecord(value.root)) return 'a table of a size and a root'
  const stack: Array<{ node: unknown, depth: number, prefix: number }> = [{ node: value.root, depth: 0, prefix: 0 }]
  let entries = 0
  for (let visited = 0; stack.length > 0; visited++) {
    if (visited >= checkedNodesMax) return `at most ${checkedNodesMax} nodes`
    const { node, depth, prefix } = stack.pop()!
    if (!isRecord(node) || !Number.isInteger(node.bitmap) || !Array.isArray(node.slots)) return 'nodes of a bitmap and slots'
    const bitmap = node.bitmap as number
    const slots = node.slots as unknown[]
    if (depth >= tableLevels ? bitmap !== 0 : (bitmap | 0) !== bitmap || slots.length !== bitCount(bitmap)) return 'as many slots as bits'
    let rest = bitmap
    for (const slot of slots) {
      const bit = rest & -rest
      rest &= rest - 1
      const chunk = 31 - Math.clz32(bit)
      const at = depth >= tableLevels ? prefix : (prefix | (chunk << (depth * chunkBits))) >>> 0
      if (Array.isArray(slot)) {
        if (slot.length !== 2 || typeof slot[0] !== 'string') return 'entries of a key and a value'
        if (!hashFits(hashString32(slot[0]), at, depth + 1)) return `key ${JSON.stringify(slot[0])} where its hash puts it`
        entries++
      } else {
        if (depth >= tableLevels) return `no node below level ${tableLevels}`
        stack.push({ node: slot, depth: depth + 1, prefix: at })
      }
    }
  }
  return entries === value.size ? undefined : `${String(value.size)} entries`
}

function isRecord (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Set bits in `bitmap` (every bit lies below bit 0 - 1, which is all ones). */
function bitCount (bitmap: number): number {
  return slotIndex(bitmap, 0)
}

/** Whether `hash` agrees with `prefix` on its lowest `levels` chunks. */
function hashFits (hash: number, prefix: number, levels: number): boolean {
  const bits = Math.min(32, levels * chunkBits)
  const mask = bits >= 32 ? 0xffffffff : (1 << bits) - 1
  return ((hash & mask) >>> 0) === ((prefix & mask) >>> 0)
}
