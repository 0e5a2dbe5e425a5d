import { spawn } from 'node:child_process'
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ClassicLevel } from 'classic-level'
import { quantile, round } from './stats.ts'

/**
 * The physical floors under any replicated commit and any hook, measured in the same run:
 *   - fsyncPerSec: 200-byte appends each followed by fdatasync, in a temp file on the
 *     disk the agents' data dirs use (tmpdir());
 *   - levelBatchRecPerSec: LevelDB (classic-level, as agent/level-storage.ts uses it)
 *     batches of 100 records of 32 + 200 bytes written with sync: true, records per second;
 *   - spawnMs: median of /bin/true spawned from Node and waited for (stdio ignored).
 */
const fsyncSeconds = 3
const levelSeconds = 3
const levelBatchRecords = 100
const spawnRuns = 200

export interface Floors { fsyncPerSec: number, levelBatchRecPerSec: number, levelBatchCommitsPerSec: number, spawnMs: number, spawnP99Ms: number }

export async function measureFloors (): Promise<Floors> {
  const root = mkdtempSync(join(tmpdir(), 'cantrip-bench-floors-'))
  try {
    const fsyncPerSec = fsyncRate(join(root, 'append.log'))
    const level = await levelBatchRate(join(root, 'level'))
    const spawns: number[] = []
    for (let i = 0; i < 20; i++) await spawnOnce()
    for (let i = 0; i < spawnRuns; i++) spawns.push(await spawnOnce())
    return { fsyncPerSec, levelBatchRecPerSec: level.records, levelBatchCommitsPerSec: level.commits, spawnMs: round(quantile(spawns, 0.5), 3), spawnP99Ms: round(quantile(spawns, 0.99), 3) }
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

function fsyncRate (file: string): number {
  const fd = openSync(file, 'a')
  const record = Buffer.alloc(200, 'x')
  let n = 0
  const started = performance.now()
  try {
    while (performance.now() - started < fsyncSeconds * 1000) {
      writeSync(fd, record)
      fdatasyncSync(fd)
      n++
    }
  } finally {
    closeSync(fd)
  }
  return Math.round(n / ((performance.now() - started) / 1000))
}

async function levelBatchRate (dir: string): Promise<{ records: number, commits: number }> {
  const db = new ClassicLevel<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' })
  await db.open()
  const value = new Uint8Array(200).fill(120)
  let commits = 0
  const started = performance.now()
  try {
    while (performance.now() - started < levelSeconds * 1000) {
      const ops = Array.from({ length: levelBatchRecords }, (_, i) => ({ type: 'put' as const, key: `k/${String(commits).padStart(12, '0')}/${String(i).padStart(16, '0')}`, value }))
      await db.batch(ops, { sync: true })
      commits++
    }
  } finally {
    await db.close()
  }
  const seconds = (performance.now() - started) / 1000
  return { records: Math.round(commits * levelBatchRecords / seconds), commits: Math.round(commits / seconds) }
}

async function spawnOnce (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn('/bin/true', [], { stdio: 'ignore' })
    child.on('error', reject)
    child.on('exit', code => { code === 0 ? resolve(performance.now() - started) : reject(new Error(`bench floors: expected /bin/true to exit 0, got ${String(code)}`)) })
  })
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(await measureFloors()))
