import { assert } from '../assert.ts'
import type { TimerHandle } from '../clock.ts'
import { decode, encode } from '../codec.ts'
import { CantripError } from '../errors.ts'
import { limits } from '../limits.ts'
import { applyConfigChange } from './cluster-config.ts'
import { CommitHold } from './commit-hold.ts'
import { ApplyTiming } from './apply-timing.ts'
import type { IncomingRequest } from '../transport.ts'
import { DurableRaftStorage } from './durable-raft-storage.ts'
import { HeldAnswers, noMessages } from './held-answers.ts'
import type { RaftBasicStatus, RaftStatus } from './raft-status.ts'
import type { ClusterConfig, ConfigChange, Entry, Message, NodeId, RaftRole, Ready } from './raft-types.ts'
import { RawNode } from './raw-node.ts'
import { raftSnapshotProtocol, sendSnapshotInChunks, SnapshotAssembler } from './snapshot-transfer.ts'
import { TickSchedule } from './tick-schedule.ts'
import { watchLeaderCloses } from './leader-close-watch.ts'
import { sendTimeoutElectionTimeouts } from './send-timeout.ts'
import type { ReplicatedStateMachine } from './replicated-state-machine.ts'
import type { RaftHostOptions } from './raft-host-options.ts'
import { persistAfterEarlySends } from './leader-write-timing.ts'
import { ProposalQueue } from './proposal-queue.ts'
import { PendingReads } from './pending-reads.ts'
import { HostStoppedError, MembershipChangeRefusedError, NotLeaderError, ProposalAbandonedError, ProposalRefusedError, ReadFailedError } from './raft-host-errors.ts'

/** The request protocol that carries Raft messages between controllers. */
export const raftProtocol = 'raft/1'

const component = 'raft host'

export type { RaftHostOptions, RaftHostStage, RoleChange } from './raft-host-options.ts'

export { HostStoppedError, MembershipChangeRefusedError, NotLeaderError, ProposalAbandonedError, ProposalRefusedError, ReadFailedError } from './raft-host-errors.ts'

interface Pending<Result> {
  term: number
  kind: 'command' | 'config-change'
  resolve: (result: Result | undefined) => void
  reject: (error: Error) => void
  timer: TimerHandle
}

/**
 * Drives a RawNode for one controller: ticks it on the Clock, carries its messages
 * over the Transport, persists each Ready through DurableRaftStorage and applies
 * committed commands to the state machine it is given (ReplicatedStateMachine, which it
 * knows nothing else about). Readies are handled one at a time and strictly in the order
 * RawNode documents: persist (awaited), send, apply, advance.
 *
 * The state machine is not persisted: a restarted host replays the log from the
 * RaftSnapshot (RawNode starts with `applied` at the snapshot index), so the state and
 * the applied index always agree.
 */
