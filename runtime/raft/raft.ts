import { assert, assertSafeInteger } from '../assert.ts'
import { limits } from '../limits.ts'
import type { Random } from '../random.ts'
import { configChangeProblem, isVoter } from './cluster-config.ts'
import { ConfigHistory } from './config-history.ts'
import { messageProblem } from './message-validation.ts'
import { nextInteger } from './next-integer.ts'
import { Progress } from './progress.ts'
import { hasQuorum } from './quorum.ts'
import { handleVoteRequest, handleVoteResponse, hup, promotable, stepTerm } from './raft-election.ts'
import { handleFromLeader } from './raft-follower.ts'
import { RaftLog } from './raft-log.ts'
import { raftSettings, type RaftOptions, type RaftSettings } from './raft-options.ts'
import { leaderReadIndex } from './raft-read-index.ts'
import {
  appendEntries, appendProposal, bcastAppend, handleAppendResponse, handleForwardedProposal, handleHeartbeatResponse,
  maybeCommitAndBroadcast, proposalRefusal, sendAppend
} from './raft-replication.ts'
import type { ConfigChangeResult, ProposeResult, ReadIndexResult, TransferResult } from './raft-results.ts'
import type { RaftBasicStatus, RaftStatus } from './raft-status.ts'
import type { ConfigChange, HardState, Message, NodeId, RaftRole, ReadState, SoftState } from './raft-types.ts'
import { ReadOnly } from './read-only.ts'

export type { RaftOptions } from './raft-options.ts'

/**
 * The Raft protocol as a pure state machine (after etcd's `raft` struct). It never does
 * I/O: messages to send, entries to persist and entries to apply accumulate here and
 * `RawNode` hands them to the host as a `Ready`. Time is `tick()`, randomness is the
 * injected `Random`. Internal to runtime/raft: hosts use `RawNode`.
 *
 * Like etcd's raft package, one struct whose behaviour is spread over files by concern:
 * this class holds the state, the inputs and outputs, the roles, time and the dispatch
 * of each message by role; elections and terms (raft-election.ts), a follower taking
 * entries (raft-follower.ts), a leader replicating them (raft-replication.ts),
 * membership (raft-membership.ts) and ReadIndex (raft-read-index.ts) are functions over
 * it. Their state is therefore public here, but nothing outside runtime/raft sees a Raft.
 */
export class Raft {
  readonly id: NodeId
  term = 0
  vote: NodeId | '' = ''
  lead: NodeId | '' = ''
  role: RaftRole = 'follower'
  readonly log: RaftLog
  readonly configs: ConfigHistory
  /** On a leader: one entry per voter, and one for itself. */
  readonly progress = new Map<NodeId, Progress>()
  messages: Message[] = []
  readStates: ReadState[] = []
  electionElapsed = 0
  heartbeatElapsed = 0
  randomizedElectionTimeout = 0
  /**
   * Candidacies that timed out since a leader was last heard from (at most
   * limits.raftElectionBackoffDoublingsMax): each doubles the range the next election
   * timeout is drawn from (see #backOff).
   */
  electionBackoff = 0
  /**
   * PreVote campaigns started since a leader was last known (0, 1, or 2 for more). Only
   * the first one breaks a tie with a rival pre-candidate (raft-election.ts): a node that
   * kept refusing could hold off forever a rival that only it can help win.
   */
  preCampaignsSinceLeader = 0
  /**
   * The connection to our leader closed and a campaign is due (connectionClosed): spent by
   * campaignAfterClose, dropped as soon as a leader is heard from or an election starts.
   */
  closeCampaignPending = false
  leadTransferee: NodeId | '' = ''
  /** Payload bytes this leader appended that are not yet committed and handed out. */
  uncommittedBytes = 0
  invalidMessages = 0
  droppedMessages = 0

