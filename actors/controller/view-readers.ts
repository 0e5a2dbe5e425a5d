import type { ModelContext } from '../../runtime/model/model-types.ts'
import { forEachChangedKey, type Table } from '../../runtime/model/table.ts'
import { viewReadTables, viewWholeParts, type ViewReadTable } from '../../runtime/model/view-footprint.ts'

/**
 * Which machines' kept views read which records (runtime/model/view-footprint.ts): the
 * index a controller uses after a commit to find the views the commit may have changed
 * from the keys it touched, so that a commit costs the machines it concerns, not every
 * machine holding a watch. It only narrows: whether a view really changed is still decided
 * by building and comparing it (machine-view-cache.ts).
 */
export class ViewReaders {
  /** `table key` → the machines whose kept view read it. */
  readonly #readers = new Map<string, Set<string>>()
  /** Machine → the `table key`s its kept view read. */
  readonly #footprints = new Map<string, string[]>()

  /** `machine`'s kept view now read exactly `footprint` (from `footprintOf`). */
  set (machine: string, footprint: string[]): void {
    this.forget(machine)
    this.#footprints.set(machine, footprint)
    for (const read of footprint) {
      const machines = this.#readers.get(read)
      if (machines === undefined) this.#readers.set(read, new Set([machine]))
      else machines.add(machine)
    }
  }

  forget (machine: string): void {
    const footprint = this.#footprints.get(machine)
    if (footprint === undefined) return
    this.#footprints.delete(machine)
    for (const read of footprint) {
      const machines = this.#readers.get(read)
      machines?.delete(machine)
      if (machines?.size === 0) this.#readers.delete(read)
    }
  }

  /** Whether `machine` has a footprint here (a kept view). */
  has (machine: string): boolean {
    return this.#footprints.has(machine)
  }

  /**
   * The machines whose view may differ between `before` and `after`, or 'all' when a part
   * every view reads whole changed. Costs the records that changed (tables share what a
   * commit did not touch), not the model's size.
   */
  affected (before: ModelContext, after: ModelContext): ReadonlySet<string> | 'all' {
    for (const part of viewWholeParts) if (before[part] !== after[part]) return 'all'
    const machines = new Set<string>()
    for (const table of viewReadTables) {
      const was: Table<unknown> = before[table]
      forEachChangedKey(was, after[table], key => {
        for (const machine of this.#readers.get(readKey(table, key)) ?? []) machines.add(machine)
      })
    }
    return machines
  }
}

export function readKey (table: ViewReadTable, key: string): string {
  return `${table} ${key}`
}
