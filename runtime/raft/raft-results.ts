import type { NodeId } from './raft-types.ts'

/**
 * What became of a request to the Raft core. Refusals are results, not exceptions: they
 * are the normal life of a cluster (no leader yet, a change already under way), and the
 * caller decides whether to retry, forward or give up.
 */
export type ProposeResult =
  /** Appended to the leader's log at `index` in `term`; committed only once a Ready says so. */
  | { status: 'accepted', index: number, term: number }
  /** Only the leader appends; `leader` is whom to ask instead ('' if unknown). */
  | { status: 'not-leader', leader: NodeId | '' }
  /** Too many proposed bytes are waiting to commit; retry once some commit. */
  | { status: 'too-much-uncommitted' }
  /** One entry must fit in one append message. */
  | { status: 'too-large', bytesMax: number }
  /** A leadership transfer is under way; proposals wait for the new leader. */
  | { status: 'transferring-leadership', to: NodeId }

export type ConfigChangeResult =
  | ProposeResult
  /** The change makes no sense against the current membership. */
  | { status: 'invalid', reason: string }
  /**
   * The leader has not yet committed an entry of its own term. Until it has, an
   * uncommitted configuration from an earlier leader may still be in play, and one-at-a-
   * time changes are only safe against a committed configuration (Ongaro, raft-dev 2015).
   */
  | { status: 'leader-not-ready' }
  /** Another change, appended at `index`, is not committed yet: one at a time. */
  | { status: 'change-pending', index: number }

export type ReadIndexResult =
  /** The leader is confirming its leadership; a ReadState with this context follows in a Ready. */
  | { status: 'accepted' }
  /** Sent to the leader; a ReadState follows if it answers. The host must time out the read. */
  | { status: 'forwarded', leader: NodeId }
  | { status: 'no-leader' }
  /** A request with the same context is already pending. */
  | { status: 'duplicate' }
  | { status: 'too-many-pending', pendingMax: number }
  | { status: 'invalid', reason: string }

export type TransferResult =
  | { status: 'accepted', to: NodeId }
  | { status: 'not-leader', leader: NodeId | '' }
  | { status: 'invalid', reason: string }
