import { CantripError } from '../errors.ts'
import type { ConfigChange, NodeId } from './raft-types.ts'

/** What a RaftHost's proposals, reads and membership changes fail with; callers check `err.name`. */

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

/** A linearizable read could not get a read point (no leader, or no answer in time); retry it. */
export class ReadFailedError extends CantripError {
  override name = 'ReadFailedError'
  constructor (id: NodeId, why: string) {
    super(`raft host "${id}": cannot read: ${why}`)
  }
}

/** A membership change was refused by the core (another is pending, invalid, not leader). */
export class MembershipChangeRefusedError extends CantripError {
  override name = 'MembershipChangeRefusedError'
  constructor (id: NodeId, change: ConfigChange, why: string) {
    super(`raft host "${id}": cannot ${change.type} "${change.node}": ${why}`)
  }
}

export class HostStoppedError extends CantripError {
  override name = 'HostStoppedError'
  constructor (id: NodeId) {
    super(`raft host "${id}": stopped`)
  }
}