  /** The options with their defaults filled in (raft-options.ts). */
  readonly settings: RaftSettings
  /** Votes (or pre-votes) received in the current campaign. */
  readonly votes = new Map<NodeId, boolean>()
  readonly readOnly = new ReadOnly(limits.raftPendingReadIndexMax)
  /** ReadIndex requests that arrived before this leader committed an entry of its term. */
  earlyReads: Array<{ from: NodeId, context: Uint8Array }> = []
  readonly #random: Random
  readonly #traceLine: ((line: string) => void) | undefined

  constructor (options: RaftOptions) {
    this.settings = raftSettings(options)
    this.id = options.id
    this.#random = options.random
    this.#traceLine = options.trace

    this.log = new RaftLog(options.storage)
    const { hardState, config } = options.storage.initialState()
    checkHardState(hardState, this.log)
    this.configs = new ConfigHistory(this.log.firstIndex() - 1, config)
    this.#replayConfigs()
    this.log.commitTo(hardState.commit)
    this.configs.commitTo(this.log.committed)
    const applied = options.applied ?? this.log.firstIndex() - 1
    assert(Number.isSafeInteger(applied) && applied >= this.log.firstIndex() - 1 && applied <= this.log.committed,
      `raft node "${this.id}": applied ${applied} is outside [${this.log.firstIndex() - 1}, ${this.log.committed}]`)
    this.log.applied = applied
    this.term = hardState.term
    this.vote = hardState.vote
    this.becomeFollower(this.term, '')
  }

  // -------------------------------------------------------------------------------
  // Inputs

  tick (): void {
    if (this.role === 'leader') this.#tickLeader()
    else this.#tickElection()
  }

  step (message: Message): void {
    const problem = messageProblem(message, this.id)
    if (problem !== undefined) {
      this.invalid(`dropped an invalid message: ${problem}`)
      return
    }
    if (!stepTerm(this, message)) return
    if (message.type === 'vote' || message.type === 'pre-vote') handleVoteRequest(this, message)
    else if (this.role === 'leader') this.#stepLeader(message)
    else if (this.role === 'follower') this.#stepFollower(message)
    else this.#stepCandidate(message)
    this.configs.commitTo(this.log.committed)
  }

  campaign (): void {
    hup(this, false)
  }

  propose (data: Uint8Array): ProposeResult {
    const refusal = proposalRefusal(this)
    if (refusal !== undefined) return refusal
    if (data.byteLength > this.settings.maxSizePerMessage) return { status: 'too-large', bytesMax: this.settings.maxSizePerMessage }
    return appendProposal(this, 'normal', data, undefined)
  }

  proposeConfigChange (change: ConfigChange): ConfigChangeResult {
    const refusal = proposalRefusal(this)
    if (refusal !== undefined) return refusal
    if (!this.committedEntryInCurrentTerm()) return { status: 'leader-not-ready' }
    const latest = this.configs.latestIndex()
    if (latest > this.log.committed) return { status: 'change-pending', index: latest }
    const problem = configChangeProblem(this.configs.current(), change)
    if (problem !== undefined) return { status: 'invalid', reason: problem }
    return appendProposal(this, 'config-change', new Uint8Array(0), change)
  }

  readIndex (context: Uint8Array): ReadIndexResult {
    if (context.byteLength === 0) return { status: 'invalid', reason: 'context must not be empty' }
    if (this.role === 'leader') return leaderReadIndex(this, this.id, context)
    if (this.lead === '') return { status: 'no-leader' }
    // Forwarded requests are termless: the leader answers whatever term it is in.
    this.send({ type: 'read-index', to: this.lead, term: 0, context })
    return { status: 'forwarded', leader: this.lead }
  }

