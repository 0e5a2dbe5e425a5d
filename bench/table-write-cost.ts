import { TableDraft, emptyTable, tableFanout, type Table } from '../runtime/model/table.ts'

/**
 * `node --import tsx bench/table-write-cost.ts [writes]`: the CPU one command's write to a
 * model table costs (a TableDraft over the table, one `set`, `finish`), by table size.
 * The tables have a fixed 64 × 64 leaves, so a leaf holds size / 4,096 entries and every
 * write copies one leaf: the cost of a write grows with the model. At 10,000 simulated
 * agents (50,000 units, about 120,000 key revisions) that copy was 9 % of the
 * simulator's samples against 2 % at 1,000 agents, and GC 24 % against 14 % (issue 28).
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

if (import.meta.url === `file://${process.argv[1]}`) {
  const leaves = tableFanout * tableFanout
  for (const round of [1, 2]) {
    for (const size of sizes) {
      console.log(JSON.stringify({ round, size, entriesPerLeaf: Number((size / leaves).toFixed(1)), cpuUsPerWrite: Number(writeCostUs(size).toFixed(1)) }))
    }
  }
}
