/**
 * A machine agent's remote-state watcher (juju-semantics §1.3, DESIGN.md §5): it learns
 * from change notices (gossip, from controllers only) that the model moved, and fetches
 * the remote state of every unit on its machine from a controller — one request for all
 * of them — at a revision at least as new as the notice. Notices are hints: a lost one is
 * made good by the next, and a periodic catch-up fetch covers silence. Each unit's state
 * is handed on only when it changed, so unit actors see each change once.
 */
import type { Clock, TimerHandle } from '../../runtime/clock.ts'
import { decode, encode } from '../../runtime/codec.ts'
import { limits } from '../../runtime/limits.ts'
import type { NodeId } from '../../runtime/raft/raft-types.ts'
import type { Transport } from '../../runtime/transport.ts'
import type { RemoteState } from '../../runtime/unit-remote-state.ts'
import { changeNoticeValidator, changeTopic, parseChangeNotice } from '../controller/change-notices.ts'
import { controllerApiProtocol, type ApiReply } from '../controller/controller-api.ts'

export interface RemoteStateWatcherOptions {
  transport: Transport
  clock: Clock
  modelUuid: string
  machine: string
  /** The controllers' peer ids: where to fetch from, and whose notices to believe. */
  controllers: () => readonly NodeId[]
  /** A unit's remote state changed (or the unit appeared); `undefined` when it left the machine. */
  onChange: (unit: string, state: RemoteState | undefined) => void
  catchUpMs?: number
  requestTimeoutMs?: number
}

export class RemoteStateWatcher {
  readonly #o: RemoteStateWatcherOptions
  readonly #states = new Map<string, string>()
  /** The newest revision fetched, and the newest a notice announced. */
  #revision = -1
  #announced = -1
  #fetching = false
  #again = false
  #catchUp: TimerHandle | undefined
  #unsubscribe: (() => void) | undefined
  #stopped = false
  #nextController = 0
  readonly counters = { notices: 0, fetches: 0, fetchFailures: 0, refused: 0 }

  constructor (options: RemoteStateWatcherOptions) {
    this.#o = options
  }

  get revision (): number {
    return this.#revision
  }

  start (): void {
    const topic = changeTopic(this.#o.modelUuid)
    this.#o.transport.setTopicValidator(topic, changeNoticeValidator(() => new Set(this.#o.controllers())))
    this.#unsubscribe = this.#o.transport.subscribe(topic, message => {
      const notice = parseChangeNotice(message.data)
      if (notice === undefined) return
      this.counters.notices++
      if (notice.revision <= this.#revision) return
      this.#announced = Math.max(this.#announced, notice.revision)
      void this.#fetch()
    })
    void this.#fetch()
  }

  stop (): void {
    this.#stopped = true
    this.#unsubscribe?.()
    if (this.#catchUp !== undefined) this.#o.clock.clearTimeout(this.#catchUp)
  }

  /** One fetch at a time; a notice arriving meanwhile makes it fetch once more after. */
  async #fetch (): Promise<void> {
    if (this.#stopped) return
    if (this.#fetching) {
      this.#again = true
      return
    }
    this.#fetching = true
    if (this.#catchUp !== undefined) this.#o.clock.clearTimeout(this.#catchUp)
    try {
      do {
        this.#again = false
        await this.#fetchOnce()
      } while (this.#again && !this.#stopped)
    } finally {
      this.#fetching = false
      if (!this.#stopped) {
        // Behind a notice we could not reach: try again soon; otherwise catch up later.
        const delay = this.#announced > this.#revision ? this.#timeoutMs() : (this.#o.catchUpMs ?? limits.remoteStateCatchUpMs)
        this.#catchUp = this.#o.clock.setTimeout(() => { void this.#fetch() }, delay)
      }
    }
  }

  async #fetchOnce (): Promise<void> {
    const controllers = this.#o.controllers()
    if (controllers.length === 0) return
    const controller = controllers[this.#nextController++ % controllers.length]!
    this.counters.fetches++
    let reply: ApiReply
    try {
      const bytes = await this.#o.transport.request(controller, controllerApiProtocol, encode({ op: 'machine-view', machine: this.#o.machine }, 'remote-state watcher'), { timeoutMs: this.#timeoutMs() })
      reply = decode(bytes, 'remote-state watcher') as ApiReply
    } catch {
      this.counters.fetchFailures++
      return
    }
    if (this.#stopped) return
    if (!reply.ok) {
      this.counters.refused++
      return
    }
    // An answer older than what we hold (a lagging controller) changes nothing.
    if (reply.revision < this.#revision) return
    this.#revision = reply.revision
    for (const [unit, state] of Object.entries(reply.units)) {
      const encoded = JSON.stringify(state)
      if (this.#states.get(unit) === encoded) continue
      this.#states.set(unit, encoded)
      this.#o.onChange(unit, state)
    }
    for (const unit of [...this.#states.keys()]) {
      if (unit in reply.units) continue
      this.#states.delete(unit)
      this.#o.onChange(unit, undefined)
    }
  }

  #timeoutMs (): number {
    return this.#o.requestTimeoutMs ?? 2_000
  }
}
