/**
 * A controller group read from inside the test's own process, for waiting on it: the
 * gossip membership (`cantrip members`' answer), each member's Raft state
 * (`show-controller`'s) and the model (`status`'). Tests that polled these by starting
 * `cantrip` once a second paid 0.5-0.75 CPU-seconds a look (cli-ha-rejoin spent most of
 * its CPU so). Assertions about what the CLI prints still run the CLI; this is for waits.
 *
 * The group changes under these tests (enable-ha adds members, kill -9 removes them,
 * start-agent brings them back), so each read takes the members controllers.yaml lists
 * now, and a new connection when that list has changed.
 */
import '../../runtime/polyfill.ts'
import { controllerEntry, type ControllerEntry } from '../../agent/cli/cli-home.ts'
import { Connection, type FullModel } from '../../agent/cli/connection.ts'
import { groupStatus, type GroupStatus } from '../../agent/cli/group-status.ts'
import { statusDocument, type StatusDocument } from '../../agent/cli/status-document.ts'

/** A member's answer to `controller-status`, asked of each member: bounded, since a killed one never answers. */
const memberStatusTimeoutMs = 2_000

export interface MembershipRow { id: string, entity: string, state: string, incarnation: number, version: string | null }

export class GroupReader {
  readonly #home: string
  readonly #controller: string
  #connection: Connection | undefined
  /** The members (peer ids and addresses) #connection was opened with. */
  #openedFor = ''

  constructor (home: string, controller = 'local') {
    this.#home = home
    this.#controller = controller
  }

  /** The controller's entry in `home`'s controllers.yaml, as the CLI would read it now. */
  entry (): ControllerEntry {
    const saved = process.env['CANTRIP_HOME']
    process.env['CANTRIP_HOME'] = this.#home
    try {
      return controllerEntry(this.#controller).entry
    } finally {
      if (saved === undefined) delete process.env['CANTRIP_HOME']
      else process.env['CANTRIP_HOME'] = saved
    }
  }

  async #connect (): Promise<{ connection: Connection, entry: ControllerEntry }> {
    const entry = this.entry()
    const members = JSON.stringify(entry.controllers.map(m => [m['peer-id'], m.addresses]))
    if (this.#connection === undefined || members !== this.#openedFor) {
      await this.close()
      this.#connection = await Connection.open(entry)
      this.#connection.useModel('default')
      this.#openedFor = members
    }
    return { connection: this.#connection, entry }
  }

  /** The gossip membership as a controller that answers sees it (`cantrip members --format json`'s rows). */
  async members (): Promise<MembershipRow[]> {
    const { connection } = await this.#connect()
    return (await connection.api({ op: 'members' })).members
  }

  /** Every listed member's Raft state and the leader's view (what `show-controller` prints). */
  async group (): Promise<{ entry: ControllerEntry, group: GroupStatus }> {
    const { connection, entry } = await this.#connect()
    return { entry, group: await groupStatus(connection, entry, memberStatusTimeoutMs) }
  }

  async model (): Promise<FullModel> {
    const { connection } = await this.#connect()
    return await connection.model()
  }

  /** The status document `cantrip status --format json` would print now. */
  async status (): Promise<StatusDocument> {
    return statusDocument(await this.model(), this.#controller, Date.now())
  }

  async close (): Promise<void> {
    const connection = this.#connection
    this.#connection = undefined
    this.#openedFor = ''
    await connection?.close().catch(() => {})
  }
}
