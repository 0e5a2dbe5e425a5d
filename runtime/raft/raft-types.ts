/**
 * The data of the Raft core (runtime/raft/raw-node.ts), shaped after etcd's raft package:
 * the host feeds messages and ticks in, takes a `Ready` out (what to persist, send and
 * apply), does it in that order, and calls `advance()`. Everything here is plain data so
 * it can be persisted with the codec and sent over the `Transport`.
 */
export type NodeId = string

export type EntryType = 'normal' | 'config-change'

export interface Entry {
  term: number
  index: number
  type: EntryType
  /** For `normal`: the application command, encoded (opaque to Raft); empty for the leader's no-op. */
  data: Uint8Array
  /** For `config-change`: the change it carries. */
  configChange?: ConfigChange
}

/** One server at a time (Raft dissertation §4.1): add or remove a voter. */
export type ConfigChange =
  | { type: 'add-voter', node: NodeId }
  | { type: 'remove-voter', node: NodeId }

export interface HardState {
  term: number
  /** Whom this node voted for in `term`; '' for nobody. */
  vote: NodeId
  commit: number
}

/** The membership a log prefix establishes. */
export interface ClusterConfig {
  voters: NodeId[]
}

export interface RaftSnapshotMetadata {
  index: number
  term: number
  config: ClusterConfig
}

/** A RaftSnapshot: the applied state machine at `metadata.index`, for log compaction and catch-up. */
export interface RaftSnapshot {
  metadata: RaftSnapshotMetadata
  data: Uint8Array
}

export type MessageType =
  | 'pre-vote' | 'pre-vote-response'
  | 'vote' | 'vote-response'
  | 'append' | 'append-response'
  | 'heartbeat' | 'heartbeat-response'
  | 'snapshot'
  | 'timeout-now'
  | 'read-index' | 'read-index-response'
  /** A follower forwards a client proposal to the leader. */
  | 'propose'

export interface Message {
  type: MessageType
  from: NodeId
  to: NodeId
  term: number
  /** append: index of the entry before `entries`; vote: candidate's last log index. */
  index?: number
  /** append: term of the entry at `index`; vote: candidate's last log term. */
  logTerm?: number
  entries?: Entry[]
  /** append/heartbeat: leader's commit index. */
  commit?: number
  /** responses: false when refused (vote not granted, append mismatch). */
  reject?: boolean
  /** append-response when rejecting: a hint for fast back-off (the follower's last index / conflict). */
  rejectHint?: number
  /** append-response when rejecting: the term at rejectHint, for term-based back-off. */
  rejectHintTerm?: number
  snapshot?: RaftSnapshot
  /** read-index: a request context echoed back; heartbeat: the read-index round it confirms. */
  context?: Uint8Array
  /**
   * vote/pre-vote: the election was started by a leadership transfer (timeout-now), so
   * receivers grant it even while they still believe in a live leader (leader lease).
   */
  transfer?: boolean
}

export interface ReadState {
  /** The commit index a linearizable read must wait for before reading. */
  index: number
  context: Uint8Array
}

export type RaftRole = 'follower' | 'pre-candidate' | 'candidate' | 'leader'

export interface SoftState {
  leader: NodeId | ''
  role: RaftRole
}

/** What the host must do, in order: persist (entries, hard state, snapshot; sync if mustSync), send, apply. */
export interface Ready {
  softState?: SoftState
  hardState?: HardState
  /** New or overwritten log entries to persist before sending messages. */
  entries: Entry[]
  /** A RaftSnapshot to persist and restore the state machine from (received from the leader). */
  snapshot?: RaftSnapshot
  /** Committed entries to apply to the state machine, in order. */
  committedEntries: Entry[]
  messages: Message[]
  readStates: ReadState[]
  /** The host must fsync what it persists for this Ready before sending. */
  mustSync: boolean
}
