/**
 * A machine agent's link to the controllers over the mesh: it keeps the machine's view
 * of the model: fetched whole first (`machine-model`), then brought change by change by
 * its watch (view-watch.ts), which a controller answers as soon as it applies a commit
 * that changes the view; while the watch is down, change notices make it fetch, and a
 * periodic catch-up fetches anyway (it names the revision of the view it holds, and a
 * controller that kept that view answers `unchanged` when nothing the machine sees
 * changed: machine-view-cache.ts),
 * submits commands through whichever controller leads (retries keep the
 * request id, so a command applies once), and fetches charm archives. Unit agents use it
 * as their controller: they read hook-tool data and project their remote state from the
 * view exactly as from a local model. What the view does not carry, a leader's
 * `status-get --application` (all its application's units), it asks for
 * (`applicationStatus`).
 *
 * Like Juju's bulk API calls, submits are batched: the commands of one macrotask, and all
 * those submitted while a request is in flight, go to the leader together in one
 * `{ batch }` request of at most limits.apiBatchCommandsMax, so a machine with many
 * units does not make one round trip per unit.
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
import { controllerApiProtocol, type ApplicationStatusReply, type MachineModelReply } from '../controller/controller-api.ts'
import { encodeApiRequest, requestApi, type ApiRequests, type GoalStateReply, type SecretContentReply, type StoreSelector } from '../controller/api-requests.ts'
import { controllerProposeProtocol, invalidBatchName, type BatchReply, type BatchRequest, type ForwardReply } from '../controller/model-replica.ts'
import { firstControllerIndex, replyRevision, ViewWatch, type WatchOutcome } from './view-watch.ts'

const component = 'controller client'

/** The steps ControllerClientOptions.onStage reports. */
export type ClientStage = 'watch-reply' | 'fetch-reply' | 'fetch-failed'

export interface ControllerClientOptions {
  transport: Transport
  clock: Clock
  modelUuid: string
  machine: string
  controllers: readonly NodeId[]
  catchUpMs?: number
  requestTimeoutMs?: number
  /** How long a controller holds this agent's watch (default limits.machineWatchHoldMs). */
  watchHoldMs?: number
  /**
   * Timing a change's way to this agent (bench/notice-stages.ts): `watch-reply` as a
   * watch's answer arrives, before it is taken, and `fetch-reply` a fetch's (`detail`:
   * the revision it brings); `fetch-failed` (detail 0) a fetch that brought nothing.
   */
  onStage?: (stage: ClientStage, detail: number) => void
}

/** Room left in a request for the batch's own framing. */
const batchBytesMax = Math.floor(limits.transportMessageBytesMax / 2)
const submitAttemptsMax = limits.controllerSubmitAttemptsMax * 2
const retryDelayMs = 100

interface Queued {
  readonly command: ModelCommand
  readonly bytes: number
  attempts: number
  resolve: (result: CommandResult) => void
  reject: (error: Error) => void
}

export class ControllerClient {
  readonly #o: ControllerClientOptions
  #model: ModelContext = emptyModel()
  /** The revision of the last whole view received: its content is what #model holds. */
  #viewRevision = 0
  #fetched = false
  readonly #listeners = new Set<() => void>()
  readonly #revisionListeners = new Set<(revision: number) => void>()
  #fetching = false
  #again = false
  #timer: TimerHandle | undefined
  #unsubscribe: (() => void) | undefined
  #stopped = false
  #next = 0
  #leaderHint: NodeId | '' = ''
  #ready: { promise: Promise<void>, resolve: () => void }
  /** Commands waiting for a request, oldest (and retries) first. */
  readonly #queue: Queued[] = []
  /** Commands submitted and not yet answered, queued or in flight. */
  #held = 0
  #draining = false
  /**
   * Notices accepted, view fetches made, answers to the view watch taken, propose
   * requests sent, and commands submitted (requests per command shows the batching).
   */
  readonly counters = { notices: 0, fetches: 0, watchAnswers: 0, submitRequests: 0, commandsSubmitted: 0 }
  /** The watch that brings each change of the view (view-watch.ts); notices and fetches are its fallback. */
  readonly watch: ViewWatch
  /** The highest revision change notices announced. */
  #noticed = 0
  /** Fetch rounds in a row in which no controller answered (each lengthens the next fetch's bound). */
  #failedRounds = 0

