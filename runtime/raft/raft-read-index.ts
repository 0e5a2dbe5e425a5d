import { limits } from '../limits.ts'
import { hasQuorum } from './quorum.ts'
import type { Raft } from './raft.ts'
import type { ReadIndexResult } from './raft-results.ts'
import type { NodeId } from './raft-types.ts'

/**
 * A leader answering ReadIndex (Raft dissertation §6.4, etcd's ReadOnlySafe): the read
 * point is the commit index once a heartbeat round confirms the leader still leads, and
 * requests that arrive before its first commit of the term wait for it.
 */

export function leaderReadIndex (r: Raft, from: NodeId, context: Uint8Array): ReadIndexResult {
  const pendingMax = limits.raftPendingReadIndexMax
  if (r.earlyReads.length + r.readOnly.size >= pendingMax) return { status: 'too-many-pending', pendingMax }
  const voters = r.configs.current().voters
  if (voters.length === 1 && voters[0] === r.id) {
    answerRead(r, from, r.log.committed, context)
    return { status: 'accepted' }
  }
  // Until an entry of this term commits, our commit index may lag entries an earlier
  // leader committed: reading at it could miss acknowledged writes.
  if (!r.committedEntryInCurrentTerm()) {
    r.earlyReads.push({ from, context })
    return { status: 'accepted' }
  }
  const result = queueRead(r, from, context)
  if (result.status === 'accepted') r.bcastHeartbeat(context)
  return result
}

function queueRead (r: Raft, from: NodeId, context: Uint8Array): ReadIndexResult {
  const added = r.readOnly.add(r.log.committed, from, context)
  if (added === 'duplicate') return { status: 'duplicate' }
  if (added === 'full') return { status: 'too-many-pending', pendingMax: limits.raftPendingReadIndexMax }
  r.readOnly.recordAck(r.id, context)
  return { status: 'accepted' }
}

export function releaseEarlyReads (r: Raft): void {
  if (r.earlyReads.length === 0 || !r.committedEntryInCurrentTerm()) return
  const reads = r.earlyReads
  r.earlyReads = []
  for (const read of reads) queueRead(r, read.from, read.context)
  r.bcastHeartbeat(r.readOnly.lastContext())
}

/** A heartbeat carrying `context` was answered: once a majority has, we were still leader when it left. */
export function confirmReads (r: Raft, from: NodeId, context: Uint8Array): void {
  const acks = r.readOnly.recordAck(from, context)
  if (acks === undefined || !hasQuorum(r.configs.current().voters, id => acks.has(id))) return
  for (const request of r.readOnly.release(context)) answerRead(r, request.from, request.index, request.context)
}

function answerRead (r: Raft, to: NodeId, index: number, context: Uint8Array): void {
  if (to === r.id) r.pushReadState({ index, context })
  else r.send({ type: 'read-index-response', to, index, context })
}