  transferLeadership (to: NodeId): TransferResult {
    if (this.role !== 'leader') return { status: 'not-leader', leader: this.lead }
    if (to === this.id) return { status: 'invalid', reason: `"${to}" already leads` }
    if (!isVoter(this.configs.current(), to)) return { status: 'invalid', reason: `"${to}" is not a voter` }
    if (this.leadTransferee === to) return { status: 'accepted', to }
    this.trace(`transferring leadership to ${to} at term ${this.term}`)
    this.leadTransferee = to
    // The transfer must finish within an election timeout or it is abandoned.
    this.electionElapsed = 0
    const pr = this.progress.get(to)!
    if (pr.match === this.log.lastIndex()) this.send({ type: 'timeout-now', to })
    else sendAppend(this, to, true)
    return { status: 'accepted', to }
  }

  /**
   * The host saw its connection to `peer` close. A process that crashes, is killed or stops
   * closes its sockets, and its peers' kernels report it at once (FIN or RST), so a follower
   * whose leader's connection closes need not sit out an election timeout of silence:
   * ZooKeeper's followers look for a new leader the moment the leader's socket breaks
   * (Follower.followLeader). The lease on that leader is given up (pre-votes are no longer
   * ignored for its sake) and a PreVote campaign is due in the returned number of ticks, a
   * random fraction of a heartbeat interval so that two survivors seldom ask at once (when
   * they do, the first-round tie-break settles it); the host then calls campaignAfterClose.
   * undefined: nothing to do (not our leader, or we are not following one).
   *
   * Safety is untouched: only when a campaign starts changes, and PreVote still needs a
   * majority whose logs allow it. A close that was not a death (a reset connection to a live
   * leader) costs at most one election: the other followers, still in their lease, ignore
   * our pre-votes, and the leader's next heartbeat makes us its follower again; only if a
   * majority saw the close at once does one of them win a new term. A partition closes
   * nothing, so it still waits for the election timeout.
   */
  connectionClosed (peer: NodeId): number | undefined {
    if (this.role !== 'follower' || this.lead !== peer || peer === this.id) return undefined
    this.trace(`connection to leader ${peer} closed at term ${this.term}: its lease is given up`)
    this.lead = ''
    this.closeCampaignPending = true
    return (this.#closeCampaignRank(peer) + this.#random.next()) * this.settings.heartbeatTicks / 2
  }

  /**
   * Survivors ask half a heartbeat apart, in the order the pre-vote tie-break favours
   * (higher ids first; raft-election.ts). All drawn from one heartbeat, three or four
   * survivors of five often asked within a round trip of each other, two gathered a
   * majority of pre-votes, and the vote split: a doubled election timeout lost. The
   * first-ranked survivor still asks within half a heartbeat; a later one asks only if it
   * has granted nobody's pre-vote meanwhile.
   */
  #closeCampaignRank (closed: NodeId): number {
    let rank = 0
    for (const voter of this.configs.current().voters) if (voter !== closed && voter > this.id) rank++
    return rank
  }

  /** The delay connectionClosed asked for has passed: campaign, unless a leader was heard from or an election started meanwhile. */
  campaignAfterClose (): void {
    if (!this.closeCampaignPending) return
    this.closeCampaignPending = false
    if (this.role !== 'follower' || this.lead !== '') return
    this.trace(`campaigning at term ${this.term}: the connection to the leader closed`)
    hup(this, false)
  }

  /** The host could not reach `to`: stop streaming to it until it answers again. */
  reportUnreachable (to: NodeId): void {
    const pr = this.progress.get(to)
    if (this.role === 'leader' && pr?.state === 'replicate') pr.becomeProbe()
  }

  /** The host finished sending a RaftSnapshot to `to` (or failed to). */
  reportSnapshot (to: NodeId, outcome: 'finished' | 'failed'): void {
    const pr = this.progress.get(to)
    if (this.role !== 'leader' || pr?.state !== 'snapshot') return
    if (outcome === 'failed') pr.pendingSnapshot = 0
    pr.becomeProbe()
    // Wait for the follower's answer (or, after a failure, the next heartbeat) before sending more.
    pr.probeSent = true
  }