  constructor (options: ControllerClientOptions) {
    this.#o = options
    // The first fetch goes where the watch will be held (one connection, and spread over the controllers).
    this.#next = firstControllerIndex(options.machine, options.controllers.length)
    this.watch = new ViewWatch({
      transport: options.transport,
      clock: options.clock,
      machine: options.machine,
      controllers: options.controllers,
      position: () => ({ since: this.#viewRevision, revision: this.#model.revision }),
      accept: reply => {
        this.counters.watchAnswers++
        options.onStage?.('watch-reply', replyRevision(reply))
        return this.#accept(reply)
      },
      behind: revision => Math.max(this.#noticed, this.#model.revision) > revision,
      onHealthChange: healthy => { this.#listen(!healthy) },
      requestTimeoutMs: this.#timeoutMs(),
      ...(options.watchHoldMs === undefined ? {} : { holdMs: options.watchHoldMs })
    })
    let resolve: () => void = () => {}
    const promise = new Promise<void>(r => { resolve = r })
    this.#ready = { promise, resolve }
  }

  start (): void {
    const topic = changeTopic(this.#o.modelUuid)
    this.#o.transport.setTopicValidator(topic, changeNoticeValidator(() => new Set(this.#o.controllers)))
    // No watch yet: the notices are what tells this agent of a change until one is up.
    this.#listen(true)
    void this.#refresh()
  }

  /**
   * Listens to the change notices only while the watch is down. Each notice cost every
   * agent about a millisecond of CPU (verified, signature-checked and forwarded to its
   * mesh peers by gossipsub) that a healthy watch made useless: the watch had brought the
   * change already (issue 28: 50 agents on 2 cores). An unsubscribed peer costs the
   * others nothing per notice: gossipsub forwards, floods and gossips IHAVEs only to peers
   * subscribed to the topic, and the leader's flood publish reaches a resubscribed agent
   * directly. The other reason to hear notices, a watch held by a controller that fell
   * behind, is that controller's to tell: without a leader it ends its watches
   * (actors/controller/watch-leader-guard.ts); and a watch answered below a revision this
   * agent learnt from a fetch (the periodic catch-up reads through the leader) moves on.
   */
  #listen (on: boolean): void {
    if (this.#stopped || on === (this.#unsubscribe !== undefined)) return
    if (!on) {
      this.#unsubscribe!()
      this.#unsubscribe = undefined
      return
    }
    try {
      this.#unsubscribe = this.#o.transport.subscribe(changeTopic(this.#o.modelUuid), message => {
        const notice = parseChangeNotice(message.data)
        if (notice === undefined) return
        this.counters.notices++
        this.#noticed = Math.max(this.#noticed, notice.revision)
        // A live watch brings the change itself (or moves on when its controller is behind).
        if (notice.revision > this.#model.revision && !this.watch.healthy) void this.#refresh()
      })
    } catch (error) {
      // The agent's transport stopped (the process is going down): its watch failing is what called here.
      if (!(error instanceof Error && error.name === 'TransportStoppedError')) throw error
    }
  }

  /** Resolves once the first view has arrived. */
  async ready (): Promise<void> {
    await this.#ready.promise
  }

  stop (): void {
    this.#stopped = true
    this.watch.stop()
    this.#unsubscribe?.()
    this.#unsubscribe = undefined
    if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer)
  }

  model (): ModelContext {
    return this.#model
  }

  now (): number {
    return this.#o.clock.now()
  }

  /** Called after every change of the view's content (not when only the model's revision moved). */
  onChange (listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => { this.#listeners.delete(listener) }
  }

  /** Called whenever the view reaches a newer revision, changed or not. */
  onRevision (listener: (revision: number) => void): () => void {
    this.#revisionListeners.add(listener)
    return () => { this.#revisionListeners.delete(listener) }
  }

  /**
   * Commits `command` through whichever controller leads, batched with the other commands
   * submitted meanwhile; resolves with its own result. Retries keep the request id, so it
   * applies once. Refused at once when limits.apiBatchQueueMax commands are waiting.
   */
  async submit (command: ModelCommand): Promise<CommandResult> {
    if (this.#held >= limits.apiBatchQueueMax) {
      throw new CantripError(`${component}: cannot submit ${JSON.stringify(command.type)}: ${this.#held} commands already waiting, the maximum is ${limits.apiBatchQueueMax}`)
    }
    const bytes = encode(command, component).length
    this.counters.commandsSubmitted++
    this.#held++
    try {
      return await new Promise<CommandResult>((resolve, reject) => {
        this.#queue.push({ command, bytes, attempts: 0, resolve, reject })
        this.#pump()
      })
    } finally {
      this.#held--
    }
  }

  #pump (): void {
    if (this.#draining || this.#queue.length === 0) return
    this.#draining = true
    // Wait out the macrotask, so a burst of unit agents' submits shares the first request.
    this.#o.clock.setTimeout(() => { void this.#drain() }, 0)
  }

  /** Sends batches, one request at a time, until nothing is waiting. */
  async #drain (): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const batch = this.#take()
        let retry: Queued[]
        try {
          retry = await this.#send(batch)
        } catch (error) {
          const err = error instanceof Error ? error : new Error(String(error))
          for (const entry of batch) entry.reject(err)
          retry = []
        }
        if (retry.length > 0) {
          this.#queue.unshift(...retry)
          await new Promise<void>(resolve => { this.#o.clock.setTimeout(resolve, retryDelayMs) })
        }
      }
    } finally {
      this.#draining = false
    }
  }

  /** The next batch: up to limits.apiBatchCommandsMax commands that fit one request. */
  #take (): Queued[] {
    let count = 0
    let bytes = 0
    while (count < this.#queue.length && count < limits.apiBatchCommandsMax) {
      const next = this.#queue[count]!.bytes
      if (count > 0 && bytes + next > batchBytesMax) break
      bytes += next
      count++
    }
    return this.#queue.splice(0, count)
  }

  /** One request for `batch`; settles what it can and returns the commands to try again. */
  async #send (batch: Queued[]): Promise<Queued[]> {
    const target = this.#leaderHint !== '' ? this.#leaderHint : this.#controller()
    const request: BatchRequest = { batch: batch.map(entry => entry.command) }
    let reply: BatchReply
    this.counters.submitRequests++
    try {
      reply = decode(await this.#o.transport.request(target, controllerProposeProtocol, encode(request, component), { timeoutMs: this.#timeoutMs() * 3 }), component) as BatchReply
    } catch (error) {
      this.#leaderHint = ''
      return this.#failed(batch, error instanceof Error ? error.message : String(error))
    }
    if (typeof reply !== 'object' || reply === null || typeof reply.ok !== 'boolean') {
      this.#leaderHint = ''
      return this.#failed(batch, `controller "${target}" sent a malformed reply`)
    }
    if (!reply.ok) {
      // Retrying cannot help a refusal of who we are, or of the batch's shape.
      if (reply.name === 'PermissionDeniedError' || reply.name === invalidBatchName) {
        for (const entry of batch) entry.reject(new CantripError(reply.message))
        return []
      }
      this.#leaderHint = reply.name === 'NotLeaderError' ? reply.leader : ''
      return this.#failed(batch, reply.message)
    }
    const results: unknown = reply.results
    if (!Array.isArray(results) || results.length !== batch.length) {
      this.#leaderHint = ''
      return this.#failed(batch, `controller "${target}" answered a batch of ${batch.length} with a malformed reply`)
    }
    const retry: Queued[] = []
    batch.forEach((entry, i) => {
      const result = results[i] as ForwardReply | null
      if (typeof result !== 'object' || result === null) {
        retry.push(...this.#failed([entry], `controller "${target}" sent a malformed result`))
      } else if (result.ok) {
        entry.resolve(result.result)
      } else if (result.name === 'PermissionDeniedError') {
        entry.reject(new CantripError(result.message))
      } else {
        this.#leaderHint = result.name === 'NotLeaderError' ? result.leader : ''
        retry.push(...this.#failed([entry], result.message))
      }
    })
    return retry
  }

  /** Counts a failed attempt for each of `entries`; those with attempts left are returned. */
  #failed (entries: Queued[], last: string): Queued[] {
    return entries.filter(entry => {
      if (++entry.attempts < submitAttemptsMax) return true
      entry.reject(new CantripError(`${component}: command not committed: ${last}`))
      return false
    })
  }

  /** A charm archive's (or with `store: 'agent'` an agent bundle's) manifest (runtime/charm/charm-manifest.ts), from the first controller that has it. */
  async charmManifest (hash: string, selector: StoreSelector = {}): Promise<unknown> {
    return await this.#charmRequest(async target => {
      const reply = await requestApi(this.#o.transport, target, controllerApiProtocol, { op: 'charm-manifest', hash, ...selector }, { component, timeoutMs: this.#charmTimeoutMs() })
      return reply.ok ? reply.manifest ?? undefined : undefined
    })
  }

  /** One chunk of a charm archive; the caller checks it against the manifest (agent/uniter/charm-fetch.ts). */
  async charmChunk (hash: string, index: number, selector: StoreSelector = {}): Promise<Uint8Array | undefined> {
    return await this.#charmRequest(async target => {
      const reply = await requestApi(this.#o.transport, target, controllerApiProtocol, { op: 'charm-chunk', hash, index, ...selector }, { component, timeoutMs: this.#charmTimeoutMs() })
      return reply.ok && reply.bytes instanceof Uint8Array ? reply.bytes : undefined
    })
  }

  /** Asks the controllers in turn (each twice at most) until one answers with something. */
  async #charmRequest<T> (ask: (target: string) => Promise<T | undefined>): Promise<T | undefined> {
    for (let attempt = 0; attempt < this.#o.controllers.length * 2; attempt++) {
      try {
        const answer = await ask(this.#controller())
        if (answer !== undefined) return answer
      } catch {
        // Try the next controller.
      }
    }
    return undefined
  }

  /** A controller that lacks the archive copies it from its peers before it answers. */
  #charmTimeoutMs (): number {
    return Math.max(this.#timeoutMs(), limits.charmFetchPeerTimeoutMs * 4)
  }

  /**
   * `status-get --application` for `unit` (its application's leader), from the whole
   * model at a controller. A refusal is final; a transport failure tries the next
   * controller, each of them once.
   */
  async applicationStatus (unit: string): Promise<ApplicationStatusReply> {
    let last = 'no controller to ask'
    for (let attempt = 0; attempt < this.#o.controllers.length; attempt++) {
      const target = this.#controller()
      try {
        const reply = decode(await this.#o.transport.request(target, controllerApiProtocol, encodeApiRequest({ op: 'application-status', unit }, component), { timeoutMs: this.#timeoutMs() }), component)
        if (isApplicationStatusReply(reply)) return reply
        last = `controller "${target}" sent a malformed reply`
      } catch (error) {
        last = error instanceof Error ? error.message : String(error)
      }
    }
    return { ok: false, error: `${component}: cannot read the application status for unit ${JSON.stringify(unit)}: ${last}` }
  }

  /**
   * `goal-state` for `unit` from the whole model at a controller (this machine's view
   * holds only its own units). A refusal is final; a transport failure tries the next
   * controller, each of them once.
   */
  async goalState (unit: string): Promise<GoalStateReply> {
    let last = 'no controller to ask'
    for (let attempt = 0; attempt < this.#o.controllers.length; attempt++) {
      const target = this.#controller()
      try {
        const reply = decode(await this.#o.transport.request(target, controllerApiProtocol, encodeApiRequest({ op: 'goal-state', unit }, component), { timeoutMs: this.#timeoutMs() }), component)
        if (isGoalStateReply(reply)) return reply
        last = `controller "${target}" sent a malformed reply`
      } catch (error) {
        last = error instanceof Error ? error.message : String(error)
      }
    }
    return { ok: false, error: `${component}: cannot read the goal state for unit ${JSON.stringify(unit)}: ${last}` }
  }

  /**
   * `secret-get` for `unit` (actors/controller/api-secrets.ts): only a controller can open
   * the content. A refusal is final; a transport failure tries the next controller.
   */
  async secretContent (request: Omit<ApiRequests['secret-content'], 'op'>): Promise<SecretContentReply> {
    let last = 'no controller to ask'
    for (let attempt = 0; attempt < this.#o.controllers.length; attempt++) {
      const target = this.#controller()
      try {
        const reply = decode(await this.#o.transport.request(target, controllerApiProtocol, encodeApiRequest({ op: 'secret-content', ...request }, component), { timeoutMs: this.#timeoutMs() }), component)
        if (isSecretContentReply(reply)) return reply
        last = `controller "${target}" sent a malformed reply`
      } catch (error) {
        last = error instanceof Error ? error.message : String(error)
      }
    }
    return { ok: false, error: `${component}: cannot read a secret for unit ${JSON.stringify(request.unit)}: ${last}` }
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
        ok = await this.#fetchFromAny()
      } while (this.#again && !this.#stopped)
    } finally {
      this.#fetching = false
      if (!this.#stopped) {
        this.#timer = this.#o.clock.setTimeout(() => { void this.#refresh() }, ok ? (this.#o.catchUpMs ?? limits.remoteStateCatchUpMs) : this.#timeoutMs())
      }
    }
  }

  /**
   * Asks each controller in turn, at most once each, until one answers: a controller that
   * cannot serve the read (restarting, cut off from its leader, its read timed out) moves
   * the agent on to the next at once instead of costing it a whole retry period.
   */
  async #fetchFromAny (): Promise<boolean> {
    for (let asked = 0; asked < this.#o.controllers.length && !this.#stopped; asked++) {
      if (await this.#fetch()) {
        this.#failedRounds = 0
        return true
      }
    }
    this.#failedRounds++
    return false
  }

  /**
   * A fetch's bound: the request timeout, doubled after each round in which no controller
   * answered, up to limits.machineFetchTimeoutMaxMs. On a starved host (50 agents starting
   * beside other work on 2 cores) a read through the leader can take longer than the
   * timeout; abandoning it at once and asking the next controller threw that work away
   * and added more, and agents went on for minutes without a first view.
   */
  #fetchTimeoutMs (): number {
    return Math.min(this.#timeoutMs() * 2 ** Math.min(this.#failedRounds, 8), Math.max(this.#timeoutMs(), limits.machineFetchTimeoutMaxMs))
  }

  async #fetch (): Promise<boolean> {
    let reply: MachineModelReply
    this.counters.fetches++
    try {
      const since = this.#fetched ? { since: this.#viewRevision } : {}
      reply = await requestApi(this.#o.transport, this.#controller(), controllerApiProtocol, { op: 'machine-model', machine: this.#o.machine, ...since }, { component, timeoutMs: this.#fetchTimeoutMs() })
    } catch {
      this.#o.onStage?.('fetch-failed', 0)
      return false
    }
    if (!reply.ok || this.#stopped) {
      this.#o.onStage?.('fetch-failed', 0)
      return false
    }
    this.#o.onStage?.('fetch-reply', replyRevision(reply))
    const outcome = this.#accept(reply)
    return outcome === 'moved' || outcome === 'same'
  }

  /** Takes a fetch's or a watch's answer into the view, never going back in revision. */
  #accept (reply: Extract<MachineModelReply, { ok: true }>): WatchOutcome {
    if (this.#stopped) return 'useless'
    if ('unchanged' in reply) {
      // Only an answer to the view we named; one before our first view is a controller's mistake.
      if (!this.#fetched) return 'useless'
      if (reply.revision <= this.#model.revision) return 'same'
      this.#model = { ...this.#model, revision: reply.revision, term: reply.term }
      this.#revisionMoved()
      return 'moved'
    }
    let model: ModelContext
    if ('changed' in reply) {
      // Changes to the view we named: only ever an answer to it.
      if (!this.#fetched || reply.since !== this.#viewRevision) return 'stale'
      model = { ...this.#model, ...reply.changed }
    } else {
      model = reply.model
    }
    if (model.revision < this.#model.revision && this.#fetched) return 'same'
    this.#model = model
    this.#viewRevision = model.revision
    if (!this.#fetched) {
      this.#fetched = true
      this.#ready.resolve()
      this.watch.start()
    }
    for (const listener of [...this.#listeners]) listener()
    this.#revisionMoved()
    return 'moved'
  }

  #revisionMoved (): void {
    for (const listener of [...this.#revisionListeners]) listener(this.#model.revision)
  }

  #controller (): NodeId {
    return this.#o.controllers[this.#next++ % this.#o.controllers.length]!
  }

  #timeoutMs (): number {
    return this.#o.requestTimeoutMs ?? 2_000
  }
}

/** The shape of an application-status reply, checked before a hook tool prints it. */
function isApplicationStatusReply (reply: unknown): reply is ApplicationStatusReply {
  if (typeof reply !== 'object' || reply === null) return false
  const r = reply as Record<string, unknown>
  if (r['ok'] === false) return typeof r['error'] === 'string'
  return r['ok'] === true && typeof r['units'] === 'object' && r['units'] !== null && typeof r['omitted'] === 'number' &&
    (r['application'] === null || typeof r['application'] === 'object')
}

/** The shape of a goal-state reply, checked before a hook tool prints it. */
function isGoalStateReply (reply: unknown): reply is GoalStateReply {
  if (typeof reply !== 'object' || reply === null) return false
  const r = reply as Record<string, unknown>
  if (r['ok'] === false) return typeof r['error'] === 'string'
  const state = r['goalState']
  if (r['ok'] !== true || typeof state !== 'object' || state === null) return false
  const s = state as Record<string, unknown>
  return typeof s['units'] === 'object' && s['units'] !== null && typeof s['relations'] === 'object' && s['relations'] !== null
}

/** The shape of a secret-content reply: content a map of strings. */
function isSecretContentReply (reply: unknown): reply is SecretContentReply {
  if (typeof reply !== 'object' || reply === null) return false
  const r = reply as Record<string, unknown>
  if (r['ok'] === false) return typeof r['error'] === 'string'
  const content = r['content']
  return r['ok'] === true && typeof r['id'] === 'string' && typeof r['revision'] === 'number' &&
    typeof content === 'object' && content !== null && Object.values(content).every(v => typeof v === 'string')
}
