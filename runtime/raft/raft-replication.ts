import { assert } from '../assert.ts'
import { payloadBytes } from './entry-size.ts'
import { nextInteger } from './next-integer.ts'
import type { Progress } from './progress.ts'
import { quorumMatchIndex } from './quorum.ts'
import { forgetRemovedServers, maybeStepDownAfterRemoval, onAppended, syncProgressWithConfig } from './raft-membership.ts'
import { confirmReads, releaseEarlyReads } from './raft-read-index.ts'
import type { ProposeResult } from './raft-results.ts'
import type { Raft } from './raft.ts'
import type { ConfigChange, Entry, Message, NodeId } from './raft-types.ts'

/**
 * A leader replicating its log: taking proposals (its own and forwarded ones), sending
 * each follower appends or a RaftSnapshot from its progress, handling their answers with
 * fast back-off and pipelining, and committing what a quorum holds under the commit rule.
 */

export function appendProposal (r: Raft, type: Entry['type'], data: Uint8Array, change: ConfigChange | undefined): ProposeResult {
  const index = nextInteger(r.log.lastIndex(), 'raft index')
  const entry: Entry = change === undefined ? { term: r.term, index, type, data } : { term: r.term, index, type, data, configChange: change }
  if (!appendEntries(r, [entry])) return { status: 'too-much-uncommitted' }
  if (!maybeCommitAndBroadcast(r)) bcastAppend(r)
  return { status: 'accepted', index, term: entry.term }
}

export function proposalRefusal (r: Raft): ProposeResult | undefined {
  if (r.role !== 'leader') return { status: 'not-leader', leader: r.lead }
  if (r.leadTransferee !== '') return { status: 'transferring-leadership', to: r.leadTransferee }
  return undefined
}

export function handleForwardedProposal (r: Raft, m: Message): void {
  const refusal = proposalRefusal(r)
  const entries = m.entries!
  if (refusal !== undefined || entries.length === 0) return
  if (entries.some(e => e.type !== 'normal' || e.data.byteLength > r.settings.maxSizePerMessage)) {
    r.trace(`dropped a proposal from ${m.from}: only normal entries of at most ${r.settings.maxSizePerMessage} bytes may be forwarded`)
    return
  }
  let index = r.log.lastIndex()
  const stamped = entries.map((e): Entry => ({ term: r.term, index: index = nextInteger(index, 'raft index'), type: 'normal', data: e.data }))
  if (!appendEntries(r, stamped)) return
  if (!maybeCommitAndBroadcast(r)) bcastAppend(r)
}

/** Append our own entries (already stamped with this term and the next indexes). */
export function appendEntries (r: Raft, entries: Entry[]): boolean {
  const bytes = payloadBytes(entries)
  // An empty or first entry is always accepted, so a leader can make progress.
  if (r.uncommittedBytes > 0 && bytes > 0 && r.uncommittedBytes + bytes > r.settings.maxUncommittedBytes) {
    r.trace(`refused a proposal of ${bytes} bytes: ${r.uncommittedBytes} uncommitted bytes already`)
    return false
  }
  r.uncommittedBytes += bytes
  r.log.append(entries)
  if (onAppended(r, entries)) syncProgressWithConfig(r)
  r.progress.get(r.id)?.maybeUpdate(r.log.lastIndex())
  return true
}

/** Replicate to every server with progress: the voters, and any removed one still to hear of it. */
export function bcastAppend (r: Raft): void {
  for (const id of r.progress.keys()) if (id !== r.id) sendAppend(r, id, true)
}

/**
 * Send `to` the entries from its next index, or a RaftSnapshot if they were
 * compacted. `sendIfEmpty` also sends an append with no entries (to carry the commit
 * index or probe). Returns whether anything was sent.
 */
export function sendAppend (r: Raft, to: NodeId, sendIfEmpty: boolean): boolean {
  const pr = r.progress.get(to)
  if (pr === undefined || pr.isPaused()) return false
  const prevIndex = pr.next - 1
  const prevTerm = r.log.term(prevIndex)
  const entries = r.log.entriesFrom(pr.next, r.settings.maxSizePerMessage)
  if (prevTerm === undefined || entries === undefined) return sendSnapshot(r, to, pr)
  if (entries.length === 0 && !sendIfEmpty) return false
  r.send({ type: 'append', to, index: prevIndex, logTerm: prevTerm, entries, commit: r.log.committed })
  pr.sentAppend(entries.length > 0 ? entries[entries.length - 1]!.index : undefined)
  return true
}