  /** The host applied committed entries up to `index` whose payloads came to `bytes`. */
  appliedTo (index: number, bytes: number): void {
    this.log.appliedTo(index)
    if (this.role === 'leader') this.uncommittedBytes = Math.max(0, this.uncommittedBytes - bytes)
  }

  // -------------------------------------------------------------------------------
  // Outputs

  softState (): SoftState {
    return { leader: this.lead, role: this.role }
  }

  hardState (): HardState {
    return { term: this.term, vote: this.vote, commit: this.log.committed }
  }

  takeMessages (): Message[] {
    const messages = this.messages
    this.messages = []
    return messages
  }

  takeReadStates (): ReadState[] {
    const readStates = this.readStates
    this.readStates = []
    return readStates
  }

  /** The voters of the latest configuration (committed or not), without building a whole status. */
  get voters (): readonly NodeId[] {
    return this.configs.current().voters
  }

  basicStatus (): RaftBasicStatus {
    return { term: this.term, commit: this.log.committed, role: this.role }
  }

  status (): RaftStatus {
    const progress: RaftStatus['progress'] = {}
    if (this.role === 'leader') {
      for (const [id, pr] of this.progress) {
        progress[id] = {
          match: pr.match,
          next: pr.next,
          state: pr.state,
          recentActive: pr.recentActive,
          inflight: pr.inflights.count,
          paused: pr.isPaused(),
          pendingSnapshot: pr.pendingSnapshot
        }
      }
    }
    return {
      id: this.id,
      term: this.term,
      vote: this.vote,
      commit: this.log.committed,
      applied: this.log.applied,
      firstIndex: this.log.firstIndex(),
      lastIndex: this.log.lastIndex(),
      role: this.role,
      leader: this.lead,
      config: this.configs.current(),
      leadTransferee: this.leadTransferee,
      electionElapsed: this.electionElapsed,
      electionTimeoutTicks: this.role === 'leader' ? this.settings.electionTicks : this.randomizedElectionTimeout,
      progress,
      invalidMessages: this.invalidMessages,
      droppedMessages: this.droppedMessages
    }
  }

  // -------------------------------------------------------------------------------
  // Roles

  becomeFollower (term: number, lead: NodeId | ''): void {
    this.#reset(term)
    this.lead = lead
    this.role = 'follower'
    if (lead !== '') this.#leaderHeard()
    this.trace(`became follower at term ${term}${lead === '' ? '' : ` (leader ${lead})`}`)
  }

  becomePreCandidate (): void {
    assert(this.role !== 'leader', `raft node "${this.id}": a leader cannot become a pre-candidate`)
    // A pre-candidate keeps its term and vote: asking whether it could win must not
    // disturb anyone, which is the point of PreVote.
    this.votes.clear()
    this.lead = ''
    this.closeCampaignPending = false
    this.role = 'pre-candidate'
    // Counted to 2 at most: only whether this is the first matters.
    this.preCampaignsSinceLeader = Math.min(this.preCampaignsSinceLeader + 1, 2)
    this.trace(`became pre-candidate at term ${this.term}`)
  }

  becomeCandidate (): void {
    assert(this.role !== 'leader', `raft node "${this.id}": a leader cannot become a candidate`)
    this.#reset(nextInteger(this.term, 'raft term'))
    this.vote = this.id
    this.role = 'candidate'
    this.trace(`became candidate at term ${this.term}`)
  }

  becomeLeader (): void {
    assert(this.role === 'candidate', `raft node "${this.id}": only a candidate can become leader, not a ${this.role}`)
    this.#reset(this.term)
    this.lead = this.id
    this.role = 'leader'
    this.#leaderHeard()
    const next = this.log.lastIndex() + 1
    for (const voter of this.configs.current().voters) {
      this.progress.set(voter, new Progress(next, this.settings.maxInflight, voter === this.id))
    }
    const self = this.progress.get(this.id)!
    self.maybeUpdate(this.log.lastIndex())
    self.becomeReplicate()
    this.trace(`became leader at term ${this.term}`)
    // An empty entry of our own term: entries of earlier terms can only commit once an
    // entry of this term does (Figure 8), so commit one straight away.
    assert(appendEntries(this, [{ term: this.term, index: nextInteger(this.log.lastIndex(), 'raft index'), type: 'normal', data: new Uint8Array(0) }]),
      `raft node "${this.id}": the empty entry of a new leader was refused`)
    if (!maybeCommitAndBroadcast(this)) bcastAppend(this)
  }

