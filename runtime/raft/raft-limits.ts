/**
 * The Raft group's named maximums (runtime/raft/): how much it batches, pipelines, holds
 * and snapshots. Part of `limits` (runtime/limits.ts), where code reads them; kept here
 * so the catalogue of every other queue stays one readable file.
 */
export const raftLimits = {
  /** Raft: bytes of entries in one append message (one entry is always sent); leaves room under transportMessageBytesMax. */
  raftMaxSizePerMessageBytes: 512 * 1024,
  /** Raft: append messages a leader keeps in flight to one follower while streaming (the pipelining window). */
  raftMaxInflightMessages: 256,
  /** Raft: payload bytes a leader accepts into its log uncommitted before refusing proposals. */
  raftMaxUncommittedEntriesBytes: 16 * 1024 * 1024,
  /**
   * Raft: proposals a leader's host holds while it handles a Ready (group commit,
   * runtime/raft/proposal-queue.ts); past it a proposal is refused as too much uncommitted.
   */
  raftProposalsQueuedMax: 8192,
  /**
   * Raft: groups of queued proposals a leader's host has appended and not yet applied
   * (runtime/raft/raft-host.ts, #appendQueued); while this many are on their way, new
   * proposals wait in the queue and go together once it applied. Deeper, as etcd
   * pipelines, a group goes at every Ready and the groups shrink: the simulator's 100
   * agents took 5.0 Raft entries each at 1, 8.6 at 2 and 14.3 at 4 (bench/sim-scale.ts),
   * while the write benches' clients (one write in flight each) arrive together and fill
   * one group per commit round at any depth (issue 28).
   */
  raftProposalGroupsInFlightMax: 1,
  /** Raft: committed entries handed to the host in one Ready. */
  raftEntriesPerReadyMax: 1024,
  /** Raft: bytes of committed entries in one Ready (one entry is always handed out). */
  raftCommittedBytesPerReadyMax: 16 * 1024 * 1024,
  /** Raft: ReadIndex requests a leader holds while confirming its leadership, and ReadStates queued per Ready. */
  raftPendingReadIndexMax: 4096,
  /**
   * Raft: the longest a host holds a peer's request to carry its own messages back on the
   * answer, as a share of the send timeout; past it they go as a request of their own, as
   * the peer has likely stopped waiting (runtime/raft/held-answers.ts).
   */
  raftAnswerHoldShareOfSendTimeoutMax: 0.5,
  /**
   * Raft: a peer's requests a host holds at once to carry its messages back on their
   * answers (runtime/raft/held-answers.ts); an older one past this is answered empty.
   */
  raftHeldAnswersPerPeerMax: 8,
  /**
   * Raft: the longest a leader holds a commit-only append while writes stream in, so the
   * next message to that follower carries it (runtime/raft/commit-hold.ts; it holds for
   * the time between the last two writes, up to this). What the controllers run with;
   * the host's default is 0, never.
   */
  raftCommitHoldMsMax: 20,
  /** Raft: writes count as streaming (commits held) while groups of proposals come at most this far apart. */
  raftCommitHoldStreamGapMsMax: 25,
  /** Raft: commit-only appends held for one peer at once; one more sends them all. */
  raftCommitHoldMessagesPerPeerMax: 8,
  /** Raft: outgoing messages queued between two Readies; more are dropped (Raft tolerates loss) and counted. */
  raftMessagesPerReadyMax: 100_000,
  /**
   * Raft: how many times in a row an election that found no leader doubles the next
   * randomised election timeout (runtime/raft/raft.ts); 3 is 8x, 4.8-9.6 s at the agents'
   * 600 ms, enough for the round trips of a 2-core machine at load 35.
   */
  raftElectionBackoffDoublingsMax: 3,
  /**
   * Raft: applied entries between two RaftSnapshots. Each compaction rewrites the whole
   * model, so this trades snapshot cost against log length (and replay time on restart).
   */
  raftSnapshotEveryEntries: 10_000,
  /**
   * Raft: bytes of RaftSnapshot data in one chunk, on the wire (one InstallSnapshot
   * request, as the Raft paper's and etcd's snapshot senders stream it) and on disk (one
   * stored value). Leaves room under transportMessageBytesMax for the message around it.
   */
  raftSnapshotChunkBytes: 512 * 1024,
  /**
   * Raft: largest RaftSnapshot a host takes, stores or accepts from a leader. A receiver
   * holds one in memory while its chunks arrive; 10,000 machines with 5 units each make a
   * model of about 100 MB.
   */
  raftSnapshotBytesMax: 1024 * 1024 * 1024,
  /**
   * Raft: a RaftSnapshot larger than one chunk is taken only once the entries applied
   * since the last one hold at least this many bytes per byte of it (Raft dissertation
   * §5.1.1: snapshot when the log has outgrown the snapshot). A fixed entry count alone
   * rewrote a 5,000-unit model every 10,000 status changes, so compaction grew with the
   * square of the model; this way each log byte pays for a bounded share of one rewrite.
   */
  raftCompactLogToSnapshotRatio: 1,
  /** Raft: RaftSnapshots a host assembles from chunks at once (one per sending leader); a new one drops the oldest. */
  raftSnapshotAssembliesMax: 2,
  /** Raft: committed entries a follower holds for its apply after its acknowledgement (apply-timing.ts); more apply at once. */
  raftDeferredApplyEntriesMax: 4096
} as const
