import type { LevelBatch, LevelDatabase, LevelRangeQuery } from '../../agent/level-storage.ts'

/** What a write changed: each key with the value it had before (undefined: absent). */
type Undo = Array<{ key: string, before: Uint8Array | undefined }>

type Operation = { type: 'put', key: string, value: Uint8Array } | { type: 'del', key: string }

/**
 * A disk that keeps only what was synced, between LevelStorage and the real classic-level
 * database. Every write reaches LevelDB (so reads see it, as they see the page cache), but
 * a write without `sync: true` is remembered with what it overwrote until a synced write
 * follows: LevelDB appends every write to one log, so an fdatasync makes everything
 * before it durable as well. `powerCut()` undoes, newest first, whatever no sync covered
 * and closes the database: the directory then holds exactly what a machine that lost
 * power would find.
 *
 * `ignoreSync` makes every write unsynced, as `sync: false` in agent/level-storage.ts
 * would: the test that uses this disk runs once that way too, to prove it notices.
 */
export class PowerCutLevel implements LevelDatabase {
  readonly #db: LevelDatabase
  readonly #ignoreSync: boolean
  /** Unsynced writes since the last synced one, oldest first. */
  #volatile: Undo[] = []
  /** Writes one at a time, so each reads what it overwrites without a race. */
  #queue: Promise<unknown> = Promise.resolve()
  #cut = false
  synced = 0
  unsynced = 0

  constructor (db: LevelDatabase, options: { ignoreSync?: boolean } = {}) {
    this.#db = db
    this.#ignoreSync = options.ignoreSync ?? false
  }

  async open (): Promise<void> { await this.#db.open() }
  async get (key: string): Promise<Uint8Array | undefined> { return await this.#db.get(key) }
  iterator (query: LevelRangeQuery): { all (): Promise<Array<[string, Uint8Array]>> } { return this.#db.iterator(query) }

  async put (key: string, value: Uint8Array, options: { sync: boolean }): Promise<void> {
    await this.#write([{ type: 'put', key, value }], options.sync)
  }

  async del (key: string, options: { sync: boolean }): Promise<void> {
    await this.#write([{ type: 'del', key }], options.sync)
  }

  batch (): LevelBatch {
    const operations: Operation[] = []
    return {
      put: (key, value) => { operations.push({ type: 'put', key, value }) },
      del: key => { operations.push({ type: 'del', key }) },
      write: async options => { await this.#write(operations, options.sync) },
      close: async () => {}
    }
  }

  /** The process is gone: nothing more is written. */
  async close (): Promise<void> {
    if (this.#cut) return
    await this.#queue.catch(() => {})
    await this.#db.close()
  }

  /**
   * Power lost: writes in flight finish (or not) as they would, then everything no sync
   * covered is undone, newest first, and the database is closed. Returns how many writes
   * were lost.
   */
  async powerCut (): Promise<number> {
    this.#cut = true
    await this.#queue.catch(() => {})
    const lost = this.#volatile.length
    for (const undo of this.#volatile.reverse()) {
      const batch = this.#db.batch()
      for (const { key, before } of [...undo].reverse()) {
        if (before === undefined) batch.del(key)
        else batch.put(key, before)
      }
      await batch.write({ sync: true })
    }
    this.#volatile = []
    await this.#db.close()
    return lost
  }

  async #write (operations: readonly Operation[], sync: boolean): Promise<void> {
    if (this.#cut) throw new Error('power-cut level: the power is off')
    const done = this.#queue.then(async () => {
      const durable = sync && !this.#ignoreSync
      const undo: Undo = []
      if (!durable) for (const { key } of operations) undo.push({ key, before: await this.#db.get(key) })
      const batch = this.#db.batch()
      for (const operation of operations) {
        if (operation.type === 'put') batch.put(operation.key, operation.value)
        else batch.del(operation.key)
      }
      await batch.write({ sync: durable })
      if (durable) {
        this.#volatile = []
        this.synced++
      } else {
        this.#volatile.push(undo)
        this.unsynced++
      }
    })
    this.#queue = done.catch(() => {})
    await done
  }
}
