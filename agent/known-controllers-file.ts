/**
 * `<data dir>/controllers.json`: the controllers an agent learned (runtime/known-controllers.ts),
 * written atomically — a temporary file, fsync, rename, fsync of the directory — so a
 * kill -9 or a power cut leaves the old set or the new one, never a torn file. Read once at
 * start; a file that is missing is an agent that learned nothing yet, one that does not
 * decode is logged and ignored (the bootstrap data still stands).
 */
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import type { BootstrapController } from '../runtime/bootstrap-data.ts'
import { decodeKnownControllers, encodeKnownControllers, sameControllers } from '../runtime/known-controllers.ts'
import type { Logger } from '../runtime/logger.ts'

export const knownControllersFileName = 'controllers.json'

export class KnownControllersFile {
  readonly #path: string
  readonly #logger: Logger
  #last: BootstrapController[]

  constructor (dataDir: string, logger: Logger) {
    this.#path = join(dataDir, knownControllersFileName)
    this.#logger = logger
    this.#last = this.#read()
  }

  /** What was remembered when the agent started (empty for a first start). */
  get remembered (): readonly BootstrapController[] {
    return this.#last
  }

  /** Keeps `controllers` as the set to try on the next start, unless it is what is kept already. */
  remember (controllers: readonly BootstrapController[]): void {
    if (sameControllers(controllers, this.#last)) return
    const text = encodeKnownControllers(controllers)
    const temporary = `${this.#path}.tmp`
    try {
      const fd = openSync(temporary, 'w', 0o600)
      try {
        writeSync(fd, text)
        fsyncSync(fd)
      } finally {
        closeSync(fd)
      }
      renameSync(temporary, this.#path)
      const dir = openSync(join(this.#path, '..'), 'r')
      try { fsyncSync(dir) } finally { closeSync(dir) }
      this.#last = [...controllers]
    } catch (error) {
      // Not fatal: the agent runs on; the next learning round writes again.
      this.#logger.log('warning', `cannot remember the controllers in ${this.#path}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }

  #read (): BootstrapController[] {
    let text: string
    try {
      text = readFileSync(this.#path, 'utf8')
    } catch {
      return []
    }
    try {
      return decodeKnownControllers(text)
    } catch (error) {
      this.#logger.log('warning', `ignoring ${this.#path}: ${error instanceof Error ? error.message : String(error)}`)
      return []
    }
  }
}
