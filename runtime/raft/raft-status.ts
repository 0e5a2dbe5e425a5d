import type { ProgressState } from './progress.ts'
import type { ClusterConfig, NodeId, RaftRole } from './raft-types.ts'

/** A leader's view of one voter's replication. */
export interface ProgressStatus {
  match: number
  next: number
  state: ProgressState
  recentActive: boolean
  /** Append messages in flight (replicate state). */
  inflight: number
  /** Whether the leader is holding back appends to it. */
  paused: boolean
  /** In snapshot state: the index of the RaftSnapshot sent. */
  pendingSnapshot: number
}

/**
 * What a caller asking many times a step needs (the simulator's checkers), without the
 * per-peer progress, configuration and counters `status()` copies each time; as etcd's
 * BasicStatus.
 */
export interface RaftBasicStatus {
  term: number
  commit: number
  role: RaftStatus['role']
}

export interface RaftStatus {
  id: NodeId
  term: number
  vote: NodeId | ''
  commit: number
  applied: number
  firstIndex: number
  lastIndex: number
  role: RaftRole
  leader: NodeId | ''
  /** The membership of the latest config entry in the log, committed or not. */
  config: ClusterConfig
  leadTransferee: NodeId | ''
  /** Ticks since the election timer was last reset. */
  electionElapsed: number
  /** The randomised election timeout currently in force, in ticks. */
  electionTimeoutTicks: number
  /** Per voter, on a leader; empty otherwise. */
  progress: Record<NodeId, ProgressStatus>
  /** Messages dropped because they were malformed (see message-validation.ts). */
  invalidMessages: number
  /** Outgoing messages dropped because too many were queued before the next Ready. */
  droppedMessages: number
}
