import { assert } from '../assert.ts'
import type { Clock, TimerHandle } from '../clock.ts'
import { decode, encode } from '../codec.ts'
import { CantripError } from '../errors.ts'
import { applyCommand } from '../model/model-apply.ts'
import { emptyModel } from '../model/model-draft.ts'
import { restoreModel } from '../model/model-snapshot.ts'
import type { CommandResult, ModelCommand, ModelContext } from '../model/model-types.ts'
import type { Random } from '../random.ts'
import type { Storage } from '../storage.ts'
import type { IncomingRequest, Transport } from '../transport.ts'
import { DurableRaftStorage } from './durable-raft-storage.ts'
import type { RaftStatus } from './raft-status.ts'
import type { Entry, Message, NodeId, RaftRole, Ready } from './raft-types.ts'
import { RawNode } from './raw-node.ts'

/** The request protocol that carries Raft messages between controllers. */
export const raftProtocol = 'raft/1'

const component = 'raft host'

export interface RaftHostOptions {
  id: NodeId
  /** Every founding voter, this node included; used to bootstrap an empty store. */
  peers: readonly NodeId[]
  storage: Storage
  transport: Transport
  clock: Clock
  /** Election jitter. */
  random: Random
  tickMs: number
  electionTicks: number
  heartbeatTicks: number
  /** How long `propose` waits for its entry to apply; default 20 election timeouts. */
  proposeTimeoutMs?: number
  /** Timeout of each message send; default one election timeout. */
  sendTimeoutMs?: number
  /** Called after each committed entry is applied (or skipped), in log order. */
  onApplied?: (entry: Entry, result: CommandResult | undefined) => void
  trace?: (line: string) => void
}

export class NotLeaderError extends CantripError {
  override name = 'NotLeaderError'
  readonly leader: NodeId | ''
  constructor (id: NodeId, leader: NodeId | '') {
    super(`raft host "${id}": cannot propose: not the leader${leader === '' ? ' (leader unknown)' : `; ask "${leader}"`}`)
    this.leader = leader
  }
}

/** The proposal was appended but its fate is unknown or negative: it may or may not apply. */
export class ProposalAbandonedError extends CantripError {
  override name = 'ProposalAbandonedError'
  constructor (id: NodeId, index: number, why: string) {
    super(`raft host "${id}": proposal at index ${index}: ${why}`)
  }
}

export class ProposalRefusedError extends CantripError {
  override name = 'ProposalRefusedError'
  constructor (id: NodeId, status: string) {
    super(`raft host "${id}": cannot propose: "${status}"`)
  }
}

export class HostStoppedError extends CantripError {
  override name = 'HostStoppedError'
  constructor (id: NodeId) {
    super(`raft host "${id}": stopped`)
  }
}

interface Pending {
  term: number
  resolve: (result: CommandResult) => void
  reject: (error: Error) => void
  timer: TimerHandle
}

/**
 * Drives a RawNode for one controller: ticks it on the Clock, carries its messages
 * over the Transport, persists each Ready through DurableRaftStorage and applies
 * committed commands to an in-memory model. Readies are handled one at a time and
 * strictly in the order RawNode documents: persist (awaited), send, apply, advance.
 *
 * The model is not persisted: a restarted host replays the log from the RaftSnapshot
 * (RawNode starts with `applied` at the snapshot index), so the model and the applied
 * index always agree.
 */
export class RaftHost {
  readonly id: NodeId
  readonly #options: RaftHostOptions
  readonly #durable: DurableRaftStorage
  readonly #node: RawNode
  readonly #pending = new Map<number, Pending>()
  #model: ModelContext
  #tickTimer: TimerHandle | undefined
  #processing: Promise<void> | undefined
  #stopped = false
  #failure: Error | undefined
  #role: RaftRole = 'follower'

