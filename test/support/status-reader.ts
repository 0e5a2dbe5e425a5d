/**
 * `cantrip status --format json`, read from inside the test's own process: the same
 * connection (agent/cli/connection.ts) and the same status document
 * (agent/cli/status-document.ts) the CLI builds, without starting a Node process for every
 * look. A CLI run costs ~0.35 CPU-seconds; tests that polled status every 500 ms through
 * the CLI spent most of a core on it. Assertions about the CLI's own output still run the
 * CLI; this is for waiting.
 */
import '../../runtime/polyfill.ts'
import * as assert from 'uvu/assert'
import { modelTarget } from '../../agent/cli/cli-home.ts'
import { Connection, type FullModel } from '../../agent/cli/connection.ts'
import { statusDocument, type StatusDocument } from '../../agent/cli/status-document.ts'

/**
 * A wait looks again on every change notice the leader gossips (Connection.watch, as
 * `wait-for` does), and at least this often: a status can also change with no commit
 * (an agent shown lost), and a notice can be missed across a failover.
 */
const pollMs = 2_000

export class StatusReader {
  readonly #connection: Connection
  readonly #controller: string

  private constructor (connection: Connection, controller: string) {
    this.#connection = connection
    this.#controller = controller
  }

  /** The current controller and model of the CLI home `home` (as `cantrip status` would pick them). */
  static async open (home: string): Promise<StatusReader> {
    const saved = process.env['CANTRIP_HOME']
    process.env['CANTRIP_HOME'] = home
    let target: ReturnType<typeof modelTarget>
    try {
      target = modelTarget(undefined)
    } finally {
      if (saved === undefined) delete process.env['CANTRIP_HOME']
      else process.env['CANTRIP_HOME'] = saved
    }
    const connection = await Connection.open(target.entry)
    connection.useModel(target.model)
    return new StatusReader(connection, target.controller)
  }

  /** The whole model as `status` reads it (for what the status document leaves out, such as status history). */
  async model (): Promise<FullModel> {
    return await this.#connection.model()
  }

  async status (): Promise<StatusDocument> {
    return statusDocument(await this.#connection.model(), this.#controller, Date.now())
  }

  /** Waits (bounded) until `holds` is true of the status document; fails with the last one. */
  async until (what: string, holds: (doc: StatusDocument) => boolean, withinMs = 60_000): Promise<StatusDocument> {
    const deadline = performance.now() + withinMs
    let last: StatusDocument | string = 'no answer yet'
    // Resolved by the next change notice; a notice during a look makes the next look come at once.
    let changed = Promise.withResolvers<void>()
    const unwatch = this.#connection.watch(() => { changed.resolve() })
    try {
      for (;;) {
        const notice = changed
        try {
          const doc = await this.status()
          if (holds(doc)) return doc
          last = doc
        } catch (error) {
          // A controller failing over answers again shortly; the deadline bounds the wait.
          last = error instanceof Error ? error.message : String(error)
        }
        if (performance.now() > deadline) {
          const shown = typeof last === 'string' ? last : JSON.stringify(last.applications)
          assert.unreachable(`${what} within ${withinMs / 1000}s; last status: ${shown.slice(0, 1500)}`)
        }
        let timer: ReturnType<typeof setTimeout> | undefined
        await Promise.race([notice.promise, new Promise(resolve => { timer = setTimeout(resolve, pollMs) })])
        clearTimeout(timer)
        changed = Promise.withResolvers<void>()
      }
    } finally {
      unwatch()
    }
  }

  async close (): Promise<void> {
    await this.#connection.close()
  }
}