export class RaftHost<Command, Result, State> {
  readonly id: NodeId
  readonly #options: RaftHostOptions<Command, Result, State>
  readonly #durable: DurableRaftStorage
  readonly #node: RawNode
  readonly #machine: ReplicatedStateMachine<Command, Result, State>
  readonly #pending = new Map<number, Pending<Result>>()
  /** Proposals waiting for the next Ready (group commit). */
  readonly #proposals: ProposalQueue<Command, Result>
  /** The last index of each group appended from #proposals that may not have applied yet (#queuedMayGo). */
  #groupsInFlight: number[] = []
  /** Linearizable reads by their request context. */
  readonly #reads: PendingReads<State>
  #readsStarted = 0
  /** The index of the last entry (or RaftSnapshot) applied to the state machine. */
  #applied: number
  readonly #applyTiming: ApplyTiming
  /** The membership as of the applied index: what a RaftSnapshot taken now records. */
  #appliedConfig: ClusterConfig
  #snapshotIndex: number
  /** Entry payload bytes applied since the newest RaftSnapshot (the compaction rule of maybeCompact). */
  #logBytesSinceSnapshot = 0
  #term: number
  #snapshotsReceived = 0
  #leader: NodeId | '' = ''
  /** Ticks as deadlines: the host wakes for the next tick that acts, not for every tick. */
  readonly #schedule: TickSchedule
  /** Ticks taken since start, and the tick at which each peer's last Raft message arrived (reachableVoters). */
  #ticks = 0
  readonly #heardAtTick = new Map<NodeId, number>()
  #processing: Promise<void> | undefined
  /** A kick is queued for the end of the running code (#kickAfterThisTask). */
  #kickQueued = false
  /** Readies taken from the core so far; orders replies (Reply.takenAtStep). */
  #readiesTaken = 0
  /** The waiting answers to each peer's requests, oldest first, which carry our next messages to it. */
  readonly #replies: HeldAnswers
  /** Commit-only appends waiting to share a frame with the next message to their peer. */
  readonly #commitHold: CommitHold
  /** RaftSnapshots arriving in chunks (snapshot-transfer.ts). */
  readonly #snapshotChunks = new SnapshotAssembler()
  /** The latest snapshot transfer to each peer: an older one still sending stops. */
  readonly #snapshotSends = new Map<NodeId, number>()
  #snapshotSendsStarted = 0
  #stopped = false
  #failure: Error | undefined
  #role: RaftRole = 'follower'
  /** Stops handing closed connections to the core (leader-close-watch.ts). */
  #unwatchCloses: (() => void) | undefined

