import { assert, assertSafeInteger } from '../assert.ts'
import { limits } from '../limits.ts'
import type { Random } from '../random.ts'
import { configChangeProblem, isVoter } from './cluster-config.ts'
import { raftCommitRule, type CommitRule } from './commit-rule.ts'
import { ConfigHistory } from './config-history.ts'
import { payloadBytes } from './entry-size.ts'
import { messageProblem } from './message-validation.ts'
import { Progress } from './progress.ts'
import { hasQuorum, quorumMatchIndex, voteResult, type VoteResult } from './quorum.ts'
import type { ConfigChangeResult, ProposeResult, ReadIndexResult, TransferResult } from './raft-results.ts'
import { RaftLog } from './raft-log.ts'
import type { RaftBasicStatus, RaftStatus } from './raft-status.ts'
import type { RaftStorage } from './raft-storage.ts'
import type {
  ConfigChange, Entry, HardState, Message, NodeId, RaftRole, RaftSnapshot, ReadState, SoftState
} from './raft-types.ts'
import { ReadOnly } from './read-only.ts'

export interface RaftOptions {
  id: NodeId
  /** The host's persisted log and hard state; the node only reads it. */
  storage: RaftStorage
  /** Election jitter; nothing else in the core draws randomness. */
  random: Random
  /** A follower campaigns after a randomised [electionTicks, 2 * electionTicks) ticks without a leader. */
  electionTicks: number
  /** A leader sends heartbeats every heartbeatTicks ticks; must be less than electionTicks. */
  heartbeatTicks: number
  /** PreVote (dissertation §9.6): default true. */
  preVote?: boolean
  /** CheckQuorum and the leader lease that comes with it: default true. */
  checkQuorum?: boolean
  /** Bytes of entries per append message; default and maximum limits.raftMaxSizePerMessageBytes. */
  maxSizePerMessage?: number
  /** Append messages in flight per follower; default and maximum limits.raftMaxInflightMessages. */
  maxInflight?: number
  /** Bytes of uncommitted proposals a leader accepts; default and maximum limits.raftMaxUncommittedEntriesBytes. */
  maxUncommittedEntriesBytes?: number
  /** The index the host's state machine has applied (default: the RaftSnapshot's index). */
  applied?: number
  /**
   * Leader ticks to wait for a follower to acknowledge a RaftSnapshot before probing it
   * again, in case the snapshot or its acknowledgement was lost and the host did not
   * call reportSnapshot. Default 10 * electionTicks.
   */
  snapshotTimeoutTicks?: number
  /** Receives one line per notable event (role changes, refusals); for traces and tests. */
  trace?: (line: string) => void
  /** Which quorum-held entries a leader may commit; default (and in every shipped host) raftCommitRule. */
  commitRule?: CommitRule
}

type VoteKind = 'pre-vote' | 'vote'

