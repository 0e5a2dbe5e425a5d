import { assert } from '../assert.ts'
import { limits } from '../limits.ts'
import type { Random } from '../random.ts'
import { raftCommitRule, type CommitRule } from './commit-rule.ts'
import type { RaftStorage } from './raft-storage.ts'
import type { NodeId } from './raft-types.ts'

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

/** The tunables of one Raft core, defaults filled in: what its concerns read. */
export interface RaftSettings {
  readonly electionTicks: number
  readonly heartbeatTicks: number
  readonly preVote: boolean
  readonly checkQuorum: boolean
  readonly maxSizePerMessage: number
  readonly maxInflight: number
  readonly maxUncommittedBytes: number
  readonly snapshotTimeoutTicks: number
  readonly commitRule: CommitRule
}

/** Checks `options` and fills in the defaults. */
export function raftSettings (options: RaftOptions): RaftSettings {
  validateOptions(options)
  return {
    electionTicks: options.electionTicks,
    heartbeatTicks: options.heartbeatTicks,
    preVote: options.preVote ?? true,
    checkQuorum: options.checkQuorum ?? true,
    maxSizePerMessage: options.maxSizePerMessage ?? limits.raftMaxSizePerMessageBytes,
    maxInflight: options.maxInflight ?? limits.raftMaxInflightMessages,
    maxUncommittedBytes: options.maxUncommittedEntriesBytes ?? limits.raftMaxUncommittedEntriesBytes,
    snapshotTimeoutTicks: options.snapshotTimeoutTicks ?? 10 * options.electionTicks,
    commitRule: options.commitRule ?? raftCommitRule
  }
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
