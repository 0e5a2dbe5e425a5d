/**
 * `cantripd --inspect-log FILE`: every inspection message appended to FILE as one JSON
 * line (the wire object plus `at`, milliseconds since the epoch), for the viewer to open
 * offline. Writes go through one append stream; `close` flushes it.
 */
import { createWriteStream, type WriteStream } from 'node:fs'
import type { InspectMessage } from './actor-inspection.ts'

export class InspectLog {
  readonly #stream: WriteStream
  #failed: string | undefined

  constructor (file: string) {
    this.#stream = createWriteStream(file, { flags: 'a' })
    this.#stream.on('error', error => { this.#failed = error.message })
  }

  /** Why writing stopped, if it did (a full disk, say): the agent goes on without its log. */
  get failure (): string | undefined {
    return this.#failed
  }

  write (message: InspectMessage, at: number): void {
    if (this.#failed !== undefined) return
    this.#stream.write(JSON.stringify({ ...message, at }) + '\n')
  }

  async close (): Promise<void> {
    await new Promise<void>(resolve => { this.#stream.end(() => { resolve() }) })
  }
}