  /** Everything that belongs to one term in one role goes when the term or role changes. */
  #reset (term: number): void {
    if (this.term !== term) {
      assertSafeInteger(term, `raft node "${this.id}": term`)
      this.term = term
      this.vote = ''
    }
    this.lead = ''
    this.closeCampaignPending = false
    this.electionElapsed = 0
    this.heartbeatElapsed = 0
    this.#drawElectionTimeout()
    this.leadTransferee = ''
    this.votes.clear()
    this.progress.clear()
    this.readOnly.reset()
    this.earlyReads = []
    this.uncommittedBytes = 0
  }

  // -------------------------------------------------------------------------------
  // Time

  /**
   * How many more calls of `tick()` until one does more than count: sends heartbeats,
   * checks the quorum, gives up on a RaftSnapshot or starts an election. A host may
   * sleep until then and make the counting ticks up just before its next input (ticks as
   * deadlines, so an idle group wakes for heartbeats only); Infinity when no tick will
   * ever act (a follower that cannot campaign). Always at least 1.
   */
  ticksUntilDue (): number {
    if (this.role === 'leader') {
      let due = Math.min(this.settings.heartbeatTicks - this.heartbeatElapsed, this.settings.electionTicks - this.electionElapsed)
      for (const pr of this.progress.values()) {
        if (pr.state === 'snapshot') due = Math.min(due, this.settings.snapshotTimeoutTicks - pr.snapshotElapsedTicks)
      }
      return Math.max(1, due)
    }
    if (!promotable(this)) return Infinity
    return Math.max(1, this.randomizedElectionTimeout - this.electionElapsed)
  }

  /**
   * `count` ticks of which none is due (count < ticksUntilDue()): the same as calling
   * `tick()` that often, in one step. A host taking the ticks of a long idle spell uses it.
   */
  tickIdle (count: number): void {
    assert(Number.isSafeInteger(count) && count >= 0 && count < this.ticksUntilDue(),
      `raft node "${this.id}": tickIdle(${count}) would pass a due tick (${this.ticksUntilDue()} away)`)
    if (count === 0) return
    if (this.role !== 'leader') {
      // tick() stops counting past the longest timeout; so does this.
      this.electionElapsed = Math.max(this.electionElapsed, Math.min(this.#electionElapsedMax(), this.electionElapsed + count))
      return
    }
    this.heartbeatElapsed += count
    this.electionElapsed += count
    for (const pr of this.progress.values()) if (pr.state === 'snapshot') pr.snapshotElapsedTicks += count
  }

  #tickElection (): void {
    // Capped: past this the count means nothing, and it must not grow without bound.
    if (this.electionElapsed < this.#electionElapsedMax()) this.electionElapsed++
    if (promotable(this) && this.electionElapsed >= this.randomizedElectionTimeout) {
      this.electionElapsed = 0
      if (this.role === 'candidate' && this.settings.preVote) this.#backOff()
      hup(this, false)
    }
  }

  /**
   * Our candidacy timed out: its votes did not all come back within the election timeout.
   * When the round trip of a vote is longer than that — a starved machine, a slow disk
   * under the vote's fsync — every candidate times out before its grants arrive, goes back
   * to PreVote (where grants for the old term count for nothing) and no election ever
   * completes: 2.5 minutes without a leader among three live controllers at load 35. So
   * each candidacy that times out doubles the range the next timeout is drawn from
   * (capped), which restores Raft's timing requirement, broadcast time well below the
   * election timeout (Raft paper §5.6), whatever the round trip. Hearing from a leader
   * undoes it; a failover whose first candidate wins never backs off. Only with PreVote
   * (as every agent runs): without it a candidate whose log is behind raises the term and
   * restarts every timer at each of its timeouts, and an up-to-date node that had backed
   * off would never time out first again.
   */
  #backOff (): void {
    if (this.electionBackoff >= limits.raftElectionBackoffDoublingsMax) return
    this.electionBackoff++
    this.#drawElectionTimeout()
    const least = this.settings.electionTicks * 2 ** this.electionBackoff
    this.trace(`candidacy at term ${this.term} timed out: election timeouts now ${least}-${2 * least - 1} ticks`)
  }

  /** A leader is known (or we lead): elections go back to the configured timeout, and the next PreVote round is a first one. */
  #leaderHeard (): void {
    this.preCampaignsSinceLeader = 0
    this.closeCampaignPending = false
    if (this.electionBackoff === 0) return
    this.electionBackoff = 0
    this.#drawElectionTimeout()
  }

  /** Twice the election timeout, or the backed-off timeout if longer: an election timer counts no further. */
  #electionElapsedMax (): number {
    return Math.max(2 * this.settings.electionTicks, this.randomizedElectionTimeout)
  }

  /** Randomised in [electionTicks, 2 * electionTicks) ticks, both ends times 2^electionBackoff. */
  #drawElectionTimeout (): void {
    const least = this.settings.electionTicks * 2 ** this.electionBackoff
    this.randomizedElectionTimeout = this.#random.int(least, 2 * least - 1)
  }

  #tickLeader (): void {
    this.heartbeatElapsed++
    this.electionElapsed++
    if (this.electionElapsed >= this.settings.electionTicks) {
      this.electionElapsed = 0
      if (this.settings.checkQuorum && !this.#checkQuorumActive()) return
      if (this.leadTransferee !== '') {
        this.trace(`abandoned the leadership transfer to ${this.leadTransferee}: it did not finish within an election timeout`)
        this.leadTransferee = ''
      }
    }
    this.#tickSnapshots()
    if (this.heartbeatElapsed >= this.settings.heartbeatTicks) {
      this.heartbeatElapsed = 0
      this.bcastHeartbeat(this.readOnly.lastContext())
    }
  }

  /**
   * CheckQuorum: a leader that has not heard from a majority within an election timeout
   * may have been replaced on the other side of a partition; it steps down rather than
   * keep serving (and leasing reads) as a stale leader.
   */
  #checkQuorumActive (): boolean {
    const active = hasQuorum(this.configs.current().voters, id => id === this.id || this.progress.get(id)?.recentActive === true)
    if (!active) {
      this.trace(`stepped down at term ${this.term}: no quorum heard from within an election timeout`)
      this.becomeFollower(this.term, '')
      return false
    }
    for (const [id, pr] of this.progress) if (id !== this.id) pr.recentActive = false
    return true
  }

  #tickSnapshots (): void {
    for (const [id, pr] of this.progress) {
      if (pr.state !== 'snapshot' || ++pr.snapshotElapsedTicks < this.settings.snapshotTimeoutTicks) continue
      this.trace(`no answer to the RaftSnapshot at ${pr.pendingSnapshot} sent to ${id}: probing again`)
      pr.becomeProbe()
    }
  }

  // -------------------------------------------------------------------------------
  // Per role: each message goes to its concern (raft-election, -follower, -replication, -read-index)

  #stepFollower (m: Message): void {
    switch (m.type) {
      case 'append':
      case 'heartbeat':
      case 'snapshot':
        this.electionElapsed = 0
        this.lead = m.from
        this.#leaderHeard()
        handleFromLeader(this, m)
        return
      case 'timeout-now':
        this.trace(`campaigning at once: ${m.from} is transferring leadership to us`)
        hup(this, true)
        return
      case 'read-index-response':
        this.pushReadState({ index: m.index!, context: m.context! })
        return
      case 'propose':
      case 'read-index':
        this.trace(`dropped ${m.type} from ${m.from}: not the leader`)
        return
      default:
    }
  }

  #stepCandidate (m: Message): void {
    switch (m.type) {
      case 'append':
      case 'heartbeat':
      case 'snapshot':
        // Someone already won this term.
        this.becomeFollower(m.term, m.from)
        handleFromLeader(this, m)
        return
      case 'pre-vote-response':
      case 'vote-response':
        if ((m.type === 'pre-vote-response') === (this.role === 'pre-candidate')) handleVoteResponse(this, m)
        return
      default:
    }
  }

  #stepLeader (m: Message): void {
    switch (m.type) {
      case 'append-response':
        handleAppendResponse(this, m)
        return
      case 'heartbeat-response':
        handleHeartbeatResponse(this, m)
        return
      case 'propose':
        handleForwardedProposal(this, m)
        return
      case 'read-index':
        leaderReadIndex(this, m.from, m.context!)
        return
      case 'append':
      case 'heartbeat':
      case 'snapshot':
        this.invalid(`dropped ${m.type} from ${m.from}: two leaders in term ${this.term}`)
        return
      default:
    }
  }

  // -------------------------------------------------------------------------------
  // Leader: what replication, membership and ReadIndex share

  /** Until an entry of its own term commits, a new leader's commit index may lag an earlier leader's. */
  committedEntryInCurrentTerm (): boolean {
    return this.log.term(this.log.committed) === this.term
  }

  /** Heartbeats carry the newest pending ReadIndex context, so their answers confirm reads too. */
  bcastHeartbeat (context: Uint8Array | undefined): void {
    for (const [id, pr] of this.progress) {
      if (id === this.id) continue
      // Never claim a commit beyond what the follower holds: it could not check it.
      const commit = Math.min(pr.match, this.log.committed)
      this.send({ type: 'heartbeat', to: id, commit, ...(context === undefined ? {} : { context }) })
    }
  }

  // -------------------------------------------------------------------------------
  // Plumbing

  /**
   * Queues `m`, completed with this node's id and term, for the next Ready. Every caller
   * passes a fresh object literal, so it is completed in place: a copy per message was the
   * largest self time of an idle group's heartbeat path (5 % of its CPU). The keys keep
   * the copy's order, so the encoded bytes are the same.
   */
  send (m: Omit<Message, 'from' | 'term'> & { term?: number }): void {
    if (this.messages.length >= limits.raftMessagesPerReadyMax) {
      this.droppedMessages++
      return
    }
    const message = m as Message
    message.from = this.id
    message.term = m.term ?? this.term
    this.messages.push(message)
  }

  pushReadState (readState: ReadState): void {
    if (this.readStates.length >= limits.raftPendingReadIndexMax) {
      this.droppedMessages++
      return
    }
    this.readStates.push(readState)
  }

  #replayConfigs (): void {
    const last = this.log.lastIndex()
    for (let lo = this.log.firstIndex(); lo <= last;) {
      const page = this.log.slice(lo, last + 1, this.settings.maxSizePerMessage)!
      this.configs.onAppend(page)
      lo += page.length
    }
  }

  invalid (line: string): void {
    this.invalidMessages++
    this.trace(line)
  }

  trace (line: string): void {
    this.#traceLine?.(`${this.id} ${line}`)
  }
}

function checkHardState (hardState: HardState, log: RaftLog): void {
  assertSafeInteger(hardState.term, 'raft hard state term')
  assertSafeInteger(hardState.commit, 'raft hard state commit')
  assert(hardState.commit <= log.lastIndex(),
    `raft hard state: commit ${hardState.commit} is beyond the last index ${log.lastIndex()}; were entries persisted after the hard state?`)
}
