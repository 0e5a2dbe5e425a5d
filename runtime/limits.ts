/**
 * Every queue, batch, retry and buffer has a named maximum here. Code asserts these
 * and at least one test reaches each.
 */
export const limits = {
  /** Relations one unit may take part in. */
  relationsPerUnitMax: 256,
  /** Remote units in one relation as seen by one unit. */
  relationMembersMax: 4096,
  /** Storage attachments per unit. */
  storagePerUnitMax: 64,
  /** Pending actions queued for one unit; more are refused by the controller. */
  pendingActionsMax: 1024,
  /** Pending `juju exec` commands queued for one unit. */
  pendingCommandsMax: 256,
  /** Operations one unit actor may run without becoming idle, before asserting a loop. */
  operationsWithoutIdleMax: 100_000,
  /** Units waiting for the machine-wide hook lock. */
  hookLockWaitersMax: 4096,
  /** Hook retry back-off: first delay, factor and cap (Juju's retry strategy). */
  hookRetryDelayMsMin: 5_000,
  hookRetryDelayMsMax: 300_000,
  hookRetryFactor: 2,
  /** Jitter applied to the hook retry delay: ± this fraction. */
  hookRetryJitterFraction: 0.2,
  /** update-status-hook-interval default (model config). */
  updateStatusIntervalMs: 300_000,
  /** Machine provisioning retries before the machine stays in error until asked again. */
  provisioningAttemptsMax: 10,
  provisioningRetryDelayMsMin: 10_000,
  provisioningRetryDelayMsMax: 300_000,
  /** A machine agent not heard from for this long shows `down`. */
  machineAgentDownAfterMs: 60_000,
  /** Largest gossip message or request/response frame, in bytes. */
  transportMessageBytesMax: 1_048_576,
  /** Requests one peer may have outstanding at once; more are refused at once. */
  transportRequestsInFlightMax: 256,
  /** Messages queued in the simulated network at once before it asserts a flood. */
  simNetworkInFlightMax: 1_000_000,
  /** Status history entries kept per unit. */
  statusHistoryMax: 100,
  /** Largest msgpack value `decode` accepts (and `encode` produces): bounds memory per message. */
  codecInputBytesMax: 16 * 1024 * 1024,
  /** Entries one `Storage.range` call may return; larger scans page with `gt`. */
  storageRangeEntriesMax: 100_000,
  /** Operations in one `Storage.batch`. */
  storageBatchOperationsMax: 100_000,
  /** Largest `ProcessSpec.outputBytesMax` a runner accepts. */
  processOutputBytesMax: 16 * 1024 * 1024,
  /** Grace between SIGTERM and SIGKILL when a process group is killed for its timeout. */
  processKillGraceMs: 5_000,
  /** After a process exits, how long to wait for descendants still holding its output pipes. */
  processOutputDrainMs: 1_000,
  /** Bytes a stream logger lets queue in a slow stream before it drops records (and says so). */
  loggerBufferedBytesMax: 4 * 1024 * 1024,
  /** Timers one `SimClock.advance` may fire; more means a timer loop that never lets time pass. */
  simClockTimersPerAdvanceMax: 1_000_000,
  /** Unsynced writes `SimStorage` holds before it models an OS writeback making them durable. */
  simStorageUnsyncedOperationsMax: 1_000_000,
  /** Request ids the model remembers (all proposers together) so a retried command applies once: the most recent half at least. */
  modelRequestIdsMax: 20_000,
  /** Removed keys the model remembers for watchers; one older than the oldest must resync its whole view. */
  modelTombstonesMax: 20_000,
  /** Finished actions whose results the model keeps; older ones are forgotten. */
  modelFinishedActionsMax: 10_000,
  /** Units one deploy or add-unit may create. */
  modelUnitsPerCommandMax: 1_000,
  /** Bytes (keys plus values) in one relation databag, in leader settings, or in an application's config. */
  modelSettingsBytesMax: 256 * 1024,
  /** Largest `juju exec` command text or action parameter encoding queued for a unit. */
  modelTaskBytesMax: 64 * 1024,
  /**
   * Clock-drift margin of leadership leases: a holder stops believing it leads this long
   * before its lease expires, and a lease is granted to another unit only after expiry on
   * the proposing controller's clock. Safe while every agent's and controller's clock is
   * within half this margin of true time.
   */
  leadershipClockDriftMarginMs: 5_000,
  /** Lease duration a claim or extension may ask for. Juju's is one minute. */
  leadershipLeaseDurationMsMin: 10_000,
  leadershipLeaseDurationMsDefault: 60_000,
  leadershipLeaseDurationMsMax: 300_000,
  /**
   * Clock-drift margin of controller leases (the lease that lets one controller run the
   * singular workers): the holder stops running them this long before expiry on its own
   * clock, and another controller is granted the lease only after expiry on the proposing
   * controller's clock. Controllers share a network and NTP, so their clocks drift less
   * than agents' do; safe while every controller's clock is within half this of true time.
   */
  controllerLeaseClockDriftMarginMs: 1_000,
  /**
   * Duration a controller-lease claim may ask for. Short, because a crashed holder's
   * singular workers (provisioning) stall until its lease runs out; not below one second,
   * so a holder is not flooding Raft with extensions. Useful durations are well above
   * twice the drift margin, or the holder hardly believes it holds the lease at all.
   */
  controllerLeaseDurationMsMin: 1_000,
  /**
   * What a controller asks for by default: after its holder fails the singular workers
   * resume elsewhere within about 15 s, and a holder renewing every few seconds costs a
   * handful of Raft entries per lease.
   */
  controllerLeaseDurationMsDefault: 15_000,
  /** Longest controller lease: a failover never waits more than five minutes. */
  controllerLeaseDurationMsMax: 300_000,
  /** Raft: bytes of entries in one append message (one entry is always sent); leaves room under transportMessageBytesMax. */
  raftMaxSizePerMessageBytes: 512 * 1024,
  /** Raft: append messages a leader keeps in flight to one follower while streaming (the pipelining window). */
  raftMaxInflightMessages: 256,
  /** Raft: payload bytes a leader accepts into its log uncommitted before refusing proposals. */
  raftMaxUncommittedEntriesBytes: 16 * 1024 * 1024,
  /** Raft: committed entries handed to the host in one Ready. */
  raftEntriesPerReadyMax: 1024,
  /** Raft: bytes of committed entries in one Ready (one entry is always handed out). */
  raftCommittedBytesPerReadyMax: 16 * 1024 * 1024,
  /** Raft: ReadIndex requests a leader holds while confirming its leadership, and ReadStates queued per Ready. */
  raftPendingReadIndexMax: 4096,
  /** Raft: outgoing messages queued between two Readies; more are dropped (Raft tolerates loss) and counted. */
  raftMessagesPerReadyMax: 100_000,
  /**
   * Raft: applied entries between two RaftSnapshots. Each compaction rewrites the whole
   * model, so this trades snapshot cost against log length (and replay time on restart).
   */
  raftSnapshotEveryEntries: 10_000,
  /**
   * Controller API: tries of one command (or read) through the leader, each waiting up
   * to a propose timeout; between tries one election timeout passes for a leader to
   * emerge. A retry reuses the request id, so the command still applies at most once.
   */
  controllerSubmitAttemptsMax: 8,
  /** Addresses the model keeps for one machine. */
  machineAddressesMax: 64
} as const

export type Limits = typeof limits