  private constructor (options: RaftHostOptions<Command, Result, State>, durable: DurableRaftStorage) {
    this.id = options.id
    this.#options = options
    this.#durable = durable
    const snapshot = durable.snapshot()
    this.#machine = options.stateMachine
    this.#proposals = new ProposalQueue(options.stateMachine.grouping, limits.raftProposalsQueuedMax)
    this.#machine.restore(snapshot.data)
    this.#applied = snapshot.metadata.index
    this.#appliedConfig = snapshot.metadata.config
    this.#snapshotIndex = snapshot.metadata.index
    this.#term = durable.hardState().term
    this.#node = new RawNode({
      id: options.id,
      storage: durable,
      random: options.random,
      electionTicks: options.electionTicks,
      heartbeatTicks: options.heartbeatTicks,
      // The in-memory state starts from the RaftSnapshot, so everything after it replays.
      applied: snapshot.metadata.index,
      ...(options.trace === undefined ? {} : { trace: options.trace }),
      ...(options.maxSizePerMessage === undefined ? {} : { maxSizePerMessage: options.maxSizePerMessage }),
      ...(options.commitRule === undefined ? {} : { commitRule: options.commitRule })
    })
    this.#reads = new PendingReads(options.clock, options.electionTicks)
    this.#replies = new HeldAnswers(options.clock, this.#sendTimeoutMs() * limits.raftAnswerHoldShareOfSendTimeoutMax, limits.raftHeldAnswersPerPeerMax)
    this.#commitHold = new CommitHold(options.clock, options.commitHoldMs ?? 0, limits.raftCommitHoldStreamGapMsMax)
    this.#applyTiming = new ApplyTiming(options.deferApply, entries => {
      if (this.#stopped) return
      this.#applyEntries(entries)
      this.#reads.indexAndServe([], this.#applied, () => this.#machine.state())
    })
    this.#schedule = new TickSchedule(options.clock, options.tickMs, () => {
      this.#catchUp()
      this.#kick()
    })
  }

  /** Loads (or bootstraps) the durable state, then starts ticking and serving messages. */
  static async start<Command, Result, State> (options: RaftHostOptions<Command, Result, State>): Promise<RaftHost<Command, Result, State>> {
    assert(Number.isFinite(options.tickMs) && options.tickMs > 0, `${component}: tickMs must be positive, got ${String(options.tickMs)}`)
    if (options.join !== true) {
      assert(options.peers.includes(options.id), `${component}: "${options.id}" is not among its peers ${JSON.stringify(options.peers)}`)
    }
    const snapshotEvery = options.snapshotEveryEntries ?? limits.raftSnapshotEveryEntries
    assert(Number.isSafeInteger(snapshotEvery) && snapshotEvery > 0 && snapshotEvery <= limits.raftSnapshotEveryEntries,
      `${component}: snapshotEveryEntries must be 1 to ${limits.raftSnapshotEveryEntries}, got ${String(options.snapshotEveryEntries)}`)
    const durable = await DurableRaftStorage.load(options.storage, options.join === true ? {} : { bootstrapVoters: options.peers })
    const host = new RaftHost(options, durable)
    options.transport.handle(raftProtocol, async request => host.#receive(request))
    options.transport.handle(raftSnapshotProtocol, async request => host.#receiveSnapshotChunk(request))
    // A closed connection is an input like a message: due ticks first, then the step, then its Readies.
    host.#unwatchCloses = watchLeaderCloses(options.transport, options.clock, options.tickMs, host.#node, step => {
      if (host.#stopped) return
      host.#catchUp()
      step()
      host.#kick()
    })
    host.#kick()
    return host
  }

  /**
   * Voters this host heard Raft messages from within the last election timeout, itself
   * included: the ones a change of membership can count on (etcd's strict reconfiguration
   * check counts its started members the same way).
   */
  get reachableVoters (): NodeId[] {
    const since = this.#ticks + this.#schedule.pending() - this.#options.electionTicks
    return this.#node.voters.filter(id => id === this.id || (this.#heardAtTick.get(id) ?? -Infinity) >= since)
  }

  /** The voters of the latest configuration: cheap enough for authorising every request and message. */
  get voters (): readonly NodeId[] {
    return this.#node.voters
  }

  status (): RaftStatus {
    return this.#node.status()
  }

  /** Term, commit and role only, without status()'s copies (for callers that ask every step). */
  basicStatus (): RaftBasicStatus {
    return this.#node.basicStatus()
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

  /** The state machine's state as applied here (not a linearizable read: see `read`). */
  state (): State {
    return this.#machine.state()
  }

  /** The index of the last entry (or RaftSnapshot) applied here. */
  get appliedIndex (): number {
    return this.#applied
  }

  /** RaftSnapshots received from a leader and installed since this host started. */
  get snapshotsReceived (): number {
    return this.#snapshotsReceived
  }

  /** The term as of the last Ready handled. */
  get term (): number {
    return this.#term
  }

  /** The leader as of the last Ready handled ('' when unknown). */
  get leader (): NodeId | '' {
    return this.#leader
  }

  /** What this host has persisted of the log (a read-only view, for checkers and status). */
  persistedLog (): Pick<DurableRaftStorage, 'firstIndex' | 'lastIndex' | 'term' | 'entries' | 'snapshot' | 'hardState' | 'version' | 'lowestIndexChangedSince'> {
    return this.#durable
  }

  /** The membership as of the applied index. */
  appliedConfig (): ClusterConfig {
    return this.#appliedConfig
  }

  /** Index of the newest RaftSnapshot this host holds (taken or received). */
  get snapshotIndex (): number {
    return this.#snapshotIndex
  }

  /**
   * A linearizable read (ReadIndex, Raft dissertation §6.4): asks the leader for the
   * commit index it has confirmed it still leads at, waits until this host has applied
   * that far, and returns the state then. Works on followers too (the request is
   * forwarded). Rejected with ReadFailedError when there is no leader or no answer in
   * time; a read has no effect, so the caller may simply retry.
   */
  async read (): Promise<State> {
    if (this.#stopped) throw new HostStoppedError(this.id)
    if (this.#reads.size >= limits.raftPendingReadIndexMax) throw new ReadFailedError(this.id, `${limits.raftPendingReadIndexMax} reads already pending`)
    const context = `${this.id}/${++this.#readsStarted}`
    this.#catchUp()
    const result = this.#node.readIndex(encode(context, component))
    if (result.status === 'no-leader') throw new ReadFailedError(this.id, 'no leader known')
    if (result.status !== 'accepted' && result.status !== 'forwarded') throw new ReadFailedError(this.id, `refused: "${result.status}"`)
    const timeoutMs = this.#options.readTimeoutMs ?? 5 * this.#options.electionTicks * this.#options.tickMs
    const promise = this.#reads.add(context, this.#ticks, timeoutMs, () => new ReadFailedError(this.id, `no read point within ${timeoutMs} ms`))
    this.#kick()
    return await promise
  }

  /**
   * Adds or removes one voter (one at a time; refused while another change is pending or
   * before the leader has committed an entry of its own term). Resolves once the change
   * is applied here, on the leader.
   */
  async changeMembership (change: ConfigChange): Promise<void> {
    if (this.#stopped) throw new HostStoppedError(this.id)
    this.#catchUp()
    const result = this.#node.proposeConfigChange(change)
    if (result.status === 'not-leader') throw new NotLeaderError(this.id, result.leader)
    if (result.status === 'invalid') throw new MembershipChangeRefusedError(this.id, change, result.reason)
    if (result.status === 'change-pending') throw new MembershipChangeRefusedError(this.id, change, `the change at index ${result.index} is not committed yet`)
    if (result.status !== 'accepted') throw new MembershipChangeRefusedError(this.id, change, `"${result.status}"`)
    await this.#await(result.index, result.term, 'config-change')
  }

  /**
   * Proposes `command`; resolves with its result once its entry is applied here. Refused
   * with NotLeaderError (carrying the leader hint) when this node is not the leader;
   * rejected with ProposalAbandonedError when leadership is lost, the entry is
   * overwritten or the timeout passes (the command may still apply later).
   */
  async propose (command: Command): Promise<Result> {
    return await this.proposeAll([command])[0]!
  }

  /**
   * Proposes `commands` in order, each settling as `propose` does. They are appended
   * with whatever else is proposed meanwhile (group commit, proposal-queue.ts): at once
   * when no earlier proposal is on its way to a commit, else as soon as it has applied.
   */
  proposeAll (commands: readonly Command[]): Array<Promise<Result>> {
    if (this.#stopped) return commands.map(async () => { throw new HostStoppedError(this.id) })
    this.#catchUp()
    const results = commands.map(async command => await new Promise<Result>((resolve, reject) => {
      this.#options.onStage?.('propose', 0)
      const data = this.#machine.encodeCommand(command)
      if (!this.#proposals.add(command, data, resolve, reject)) reject(new ProposalRefusedError(this.id, 'too-much-uncommitted'))
    }))
    this.#kickAfterThisTask()
    return results
  }

  /**
   * Kicks once the code running now has made its proposals too: the requests decoded from
   * one socket read are served one after another in one task, and a Ready taken at the
   * first would carry it alone while the rest wait for its synced write (the groups ran
   * 1, 63, 1, 63 at 64 clients, issue 28). A microtask, not a timer: a lone write waits
   * for nothing.
   */
  #kickAfterThisTask (): void {
    if (this.#kickQueued) return
    this.#kickQueued = true
    queueMicrotask(() => {
      this.#kickQueued = false
      this.#kick()
    })
  }

  /**
   * Appends the queued proposals to the log (within #drain, before it takes a Ready): the
   * ones that arrived meanwhile go together (group commit; see proposal-queue.ts), as soon
   * as fewer than limits.raftProposalGroupsInFlightMax groups are on their way to a
   * commit. An idle leader appends a proposal at once.
   */
  #appendQueued (): void {
    if (!this.#queuedMayGo()) return
    let last: number | undefined
    for (const entry of this.#proposals.take()) {
      const result = this.#node.propose(entry.data)
      if (result.status === 'not-leader') entry.reject(new NotLeaderError(this.id, result.leader))
      else if (result.status !== 'accepted') entry.reject(new ProposalRefusedError(this.id, result.status))
      else {
        last = result.index
        this.#track(result.index, result.term, 'command').then(applied => {
          assert(applied !== undefined, `${component}: command at ${result.index} applied without a result`)
          entry.resolve(applied)
        }, (error: Error) => { entry.reject(error) }).catch((error: unknown) => {
          // A result that does not split into one per command: a broken state machine.
          this.#fail(error)
        }).finally(() => {
          // Settled by a timeout or a lost leadership as well as by applying: the held ones go now.
          if (this.#queuedMayGo()) this.#kick()
        })
      }
    }
    if (last !== undefined) {
      this.#groupsInFlight.push(last)
      this.#commitHold.appended()
    }
  }

  /** Proposals wait and fewer than limits.raftProposalGroupsInFlightMax groups appended from the queue are still on their way. */
  #queuedMayGo (): boolean {
    if (this.#proposals.size === 0) return false
    this.#groupsInFlight = this.#groupsInFlight.filter(index => this.#pending.has(index))
    return this.#groupsInFlight.length < limits.raftProposalGroupsInFlightMax
  }

  /** Waits for the entry appended at `index` in `term` to apply here. */
  async #await (index: number, term: number, kind: Pending<Result>['kind']): Promise<Result | undefined> {
    const applied = this.#track(index, term, kind)
    this.#kick()
    return await applied
  }

  /** The wait for the entry at `index`, without starting a Ready (#drain calls it itself). */
  async #track (index: number, term: number, kind: Pending<Result>['kind']): Promise<Result | undefined> {
    // An older proposal still waiting at this index was overwritten without this host
    // seeing a Ready in between (leadership lost and regained): it will never apply.
    this.#settle(index, pending => pending.reject(new ProposalAbandonedError(this.id, index, `overwritten by an entry of term ${term}`)))
    return await new Promise<Result | undefined>((resolve, reject) => {
      const timeoutMs = this.#options.proposeTimeoutMs ?? 20 * this.#options.electionTicks * this.#options.tickMs
      const timer = this.#options.clock.setTimeout(() => {
        this.#settle(index, pending => pending.reject(new ProposalAbandonedError(this.id, index, `not applied within ${timeoutMs} ms`)))
      }, timeoutMs)
      this.#pending.set(index, { term, kind, resolve, reject, timer })
    })
  }

  /** Stops after the Ready in hand (if any) is fully handled; nothing new is started. */
  async stop (): Promise<void> {
    if (this.#stopped) return
    const inHand = this.#processing
    this.#halt()
    if (inHand !== undefined) await inHand
    // A graceful stop leaves the latest commit index on disk, so a restart applies it at once.
    // Best effort: a commit index not written is learned again from the leader.
    if (this.#failure === undefined) await this.#durable.flushCommit().catch(() => {})
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
    this.#schedule.stop()
    this.#unwatchCloses?.()
    for (const protocol of [raftProtocol, raftSnapshotProtocol]) {
      try {
        this.#options.transport.unhandle(protocol)
      } catch {
        // A stopped transport refuses unhandle; there is nothing left to detach then.
      }
    }
    this.#proposals.rejectAll(new HostStoppedError(this.id))
    for (const index of [...this.#pending.keys()]) {
      this.#settle(index, pending => pending.reject(new HostStoppedError(this.id)))
    }
    this.#reads.rejectAll(new HostStoppedError(this.id))
    this.#replies.release(Infinity)
    this.#commitHold.clear()
  }

  /**
   * Takes the ticks that came due since the last ones (TickSchedule), before any input
   * reaches the core, so it sees its ticks in the order a timer every tick would give.
   */
  #catchUp (): void {
    if (this.#stopped) return
    const due = this.#node.ticksUntilDue()
    const count = this.#schedule.take(Math.min(due, this.#reads.dueTicks(this.#ticks)))
    if (count === 0) return
    if (count < due) {
      this.#node.tickIdle(count)
    } else {
      this.#node.tickIdle(count - 1)
      this.#node.tick()
    }
    this.#ticks += count
    this.#reads.askAgain(this.#ticks, context => this.#node.readIndex(context))
  }

  /**
   * A peer's messages: stepped at once, and answered with whatever this host has to say
   * to that peer after handling them (a heartbeat's or an append's acknowledgement, a
   * vote). One request and its answer then carry a round trip that was two requests and
   * two answers (four framed, encrypted socket writes per follower per heartbeat). The
   * answer leaves when the messages would have been sent anyway: after the Ready that
   * holds them, persisted as `#drain` orders it; a Ready with nothing for the peer
   * answers empty.
   */
  #receive (request: IncomingRequest): Promise<Uint8Array> {
    if (this.#stopped) return Promise.resolve(noMessages)
    this.#options.onStage?.('received-request', request.data.byteLength)
    if (!this.#stepFrom(request.from, request.data)) return Promise.resolve(noMessages)
    const answer = this.#replies.hold(request.from, this.#readiesTaken)
    this.#kick()
    return answer
  }

  /** A chunk of a leader's RaftSnapshot; the last one steps the whole message. A chunk out of order fails the request. */
  async #receiveSnapshotChunk (request: IncomingRequest): Promise<Uint8Array> {
    if (this.#stopped) return noMessages
    const message = this.#snapshotChunks.accept(request.from, request.data)
    if (message !== undefined) {
      this.#stepMessages(request.from, [message])
      this.#kick()
    }
    return noMessages
  }

  /** Steps the Raft messages `from` sent (a request, or an answer to ours); false when they are not a list. */
  #stepFrom (from: NodeId, data: Uint8Array): boolean {
    const messages = decode(data, component)
    if (!Array.isArray(messages)) return false
    this.#stepMessages(from, messages)
    return true
  }

  #stepMessages (from: NodeId, messages: readonly unknown[]): void {
    this.#catchUp()
    // Voters only: anyone on the mesh may send to this protocol, and the map must stay bounded.
    if (this.#node.voters.includes(from)) this.#heardAtTick.set(from, this.#ticks)
    for (const message of messages) {
      // A peer speaks only for itself; the core validates everything else.
      if (typeof message !== 'object' || message === null || (message as Message).from !== from) continue
      this.#node.step(message as Message)
    }
  }

  /** The messages a peer's answer carries; an answer that does not decode is dropped, as a lost message would be. */
  #stepAnswer (peer: NodeId, answer: Uint8Array): void {
    this.#options.onStage?.('received-answer', answer.byteLength)
    try {
      if (this.#stepFrom(peer, answer)) return
    } catch {
      // Undecodable: dropped below.
    }
    this.#options.trace?.(`${component} "${this.id}": dropped an answer from "${peer}" that holds no message list`)
    this.#catchUp()
  }

  /** Starts handling Readies unless that is already under way: never two at once. */
  #kick (): void {
    if (this.#stopped) return
    // Every input ends here: the next tick that acts may have come nearer (a new leader heartbeats).
    this.#schedule.arm(Math.min(this.#node.ticksUntilDue(), this.#reads.dueTicks(this.#ticks)))
    if (this.#processing !== undefined) return
    this.#processing = this.#drain()
      .catch((error: unknown) => { this.#fail(error) })
      .finally(() => {
        this.#processing = undefined
        // Proposed after the last look at the queue, before this settled.
        if (this.#queuedMayGo()) this.#kick()
      })
  }

  async #drain (): Promise<void> {
    while (!this.#stopped) {
      this.#appendQueued()
      if (!this.#node.hasReady()) break
      const ready = this.#node.ready()
      this.#options.onStage?.('ready', ready.entries.length)
      this.#readiesTaken++
      const { early, afterPersist } = this.#splitBySafety(ready.messages)
      this.#send(early)
      const written = persistAfterEarlySends(this.#options.deferLeaderWrite, ready.mustSync && early.length > 0, async () => await this.#durable.persistReady(ready))
      // A Ready that must sync is acted on only once durable (a crash during the write: none
      // of it). One that need not writes only a commit index, which a restart learns again
      // from the leader; its entries are durable from earlier Readies, so it is applied (and
      // answered) while it is written.
      if (ready.mustSync) {
        this.#applyWhileWritten(ready)
        await written
        if (this.#stopped) return
        this.#options.onStage?.('synced', ready.entries.length)
      }
      this.#send(afterPersist)
      // Every request stepped before this Ready has had its answer's messages now.
      this.#replies.release(this.#readiesTaken)
      this.#apply(ready)
      await written
      if (this.#stopped) return
      this.#node.advance()
      await this.#maybeCompact()
    }
    // Nothing more to say: requests still waiting are answered empty.
    this.#replies.release(Infinity)
  }

  /** Takes a RaftSnapshot of the state machine and compacts the log once enough has been applied. */
  async #maybeCompact (): Promise<void> {
    const every = this.#options.snapshotEveryEntries ?? limits.raftSnapshotEveryEntries
    const applied = this.#applied
    if (this.#stopped || applied - this.#snapshotIndex < every) return
    const snapshotBytes = this.#durable.snapshot().data.byteLength
    if (snapshotBytes > limits.raftSnapshotChunkBytes && this.#logBytesSinceSnapshot < snapshotBytes * limits.raftCompactLogToSnapshotRatio) return
    await this.#durable.compact(applied, this.#appliedConfig, this.#machine.snapshot())
    this.#snapshotIndex = applied
    this.#logBytesSinceSnapshot = 0
    this.#options.trace?.(`${component} "${this.id}": RaftSnapshot at ${applied}, log compacted`)
  }

  /**
   * A leader's appends, heartbeats and snapshots of a term already on disk promise nothing
   * about this node's own disk, so they go out before the Ready is persisted: the leader
   * writes its log while the followers write theirs (Raft thesis 10.2.1, as etcd's server
   * does), and a commit is one fsync on the way instead of two. Entries this node has not
   * persisted may count toward a commit only in a later Ready, which is handled after
   * this one's write. Everything else (votes, acknowledgements) waits for the disk.
   */
  #splitBySafety (messages: readonly Message[]): { early: Message[], afterPersist: Message[] } {
    const early: Message[] = []
    const afterPersist: Message[] = []
    for (const message of messages) {
      const leaderOnly = message.type === 'append' || message.type === 'heartbeat' || message.type === 'snapshot'
      if (leaderOnly && message.term === this.#term) early.push(message)
      else afterPersist.push(message)
    }
    return { early, afterPersist }
  }

  #send (messages: readonly Message[]): void {
    if (messages.length === 0) return
    const byPeer = new Map<NodeId, Message[]>()
    for (const message of messages) {
      const list = byPeer.get(message.to)
      if (list === undefined) byPeer.set(message.to, [message])
      else list.push(message)
    }
    for (const [peer, list] of byPeer) {
      const now = this.#commitHold.take(peer, list, this.#role === 'leader', (to, held) => { if (!this.#stopped) this.#sendTo(to, held) })
      if (now.length > 0) this.#sendTo(peer, now)
    }
  }

  #sendTo (peer: NodeId, list: Message[]): void {
    const timeoutMs = this.#sendTimeoutMs()
    this.#options.onSend?.(peer, list)
    const hasSnapshot = list.some(message => message.type === 'snapshot')
    const rest = hasSnapshot ? list.filter(message => message.type !== 'snapshot') : list
    if (hasSnapshot) for (const message of list) if (message.type === 'snapshot') this.#sendSnapshot(peer, message, timeoutMs)
    if (rest.length === 0) return
    if (this.#replies.answer(peer, () => encode(rest, component))) {
      this.#options.onStage?.('sent-answer', rest.length)
      return
    }
    this.#options.onStage?.('sent-request', rest.length)
    let sent: Promise<Uint8Array>
    try {
      sent = this.#options.transport.request(peer, raftProtocol, encode(rest, component), { timeoutMs })
    } catch (error) {
      sent = Promise.reject(error)
    }
    // Raft retries on its own; a failure only tells it the peer is away. The answer may
    // carry the peer's messages to us.
    sent.then(
      answer => {
        if (this.#stopped || answer.byteLength === 0) return
        this.#stepAnswer(peer, answer)
        this.#kick()
      },
      () => {
        if (this.#stopped) return
        this.#catchUp()
        this.#node.reportUnreachable(peer)
        this.#kick()
      })
  }

  #sendTimeoutMs (): number {
    return this.#options.sendTimeoutMs ?? sendTimeoutElectionTimeouts * this.#options.electionTicks * this.#options.tickMs
  }

  /** A RaftSnapshot goes in chunks of its own (snapshot-transfer.ts); the core hears how it ended. */
  #sendSnapshot (peer: NodeId, message: Message, timeoutMs: number): void {
    const generation = ++this.#snapshotSendsStarted
    this.#snapshotSends.set(peer, generation)
    const current = (): boolean => !this.#stopped && this.#snapshotSends.get(peer) === generation
    const report = (status: 'finished' | 'failed'): void => {
      if (!current()) return
      this.#snapshotSends.delete(peer)
      this.#catchUp()
      if (status === 'failed') this.#node.reportUnreachable(peer)
      this.#node.reportSnapshot(peer, status)
      this.#kick()
    }
    sendSnapshotInChunks(this.#options.transport, peer, message, timeoutMs, current)
      .then(sent => { if (sent) report('finished') }, () => { report('failed') })
  }

  /** Applies (and answers) what this Ready may apply while it is written (apply-timing.ts). */
  #applyWhileWritten (ready: Ready): void {
    this.#applyEntries(this.#applyTiming.whileWritten(ready, this.#role, this.#term))
  }

  #apply (ready: Ready): void {
    const term = ready.hardState?.term ?? this.#term
    const roleChanged = ready.softState !== undefined || term !== this.#term
    this.#term = term
    if (ready.softState !== undefined) {
      const wasLeader = this.#role === 'leader'
      this.#role = ready.softState.role
      this.#leader = ready.softState.leader
      if (wasLeader && this.#role !== 'leader') {
        for (const index of [...this.#pending.keys()]) {
          this.#settle(index, pending => pending.reject(new ProposalAbandonedError(this.id, index, 'leadership lost before it applied')))
        }
      }
    }
    if (roleChanged) this.#options.onRoleChange?.({ role: this.#role, leader: this.#leader, term: this.#term })
    if (ready.snapshot !== undefined && ready.snapshot.metadata.index > this.#applied) {
      this.#machine.restore(ready.snapshot.data)
      this.#applied = ready.snapshot.metadata.index
      this.#appliedConfig = ready.snapshot.metadata.config
      this.#snapshotIndex = ready.snapshot.metadata.index
      this.#logBytesSinceSnapshot = 0
      this.#snapshotsReceived++
    }
    this.#applyTiming.afterWritten(ready, this.#role)
    this.#reads.indexAndServe(ready.readStates, this.#applied, () => this.#machine.state())
  }

  /** Applies `entries` in order, skipping those applied already (by a RaftSnapshot or #applyWhileWritten). */
  #applyEntries (entries: readonly Entry[]): void {
    for (const entry of entries) {
      // Entries a RaftSnapshot already covers were applied as part of it.
      if (entry.index <= this.#applied) continue
      let result: Result | undefined
      const at = { index: entry.index, term: entry.term }
      if (entry.type === 'normal' && entry.data.length > 0) {
        result = this.#machine.apply(entry.data, at)
      } else {
        // The leader's no-op or a membership change: the raft.entrySkipped path.
        this.#machine.skip(at)
        if (entry.type === 'config-change' && entry.configChange !== undefined) {
          this.#appliedConfig = applyConfigChange(this.#appliedConfig, entry.configChange)
        }
      }
      this.#applied = entry.index
      this.#logBytesSinceSnapshot += entry.data.byteLength
      this.#options.onApplied?.(entry, result)
      this.#settle(entry.index, pending => {
        const same = pending.term === entry.term &&
          (pending.kind === 'command' ? result !== undefined : entry.type === 'config-change')
        this.#options.onStage?.('applied', entry.index)
        if (same) pending.resolve(result)
        else pending.reject(new ProposalAbandonedError(this.id, entry.index, `overwritten by an entry of term ${entry.term}`))
      })
    }
  }

  #settle (index: number, how: (pending: Pending<Result>) => void): void {
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