/**
 * The Raft protocol as a pure state machine (after etcd's `raft` struct). It never does
 * I/O: messages to send, entries to persist and entries to apply accumulate here and
 * `RawNode` hands them to the host as a `Ready`. Time is `tick()`, randomness is the
 * injected `Random`. Internal to runtime/raft: hosts use `RawNode`.
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
  leadTransferee: NodeId | '' = ''
  /** Payload bytes this leader appended that are not yet committed and handed out. */
  uncommittedBytes = 0
  invalidMessages = 0
  droppedMessages = 0

  readonly #votes = new Map<NodeId, boolean>()
  readonly #readOnly: ReadOnly
  /** ReadIndex requests that arrived before this leader committed an entry of its term. */
  #earlyReads: Array<{ from: NodeId, context: Uint8Array }> = []
  readonly #random: Random
  readonly #electionTicks: number
  readonly #heartbeatTicks: number
  readonly #preVote: boolean
  readonly #checkQuorum: boolean
  readonly #maxSizePerMessage: number
  readonly #maxInflight: number
  readonly #maxUncommittedBytes: number
  readonly #snapshotTimeoutTicks: number
  readonly #traceLine: ((line: string) => void) | undefined
  readonly #commitRule: CommitRule

  constructor (options: RaftOptions) {
    validateOptions(options)
    this.id = options.id
    this.#random = options.random
    this.#electionTicks = options.electionTicks
    this.#heartbeatTicks = options.heartbeatTicks
    this.#preVote = options.preVote ?? true
    this.#checkQuorum = options.checkQuorum ?? true
    this.#maxSizePerMessage = options.maxSizePerMessage ?? limits.raftMaxSizePerMessageBytes
    this.#maxInflight = options.maxInflight ?? limits.raftMaxInflightMessages
    this.#maxUncommittedBytes = options.maxUncommittedEntriesBytes ?? limits.raftMaxUncommittedEntriesBytes
    this.#snapshotTimeoutTicks = options.snapshotTimeoutTicks ?? 10 * options.electionTicks
    this.#traceLine = options.trace
    this.#commitRule = options.commitRule ?? raftCommitRule
    this.#readOnly = new ReadOnly(limits.raftPendingReadIndexMax)

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
    this.#becomeFollower(this.term, '')
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
      this.#invalid(`dropped an invalid message: ${problem}`)
      return
    }
    if (!this.#stepTerm(message)) return
    if (message.type === 'vote' || message.type === 'pre-vote') this.#handleVoteRequest(message)
    else if (this.role === 'leader') this.#stepLeader(message)
    else if (this.role === 'follower') this.#stepFollower(message)
    else this.#stepCandidate(message)
    this.configs.commitTo(this.log.committed)
  }

  campaign (): void {
    this.#hup(false)
  }

  propose (data: Uint8Array): ProposeResult {
    const refusal = this.#proposalRefusal()
    if (refusal !== undefined) return refusal
    if (data.byteLength > this.#maxSizePerMessage) return { status: 'too-large', bytesMax: this.#maxSizePerMessage }
    return this.#appendProposal('normal', data, undefined)
  }

  proposeConfigChange (change: ConfigChange): ConfigChangeResult {
    const refusal = this.#proposalRefusal()
    if (refusal !== undefined) return refusal
    if (!this.#committedEntryInCurrentTerm()) return { status: 'leader-not-ready' }
    const latest = this.configs.latestIndex()
    if (latest > this.log.committed) return { status: 'change-pending', index: latest }
    const problem = configChangeProblem(this.configs.current(), change)
    if (problem !== undefined) return { status: 'invalid', reason: problem }
    return this.#appendProposal('config-change', new Uint8Array(0), change)
  }

  readIndex (context: Uint8Array): ReadIndexResult {
    if (context.byteLength === 0) return { status: 'invalid', reason: 'context must not be empty' }
    if (this.role === 'leader') return this.#leaderReadIndex(this.id, context)
    if (this.lead === '') return { status: 'no-leader' }
    // Forwarded requests are termless: the leader answers whatever term it is in.
    this.#send({ type: 'read-index', to: this.lead, term: 0, context })
    return { status: 'forwarded', leader: this.lead }
  }

  transferLeadership (to: NodeId): TransferResult {
    if (this.role !== 'leader') return { status: 'not-leader', leader: this.lead }
    if (to === this.id) return { status: 'invalid', reason: `"${to}" already leads` }
    if (!isVoter(this.configs.current(), to)) return { status: 'invalid', reason: `"${to}" is not a voter` }
    if (this.leadTransferee === to) return { status: 'accepted', to }
    this.#trace(`transferring leadership to ${to} at term ${this.term}`)
    this.leadTransferee = to
    // The transfer must finish within an election timeout or it is abandoned.
    this.electionElapsed = 0
    const pr = this.progress.get(to)!
    if (pr.match === this.log.lastIndex()) this.#send({ type: 'timeout-now', to })
    else this.#sendAppend(to, true)
    return { status: 'accepted', to }
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
      electionTimeoutTicks: this.role === 'leader' ? this.#electionTicks : this.randomizedElectionTimeout,
      progress,
      invalidMessages: this.invalidMessages,
      droppedMessages: this.droppedMessages
    }
  }

  // -------------------------------------------------------------------------------
  // Roles

  #becomeFollower (term: number, lead: NodeId | ''): void {
    this.#reset(term)
    this.lead = lead
    this.role = 'follower'
    this.#trace(`became follower at term ${term}${lead === '' ? '' : ` (leader ${lead})`}`)
  }

  #becomePreCandidate (): void {
    assert(this.role !== 'leader', `raft node "${this.id}": a leader cannot become a pre-candidate`)
    // A pre-candidate keeps its term and vote: asking whether it could win must not
    // disturb anyone, which is the point of PreVote.
    this.#votes.clear()
    this.lead = ''
    this.role = 'pre-candidate'
    this.#trace(`became pre-candidate at term ${this.term}`)
  }

  #becomeCandidate (): void {
    assert(this.role !== 'leader', `raft node "${this.id}": a leader cannot become a candidate`)
    this.#reset(nextInteger(this.term, 'raft term'))
    this.vote = this.id
    this.role = 'candidate'
    this.#trace(`became candidate at term ${this.term}`)
  }

  #becomeLeader (): void {
    assert(this.role === 'candidate', `raft node "${this.id}": only a candidate can become leader, not a ${this.role}`)
    this.#reset(this.term)
    this.lead = this.id
    this.role = 'leader'
    const next = this.log.lastIndex() + 1
    for (const voter of this.configs.current().voters) {
      this.progress.set(voter, new Progress(next, this.#maxInflight, voter === this.id))
    }
    const self = this.progress.get(this.id)!
    self.maybeUpdate(this.log.lastIndex())
    self.becomeReplicate()
    this.#trace(`became leader at term ${this.term}`)
    // An empty entry of our own term: entries of earlier terms can only commit once an
    // entry of this term does (Figure 8), so commit one straight away.
    assert(this.#appendEntries([{ term: this.term, index: nextInteger(this.log.lastIndex(), 'raft index'), type: 'normal', data: new Uint8Array(0) }]),
      `raft node "${this.id}": the empty entry of a new leader was refused`)
    if (!this.#maybeCommitAndBroadcast()) this.#bcastAppend()
  }

  /** Everything that belongs to one term in one role goes when the term or role changes. */
  #reset (term: number): void {
    if (this.term !== term) {
      assertSafeInteger(term, `raft node "${this.id}": term`)
      this.term = term
      this.vote = ''
    }
    this.lead = ''
    this.electionElapsed = 0
    this.heartbeatElapsed = 0
    this.randomizedElectionTimeout = this.#random.int(this.#electionTicks, 2 * this.#electionTicks - 1)
    this.leadTransferee = ''
    this.#votes.clear()
    this.progress.clear()
    this.#readOnly.reset()
    this.#earlyReads = []
    this.uncommittedBytes = 0
  }

  // -------------------------------------------------------------------------------
  // Time

  #tickElection (): void {
    // Capped: past this the count means nothing, and it must not grow without bound.
    if (this.electionElapsed < 2 * this.#electionTicks) this.electionElapsed++
    if (this.#promotable() && this.electionElapsed >= this.randomizedElectionTimeout) {
      this.electionElapsed = 0
      this.#hup(false)
    }
  }

  #tickLeader (): void {
    this.heartbeatElapsed++
    this.electionElapsed++
    if (this.electionElapsed >= this.#electionTicks) {
      this.electionElapsed = 0
      if (this.#checkQuorum && !this.#checkQuorumActive()) return
      if (this.leadTransferee !== '') {
        this.#trace(`abandoned the leadership transfer to ${this.leadTransferee}: it did not finish within an election timeout`)
        this.leadTransferee = ''
      }
    }
    this.#tickSnapshots()
    if (this.heartbeatElapsed >= this.#heartbeatTicks) {
      this.heartbeatElapsed = 0
      this.#bcastHeartbeat(this.#readOnly.lastContext())
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
      this.#trace(`stepped down at term ${this.term}: no quorum heard from within an election timeout`)
      this.#becomeFollower(this.term, '')
      return false
    }
    for (const [id, pr] of this.progress) if (id !== this.id) pr.recentActive = false
    return true
  }

  #tickSnapshots (): void {
    for (const [id, pr] of this.progress) {
      if (pr.state !== 'snapshot' || ++pr.snapshotElapsedTicks < this.#snapshotTimeoutTicks) continue
      this.#trace(`no answer to the RaftSnapshot at ${pr.pendingSnapshot} sent to ${id}: probing again`)
      pr.becomeProbe()
    }
  }

  // -------------------------------------------------------------------------------
  // Elections

  #promotable (): boolean {
    return isVoter(this.configs.current(), this.id) && this.log.unstable.snapshot === undefined
  }

  #hup (transfer: boolean): void {
    if (this.role === 'leader') return
    if (!this.#promotable()) {
      this.#trace(`cannot campaign at term ${this.term}: not a voter in ${JSON.stringify(this.configs.current().voters)}`)
      return
    }
    // A transfer skips PreVote: the old leader asked for it, so no partition is healing.
    this.#campaign(this.#preVote && !transfer ? 'pre-vote' : 'vote', transfer)
  }

  #campaign (kind: VoteKind, transfer: boolean): void {
    let voteTerm: number
    if (kind === 'pre-vote') {
      this.#becomePreCandidate()
      // Ask for the votes of the term we would run in, without moving to it.
      voteTerm = nextInteger(this.term, 'raft term')
    } else {
      this.#becomeCandidate()
      voteTerm = this.term
    }
    if (this.#poll(this.id, true) === 'won') {
      // A single voter wins at once.
      if (kind === 'pre-vote') this.#campaign('vote', false)
      else this.#becomeLeader()
      return
    }
    for (const voter of this.configs.current().voters) {
      if (voter === this.id) continue
      this.#send({
        type: kind,
        to: voter,
        term: voteTerm,
        index: this.log.lastIndex(),
        logTerm: this.log.lastTerm(),
        ...(transfer ? { transfer: true } : {})
      })
    }
  }

  #poll (from: NodeId, granted: boolean): VoteResult {
    if (!this.#votes.has(from)) this.#votes.set(from, granted)
    return voteResult(this.configs.current().voters, this.#votes)
  }

  #handleVoteRequest (m: Message): void {
    const responseType = m.type === 'vote' ? 'vote-response' : 'pre-vote-response'
    const canVote = this.vote === m.from ||
      (this.vote === '' && this.lead === '') ||
      (m.type === 'pre-vote' && m.term > this.term)
    if (canVote && this.log.isUpToDate(m.index!, m.logTerm!)) {
      this.#trace(`granted ${m.type} to ${m.from} for term ${m.term}`)
      // The grant leaves in the same Ready as the hard state recording the vote, and the
      // host persists that before sending: a vote is never forgotten after it is cast.
      this.#send({ type: responseType, to: m.from, term: m.term })
      if (m.type === 'vote') {
        this.electionElapsed = 0
        this.vote = m.from
      }
      return
    }
    const why = canVote ? `its log ${m.index!}@${m.logTerm!} is behind ours ${this.log.lastIndex()}@${this.log.lastTerm()}`
      : `already ${this.vote === '' ? `following ${this.lead}` : `voted for ${this.vote}`} in term ${this.term}`
    this.#trace(`rejected ${m.type} from ${m.from} for term ${m.term}: ${why}`)
    this.#send({ type: responseType, to: m.from, reject: true })
  }

  // -------------------------------------------------------------------------------
  // Terms

  /** Bring our term in line with the message's; false when the message must go no further. */
  #stepTerm (m: Message): boolean {
    if (m.term === 0) return true
    if (m.term > this.term) return this.#stepHigherTerm(m)
    if (m.term < this.term) {
      this.#stepLowerTerm(m)
      return false
    }
    return true
  }

  #stepHigherTerm (m: Message): boolean {
    if (m.type === 'vote' || m.type === 'pre-vote') {
      // Leader lease: while we have heard from a leader within the minimum election
      // timeout, nobody needs a new one. Ignoring such requests entirely (not even
      // adopting their term) is what keeps a removed or partitioned server from
      // deposing a healthy leader when it comes back with a higher term.
      const inLease = this.#checkQuorum && this.lead !== '' && this.electionElapsed < this.#electionTicks
      if (inLease && m.transfer !== true) {
        this.#trace(`ignored ${m.type} from ${m.from} for term ${m.term}: leader ${this.lead} is live at term ${this.term}`)
        return false
      }
    }
    // A pre-vote is for a term the sender has not entered, and a granted pre-vote
    // response echoes it back: neither moves anyone's term.
    if (m.type === 'pre-vote' || (m.type === 'pre-vote-response' && m.reject !== true)) return true
    const fromLeader = m.type === 'append' || m.type === 'heartbeat' || m.type === 'snapshot'
    this.#trace(`saw term ${m.term} in ${m.type} from ${m.from}, ahead of term ${this.term}`)
    this.#becomeFollower(m.term, fromLeader ? m.from : '')
    return true
  }

  #stepLowerTerm (m: Message): void {
    if ((this.#checkQuorum || this.#preVote) && (m.type === 'append' || m.type === 'heartbeat')) {
      // A leader of an older term may be cut off from a majority that moved on. With
      // leases or PreVote nobody adopts its votes' terms, so tell it the newer term
      // directly or it could lead a minority forever.
      // Sent as a rejection that no leader can mistake for progress.
      this.#send({ type: 'append-response', to: m.from, index: 0, reject: true, rejectHint: 0 })
    } else if (m.type === 'pre-vote') {
      this.#send({ type: 'pre-vote-response', to: m.from, reject: true })
    }
  }

  // -------------------------------------------------------------------------------
  // Per role

  #stepFollower (m: Message): void {
    switch (m.type) {
      case 'append':
      case 'heartbeat':
      case 'snapshot':
        this.electionElapsed = 0
        this.lead = m.from
        this.#handleFromLeader(m)
        return
      case 'timeout-now':
        this.#trace(`campaigning at once: ${m.from} is transferring leadership to us`)
        this.#hup(true)
        return
      case 'read-index-response':
        this.#pushReadState({ index: m.index!, context: m.context! })
        return
      case 'propose':
      case 'read-index':
        this.#trace(`dropped ${m.type} from ${m.from}: not the leader`)
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
        this.#becomeFollower(m.term, m.from)
        this.#handleFromLeader(m)
        return
      case 'pre-vote-response':
      case 'vote-response':
        if ((m.type === 'pre-vote-response') === (this.role === 'pre-candidate')) this.#handleVoteResponse(m)
        return
      default:
    }
  }

  #handleVoteResponse (m: Message): void {
    const result = this.#poll(m.from, m.reject !== true)
    if (result === 'won') {
      if (this.role === 'pre-candidate') this.#campaign('vote', false)
      else this.#becomeLeader()
    } else if (result === 'lost') {
      this.#trace(`lost the ${this.role === 'pre-candidate' ? 'pre-vote' : 'election'} at term ${this.term}`)
      this.#becomeFollower(this.term, '')
    }
  }

  #stepLeader (m: Message): void {
    switch (m.type) {
      case 'append-response':
        this.#handleAppendResponse(m)
        return
      case 'heartbeat-response':
        this.#handleHeartbeatResponse(m)
        return
      case 'propose':
        this.#handleForwardedProposal(m)
        return
      case 'read-index':
        this.#leaderReadIndex(m.from, m.context!)
        return
      case 'append':
      case 'heartbeat':
      case 'snapshot':
        this.#invalid(`dropped ${m.type} from ${m.from}: two leaders in term ${this.term}`)
        return
      default:
    }
  }

  // -------------------------------------------------------------------------------
  // Follower: taking entries from the leader

  #handleFromLeader (m: Message): void {
    if (m.type === 'append') this.#handleAppend(m)
    else if (m.type === 'heartbeat') this.#handleHeartbeat(m)
    else this.#handleSnapshot(m)
  }

  #handleAppend (m: Message): void {
    const prevIndex = m.index!
    const entries = m.entries!
    if (prevIndex < this.log.committed) {
      // Old news: tell the leader how far we are committed so it skips ahead.
      this.#send({ type: 'append-response', to: m.from, index: this.log.committed })
      return
    }
    const outcome = this.log.maybeAppend(prevIndex, m.logTerm!, m.commit!, entries)
    if (outcome.kind === 'contradicts-committed') {
      this.#invalid(`dropped append from ${m.from}: entry ${outcome.index} contradicts our committed log (commit ${this.log.committed})`)
      return
    }
    if (outcome.kind === 'appended') {
      this.#onAppended(outcome.appended)
      // Acknowledged in the Ready that persists these entries, so never before they are durable.
      this.#send({ type: 'append-response', to: m.from, index: outcome.lastNewIndex })
      return
    }
    const hint = this.log.findConflictByTerm(Math.min(prevIndex, this.log.lastIndex()), m.logTerm!)
    this.#trace(`rejected append from ${m.from} after ${prevIndex}@${m.logTerm!}: our log has ${this.#describeTermAt(prevIndex)} there`)
    this.#send({
      type: 'append-response', to: m.from, index: prevIndex, reject: true, rejectHint: hint.index, rejectHintTerm: hint.term
    })
  }

  #handleHeartbeat (m: Message): void {
    // A leader never sends a commit beyond what this follower acknowledged holding.
    if (m.commit! > this.log.lastIndex()) {
      this.#invalid(`dropped heartbeat from ${m.from}: commit ${m.commit!} is beyond our last index ${this.log.lastIndex()}; was our log lost?`)
      return
    }
    this.log.commitTo(m.commit!)
    this.#send({ type: 'heartbeat-response', to: m.from, ...(m.context === undefined ? {} : { context: m.context }) })
  }

  #handleSnapshot (m: Message): void {
    const snapshot = m.snapshot!
    if (this.#restore(snapshot)) {
      this.#trace(`restored RaftSnapshot ${snapshot.metadata.index}@${snapshot.metadata.term} from ${m.from}`)
      this.#send({ type: 'append-response', to: m.from, index: this.log.lastIndex() })
    } else {
      this.#send({ type: 'append-response', to: m.from, index: this.log.committed })
    }
  }

  #restore (snapshot: RaftSnapshot): boolean {
    const { index, term, config } = snapshot.metadata
    if (index <= this.log.committed) return false
    if (this.log.matchTerm(index, term)) {
      // We hold the entry the snapshot ends with, so everything before it matches too:
      // just commit up to it rather than throw the log away.
      this.log.commitTo(index)
      return false
    }
    this.log.restore(snapshot)
    this.configs.reset(index, config)
    return true
  }

  // -------------------------------------------------------------------------------
  // Leader: replication

  #appendProposal (type: Entry['type'], data: Uint8Array, change: ConfigChange | undefined): ProposeResult {
    const index = nextInteger(this.log.lastIndex(), 'raft index')
    const entry: Entry = change === undefined ? { term: this.term, index, type, data } : { term: this.term, index, type, data, configChange: change }
    if (!this.#appendEntries([entry])) return { status: 'too-much-uncommitted' }
    if (!this.#maybeCommitAndBroadcast()) this.#bcastAppend()
    return { status: 'accepted', index, term: entry.term }
  }

  #proposalRefusal (): ProposeResult | undefined {
    if (this.role !== 'leader') return { status: 'not-leader', leader: this.lead }
    if (this.leadTransferee !== '') return { status: 'transferring-leadership', to: this.leadTransferee }
    return undefined
  }

  #handleForwardedProposal (m: Message): void {
    const refusal = this.#proposalRefusal()
    const entries = m.entries!
    if (refusal !== undefined || entries.length === 0) return
    if (entries.some(e => e.type !== 'normal' || e.data.byteLength > this.#maxSizePerMessage)) {
      this.#trace(`dropped a proposal from ${m.from}: only normal entries of at most ${this.#maxSizePerMessage} bytes may be forwarded`)
      return
    }
    let index = this.log.lastIndex()
    const stamped = entries.map((e): Entry => ({ term: this.term, index: index = nextInteger(index, 'raft index'), type: 'normal', data: e.data }))
    if (!this.#appendEntries(stamped)) return
    if (!this.#maybeCommitAndBroadcast()) this.#bcastAppend()
  }

  /** Append our own entries (already stamped with this term and the next indexes). */
  #appendEntries (entries: Entry[]): boolean {
    const bytes = payloadBytes(entries)
    // An empty or first entry is always accepted, so a leader can make progress.
    if (this.uncommittedBytes > 0 && bytes > 0 && this.uncommittedBytes + bytes > this.#maxUncommittedBytes) {
      this.#trace(`refused a proposal of ${bytes} bytes: ${this.uncommittedBytes} uncommitted bytes already`)
      return false
    }
    this.uncommittedBytes += bytes
    this.log.append(entries)
    if (this.#onAppended(entries)) this.#syncProgressWithConfig()
    this.progress.get(this.id)?.maybeUpdate(this.log.lastIndex())
    return true
  }

  /**
   * The configuration changed when its entry was appended: track newcomers. A removed
   * voter keeps being replicated to (though it no longer counts towards any quorum)
   * until the change commits, so it normally receives the entry that removes it and,
   * no longer finding itself in the configuration, stops campaigning.
   */
  #syncProgressWithConfig (): void {
    const config = this.configs.current()
    for (const voter of config.voters) {
      // A newcomer counts as recently active, or CheckQuorum could depose us before it
      // has had a chance to answer.
      if (!this.progress.has(voter)) this.progress.set(voter, new Progress(this.log.lastIndex() + 1, this.#maxInflight, true))
    }
    if (this.leadTransferee !== '' && !isVoter(config, this.leadTransferee)) this.leadTransferee = ''
  }

  /** Once the configuration is committed, stop replicating to servers it removed. */
  #forgetRemovedServers (): void {
    if (this.configs.latestIndex() > this.log.committed) return
    const config = this.configs.current()
    for (const id of [...this.progress.keys()]) {
      if (id !== this.id && !isVoter(config, id)) this.progress.delete(id)
    }
  }

  /** Track the configuration the log now establishes; true if it changed. */
  #onAppended (entries: readonly Entry[]): boolean {
    if (!this.configs.onAppend(entries)) return false
    this.#trace(`now uses configuration ${JSON.stringify(this.configs.current().voters)} (entry ${this.configs.latestIndex()})`)
    return true
  }

  /** Replicate to every server with progress: the voters, and any removed one still to hear of it. */
  #bcastAppend (): void {
    for (const id of this.progress.keys()) if (id !== this.id) this.#sendAppend(id, true)
  }

  /**
   * Send `to` the entries from its next index, or a RaftSnapshot if they were
   * compacted. `sendIfEmpty` also sends an append with no entries (to carry the commit
   * index or probe). Returns whether anything was sent.
   */
  #sendAppend (to: NodeId, sendIfEmpty: boolean): boolean {
    const pr = this.progress.get(to)
    if (pr === undefined || pr.isPaused()) return false
    const prevIndex = pr.next - 1
    const prevTerm = this.log.term(prevIndex)
    const entries = this.log.entriesFrom(pr.next, this.#maxSizePerMessage)
    if (prevTerm === undefined || entries === undefined) return this.#sendSnapshot(to, pr)
    if (entries.length === 0 && !sendIfEmpty) return false
    this.#send({ type: 'append', to, index: prevIndex, logTerm: prevTerm, entries, commit: this.log.committed })
    pr.sentAppend(entries.length > 0 ? entries[entries.length - 1]!.index : undefined)
    return true
  }

  #sendSnapshot (to: NodeId, pr: Progress): boolean {
    // A follower that has not answered lately may be down: do not ship it a RaftSnapshot yet.
    if (!pr.recentActive) return false
    const snapshot = this.log.snapshot()
    assert(snapshot.metadata.index >= this.log.firstIndex() - 1,
      `raft node "${this.id}": the latest RaftSnapshot (${snapshot.metadata.index}) is older than the log's start (${this.log.firstIndex()}); create one before compacting`)
    this.#trace(`sending RaftSnapshot ${snapshot.metadata.index}@${snapshot.metadata.term} to ${to}: it needs ${pr.next}, our log starts at ${this.log.firstIndex()}`)
    pr.becomeSnapshot(snapshot.metadata.index)
    this.#send({ type: 'snapshot', to, snapshot })
    return true
  }

  #handleAppendResponse (m: Message): void {
    const pr = this.progress.get(m.from)
    if (pr === undefined) return
    if (m.index! > this.log.lastIndex()) {
      this.#invalid(`dropped append-response from ${m.from}: index ${m.index!} is beyond our last index ${this.log.lastIndex()}`)
      return
    }
    pr.recentActive = true
    if (m.reject === true) {
      this.#handleAppendRejection(m, pr)
      return
    }
    const wasPaused = pr.isPaused()
    if (!pr.maybeUpdate(m.index!) && !(pr.state === 'probe' && pr.match === m.index)) return
    if (pr.state === 'probe') pr.becomeReplicate()
    else if (pr.state === 'snapshot' && (pr.match >= pr.pendingSnapshot || pr.match + 1 >= this.log.firstIndex())) {
      pr.becomeProbe()
      pr.becomeReplicate()
    } else if (pr.state === 'replicate') pr.inflights.freeTo(m.index!)

    if (this.#maybeCommitAndBroadcast()) {
      if (this.role !== 'leader') return
    } else if (wasPaused) {
      this.#sendAppend(m.from, true)
    }
    // Pipelining: keep the window full while there is more to send.
    for (let sent = 0; sent <= this.#maxInflight && this.#sendAppend(m.from, false); sent++);
    if (m.from === this.leadTransferee && pr.match === this.log.lastIndex()) {
      this.#trace(`${m.from} has caught up: asking it to campaign`)
      this.#send({ type: 'timeout-now', to: m.from })
    }
  }

  /** Fast back-off: jump straight past the follower's conflicting term instead of one entry per round trip. */
  #handleAppendRejection (m: Message, pr: Progress): void {
    let hint = m.rejectHint ?? 0
    if ((m.rejectHintTerm ?? 0) > 0) hint = this.log.findConflictByTerm(Math.min(hint, this.log.lastIndex()), m.rejectHintTerm!).index
    if (!pr.maybeDecreaseTo(m.index!, hint)) return
    if (pr.state === 'replicate') pr.becomeProbe()
    this.#sendAppend(m.from, true)
  }

  #handleHeartbeatResponse (m: Message): void {
    const pr = this.progress.get(m.from)
    if (pr === undefined) return
    pr.recentActive = true
    pr.probeSent = false
    // The follower is alive; if acks were lost and the window filled, make room to resend.
    if (pr.state === 'replicate' && pr.inflights.full()) pr.inflights.freeFirst()
    if (pr.match < this.log.lastIndex()) this.#sendAppend(m.from, true)
    if (m.context !== undefined && m.context.byteLength > 0) this.#confirmReads(m.from, m.context)
  }

  /** Commit whatever a majority holds; on success spread the news. True if the commit index moved. */
  #maybeCommitAndBroadcast (): boolean {
    const index = quorumMatchIndex(this.configs.current().voters, id => this.progress.get(id)?.match ?? 0)
    if (index <= this.log.committed || !this.log.maybeCommit(index, this.#commitRule.requiredTerm(index, this.term, this.log))) return false
    this.configs.commitTo(this.log.committed)
    this.#releaseEarlyReads()
    this.#bcastAppend()
    this.#forgetRemovedServers()
    this.#maybeStepDownAfterRemoval()
    return true
  }

  /**
   * A leader that removed itself keeps leading until that change commits (it still has
   * to replicate it), then steps down and asks the most up-to-date voter to campaign.
   */
  #maybeStepDownAfterRemoval (): void {
    if (isVoter(this.configs.current(), this.id) || this.configs.latestIndex() > this.log.committed) return
    const last = this.log.lastIndex()
    const successor = this.configs.current().voters.find(id => this.progress.get(id)?.match === last)
    this.#trace(`stepping down at term ${this.term}: our removal at ${this.configs.latestIndex()} is committed`)
    if (successor !== undefined) this.#send({ type: 'timeout-now', to: successor })
    this.#becomeFollower(this.term, '')
  }

  #committedEntryInCurrentTerm (): boolean {
    return this.log.term(this.log.committed) === this.term
  }

  // -------------------------------------------------------------------------------
  // Leader: ReadIndex

  #leaderReadIndex (from: NodeId, context: Uint8Array): ReadIndexResult {
    const pendingMax = limits.raftPendingReadIndexMax
    if (this.#earlyReads.length + this.#readOnly.size >= pendingMax) return { status: 'too-many-pending', pendingMax }
    const voters = this.configs.current().voters
    if (voters.length === 1 && voters[0] === this.id) {
      this.#answerRead(from, this.log.committed, context)
      return { status: 'accepted' }
    }
    // Until an entry of this term commits, our commit index may lag entries an earlier
    // leader committed: reading at it could miss acknowledged writes.
    if (!this.#committedEntryInCurrentTerm()) {
      this.#earlyReads.push({ from, context })
      return { status: 'accepted' }
    }
    const result = this.#queueRead(from, context)
    if (result.status === 'accepted') this.#bcastHeartbeat(context)
    return result
  }

  #queueRead (from: NodeId, context: Uint8Array): ReadIndexResult {
    const added = this.#readOnly.add(this.log.committed, from, context)
    if (added === 'duplicate') return { status: 'duplicate' }
    if (added === 'full') return { status: 'too-many-pending', pendingMax: limits.raftPendingReadIndexMax }
    this.#readOnly.recordAck(this.id, context)
    return { status: 'accepted' }
  }

  #releaseEarlyReads (): void {
    if (this.#earlyReads.length === 0 || !this.#committedEntryInCurrentTerm()) return
    const reads = this.#earlyReads
    this.#earlyReads = []
    for (const read of reads) this.#queueRead(read.from, read.context)
    this.#bcastHeartbeat(this.#readOnly.lastContext())
  }

  /** A heartbeat carrying `context` was answered: once a majority has, we were still leader when it left. */
  #confirmReads (from: NodeId, context: Uint8Array): void {
    const acks = this.#readOnly.recordAck(from, context)
    if (acks === undefined || !hasQuorum(this.configs.current().voters, id => acks.has(id))) return
    for (const request of this.#readOnly.release(context)) this.#answerRead(request.from, request.index, request.context)
  }

  #answerRead (to: NodeId, index: number, context: Uint8Array): void {
    if (to === this.id) this.#pushReadState({ index, context })
    else this.#send({ type: 'read-index-response', to, index, context })
  }

  #bcastHeartbeat (context: Uint8Array | undefined): void {
    for (const [id, pr] of this.progress) {
      if (id === this.id) continue
      // Never claim a commit beyond what the follower holds: it could not check it.
      const commit = Math.min(pr.match, this.log.committed)
      this.#send({ type: 'heartbeat', to: id, commit, ...(context === undefined ? {} : { context }) })
    }
  }

  // -------------------------------------------------------------------------------
  // Plumbing

  #send (m: Omit<Message, 'from' | 'term'> & { term?: number }): void {
    if (this.messages.length >= limits.raftMessagesPerReadyMax) {
      this.droppedMessages++
      return
    }
    this.messages.push({ ...m, from: this.id, term: m.term ?? this.term })
  }

  #pushReadState (readState: ReadState): void {
    if (this.readStates.length >= limits.raftPendingReadIndexMax) {
      this.droppedMessages++
      return
    }
    this.readStates.push(readState)
  }

  #replayConfigs (): void {
    const last = this.log.lastIndex()
    for (let lo = this.log.firstIndex(); lo <= last;) {
      const page = this.log.slice(lo, last + 1, this.#maxSizePerMessage)!
      this.configs.onAppend(page)
      lo += page.length
    }
  }

  #describeTermAt (index: number): string {
    const term = this.log.term(index)
    return term === undefined ? `nothing at ${index}` : `${index}@${term}`
  }

  #invalid (line: string): void {
    this.invalidMessages++
    this.#trace(line)
  }

  #trace (line: string): void {
    this.#traceLine?.(`${this.id} ${line}`)
  }
}

