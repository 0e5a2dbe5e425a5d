/**
 * The CLI's link to a controller group: a libp2p client in the group's private mesh with
 * the admin's identity (`<controller dir>/admin.key`), which dials a member only when it
 * has a request for it (client-transport.ts), so a command the first member answers
 * costs one connection. Commands go to the leader (any member forwards), each with one
 * request id kept across retries, so a command applies once however often it is sent.
 * Reads of the whole model are linearizable (the controllers' ReadIndex); `watch` calls
 * back on every change notice the leader gossips, so `status --watch` and `wait-for` are
 * pushed, not polled; gossip is joined only then (gossip-link.ts).
 */
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import type { FullModelReply } from '../../actors/controller/controller-api.ts'
import { controllerApiProtocol, controllerProposeProtocol } from '../../actors/controller/api-protocols.ts'
import { requestApi, type ApiReplies, type ApiReplyBase, type ApiRequests, type ApiSuccess, type StoreSelector } from '../../actors/controller/api-requests.ts'
import type { ApiOp } from '../../actors/controller/api-policy.ts'
import type { ControllerStatusReply } from '../../actors/controller/api-controller-status.ts'
import { changeTopic } from '../../actors/controller/change-notices.ts'
import { modelProtocol } from '../../actors/controller/model-scope.ts'
import { defaultModelName } from '../../runtime/ids.ts'
import { limits } from '../../runtime/limits.ts'
import { charmManifestOf } from '../charm/charm-chunks.ts'
import { CharmUploadRefusedError, uploadCharm, type UploadTarget } from '../charm/charm-upload.ts'
import { decode, encode } from '../../runtime/codec.ts'
import { CantripError } from '../../runtime/errors.ts'
import type { CommandResult } from '../../runtime/model/model-types.ts'
import { CommandProposer, type ModelCommandBody } from '../../runtime/model/command-proposer.ts'
import { ClientTransport } from './client-transport.ts'
import { GossipLink } from './gossip-link.ts'
import { submitPauseMs } from './submit-pause.ts'
import { watchModel } from './model-watcher.ts'
import { readNetworkKey } from '../mesh/network-key.ts'
import { readPeerKey } from '../mesh/peer-identity.ts'
import type { ControllerEntry } from './cli-home.ts'
import { quorumLostMessage } from './group-health.ts'
import { quorumVerdict } from './quorum-verdict.ts'
import type { DebugLogReply, DebugLogRequest } from '../../actors/controller/api-debug-log.ts'
import { logTopic, parseLogBatch, type LogEntry } from '../../runtime/logs/log-entry.ts'

const component = 'cantrip'
/** Attempts of one command across leader changes and lost replies (paced by submit-pause.ts). */
const submitAttemptsMax = 50
const requestTimeoutMs = 5_000
/**
 * A call that has not succeeded this long, or that failed once, asks every member at once
 * whether the group can commit (each within groupCheckTimeoutMs): a group without a
 * quorum is then said in one line, well inside one request's timeout.
 */
const groupCheckAfterMs = 1_000
const groupCheckTimeoutMs = 2_000
/**
 * A member that only timed out may be slow, not gone (a loaded host): checks whose
 * missing members all timed out are asked again, groupCheckAfterMs apart, and end the
 * call only once they have done so this long in a row (quorum-verdict.ts). A member that
 * refused or dropped the connection (a stopped process) settles it at the first check.
 */
const groupCheckTimedOutMs = 60_000

/** One call's link to its group check: `failed` asks for the check now; `aborted` once the check has answered for the call. */
interface CallSignal { failed: () => void, aborted: boolean }

type ForwardReply = { ok: true, result: CommandResult } | { ok: false, name: string, message: string, leader: string }
/** The model as a controller answers it, with the model's name (filled in by the CLI). */
export type FullModel = Extract<FullModelReply, { ok: true }> & { modelName?: string }
export type ControllerStatus = Extract<ControllerStatusReply, { ok: true }>

export class Connection {
  readonly transport: ClientTransport
  /** Gossip (change notices, log batches), joined on the first watch. */
  readonly #gossip: GossipLink
  readonly #members: string[]
  #leader = ''
  /** The model commands, reads and watches go to: each model is a Raft group of its own. */
  #model = defaultModelName
  /** The admin's commands: request ids `cli/<uuid>/<n>`, one per command, kept across its retries. */
  readonly #proposer = new CommandProposer({ proposer: { kind: 'user', name: 'admin' }, requestPrefix: `cli/${randomUUID()}` })

