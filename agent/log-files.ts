/**
 * The machine's log files, as Juju keeps `/var/log/juju/unit-<app>-<n>.log` and
 * `machine-<n>.log` on every machine: here `<agent data dir>/log/`, one rotating file per
 * unit (its uniter's lines, its hooks' output, its `juju-log` records) and one for the
 * machine agent itself (everything else it logs). One line per record in Juju's file
 * format (loggo's default formatter), UTC to the second:
 *
 *   2026-11-26 19:00:00 INFO unit.kv/0.juju-log install: preparing
 *
 * Juju puts the Go source location (`uniter.go:338`) after the module; cantrip's records
 * have none, so that field is left out.
 *
 * The log shipper (log-shipper.ts) hands every record here as it ships it, so a file has
 * what `debug-log` has for that entity, and stays on the machine if the controllers never
 * got it. At most limits.logFilesOpenMax files are held open (least recently written
 * closed first); a file that cannot be written is skipped and said so once on stderr.
 */
import { join } from 'node:path'
import { limits } from '../runtime/limits.ts'
import type { LogLevel } from '../runtime/logger.ts'
import type { LogEntry } from '../runtime/logs/log-entry.ts'
import { RotatingLogFile } from './rotating-log-file.ts'

export interface LogFilesOptions {
  /** `<agent data dir>/log`. */
  dir: string
  /** The agent's own entity (`machine-1`): the file of every record that is not a unit's. */
  agentEntity: string
  bytesMax?: number
  backupsMax?: number
  openMax?: number
  /** Where a failing file is reported (once per file name); default stderr. */
  report?: (line: string) => void
}

const levelNames: Readonly<Record<LogLevel, string>> = {
  trace: 'TRACE', debug: 'DEBUG', info: 'INFO', warning: 'WARNING', error: 'ERROR', critical: 'CRITICAL'
}

/** One record as a line of a Juju agent's log file (no newline). */
export function formatLogFileLine (entry: LogEntry): string {
  const stamp = new Date(entry.time).toISOString().slice(0, 19).replace('T', ' ')
  return `${stamp} ${levelNames[entry.level]} ${entry.module} ${entry.message}`
}

/** The file name (without `.log`) a record goes to: its unit's, or the agent's own (`machine-0/lxd/1` → `machine-0-lxd-1`). */
export function logFileName (entry: Pick<LogEntry, 'entity'>, agentEntity: string): string {
  const entity = entry.entity.startsWith('unit-') ? entry.entity : agentEntity
  return entity.replace(/\//g, '-')
}

export class LogFiles {
  readonly #o: LogFilesOptions
  /** Open files, least recently written first. */
  readonly #open = new Map<string, RotatingLogFile>()
  readonly #reported = new Set<string>()

  constructor (options: LogFilesOptions) {
    this.#o = options
  }

  write (entry: LogEntry): void {
    const name = logFileName(entry, this.#o.agentEntity)
    const file = this.#file(name)
    try {
      file.write(formatLogFileLine(entry))
    } catch (error) {
      if (this.#reported.has(name)) return
      this.#reported.add(name)
      const report = this.#o.report ?? (line => { process.stderr.write(`${line}\n`) })
      report(`log files: cannot write ${file.path}: ${error instanceof Error ? error.message : String(error)}; its lines are dropped`)
    }
  }

  close (): void {
    for (const file of this.#open.values()) file.close()
    this.#open.clear()
  }

  #file (name: string): RotatingLogFile {
    const open = this.#open.get(name)
    if (open !== undefined) {
      this.#open.delete(name)
      this.#open.set(name, open)
      return open
    }
    const file = new RotatingLogFile({
      path: join(this.#o.dir, `${name}.log`),
      ...(this.#o.bytesMax === undefined ? {} : { bytesMax: this.#o.bytesMax }),
      ...(this.#o.backupsMax === undefined ? {} : { backupsMax: this.#o.backupsMax })
    })
    this.#open.set(name, file)
    const openMax = this.#o.openMax ?? limits.logFilesOpenMax
    for (const [oldName, oldFile] of this.#open) {
      if (this.#open.size <= openMax) break
      oldFile.close()
      this.#open.delete(oldName)
    }
    return file
  }
}
