/**
 * A check of LevelDB's write-ahead logs (`NNNNNN.log` in the database directory) before
 * the database is opened. LevelDB's own recovery (without paranoid_checks, which
 * classic-level does not expose) drops a damaged record — and the rest of its 32 KiB
 * block — with only a line in its info log, then goes on with the records after it: a
 * Raft log could lose committed entries in the middle without anyone being told.
 *
 * Here every physical record is walked and its CRC-32C checked (the format of LevelDB's
 * doc/log_format.md). Damage with no valid record after it, in this file or a later one,
 * is a torn tail — a write a crash cut short, never synced, so never acknowledged — and
 * LevelDB's recovery may truncate it. Damage followed by a valid record is refused with
 * the file and the offset.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const blockBytes = 32_768
const headerBytes = 7
/** Record types: zero is preallocated space, 1..4 are full, first, middle and last fragments. */
const recordTypeMax = 4

/** Where the first damage before a valid record is, if anywhere. */
export interface LogDamage { file: string, offset: number, why: string }

/** What the walk of one file found: the first damage (if any) and whether a valid record comes after it. */
interface FileWalk { damage?: { offset: number, why: string }, validAfterDamage: boolean, valid: number }

/** The first damage in the middle of the logs in `dir` (undefined: none, or only a torn tail). */
export function findLogDamage (dir: string): LogDamage | undefined {
  let files: string[]
  try {
    files = readdirSync(dir).filter(name => /^\d+\.log$/.test(name)).sort((a, b) => Number.parseInt(a) - Number.parseInt(b))
  } catch {
    return undefined
  }
  let pending: LogDamage | undefined
  for (const file of files) {
    const walk = walkLog(readFileSync(join(dir, file)))
    // Damage in an earlier file followed by valid records here is damage in the middle.
    if (pending !== undefined && walk.valid > 0) return pending
    if (walk.damage !== undefined) {
      const damage = { file: join(dir, file), offset: walk.damage.offset, why: walk.damage.why }
      if (walk.validAfterDamage) return damage
      pending ??= damage
    }
  }
  return undefined
}

function walkLog (bytes: Uint8Array): FileWalk {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const walk: FileWalk = { validAfterDamage: false, valid: 0 }
  let offset = 0
  while (offset < bytes.length) {
    const left = blockBytes - (offset % blockBytes)
    // A block's trailer too short for a header is zero padding.
    if (left < headerBytes) { offset += left; continue }
    const problem = recordProblem(bytes, view, offset, left)
    if (problem === 'zero') { offset += left; continue }
    if (typeof problem === 'string') {
      walk.damage ??= { offset, why: problem }
      // Resynchronise as LevelDB does: at the next block.
      offset += left
      continue
    }
    if (walk.damage !== undefined) walk.validAfterDamage = true
    walk.valid++
    offset += headerBytes + problem.length
  }
  return walk
}

/** The record at `offset`: its payload length when valid, 'zero' for preallocated space, else what is wrong. */
function recordProblem (bytes: Uint8Array, view: DataView, offset: number, left: number): { length: number } | string {
  if (offset + headerBytes > bytes.length) return 'a record header cut short by the end of the file'
  const length = view.getUint16(offset + 4, true)
  const type = bytes[offset + 6]!
  if (type === 0 && length === 0) return 'zero'
  if (headerBytes + length > left) return `a record of ${length} bytes overruns its block`
  if (offset + headerBytes + length > bytes.length) return 'a record cut short by the end of the file'
  if (type > recordTypeMax) return `an unknown record type ${type}`
  const stored = unmask(view.getUint32(offset, true))
  const actual = crc32c(bytes.subarray(offset + 6, offset + headerBytes + length))
  if (stored !== actual) return 'a checksum mismatch'
  return { length }
}

const maskDelta = 0xa282ead8

function unmask (masked: number): number {
  const rot = (masked - maskDelta) >>> 0
  return ((rot >>> 17) | (rot << 15)) >>> 0
}

let table: Uint32Array | undefined

/** CRC-32C (Castagnoli), as LevelDB computes it. */
export function crc32c (bytes: Uint8Array): number {
  table ??= makeTable()
  let crc = 0xffffffff
  for (const byte of bytes) crc = table[(crc ^ byte) & 0xff]! ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}

function makeTable (): Uint32Array {
  const t = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1
    t[n] = c >>> 0
  }
  return t
}