  /** The controller's name and entry, for the quorum check's line; absent, calls are not checked. */
  readonly #group: { name: string, entry: ControllerEntry } | undefined

  private constructor (transport: ClientTransport, gossip: GossipLink, members: string[], group: { name: string, entry: ControllerEntry } | undefined) {
    this.transport = transport
    this.#gossip = gossip
    this.#members = members
    this.#group = group
  }

  get modelName (): string {
    return this.#model
  }

  /** From now on, speak to `model`'s group (its protocols and change notices). */
  useModel (model: string): void {
    if (model !== this.#model) {
      this.#leader = ''
      this.#read = Promise.withResolvers<number>()
      this.#readRevision = undefined
    }
    this.#model = model
  }

  /** The revision of the latest model read (what a watch waits to see passed), and its first arrival. */
  #readRevision: number | undefined
  #read = Promise.withResolvers<number>()

  static async open (entry: ControllerEntry, name?: string): Promise<Connection> {
    const [privateKey, networkKey] = await Promise.all([readPeerKey(join(entry.dir, 'admin.key')), readNetworkKey(join(entry.dir, 'swarm.key'))])
    const addresses = entry.controllers.flatMap(c => c.addresses)
    const transport = await ClientTransport.create({ privateKey, networkKey, members: addresses })
    const gossip = new GossipLink({ privateKey, networkKey, bootstrap: addresses })
    return new Connection(transport, gossip, entry.controllers.map(c => c['peer-id']), name === undefined ? undefined : { name, entry })
  }

