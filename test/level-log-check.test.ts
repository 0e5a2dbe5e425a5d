/**
 * LevelDB's write-ahead log after a crash or disk damage (agent/level-log-check.ts):
 * a torn tail is truncated by recovery and everything before it is kept; damage in the
 * middle — which LevelDB alone drops silently, records after it kept — stops the open
 * with the file and the offset.
 */
import '../runtime/polyfill.ts'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ClassicLevel } from 'classic-level'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { crc32c, findLogDamage } from '../agent/level-log-check.ts'
import { LevelStorage } from '../agent/level-storage.ts'
import { StorageFailedError } from '../runtime/errors.ts'

/** Enough 1 KiB records to fill about ten of LevelDB's 32 KiB log blocks. */
const records = 300
const key = (n: number): string => `k/${String(n).padStart(6, '0')}`

async function written (): Promise<{ dir: string, log: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'level-log-'))
  const storage = await LevelStorage.open(dir)
  for (let n = 0; n < records; n++) await storage.put(key(n), new Uint8Array(1_024).fill(n % 251), { sync: true })
  await storage.close()
  const logs = readdirSync(dir).filter(name => name.endsWith('.log'))
  assert.is(logs.length, 1, `one write-ahead log, got ${logs.join(', ')}`)
  return { dir, log: join(dir, logs[0]!) }
}

async function keysOf (storage: LevelStorage): Promise<number> {
  return (await storage.range({ gte: 'k/', lt: 'k/~', limit: records + 1 })).length
}

test('CRC-32C matches the published check value', () => {
  assert.is(crc32c(new TextEncoder().encode('123456789')), 0xe3069283)
})

test('an intact log has no damage and opens with every record', async () => {
  const { dir } = await written()
  try {
    assert.is(findLogDamage(dir), undefined)
    const storage = await LevelStorage.open(dir)
    assert.is(await keysOf(storage), records)
    await storage.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a torn tail record is truncated by recovery; every record before it is kept', async () => {
  const { dir, log } = await written()
  try {
    // Cut the last record short, as a crash in the middle of its write would.
    truncateSync(log, statSync(log).size - 100)
    assert.is(findLogDamage(dir), undefined)
    const storage = await LevelStorage.open(dir)
    assert.is(await keysOf(storage), records - 1)
    assert.ok(await storage.get(key(records - 2)) !== undefined, 'the record before the torn one is kept')
    assert.is(await storage.get(key(records - 1)), undefined)
    await storage.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

/** Flips one byte inside a record in the second block: records in later blocks follow it. */
function damageMiddle (log: string): void {
  const bytes = readFileSync(log)
  bytes[40_000] = bytes[40_000]! ^ 0xff
  writeFileSync(log, bytes)
}

test('reproducer: LevelDB alone opens a log damaged in the middle and silently loses records', async () => {
  const { dir, log } = await written()
  try {
    damageMiddle(log)
    const db = new ClassicLevel<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' })
    await db.open()
    const kept = (await db.keys({ gte: 'k/', lt: 'k/~' }).all()).length
    await db.close()
    assert.ok(kept < records, `LevelDB kept ${kept} of ${records}`)
    assert.ok(kept > records / 2, `the records after the damage are kept (${kept})`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('damage in the middle of the log stops the open with the file and the offset, and drops nothing', async () => {
  const { dir, log } = await written()
  try {
    damageMiddle(log)
    const damage = findLogDamage(dir)
    assert.ok(damage !== undefined)
    assert.is(damage.file, log)
    // The damaged record starts in the second block, at or before the flipped byte.
    assert.ok(damage.offset >= 32_768 && damage.offset <= 40_000, `offset ${damage.offset}`)
    let error: unknown
    try {
      await LevelStorage.open(dir)
    } catch (caught) {
      error = caught
    }
    assert.instance(error, StorageFailedError)
    assert.match((error as Error).message, `the log ${log} is damaged at offset ${damage.offset} (`)
    // Refused before LevelDB touched it: the log is still there, damage and all, for a person to look at.
    assert.ok(statSync(log).size > 40_000)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test.run()
