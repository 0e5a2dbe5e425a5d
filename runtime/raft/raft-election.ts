import { isVoter } from './cluster-config.ts'
import { nextInteger } from './next-integer.ts'
import { voteResult, type VoteResult } from './quorum.ts'
import type { Raft } from './raft.ts'
import type { Message, NodeId } from './raft-types.ts'

/**
 * Elections and terms (etcd's campaign, poll and the term checks at the top of Step):
 * how a node campaigns, with PreVote first, how it answers and counts votes, and what a
 * message of a higher or lower term does before anything else looks at it.
 */

type VoteKind = 'pre-vote' | 'vote'

export function promotable (r: Raft): boolean {
  return isVoter(r.configs.current(), r.id) && r.log.unstable.snapshot === undefined
}

export function hup (r: Raft, transfer: boolean): void {
  if (r.role === 'leader') return
  if (!promotable(r)) {
    r.trace(`cannot campaign at term ${r.term}: not a voter in ${JSON.stringify(r.configs.current().voters)}`)
    return
  }
  // A transfer skips PreVote: the old leader asked for it, so no partition is healing.
  campaign(r, r.settings.preVote && !transfer ? 'pre-vote' : 'vote', transfer)
}

function campaign (r: Raft, kind: VoteKind, transfer: boolean): void {
  let voteTerm: number
  if (kind === 'pre-vote') {
    r.becomePreCandidate()
    // Ask for the votes of the term we would run in, without moving to it.
    voteTerm = nextInteger(r.term, 'raft term')
  } else {
    r.becomeCandidate()
    voteTerm = r.term
  }
  if (poll(r, r.id, true) === 'won') {
    // A single voter wins at once.
    if (kind === 'pre-vote') campaign(r, 'vote', false)
    else r.becomeLeader()
    return
  }
  for (const voter of r.configs.current().voters) {
    if (voter !== r.id) askVote(r, kind, voter, voteTerm, transfer)
  }
}

/** Asks `voter` for its (pre-)vote in `voteTerm`, on our last entry. */
function askVote (r: Raft, kind: VoteKind, voter: NodeId, voteTerm: number, transfer: boolean): void {
  r.send({
    type: kind,
    to: voter,
    term: voteTerm,
    index: r.log.lastIndex(),
    logTerm: r.log.lastTerm(),
    ...(transfer ? { transfer: true } : {})
  })
}

/**
 * Two pre-candidates with the same log that time out within one round trip of each other
 * would each grant the other's pre-vote (etcd's rule: a pre-vote for a later term is
 * always grantable), both run, and split the vote: a whole election timeout lost. The
 * slower the round trip (a loaded host), the likelier. So the tie is broken by id: a
 * pre-candidate refuses the pre-vote of a rival in its term with the same last entry whose
 * id sorts before its own, and the rival, which goes on granting, lets it win. A rival with a
 * longer log is still granted (it is the better leader). Only pre-votes are affected, so
 * no term or vote changes: safety is untouched. (tikv/raft-rs has the same idea as
 * `judge_split_prevote`.)
 */
function outranksRivalPreCandidate (r: Raft, m: Message): boolean {
  // Only a rival in our own term: one a term ahead (it ran an election that failed) would
  // refuse our pre-vote, and granting its own is then the quick way to a leader.
  // And only in our first PreVote round since we knew a leader: if we could not win that
  // one, we may be the node a partial partition keeps from winning, and refusing again
  // could leave the rival (which may reach a majority through us) without a leader
  // forever. From the second round on, etcd's rule and the randomised timeouts decide.
  return m.type === 'pre-vote' && r.role === 'pre-candidate' && r.preCampaignsSinceLeader === 1 && m.transfer !== true &&
    m.term === nextInteger(r.term, 'raft term') &&
    m.logTerm === r.log.lastTerm() && m.index === r.log.lastIndex() && r.id > m.from
}

/**
 * The other half of the tie-break: a pre-candidate that grants the pre-vote of a rival
 * that outranks it stops its own PreVote round. Refusing lower-ranked rivals alone is
 * pairwise: with five controllers, three survivors that ask at once each grant the ones
 * above them, so the second-ranked still gathers a majority from itself and the third and
 * fourth, both run, and the vote splits (a whole, doubled, election timeout lost;
 * simulated with 1-100 ms latency, a new leader at p90 1,060 ms with five controllers
 * against 400 ms with three). Standing down only ends this node's own round: it still
 * grants, its election timer runs again, so if the rival cannot win, this node campaigns
 * at its next timeout (then a second round, where etcd's rule alone decides).
 */
function yieldsToRivalPreCandidate (r: Raft, m: Message): boolean {
  return m.type === 'pre-vote' && r.role === 'pre-candidate' && r.preCampaignsSinceLeader === 1 && m.transfer !== true &&
    m.term === nextInteger(r.term, 'raft term') &&
    m.logTerm === r.log.lastTerm() && m.index === r.log.lastIndex() && m.from > r.id
}

