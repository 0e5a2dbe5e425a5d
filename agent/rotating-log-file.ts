/**
 * One log file that rotates itself, as Juju's agents' lumberjack loggers do: a line that
 * would take the file past `bytesMax` first moves the file aside as
 * `<name>-<UTC time>.log` (lumberjack's `2006-01-02T15-04-05.000` stamp), and only the
 * newest `backupsMax` of those are kept. So a file and its backups never hold more than
 * (backupsMax + 1) × bytesMax bytes. A line longer than `bytesMax` on its own is dropped
 * (lumberjack refuses it too). Juju also gzips the backups; these stay plain text.
 *
 * Writes are synchronous appends to a descriptor kept open: a record is on disk (in the
 * page cache) when `write` returns, so the last lines before kill -9 are there.
 */
import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, writeSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { limits } from '../runtime/limits.ts'

export interface RotatingLogFileOptions {
  /** The live file, `<dir>/<name>.log`. */
  path: string
  bytesMax?: number
  backupsMax?: number
  /** Milliseconds since the epoch, for the backups' names. */
  now?: () => number
}

export class RotatingLogFile {
  readonly path: string
  readonly #bytesMax: number
  readonly #backupsMax: number
  readonly #now: () => number
  readonly #name: string
  #fd: number | undefined
  #size = 0
  /** The last backup's stamp: two rotations in one millisecond still get two names, in order. */
  #lastStampMs = 0

  constructor (options: RotatingLogFileOptions) {
    this.path = options.path
    this.#bytesMax = options.bytesMax ?? limits.logFileBytesMax
    this.#backupsMax = options.backupsMax ?? limits.logFileBackupsMax
    this.#now = options.now ?? Date.now
    this.#name = basename(options.path).replace(/\.log$/, '')
  }

  /** Appends one line (the newline is added); throws what the file system throws. */
  write (line: string): void {
    const bytes = Buffer.from(`${line}\n`)
    if (bytes.byteLength > this.#bytesMax) return
    const fd = this.#open()
    if (this.#size > 0 && this.#size + bytes.byteLength > this.#bytesMax) {
      this.#rotate()
      this.write(line)
      return
    }
    try {
      writeSync(fd, bytes)
      this.#size += bytes.byteLength
    } catch (error) {
      // Reopened on the next line: a full disk may have room again by then.
      this.close()
      throw error
    }
  }

  close (): void {
    if (this.#fd === undefined) return
    const fd = this.#fd
    this.#fd = undefined
    closeSync(fd)
  }

  #open (): number {
    if (this.#fd !== undefined) return this.#fd
    mkdirSync(dirname(this.path), { recursive: true })
    const fd = openSync(this.path, 'a', 0o640)
    this.#fd = fd
    this.#size = fstatSync(fd).size
    return fd
  }

  #rotate (): void {
    this.close()
    const stampMs = Math.max(this.#now(), this.#lastStampMs + 1)
    this.#lastStampMs = stampMs
    renameSync(this.path, join(dirname(this.path), `${this.#name}-${backupStamp(stampMs)}.log`))
    this.#prune()
  }

  /** Removes all but the newest backupsMax backups (their stamps sort by time). */
  #prune (): void {
    const dir = dirname(this.path)
    const pattern = new RegExp(`^${escapeRegExp(this.#name)}-\\d{4}-\\d\\d-\\d\\dT\\d\\d-\\d\\d-\\d\\d\\.\\d{3}\\.log$`)
    const backups = readdirSync(dir).filter(name => pattern.test(name)).sort()
    for (const old of backups.slice(0, Math.max(0, backups.length - this.#backupsMax))) rmSync(join(dir, old), { force: true })
  }
}

/** `2026-11-26T19-00-00.000`: lumberjack's backup time format, in UTC. */
function backupStamp (ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '').replace(/:/g, '-')
}

function escapeRegExp (text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