function sendSnapshot (r: Raft, to: NodeId, pr: Progress): boolean {
  // A follower that has not answered lately may be down: do not ship it a RaftSnapshot yet.
  if (!pr.recentActive) return false
  const snapshot = r.log.snapshot()
  assert(snapshot.metadata.index >= r.log.firstIndex() - 1,
    `raft node "${r.id}": the latest RaftSnapshot (${snapshot.metadata.index}) is older than the log's start (${r.log.firstIndex()}); create one before compacting`)
  r.trace(`sending RaftSnapshot ${snapshot.metadata.index}@${snapshot.metadata.term} to ${to}: it needs ${pr.next}, our log starts at ${r.log.firstIndex()}`)
  pr.becomeSnapshot(snapshot.metadata.index)
  r.send({ type: 'snapshot', to, snapshot })
  return true
}

export function handleAppendResponse (r: Raft, m: Message): void {
  const pr = r.progress.get(m.from)
  if (pr === undefined) return
  if (m.index! > r.log.lastIndex()) {
    r.invalid(`dropped append-response from ${m.from}: index ${m.index!} is beyond our last index ${r.log.lastIndex()}`)
    return
  }
  pr.recentActive = true
  if (m.reject === true) {
    handleAppendRejection(r, m, pr)
    return
  }
  const wasPaused = pr.isPaused()
  if (!pr.maybeUpdate(m.index!) && !(pr.state === 'probe' && pr.match === m.index)) return
  if (pr.state === 'probe') pr.becomeReplicate()
  else if (pr.state === 'snapshot' && (pr.match >= pr.pendingSnapshot || pr.match + 1 >= r.log.firstIndex())) {
    pr.becomeProbe()
    pr.becomeReplicate()
  } else if (pr.state === 'replicate') pr.inflights.freeTo(m.index!)

  if (maybeCommitAndBroadcast(r)) {
    if (r.role !== 'leader') return
  } else if (wasPaused) {
    sendAppend(r, m.from, true)
  }
  // Pipelining: keep the window full while there is more to send.
  for (let sent = 0; sent <= r.settings.maxInflight && sendAppend(r, m.from, false); sent++);
  if (m.from === r.leadTransferee && pr.match === r.log.lastIndex()) {
    r.trace(`${m.from} has caught up: asking it to campaign`)
    r.send({ type: 'timeout-now', to: m.from })
  }
}

/** Fast back-off: jump straight past the follower's conflicting term instead of one entry per round trip. */
function handleAppendRejection (r: Raft, m: Message, pr: Progress): void {
  let hint = m.rejectHint ?? 0
  if ((m.rejectHintTerm ?? 0) > 0) hint = r.log.findConflictByTerm(Math.min(hint, r.log.lastIndex()), m.rejectHintTerm!).index
  if (!pr.maybeDecreaseTo(m.index!, hint)) return
  if (pr.state === 'replicate') pr.becomeProbe()
  sendAppend(r, m.from, true)
}

export function handleHeartbeatResponse (r: Raft, m: Message): void {
  const pr = r.progress.get(m.from)
  if (pr === undefined) return
  pr.recentActive = true
  pr.probeSent = false
  // The follower is alive; if acks were lost and the window filled, make room to resend.
  if (pr.state === 'replicate' && pr.inflights.full()) pr.inflights.freeFirst()
  if (pr.match < r.log.lastIndex()) sendAppend(r, m.from, true)
  if (m.context !== undefined && m.context.byteLength > 0) confirmReads(r, m.from, m.context)
}

/** Commit whatever a majority holds; on success spread the news. True if the commit index moved. */
export function maybeCommitAndBroadcast (r: Raft): boolean {
  const index = quorumMatchIndex(r.configs.current().voters, id => r.progress.get(id)?.match ?? 0)
  if (index <= r.log.committed || !r.log.maybeCommit(index, r.settings.commitRule.requiredTerm(index, r.term, r.log))) return false
  r.configs.commitTo(r.log.committed)
  releaseEarlyReads(r)
  bcastAppend(r)
  forgetRemovedServers(r)
  maybeStepDownAfterRemoval(r)
  return true
}