  async close (): Promise<void> {
    await Promise.all([this.transport.stop(), this.#gossip.stop()])
  }

  /** Commits `body` as the admin; resolves with the model's answer (which may be a refusal). */
  async submit (body: ModelCommandBody): Promise<CommandResult> {
    const command = this.#proposer.command(body)
    return await this.#checked(async signal => await this.#submit(command, body, signal))
  }

  async #submit (command: ReturnType<CommandProposer['command']>, body: ModelCommandBody, signal: CallSignal): Promise<CommandResult> {
    let last = 'no controller answered'
    let redirectsInARow = 0
    // A redirect followed at once is no attempt of its own: the budget stays
    // submitAttemptsMax pauses, and submitRedirectsAtOnceMax bounds the requests between two.
    for (let attempt = 0; attempt < submitAttemptsMax && !signal.aborted; attempt += redirectsInARow === 0 ? 1 : 0) {
      const target = this.#leader !== '' ? this.#leader : this.#members[attempt % this.#members.length]!
      try {
        const reply = decode(await this.transport.request(target, modelProtocol(controllerProposeProtocol, this.#model), encode(command, component), { timeoutMs: requestTimeoutMs }), component) as ForwardReply
        if (reply.ok) return reply.result
        if (reply.name === 'PermissionDeniedError') throw new CantripError(reply.message)
        last = reply.message
        this.#leader = reply.leader
        if (reply.leader === '') signal.failed()
      } catch (error) {
        if (error instanceof CantripError && error.name === 'CantripError') throw error
        last = error instanceof Error ? error.message : String(error)
        this.#leader = ''
        signal.failed()
      }
      const pauseMs = submitPauseMs({ target, leader: this.#leader, redirectsInARow })
      redirectsInARow = pauseMs === 0 ? redirectsInARow + 1 : 0
      if (pauseMs > 0) await new Promise(resolve => setTimeout(resolve, pauseMs))
    }
    throw new CantripError(`${component}: the controllers did not commit ${body.type}: ${last}`)
  }

  /** One API request, to each member in turn until one answers. */
  async api<Op extends ApiOp> (request: ApiRequests[Op] & { readonly op: Op }): Promise<ApiSuccess<Op>> {
    return await this.#checked(async signal => await this.#api<Op>(request, signal))
  }

  async #api<Op extends ApiOp> (request: ApiRequests[Op] & { readonly op: Op }, signal: CallSignal): Promise<ApiSuccess<Op>> {
    let last = 'no controller answered'
    for (let attempt = 0; attempt < this.#members.length * 5 && !signal.aborted; attempt++) {
      const target = this.#members[attempt % this.#members.length]!
      try {
        const reply = await this.apiTo<Op>(target, request)
        // Read through the base type: narrowing the union of every op's replies directly
        // is more than the compiler will expand (TS2590).
        const base: ApiReplyBase = reply
        if (base.ok) return reply as ApiSuccess<Op>
        last = base.error
      } catch (error) {
        last = error instanceof Error ? error.message : String(error)
        signal.failed()
      }
      await new Promise(resolve => setTimeout(resolve, 200))
    }
    throw new CantripError(`${component}: ${request.op} failed: ${last}`)
  }

  /**
   * Runs one call; past groupCheckAfterMs or at its first failure, asks the group whether
   * it can commit at all, and when it cannot, the call ends at once with that one line
   * (its retries stop) instead of waiting out every attempt.
   */
  async #checked<T> (run: (signal: CallSignal) => Promise<T>): Promise<T> {
    let due = (): void => {}
    const checkDue = new Promise<void>(resolve => { due = resolve })
    const signal: CallSignal = { failed: () => { due() }, aborted: false }
    const timer = setTimeout(signal.failed, groupCheckAfterMs)
    let settled = false
    const verdict = checkDue.then(async () => settled ? undefined : await this.#quorumVerdict(() => settled)).then(async message => {
      if (message === undefined || settled) return await new Promise<never>(() => {})
      signal.aborted = true
      throw new CantripError(message)
    })
    verdict.catch(() => {})
    try {
      return await Promise.race([run(signal), verdict])
    } finally {
      settled = true
      clearTimeout(timer)
    }
  }

  /** The quorum-lost line once the group has said so for certain (quorum-verdict.ts); undefined when a majority answers or the call settled. */
  async #quorumVerdict (settled: () => boolean): Promise<string | undefined> {
    return await quorumVerdict(async () => await this.#checkGroup(), settled, {
      afterMs: groupCheckAfterMs,
      timedOutMs: groupCheckTimedOutMs,
      now: () => performance.now(),
      sleep: async ms => { await new Promise(resolve => setTimeout(resolve, ms)) }
    })
  }

  /** The one line saying the group cannot commit (group-health.ts), or undefined while a majority of its voters answers. */
  async quorumLost (): Promise<string | undefined> {
    return (await this.#checkGroup())?.message
  }

  /** quorumLost, and whether every member that did not answer only timed out (it may be slow, not gone). */
  async #checkGroup (): Promise<{ message: string, onlyTimedOut: boolean } | undefined> {
    if (this.#group === undefined) return undefined
    const { name, entry } = this.#group
    const answers = await this.controllerStatuses(entry.controllers.map(m => ({ peer: m['peer-id'], ...(m.addresses[0] === undefined ? {} : { address: m.addresses[0] }) })), groupCheckTimeoutMs)
    const message = quorumLostMessage(name, entry, [...answers].map(([peer, reply]) => ({ peer, status: reply.ok ? reply : undefined })))
    if (message === undefined) return undefined
    const missing = [...answers.values()].filter(reply => !reply.ok)
    return { message, onlyTimedOut: missing.every(reply => 'error' in reply && /timeout|timed out/i.test(reply.error)) }
  }

  async model (): Promise<FullModel> {
    const full = { ...await this.api({ op: 'model' }), modelName: this.#model }
    this.#readRevision = Math.max(this.#readRevision ?? 0, full.model.revision)
    this.#read.resolve(this.#readRevision)
    return full
  }

  /**
   * Uploads a charm archive in chunks (agent/charm/charm-upload.ts) to one controller,
   * the next member if one cannot be reached; a refusal is final. Answers the hash the
   * controller stored it as.
   */
  async putCharm (bytes: Uint8Array, selector: StoreSelector = {}): Promise<string> {
    const manifest = charmManifestOf(bytes)
    const what = selector.store === 'agent' ? 'put-agent-binary' : 'put-charm'
    let last = 'no controller answered'
    for (const target of this.#members) {
      try {
        const upload: UploadTarget = {
          begin: async m => await this.apiTo(target, { op: 'put-charm-begin', manifest: m, ...selector }),
          chunk: async (hash, index, chunk) => await this.apiTo(target, { op: 'put-charm-chunk', hash, index, bytes: chunk, ...selector }),
          // The controller answers once a majority of the controllers hold the archive.
          commit: async hash => await this.apiTo(target, { op: 'put-charm-commit', hash, ...selector }, { timeoutMs: limits.charmReplicationTimeoutMs + requestTimeoutMs })
        }
        return (await uploadCharm(upload, bytes, manifest)).hash
      } catch (error) {
        if (error instanceof CharmUploadRefusedError) throw new CantripError(`${component}: ${what} failed: ${error.message}`)
        last = error instanceof Error ? error.message : String(error)
      }
    }
    throw new CantripError(`${component}: ${what} failed: ${last}`)
  }

  /**
   * Calls `onChange` whenever the model moves past the revision last read here (a
   * controller answers a held `model-watch`, model-watcher.ts; gossiped change notices
   * from a controller older than that op); returns the unsubscribe function.
   */
  watch (onChange: () => void): () => void {
    const topic = changeTopic(this.#model)
    const read = this.#read
    return watchModel({
      members: this.#members,
      ask: async (peer, since, timeoutMs) => await this.apiTo(peer, { op: 'model-watch', since }, { timeoutMs }),
      lastRead: async () => this.#readRevision ?? await read.promise,
      fallback: () => this.#gossip.attach(transport => transport.subscribe(topic, () => { onChange() })),
      requestTimeoutMs
    }, onChange)
  }
  /**
   * One API request to one controller (`peer`), dialling `address` first when given (a
   * member this connection was not opened with). Resolves with the reply as it is, ok or not.
   */
  async apiTo<Op extends ApiOp> (peer: string, request: ApiRequests[Op] & { readonly op: Op }, options: { address?: string, timeoutMs?: number } = {}): Promise<ApiReplies[Op]> {
    const timeoutMs = options.timeoutMs ?? requestTimeoutMs
    if (options.address !== undefined && !this.transport.connectedPeers().includes(peer)) await this.transport.dial(options.address, { timeoutMs })
    return await requestApi<Op>(this.transport, peer, modelProtocol(controllerApiProtocol, this.#model), request, { component, timeoutMs })
  }

  /** Each member's own `controller-status`, asked in parallel; an error (one line) for a member that did not answer. */
  async controllerStatuses (members: ReadonlyArray<{ peer: string, address?: string }>, timeoutMs = 3_000): Promise<Map<string, ControllerStatus | { ok: false, error: string }>> {
    const answers = await Promise.all(members.map(async ({ peer, address }) => {
      try {
        return [peer, await this.apiTo(peer, { op: 'controller-status' }, { timeoutMs, ...(address === undefined ? {} : { address }) })] as const
      } catch (error) {
        return [peer, { ok: false as const, error: error instanceof Error ? error.message : String(error) }] as const
      }
    }))
    return new Map(answers)
  }

  /** The controller whose cursor the last `debugLog` page used: later pages go to it first. */
  #logController = ''

  /**
   * One page of `debug-log` (actors/controller/api-debug-log.ts). Each controller keeps its
   * own records under its own cursor, so pages go to the controller that answered the
   * last one while it answers; the reply names who answered, for the caller to notice a change.
   */
  async debugLog (query: Omit<DebugLogRequest, 'op'>): Promise<Extract<DebugLogReply, { ok: true }>> {
    const request: DebugLogRequest = { ...query, op: 'debug-log' }
    let last = 'no controller answered'
    const order = [...new Set([this.#logController, ...this.#members].filter(m => m !== ''))]
    for (let attempt = 0; attempt < order.length * 3; attempt++) {
      const target = order[attempt % order.length]!
      try {
        const reply = await requestApi(this.transport, target, modelProtocol(controllerApiProtocol, this.#model), request, { component, timeoutMs: requestTimeoutMs })
        if (reply.ok) {
          this.#logController = target
          return reply
        }
        last = reply.error
        // A refusal of the request itself (a bad filter) is the same from every controller.
        if (/expected|permission denied/.test(reply.error)) break
      } catch (error) {
        last = error instanceof Error ? error.message : String(error)
      }
      await new Promise(resolve => setTimeout(resolve, 200))
    }
    throw new CantripError(`${component}: debug-log failed: ${last}`)
  }

  /**
   * Log batches as the model's agents publish them (runtime/logs/log-entry.ts), from the
   * peers `entitled` says may send them (others are ignored, not penalised: this client's
   * idea of the registered agents may be behind). Returns the unsubscribe function.
   */
  logs (entitled: (peer: string) => boolean, onBatch: (origin: string, records: readonly LogEntry[]) => void): () => void {
    const topic = logTopic(this.#model)
    return this.#gossip.attach(transport => {
      transport.setTopicValidator(topic, message => entitled(message.from) && parseLogBatch(message.data) !== undefined ? 'accept' : 'ignore')
      const unsubscribe = transport.subscribe(topic, message => {
        const batch = parseLogBatch(message.data)
        if (batch !== undefined) onBatch(message.from, batch.records)
      })
      return () => {
        unsubscribe()
        transport.setTopicValidator(topic, undefined)
      }
    })
  }

  /** The controllers' peer ids (the only peers besides registered machine agents that ship logs). */
  get members (): readonly string[] {
    return this.#members
  }
}