  private constructor (options: RaftHostOptions, durable: DurableRaftStorage) {
    this.id = options.id
    this.#options = options
    this.#durable = durable
    const snapshot = durable.snapshot()
    this.#model = modelFromSnapshot(snapshot.data)
    this.#node = new RawNode({
      id: options.id,
      storage: durable,
      random: options.random,
      electionTicks: options.electionTicks,
      heartbeatTicks: options.heartbeatTicks,
      // The in-memory model starts from the RaftSnapshot, so everything after it replays.
      applied: snapshot.metadata.index,
      ...(options.trace === undefined ? {} : { trace: options.trace })
    })
  }

  /** Loads (or bootstraps) the durable state, then starts ticking and serving messages. */
  static async start (options: RaftHostOptions): Promise<RaftHost> {
    assert(Number.isFinite(options.tickMs) && options.tickMs > 0, `${component}: tickMs must be positive, got ${String(options.tickMs)}`)
    assert(options.peers.includes(options.id), `${component}: "${options.id}" is not among its peers ${JSON.stringify(options.peers)}`)
    const durable = await DurableRaftStorage.load(options.storage, { bootstrapVoters: options.peers })
    const host = new RaftHost(options, durable)
    options.transport.handle(raftProtocol, async request => host.#receive(request))
    host.#scheduleTick()
    host.#kick()
    return host
  }

  status (): RaftStatus {
    return this.#node.status()
  }

  /** The role as of the last Ready handled (what the host has acted on). */
  get role (): RaftRole {
    return this.#role
  }

  get stopped (): boolean {
    return this.#stopped
  }

  /** Why the host stopped itself (a storage failure), if it did. */
  get failure (): Error | undefined {
    return this.#failure
  }

  /** The applied model. */
  model (): ModelContext {
    return this.#model
  }

  /**
   * Proposes `command`; resolves with its result once its entry is applied here. Refused
   * at once with NotLeaderError (carrying the leader hint) when this node is not the
   * leader; rejected with ProposalAbandonedError when leadership is lost, the entry is
   * overwritten or the timeout passes (the command may still apply later).
   */
  async propose (command: ModelCommand): Promise<CommandResult> {
    if (this.#stopped) throw new HostStoppedError(this.id)
    const result = this.#node.propose(encode(command, component))
    if (result.status === 'not-leader') throw new NotLeaderError(this.id, result.leader)
    if (result.status !== 'accepted') throw new ProposalRefusedError(this.id, result.status)
    const { index, term } = result
    // An older proposal still waiting at this index was overwritten without this host
    // seeing a Ready in between (leadership lost and regained): it will never apply.
    this.#settle(index, pending => pending.reject(new ProposalAbandonedError(this.id, index, `overwritten by an entry of term ${term}`)))
    const promise = new Promise<CommandResult>((resolve, reject) => {
      const timeoutMs = this.#options.proposeTimeoutMs ?? 20 * this.#options.electionTicks * this.#options.tickMs
      const timer = this.#options.clock.setTimeout(() => {
        this.#settle(index, pending => pending.reject(new ProposalAbandonedError(this.id, index, `not applied within ${timeoutMs} ms`)))
      }, timeoutMs)
      this.#pending.set(index, { term, resolve, reject, timer })
    })
    this.#kick()
    return await promise
  }

  /** Stops after the Ready in hand (if any) is fully handled; nothing new is started. */
  async stop (): Promise<void> {
    if (this.#stopped) return
    const inHand = this.#processing
    this.#halt()
    if (inHand !== undefined) await inHand
  }

  /**
   * Stops at once, as a power cut would: the Ready in hand is abandoned wherever it is,
   * and nothing more is written or sent. Pair it with the store's own crash.
   */
  crash (): void {
    this.#halt()
  }

  #halt (): void {
    this.#stopped = true
    if (this.#tickTimer !== undefined) this.#options.clock.clearTimeout(this.#tickTimer)
    this.#tickTimer = undefined
    try {
      this.#options.transport.unhandle(raftProtocol)
    } catch {
      // A stopped transport refuses unhandle; there is nothing left to detach then.
    }
    for (const index of [...this.#pending.keys()]) {
      this.#settle(index, pending => pending.reject(new HostStoppedError(this.id)))
    }
  }

  #scheduleTick (): void {
    this.#tickTimer = this.#options.clock.setTimeout(() => {
      if (this.#stopped) return
      this.#node.tick()
      this.#kick()
      this.#scheduleTick()
    }, this.#options.tickMs)
  }

  async #receive (request: IncomingRequest): Promise<Uint8Array> {
    if (this.#stopped) return new Uint8Array(0)
    const messages = decode(request.data, component)
    if (!Array.isArray(messages)) return new Uint8Array(0)
    for (const message of messages as unknown[]) {
      // A peer speaks only for itself; the core validates everything else.
      if (typeof message !== 'object' || message === null || (message as Message).from !== request.from) continue
      this.#node.step(message as Message)
    }
    this.#kick()
    return new Uint8Array(0)
  }

  /** Starts handling Readies unless that is already under way: never two at once. */
  #kick (): void {
    if (this.#processing !== undefined || this.#stopped) return
    this.#processing = this.#drain()
      .catch((error: unknown) => { this.#fail(error) })
      .finally(() => { this.#processing = undefined })
  }

  async #drain (): Promise<void> {
    while (!this.#stopped && this.#node.hasReady()) {
      const ready = this.#node.ready()
      await this.#durable.persistReady(ready)
      // A crash during the write: nothing of this Ready may be acted on.
      if (this.#stopped) return
      this.#send(ready.messages)
      this.#apply(ready)
      this.#node.advance()
    }
  }

  #send (messages: readonly Message[]): void {
    const byPeer = new Map<NodeId, Message[]>()
    for (const message of messages) {
      const list = byPeer.get(message.to)
      if (list === undefined) byPeer.set(message.to, [message])
      else list.push(message)
    }
    const timeoutMs = this.#options.sendTimeoutMs ?? this.#options.electionTicks * this.#options.tickMs
    for (const [peer, list] of byPeer) {
      const hasSnapshot = list.some(message => message.type === 'snapshot')
      let sent: Promise<Uint8Array>
      try {
        sent = this.#options.transport.request(peer, raftProtocol, encode(list, component), { timeoutMs })
      } catch (error) {
        sent = Promise.reject(error)
      }
      // Fire and forget: Raft retries on its own; failures only tell it the peer is away.
      sent.then(
        () => {
          if (this.#stopped || !hasSnapshot) return
          this.#node.reportSnapshot(peer, 'finished')
          this.#kick()
        },
        () => {
          if (this.#stopped) return
          this.#node.reportUnreachable(peer)
          if (hasSnapshot) this.#node.reportSnapshot(peer, 'failed')
          this.#kick()
        })
    }
  }

  #apply (ready: Ready): void {
    if (ready.softState !== undefined) {
      const wasLeader = this.#role === 'leader'
      this.#role = ready.softState.role
      if (wasLeader && this.#role !== 'leader') {
        for (const index of [...this.#pending.keys()]) {
          this.#settle(index, pending => pending.reject(new ProposalAbandonedError(this.id, index, 'leadership lost before it applied')))
        }
      }
    }
    if (ready.snapshot !== undefined && ready.snapshot.metadata.index > this.#model.revision) {
      this.#model = modelFromSnapshot(ready.snapshot.data)
    }
    for (const entry of ready.committedEntries) {
      // Entries a RaftSnapshot already covers were applied as part of it.
      if (entry.index <= this.#model.revision) continue
      let result: CommandResult | undefined
      if (entry.type === 'normal' && entry.data.length > 0) {
        const outcome = applyCommand(this.#model, decode(entry.data, component) as ModelCommand, { index: entry.index, term: entry.term })
        this.#model = outcome.context
        result = outcome.result
      } else {
        // The leader's no-op or a membership change: the raft.entrySkipped path.
        this.#model = { ...this.#model, revision: entry.index, term: entry.term }
      }
      this.#options.onApplied?.(entry, result)
      this.#settle(entry.index, pending => {
        if (pending.term === entry.term && result !== undefined) pending.resolve(result)
        else pending.reject(new ProposalAbandonedError(this.id, entry.index, `overwritten by an entry of term ${entry.term}`))
      })
    }
  }

  #settle (index: number, how: (pending: Pending) => void): void {
    const pending = this.#pending.get(index)
    if (pending === undefined) return
    this.#pending.delete(index)
    this.#options.clock.clearTimeout(pending.timer)
    how(pending)
  }

  #fail (error: unknown): void {
    this.#failure = error instanceof Error ? error : new CantripError(`${component} "${this.id}": failed`, { cause: error })
    this.#options.trace?.(`${component} "${this.id}": stopped on failure: ${this.#failure.message}`)
    this.#halt()
  }
}

function modelFromSnapshot (data: Uint8Array): ModelContext {
  // Empty RaftSnapshot data is the empty model (see raft-bootstrap.ts).
  return data.length === 0 ? emptyModel() : restoreModel(decode(data, component))
}
