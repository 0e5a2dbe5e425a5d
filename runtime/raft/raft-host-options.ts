import type { Deferral } from '../deferral.ts'
import type { Clock } from '../clock.ts'
import type { Random } from '../random.ts'
import type { Storage } from '../storage.ts'
import type { Transport } from '../transport.ts'
import type { CommitRule } from './commit-rule.ts'
import type { Entry, Message, NodeId, RaftRole } from './raft-types.ts'
import type { ReplicatedStateMachine } from './replicated-state-machine.ts'

/** What a RaftHost (raft-host.ts) is given: its node, its state machine and its edges. */
export interface RaftHostOptions<Command, Result, State> {
  id: NodeId
  /**
   * What is replicated: the host restores it from its newest RaftSnapshot at start and
   * applies every committed entry to it. One instance per host; it must start empty.
   */
  stateMachine: ReplicatedStateMachine<Command, Result, State>
  /** Every founding voter, this node included; used to bootstrap an empty store. */
  peers: readonly NodeId[]
  /**
   * A server added to a running group: an empty store is not bootstrapped, and the node
   * learns the membership from the leader's RaftSnapshot once it is added as a voter.
   */
  join?: boolean
  /** Applied entries between two RaftSnapshots (log compaction); default limits.raftSnapshotEveryEntries. */
  snapshotEveryEntries?: number
  /** How long `read` waits for its read point; default 5 election timeouts. */
  readTimeoutMs?: number
  /** Called when the role or the known leader changes (as acted on, after persisting). */
  onRoleChange?: (change: RoleChange) => void
  storage: Storage
  transport: Transport
  clock: Clock
  /** Election jitter. */
  random: Random
  tickMs: number
  electionTicks: number
  heartbeatTicks: number
  /** How long `propose` waits for its entry to apply; default 20 election timeouts. */
  proposeTimeoutMs?: number
  /** Timeout of each message send; default sendTimeoutElectionTimeouts election timeouts. */
  sendTimeoutMs?: number
  /** Called after each committed entry is applied (or skipped), in log order. */
  onApplied?: (entry: Entry, result: Result | undefined) => void
  trace?: (line: string) => void
  /** Bytes of entries per append message (RaftOptions.maxSizePerMessage); default limits.raftMaxSizePerMessageBytes. */
  maxSizePerMessage?: number
  /** Which quorum-held entries a leader may commit (RaftOptions.commitRule); default raftCommitRule. */
  commitRule?: CommitRule
  /**
   * Each batch of messages to one peer, as it is handed to the transport: the simulator's
   * safety checker reads them here rather than decoding the bytes again.
   */
  onSend?: (to: NodeId, messages: readonly Message[]) => void
  /**
   * Each step of the write path as it happens here, for timing one write end to end across
   * processes (agent/write-stage-trace.ts, bench/write-stages.ts); `detail` is a count or
   * an index as RaftHostStage says. Unset, it costs one comparison per step.
   */
  onStage?: (stage: RaftHostStage, detail: number) => void
  /**
   * The longest a leader may hold a commit-only append while writes stream in, for the
   * next message to that peer to carry (commit-hold.ts); default 0, never.
   */
  commitHoldMs?: number
  /** Runs a follower's apply after its acknowledgement has gone (apply-timing.ts); default: in the Ready. */
  deferApply?: Deferral
  /** Starts a leader's synced write after the appends it sent first have reached their sockets (leader-write-timing.ts); default: at once. */
  deferLeaderWrite?: Deferral
}

/**
 * The steps `onStage` reports, with what `detail` is: `propose` (0), `ready` (entries to
 * persist), `synced` (entries made durable), `received-request` / `received-answer` (the
 * peer's bytes), `sent-request` / `sent-answer` (messages sent), `applied` (the index whose
 * proposer is answered).
 */
export type RaftHostStage = 'propose' | 'ready' | 'synced' | 'received-request' | 'received-answer' | 'sent-request' | 'sent-answer' | 'applied'

export interface RoleChange {
  role: RaftRole
  leader: NodeId | ''
  term: number
}

