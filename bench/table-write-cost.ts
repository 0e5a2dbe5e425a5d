import { TableDraft, emptyTable, isTableEntry, type Table, type TableNode } from '../runtime/model/table.ts'

/**
 * `node --import tsx bench/table-write-cost.ts [writes]`: the CPU one command's write to a
 * model table costs (a TableDraft over the table, one `set`, `finish`), by table size.
 * A write copies the trie nodes on one key's path (table.ts), so its cost should grow with
 * the depth, log32 of the size. With the fixed 64 × 64 leaves tables had before, every
 * write copied a leaf of size / 4,096 entries: 1.8-4.5 CPU-µs at 1,000 keys, 4.8-6.9 at
 * 12,000 and 41-51 at 120,000 (10,000 simulated agents hold about 120,000 key revisions).
 * The tries: medians of four interleaved runs at load 40, 2.0 / 2.3 / 5.0 against
 * 5.2 / 5.9 / 44 for the grid (mean depth 2.65 / 3.29 / 4.08 nodes).
 * Keys look like the model's status keys; each size is measured twice, interleaved.
 */
const writes = Number(process.argv[2] ?? 20_000)
const sizes = [1_000, 12_000, 120_000]

function filled (size: number): Table<number> {
  const draft = new TableDraft<number>(emptyTable())
  for (let i = 0; i < size; i++) draft.set(keyOf(i), i)
  return draft.finish()
}

function keyOf (i: number): string {
  return `unit/app${i % 5}/${i}/workload-status`
}

/** CPU-microseconds per write of `writes` writes at spread keys of a table of `size` entries. */
function writeCostUs (size: number): number {
  let table = filled(size)
  const started = process.cpuUsage()
  for (let i = 0; i < writes; i++) {
    const draft = new TableDraft(table)
    draft.set(keyOf((i * 7_919) % size), -i)
    table = draft.finish()
  }
  const used = process.cpuUsage(started)
  return (used.user + used.system) / writes
}

/** The mean depth of an entry: the nodes one write copies. */
function meanDepth (table: Table<number>): number {
  let total = 0
  const walk = (node: TableNode<number>, depth: number): void => {
    for (const slot of node.slots) {
      if (isTableEntry(slot)) total += depth
      else walk(slot, depth + 1)
    }
  }
  walk(table.root, 1)
  return total / table.size
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const round of [1, 2]) {
    for (const size of sizes) {
      console.log(JSON.stringify({ round, size, meanDepth: Number(meanDepth(filled(size)).toFixed(2)), cpuUsPerWrite: Number(writeCostUs(size).toFixed(1)) }))
    }
  }
}
