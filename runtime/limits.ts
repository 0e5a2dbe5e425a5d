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
  simStorageUnsyncedOperationsMax: 1_000_000
} as const

export type Limits = typeof limits