function nextInteger (value: number, what: string): number {
  const next = value + 1
  assertSafeInteger(next, what)
  return next
}

function validateOptions (options: RaftOptions): void {
  const positive = (value: number | undefined, what: string, max: number): void => {
    if (value === undefined) return
    assert(Number.isSafeInteger(value) && value > 0 && value <= max, `raft options: ${what} must be an integer in [1, ${max}], got ${String(value)}`)
  }
  assert(typeof options.id === 'string' && options.id.length > 0, 'raft options: id must not be empty')
  positive(options.heartbeatTicks, 'heartbeatTicks', Number.MAX_SAFE_INTEGER)
  positive(options.electionTicks, 'electionTicks', Number.MAX_SAFE_INTEGER / 4)
  assert(options.electionTicks > options.heartbeatTicks,
    `raft options: electionTicks (${options.electionTicks}) must exceed heartbeatTicks (${options.heartbeatTicks})`)
  positive(options.maxSizePerMessage, 'maxSizePerMessage', limits.raftMaxSizePerMessageBytes)
  positive(options.maxInflight, 'maxInflight', limits.raftMaxInflightMessages)
  positive(options.maxUncommittedEntriesBytes, 'maxUncommittedEntriesBytes', limits.raftMaxUncommittedEntriesBytes)
  positive(options.snapshotTimeoutTicks, 'snapshotTimeoutTicks', Number.MAX_SAFE_INTEGER)
}

function checkHardState (hardState: HardState, log: RaftLog): void {
  assertSafeInteger(hardState.term, 'raft hard state term')
  assertSafeInteger(hardState.commit, 'raft hard state commit')
  assert(hardState.commit <= log.lastIndex(),
    `raft hard state: commit ${hardState.commit} is beyond the last index ${log.lastIndex()}; were entries persisted after the hard state?`)
}