function poll (r: Raft, from: NodeId, granted: boolean): VoteResult {
  if (!r.votes.has(from)) r.votes.set(from, granted)
  return voteResult(r.configs.current().voters, r.votes)
}

export function handleVoteRequest (r: Raft, m: Message): void {
  const responseType = m.type === 'vote' ? 'vote-response' : 'pre-vote-response'
  const canVote = r.vote === m.from ||
    (r.vote === '' && r.lead === '') ||
    (m.type === 'pre-vote' && m.term > r.term)
  if (canVote && outranksRivalPreCandidate(r, m)) {
    r.trace(`rejected ${m.type} from ${m.from} for term ${m.term}: a pre-candidate with the same log, and ${r.id} ranks first`)
    r.send({ type: responseType, to: m.from, reject: true })
    // The rival is campaigning, so it no longer keeps a leader's lease: ask it again for
    // its pre-vote, which it grants (it may have ignored the first ask while in lease).
    askVote(r, 'pre-vote', m.from, nextInteger(r.term, 'raft term'), false)
    return
  }
  if (canVote && r.log.isUpToDate(m.index!, m.logTerm!)) {
    r.trace(`granted ${m.type} to ${m.from} for term ${m.term}`)
    // The grant leaves in the same Ready as the hard state recording the vote, and the
    // host persists that before sending: a vote is never forgotten after it is cast.
    r.send({ type: responseType, to: m.from, term: m.term })
    if (m.type === 'vote') {
      r.electionElapsed = 0
      r.vote = m.from
    }
    // Someone is already asking: a campaign of our own, due because our leader's
    // connection closed, would only race it. Our election timer still runs, so if the
    // asker cannot win, we campaign at our timeout.
    if (m.type === 'pre-vote') r.closeCampaignPending = false
    if (yieldsToRivalPreCandidate(r, m)) {
      r.trace(`stood down for ${m.from}: a pre-candidate with the same log that ranks first`)
      r.becomeFollower(r.term, '')
    }
    return
  }
  const why = canVote ? `its log ${m.index!}@${m.logTerm!} is behind ours ${r.log.lastIndex()}@${r.log.lastTerm()}`
    : `already ${r.vote === '' ? `following ${r.lead}` : `voted for ${r.vote}`} in term ${r.term}`
  r.trace(`rejected ${m.type} from ${m.from} for term ${m.term}: ${why}`)
  r.send({ type: responseType, to: m.from, reject: true })
}

/** Bring our term in line with the message's; false when the message must go no further. */
export function stepTerm (r: Raft, m: Message): boolean {
  if (m.term === 0) return true
  if (m.term > r.term) return stepHigherTerm(r, m)
  if (m.term < r.term) {
    stepLowerTerm(r, m)
    return false
  }
  return true
}

function stepHigherTerm (r: Raft, m: Message): boolean {
  if (m.type === 'vote' || m.type === 'pre-vote') {
    // Leader lease: while we have heard from a leader within the minimum election
    // timeout, nobody needs a new one. Ignoring such requests entirely (not even
    // adopting their term) is what keeps a removed or partitioned server from
    // deposing a healthy leader when it comes back with a higher term.
    const inLease = r.settings.checkQuorum && r.lead !== '' && r.electionElapsed < r.settings.electionTicks
    if (inLease && m.transfer !== true) {
      r.trace(`ignored ${m.type} from ${m.from} for term ${m.term}: leader ${r.lead} is live at term ${r.term}`)
      return false
    }
  }
  // A pre-vote is for a term the sender has not entered, and a granted pre-vote
  // response echoes it back: neither moves anyone's term.
  if (m.type === 'pre-vote' || (m.type === 'pre-vote-response' && m.reject !== true)) return true
  const fromLeader = m.type === 'append' || m.type === 'heartbeat' || m.type === 'snapshot'
  r.trace(`saw term ${m.term} in ${m.type} from ${m.from}, ahead of term ${r.term}`)
  r.becomeFollower(m.term, fromLeader ? m.from : '')
  return true
}

function stepLowerTerm (r: Raft, m: Message): void {
  if ((r.settings.checkQuorum || r.settings.preVote) && (m.type === 'append' || m.type === 'heartbeat')) {
    // A leader of an older term may be cut off from a majority that moved on. With
    // leases or PreVote nobody adopts its votes' terms, so tell it the newer term
    // directly or it could lead a minority forever.
    // Sent as a rejection that no leader can mistake for progress.
    r.send({ type: 'append-response', to: m.from, index: 0, reject: true, rejectHint: 0 })
  } else if (m.type === 'pre-vote') {
    r.send({ type: 'pre-vote-response', to: m.from, reject: true })
  }
}

export function handleVoteResponse (r: Raft, m: Message): void {
  const result = poll(r, m.from, m.reject !== true)
  if (result === 'won') {
    if (r.role === 'pre-candidate') campaign(r, 'vote', false)
    else r.becomeLeader()
  } else if (result === 'lost') {
    r.trace(`lost the ${r.role === 'pre-candidate' ? 'pre-vote' : 'election'} at term ${r.term}`)
    r.becomeFollower(r.term, '')
  }
}
