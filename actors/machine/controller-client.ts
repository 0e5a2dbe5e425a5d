/**
 * A machine agent's link to the controllers over the mesh: it keeps the machine's view
 * of the model (`machine-model`, refreshed on every change notice and on a periodic
 * catch-up), submits commands through whichever controller leads (retries keep the
 * request id, so a command applies once), and fetches charm archives. Unit agents use it
 * as their controller: they read hook-tool data and project their remote state from the
 * view exactly as from a local model.
 */
import type { Clock, TimerHandle } from '../../runtime/clock.ts'
import { decode, encode } from '../../runtime/codec.ts'
import { CantripError } from '../../runtime/errors.ts'
import { limits } from '../../runtime/limits.ts'
import { emptyModel } from '../../runtime/model/model-draft.ts'
import type { CommandResult, ModelCommand, ModelContext } from '../../runtime/model/model-types.ts'
import type { NodeId } from '../../runtime/raft/raft-types.ts'
import type { Transport } from '../../runtime/transport.ts'
import { changeNoticeValidator, changeTopic, parseChangeNotice } from '../controller/change-notices.ts'
import { controllerApiProtocol, type CharmReply, type MachineModelReply } from '../controller/controller-api.ts'
import { controllerProposeProtocol } from '../controller/controller-node.ts'

const component = 'controller client'

export interface ControllerClientOptions {
  transport: Transport
  clock: Clock
  modelUuid: string
  machine: string
  controllers: readonly NodeId[]
  catchUpMs?: number
  requestTimeoutMs?: number
}

type ForwardReply = { ok: true, result: CommandResult } | { ok: false, name: string, message: string, leader: NodeId | '' }

export class ControllerClient {
  readonly #o: ControllerClientOptions
  #model: ModelContext = emptyModel()
  #fetched = false
  readonly #listeners = new Set<() => void>()
  #fetching = false
  #again = false
  #timer: TimerHandle | undefined
  #unsubscribe: (() => void) | undefined
  #stopped = false
  #next = 0
  #leaderHint: NodeId | '' = ''
  #ready: { promise: Promise<void>, resolve: () => void }
  /** Notices accepted, and view fetches made. */
  readonly counters = { notices: 0, fetches: 0 }

  constructor (options: ControllerClientOptions) {
    this.#o = options
    let resolve: () => void = () => {}
    const promise = new Promise<void>(r => { resolve = r })
    this.#ready = { promise, resolve }
  }

  start (): void {
    const topic = changeTopic(this.#o.modelUuid)
    this.#o.transport.setTopicValidator(topic, changeNoticeValidator(() => new Set(this.#o.controllers)))
    this.#unsubscribe = this.#o.transport.subscribe(topic, message => {
      const notice = parseChangeNotice(message.data)
      if (notice === undefined) return
      this.counters.notices++
      if (notice.revision > this.#model.revision) void this.#refresh()
    })
    void this.#refresh()
  }

  /** Resolves once the first view has arrived. */
  async ready (): Promise<void> {
    await this.#ready.promise
  }

  stop (): void {
    this.#stopped = true
    this.#unsubscribe?.()
    if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer)
  }

  model (): ModelContext {
    return this.#model
  }

  now (): number {
    return this.#o.clock.now()
  }

  onChange (listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => { this.#listeners.delete(listener) }
  }

  async submit (command: ModelCommand): Promise<CommandResult> {
    let last = 'no controller answered'
    for (let attempt = 1; attempt <= limits.controllerSubmitAttemptsMax * 2; attempt++) {
      const target = this.#leaderHint !== '' ? this.#leaderHint : this.#controller()
      let reply: ForwardReply | undefined
      try {
        reply = decode(await this.#o.transport.request(target, controllerProposeProtocol, encode(command, component), { timeoutMs: this.#timeoutMs() * 3 }), component) as ForwardReply
      } catch (error) {
        last = error instanceof Error ? error.message : String(error)
        this.#leaderHint = ''
      }
      if (reply !== undefined) {
        if (reply.ok) return reply.result
        // Retrying cannot help a refusal of who we are.
        if (reply.name === 'PermissionDeniedError') throw new CantripError(reply.message)
        last = reply.message
        this.#leaderHint = reply.name === 'NotLeaderError' ? reply.leader : ''
      }
      await new Promise<void>(resolve => { this.#o.clock.setTimeout(resolve, 100) })
    }
    throw new CantripError(`${component}: command not committed: ${last}`)
  }

  async charmArchive (hash: string): Promise<Uint8Array | undefined> {
    for (let attempt = 0; attempt < this.#o.controllers.length * 2; attempt++) {
      try {
        const reply = decode(await this.#o.transport.request(this.#controller(), controllerApiProtocol, encode({ op: 'charm-archive', hash }, component), { timeoutMs: this.#timeoutMs() }), component) as CharmReply
        if (reply.ok && reply.bytes !== null) return reply.bytes
      } catch {
        // Try the next controller.
      }
    }
    return undefined
  }

  async #refresh (): Promise<void> {
    if (this.#stopped) return
    if (this.#fetching) {
      this.#again = true
      return
    }
    this.#fetching = true
    if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer)
    let ok = false
    try {
      do {
        this.#again = false
        ok = await this.#fetch()
      } while (this.#again && !this.#stopped)
    } finally {
      this.#fetching = false
      if (!this.#stopped) {
        this.#timer = this.#o.clock.setTimeout(() => { void this.#refresh() }, ok ? (this.#o.catchUpMs ?? limits.remoteStateCatchUpMs) : this.#timeoutMs())
      }
    }
  }

  async #fetch (): Promise<boolean> {
    let reply: MachineModelReply
    this.counters.fetches++
    try {
      reply = decode(await this.#o.transport.request(this.#controller(), controllerApiProtocol, encode({ op: 'machine-model', machine: this.#o.machine }, component), { timeoutMs: this.#timeoutMs() }), component) as MachineModelReply
    } catch {
      return false
    }
    if (!reply.ok || this.#stopped) return false
    if (reply.model.revision < this.#model.revision && this.#fetched) return true
    this.#model = reply.model
    if (!this.#fetched) {
      this.#fetched = true
      this.#ready.resolve()
    }
    for (const listener of [...this.#listeners]) listener()
    return true
  }

  #controller (): NodeId {
    return this.#o.controllers[this.#next++ % this.#o.controllers.length]!
  }

  #timeoutMs (): number {
    return this.#o.requestTimeoutMs ?? 2_000
  }
}
