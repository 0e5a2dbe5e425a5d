import { onAppended } from './raft-membership.ts'
import type { Raft } from './raft.ts'
import type { Message, RaftSnapshot } from './raft-types.ts'

/**
 * A follower (or a candidate that has just seen the term's leader) taking what the leader
 * sends: appends, heartbeats carrying the commit index, and RaftSnapshots.
 */

export function handleFromLeader (r: Raft, m: Message): void {
  if (m.type === 'append') handleAppend(r, m)
  else if (m.type === 'heartbeat') handleHeartbeat(r, m)
  else handleSnapshot(r, m)
}

function handleAppend (r: Raft, m: Message): void {
  const prevIndex = m.index!
  const entries = m.entries!
  if (prevIndex < r.log.committed) {
    // Old news: tell the leader how far we are committed so it skips ahead.
    r.send({ type: 'append-response', to: m.from, index: r.log.committed })
    return
  }
  const outcome = r.log.maybeAppend(prevIndex, m.logTerm!, m.commit!, entries)
  if (outcome.kind === 'contradicts-committed') {
    r.invalid(`dropped append from ${m.from}: entry ${outcome.index} contradicts our committed log (commit ${r.log.committed})`)
    return
  }
  if (outcome.kind === 'appended') {
    onAppended(r, outcome.appended)
    // Acknowledged in the Ready that persists these entries, so never before they are durable.
    r.send({ type: 'append-response', to: m.from, index: outcome.lastNewIndex })
    return
  }
  const hint = r.log.findConflictByTerm(Math.min(prevIndex, r.log.lastIndex()), m.logTerm!)
  r.trace(`rejected append from ${m.from} after ${prevIndex}@${m.logTerm!}: our log has ${describeTermAt(r, prevIndex)} there`)
  r.send({
    type: 'append-response', to: m.from, index: prevIndex, reject: true, rejectHint: hint.index, rejectHintTerm: hint.term
  })
}

function handleHeartbeat (r: Raft, m: Message): void {
  // A leader never sends a commit beyond what this follower acknowledged holding.
  if (m.commit! > r.log.lastIndex()) {
    r.invalid(`dropped heartbeat from ${m.from}: commit ${m.commit!} is beyond our last index ${r.log.lastIndex()}; was our log lost?`)
    return
  }
  r.log.commitTo(m.commit!)
  r.send({ type: 'heartbeat-response', to: m.from, ...(m.context === undefined ? {} : { context: m.context }) })
}

function handleSnapshot (r: Raft, m: Message): void {
  const snapshot = m.snapshot!
  if (restore(r, snapshot)) {
    r.trace(`restored RaftSnapshot ${snapshot.metadata.index}@${snapshot.metadata.term} from ${m.from}`)
    r.send({ type: 'append-response', to: m.from, index: r.log.lastIndex() })
  } else {
    r.send({ type: 'append-response', to: m.from, index: r.log.committed })
  }
}

function restore (r: Raft, snapshot: RaftSnapshot): boolean {
  const { index, term, config } = snapshot.metadata
  if (index <= r.log.committed) return false
  if (r.log.matchTerm(index, term)) {
    // We hold the entry the snapshot ends with, so everything before it matches too:
    // just commit up to it rather than throw the log away.
    r.log.commitTo(index)
    return false
  }
  r.log.restore(snapshot)
  r.configs.reset(index, config)
  return true
}

function describeTermAt (r: Raft, index: number): string {
  const term = r.log.term(index)
  return term === undefined ? `nothing at ${index}` : `${index}@${term}`
}
