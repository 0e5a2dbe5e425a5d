import { raftLimits } from './raft/raft-limits.ts'

/**
 * Every queue, batch, retry and buffer has a named maximum here. Code asserts these
 * and at least one test reaches each.
 */
export const limits = {
  /** Secrets one model keeps (charm and user secrets together); more are refused. */
  modelSecretsMax: 10_000,
  /** Revisions one secret keeps: older ones go when a new one is added beyond it. */
  secretRevisionsMax: 64,
  /** Grants on one secret. */
  secretGrantsMax: 256,
  /** Consumer units tracked on one secret. */
  secretConsumersMax: 4096,
  /** A secret revision's content, keys and values together, before sealing (Juju caps a secret at 8 KiB). */
  secretContentBytesMax: 8 * 1024,
  /** Sealed content in the log: the plain bound plus the cipher's overhead and encoding. */
  secretSealedBytesMax: 16 * 1024,
  /** A joining controller asks running controllers for the secret key this many rounds, this far apart. */
  secretKeyFetchAttemptsMax: 300,
  secretKeyFetchRetryMs: 1_000,
  /** Secret changes (creates, updates, grants, revokes, removes together) one hook may commit. */
  secretChangesPerHookMax: 256,
  /**
   * Juju's RotateRetryDelay: a `secret-rotate` that made no new revision runs again this
   * long after the deadline it answered (core/secrets/secret.go).
   */
  secretRotateRetryDelayMs: 300_000,
  /** Juju's ExpireRetryDelay: `secret-expired` runs again this often until the revision is removed. */
  secretExpireRetryDelayMs: 300_000,
  /** Rotation and expiry triggers the controllers' clock worker proposes in one pass; the rest wait for the next. */
  secretTriggersPerPassMax: 64,
  /** After a due trigger could not be committed (no quorum, lost the lease), the clock worker looks again this much later. */
  secretTriggerRetryMs: 1_000,
  /** Relations one unit may take part in. */
  relationsPerUnitMax: 256,
  /** Remote units in one relation as seen by one unit. */
  relationMembersMax: 4096,
  /**
   * Units that left one relation's scope whose databags the model keeps (juju-semantics
   * §2.4: a departed unit's settings stay readable). Beyond it the oldest departure's
   * member record and bag go first; every machine in the relation ships them in its view.
   */
  relationDepartedMembersMax: 64,
  /** Storage attachments per unit. */
  storagePerUnitMax: 64,
  /** Pending actions queued for one unit; more are refused by the controller. */
  pendingActionsMax: 1024,
  /** Pending `juju exec` commands queued for one unit. */
  pendingCommandsMax: 256,
  /** Units one `run`/`exec` operation may target (one task each); more are refused before any is queued. */
  operationUnitsMax: 1024,
  /** `exec --timeout` at most: a day, as no hook-context command should hold the machine lock longer. */
  execTimeoutMsMax: 86_400_000,
  /**
   * A CLI wait (wait-for, run/exec --wait, status --watch) re-reads the model this soon
   * after its first look even without a change notice, and twice as late each time after,
   * up to the maximum. The `model-watch` the CLI waits on carries the revision it last read,
   * so it misses nothing; these re-reads are for the gossip fallback (a controller without
   * `model-watch`), whose subscription takes a heartbeat or two to join the mesh: a notice
   * published meanwhile (an exec task done within a second) never arrived, and
   * `cantrip exec` waited the whole maximum (30 s) for a finished task.
   */
  cliModelRecheckMsMin: 1_000,
  cliModelRecheckMsMax: 30_000,
  /** Characters of an exec task's stdout, and of its stderr, kept in its record (the rest is in the unit's log). */
  execOutputCharsMax: 16 * 1024,
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
  /**
   * A uniter whose loop failed (its charm could not be fetched) runs again after this,
   * times the factor per failure in a row, at most the max: Juju's agent dependency engine
   * (ErrorDelay 3 s, BackoffFactor 1.2, MaxDelay 2 min).
   */
  uniterRestartDelayMs: 3_000,
  uniterRestartBackoffFactor: 1.2,
  uniterRestartDelayMsMax: 120_000,
  /** update-status-hook-interval default (model config). */
  updateStatusIntervalMs: 300_000,
  /**
   * Bounds of update-status-hook-interval. Juju allows 1m to 60m
   * (environs/config: Min/MaxUpdateStatusHookInterval); cantrip allows down to 1 s so a
   * test or a demo sees update-status run without waiting minutes.
   */
  updateStatusIntervalMsMin: 1_000,
  /** Keys one `set-model-config` may set or reset (there are only a few). */
  modelConfigKeysPerCommandMax: 64,
  /** Process groups a machine agent's runner remembers, to kill on a reboot (dead ones are dropped first). */
  processGroupsTrackedMax: 4096,
  updateStatusIntervalMsMax: 3_600_000,
  /** Machine provisioning retries before the machine stays in error until asked again. */
  provisioningAttemptsMax: 10,
  provisioningRetryDelayMsMin: 10_000,
  provisioningRetryDelayMsMax: 300_000,
  /** A machine agent not heard from for this long shows `down`. */
  machineAgentDownAfterMs: 60_000,
  /** Largest gossip message or request/response frame, in bytes. */
  transportMessageBytesMax: 1_048_576,
  /** Open connections before libp2p prunes (its default of 300 would cap a controller's machine agents). */
  transportConnectionsMax: 4_096,
  /**
   * New inbound connections one host may open per second (libp2p's inboundConnectionThreshold,
   * 5 by default). At 5 a user's `for …; do cantrip status; done` on a quiet machine (one
   * connection a run, ~0.15 s each) was refused from the sixth run in a second, and the
   * CLI, refused by the one controller, said the group had lost its quorum; so were the
   * local provider's machine agents, all on one host, when many started together.
   * libp2p's other pacing, 10 handshakes pending at once, still bounds a burst's CPU.
   */
  transportInboundConnectionsPerHostPerSecond: 20,
  /**
   * Bytes of unit statuses in one `application-status` answer (`status-get --application`):
   * units past it are left off and counted, so the answer stays under
   * transportMessageBytesMax whatever messages charms set (5,000 units with typical
   * statuses take about a third of it).
   */
  applicationStatusReplyBytesMax: 768 * 1024,
  /**
   * Entries (units and remote applications) in one `goal-state` answer: past it the rest
   * are left off, so the answer stays well under transportMessageBytesMax (an entry is
   * under 100 bytes).
   */
  goalStateEntriesMax: 5_000,
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
  /**
   * Default timeout of one hook or action. Juju has none; a hook that hangs for this long
   * (an install downloading for half an hour is plausible, a day is not) is killed with its
   * process group and counts as failed, so `juju resolved` can retry it.
   */
  hookTimeoutMs: 30 * 60 * 1000,
  /** Bytes of one hook's output that reach the unit log; the rest is counted and dropped. */
  hookOutputBytesMax: 1024 * 1024,
  /** Grace between SIGTERM and SIGKILL when a process group is killed for its timeout. */
  processKillGraceMs: 5_000,
  /** After a process exits, how long to wait for descendants still holding its output pipes. */
  processOutputDrainMs: 1_000,
  /** Bytes a stream logger lets queue in a slow stream before it drops records (and says so). */
  loggerBufferedBytesMax: 4 * 1024 * 1024,
  /** Timers one `SimClock.advance` may fire; more means a timer loop that never lets time pass. */
  simClockTimersPerAdvanceMax: 1_000_000,
  /**
   * Deferred steps (cantripd's setImmediate) one simulated controller may have pending: the
   * host's apply and leader write and the held-watch check each keep at most one, so more
   * means a deferral that schedules itself.
   */
  simDeferredStepsPerControllerMax: 64,
  /** Unsynced writes `SimStorage` holds before it models an OS writeback making them durable. */
  simStorageUnsyncedOperationsMax: 1_000_000,
  /** Request ids the model remembers (all proposers together) so a retried command applies once: the most recent half at least. */
  modelRequestIdsMax: 20_000,
  /** Removed keys the model remembers for watchers; one older than the oldest must resync its whole view. */
  modelTombstonesMax: 20_000,
  /** Finished actions whose results the model keeps; older ones are forgotten. */
  modelFinishedActionsMax: 10_000,
  /** Models one controller group hosts besides "default": each is a Raft group of its own in every controller process. */
  modelsMax: 16,
  /** Agent binaries (version × platform) one model records: a few versions for a few platforms. */
  agentBinariesMax: 64,
  /** Nesting of any-of/all-of maps in a charm's `assumes` that deploy evaluates. */
  charmAssumesDepthMax: 8,
  /** Characters of the reason a machine agent gives for a failed upgrade (status shows it). */
  agentUpgradeErrorLengthMax: 1024,
  /** Starts a newly switched-to agent gets to report itself healthy before its launcher switches back. */
  agentUpgradeStartsMax: 3,
  /** A machine agent's first wait before it fetches an agent bundle again after a failed try (Juju's upgrader waits 5 s); doubled each failure. */
  agentUpgradeRetryDelayMs: 5_000,
  /** The longest wait between two tries of one agent bundle: a damaged bundle is not fetched more often than this. */
  agentUpgradeRetryDelayMsMax: 5 * 60_000,
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
  /**
   * A unit whose view shows another unit's lease run out, yet whose claim lost (the view is
   * behind an extension), claims again after this long (actors/unit/leadership-claim-schedule.ts).
   */
  leadershipReleasedRecheckMs: 5_000,
  leadershipLeaseDurationMsMax: 300_000,
  /**
   * A unit host looks at its remote state again six times per lease (leadership belief
   * moves with time alone), but never more often than this.
   */
  unitRemoteRefreshMsMin: 1_000,
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
  /** Raft: runtime/raft/raft-limits.ts. */
  ...raftLimits,
  /**
   * Controller API: tries of one command (or read) through the leader, each waiting up
   * to a propose timeout; between tries one election timeout passes for a leader to
   * emerge. A retry reuses the request id, so the command still applies at most once.
   */
  controllerSubmitAttemptsMax: 8,
  /**
   * Clients' writes a follower holds at once while it waits for an election's leader
   * (actors/controller/leader-wait.ts); past this they are refused at once ('leader
   * unknown') as before, so a group that cannot elect holds no unbounded queue.
   */
  controllerClientWritesAwaitingLeaderMax: 256,
  /**
   * Leaders a follower sends one client's write to: a second only when the first did not
   * answer and another has been elected since (the first was the dead one of a failover).
   */
  controllerClientWriteForwardsMax: 2,
  /** Addresses the model keeps for one machine. */
  machineAddressesMax: 64,
  /**
   * Hook tools: bytes a tool may read from its stdin (`relation-set --file -`). The
   * client holds all of it in memory and the agent holds one copy per queued call, so it
   * is bounded; 8 MiB is far above any settings bag (modelSettingsBytesMax).
   */
  hookToolStdinBytesMax: 8 * 1024 * 1024,
  /**
   * Hook tools: encoded bytes of one call apart from its stdin (context id, cwd, tool
   * name and arguments with their length prefixes). Linux caps a command line near
   * 2 MiB (ARG_MAX), so a real client never reaches this; it bounds forged requests.
   */
  hookToolArgsBytesMax: 2 * 1024 * 1024,
  /** Hook tools: arguments in one call; far more key=value pairs than any bag holds. */
  hookToolArgsCountMax: 65_536,
  /**
   * Hook tools: stdout plus stderr of one result. The client buffers the whole reply
   * before writing it; the same cap as a hook's own captured output.
   */
  hookToolOutputBytesMax: 16 * 1024 * 1024,
  /**
   * Hook tools: calls of one context waiting while another runs. A hook runs its tools
   * one after another; only background jobs pile up, and past this one is a runaway loop.
   */
  hookToolCallsQueuedPerContextMax: 64,
  /** Hook tools: connections the agent's tool socket holds at once; more are closed at once. */
  hookToolConnectionsMax: 256,
  /**
   * Hook tools: time a request frame may take to arrive once its connection opens or its
   * first byte arrives. The client sends each frame in one go, so only a stuck or hostile
   * peer is this slow; it stops half-sent frames pinning memory and connection slots.
   */
  hookToolFrameReadTimeoutMs: 10_000,
  /** Hook tools: contexts (running hooks, actions and exec commands) open in one agent at once. */
  hookToolContextsOpenMax: 4096,
  /**
   * Bytes in one charm file the agent parses (metadata.yaml, config.yaml, actions.yaml).
   * Real ones are a few KiB; the whole file is parsed in memory, so a larger one is refused
   * before parsing rather than trusted.
   */
  charmFileBytesMax: 1_048_576,
  /**
   * yaml's `maxAliasCount` for charm files: how often one anchor may be expanded. Charm
   * files hardly use aliases, and a low cap stops a "billion laughs" file from expanding
   * into gigabytes.
   */
  charmYamlAliasesMax: 100,
  /** Nesting of a parsed charm file; the deepest real schema is a handful of levels. */
  charmYamlDepthMax: 64,
  /**
   * Values (scalars, lists, maps) in one parsed charm file after aliases are expanded:
   * bounds the work of validating it even when many anchors are each expanded the
   * allowed number of times. A 1 MiB file of short scalars holds fewer.
   */
  charmYamlValuesMax: 250_000,
  /** Nesting of an action's parameter schema, and of the parameters checked against it. */
  actionParamsDepthMax: 32,
  /**
   * Values in one action's parameters when they are checked. Above what
   * `modelTaskBytesMax` of msgpack can hold, so only parameters built in-process (a
   * programming error, such as shared references) ever reach it.
   */
  actionParamsValuesMax: 100_000,
  /** Problems listed in one "validation failed" message; the message says more were found. */
  actionParamsErrorsMax: 10,
  /**
   * Entries (files, directories, symlinks) in one charm archive. Charms that bundle a
   * Python virtualenv have a few thousand files; every entry is held in memory.
   */
  charmArchiveEntriesMax: 20_000,
  /**
   * Bytes of file content in one charm archive, and bytes of one (compressed) archive as
   * uploaded and stored: an upload declaring more is refused before any chunk is sent.
   */
  charmArchiveBytesMax: 64 * 1024 * 1024,
  /**
   * Bytes in one chunk of a charm archive on the wire (upload, replication between
   * controllers, fetch by machine agents): each chunk is one request or reply, so it stays
   * well under transportMessageBytesMax, and a controller holds one chunk of an archive in
   * memory at a time, never the whole archive.
   */
  charmChunkBytesMax: 256 * 1024,
  /**
   * Unfinished charm uploads (begun, not committed) one controller keeps for a re-run to
   * resume; beginning one more drops the oldest and its chunks.
   */
  charmUploadsPendingMax: 16,
  /** UTF-8 bytes in one archive entry's path or symlink target: well under PATH_MAX once unpacked under a data directory. */
  charmArchivePathBytesMax: 1024,
  /**
   * Bytes (UTF-8, keys plus values) of one unit's charm state (`state-set`). Juju's
   * default quota (max-charm-state-size) is 2 MiB, but here every unit's state lives in
   * the Raft-replicated model on every controller and in every RaftSnapshot, and a change
   * travels in one command under transportMessageBytesMax; 64 KiB is ample for the flags,
   * tokens and small documents charms keep there (bulk data belongs on the unit's disk).
   */
  modelCharmStateBytesMax: 64 * 1024,
  /**
   * Keys in one unit's charm state. A hook's commit checks and sorts them all, so their
   * number is bounded apart from their bytes (many tiny keys are cheap in bytes only).
   */
  modelCharmStateKeysMax: 1024,
  /**
   * Distinct port ranges one unit may have open. Juju sets none; ranges are checked
   * against every other range on the machine on each commit, so the count is bounded,
   * far above what any charm opens (a range covers many ports).
   */
  modelOpenedPortRangesPerUnitMax: 256,
  /**
   * Characters of an application's workload version (`application-version-set`). It is
   * one column of `juju status`; Juju does not bound it, but an unbounded string would
   * ride in every copy of the application record.
   */
  modelWorkloadVersionLengthMax: 256,
  /**
   * Status changes kept per unit (`show-status-log`), oldest dropped first. The history
   * rides in the replicated model (every controller answers the same), so it is bounded;
   * Juju keeps more, in its database, pruned by age and size.
   */
  modelStatusHistoryPerUnitMax: 100,
  /**
   * Log shipping (`debug-log`, runtime/logs/): an agent sends its log records to the
   * controllers in batches of at most this many, at least this often, holding at most
   * the queue's worth meanwhile (the oldest are dropped first, and the next batch says
   * how many). A batch also stops at the batch bytes max (estimated as logEntryBytes
   * does: UTF-8 worst case), which keeps it under transportMessageBytesMax with room for
   * the envelope; one record always fits, as its message is bounded by the chars max.
   *
   * The chars max is where one record's message is cut, saying so at its end. Juju sets
   * no bound of its own below the transport: its logsink reads each record as one JSON
   * websocket message with no read limit (apiserver/logsink/logsink.go, receiveLogs) and
   * stores it as one MongoDB document (16 MiB). 64 Ki characters keeps a whole Python
   * traceback, chained exceptions included (typically 2-20 KB), with its last line, the
   * exception, while four worst-case records still fit one batch.
   */
  logShipBatchRecordsMax: 100,
  logShipBatchBytesMax: 768 * 1024,
  logShipIntervalMs: 200,
  logShipQueueRecordsMax: 5_000,
  logMessageCharsMax: 64 * 1024,
  /**
   * The final batch (a unit's last records before it is marked dead, an agent's before it
   * exits on SIGTERM) goes to a controller as a request and waits for its answer, this
   * long at most. It carries the records queued and those gossiped in the last resend
   * window (gossip is unacknowledged: those may still be on their way); the controller
   * keeps each record once.
   */
  logFlushAckWaitMsMax: 5_000,
  logShipResendWindowMs: 2_000,
  /**
   * Per-unit and per-machine log files on each machine (`<data dir>/log/unit-kv-0.log`,
   * `machine-1.log`, agent/log-files.ts): a file is rotated when the next line would take
   * it past the bytes max, and the newest backups max rotated files are kept (Juju's
   * agent-logfile-max-size 100M and agent-logfile-max-backups 2; Juju also gzips them).
   * At most the open max files are held open at once (least recently written closed).
   */
  logFileBytesMax: 100 * 1024 * 1024,
  logFileBackupsMax: 2,
  logFilesOpenMax: 64,
  /**
   * Log records each controller keeps in memory for `debug-log`, and their bytes (as
   * logEntryBytes estimates them): the oldest go first when either is passed (Juju keeps
   * its logsink in the database, pruned by size). Bytes bound the ring now that one record
   * may carry a long message.
   */
  logRingRecordsMax: 20_000,
  logRingBytesMax: 64 * 1024 * 1024,
  /** Bytes of records in one `debug-log` API answer (estimated); the CLI pages on with the cursor. */
  debugLogReplyBytesMax: 512 * 1024,
  /** Entities or modules in one `debug-log` filter list. */
  debugLogFilterItemsMax: 64,
  /**
   * Bytes an envelope may add around a message's data on the wire: the version, a
   * request's protocol name, an error frame's text. A gossip envelope or a request frame
   * above transportMessageBytesMax plus this is refused before it is decoded.
   */
  transportEnvelopeOverheadBytesMax: 4096,
  /**
   * Request channels (long-lived streams carrying many requests, agent/mesh/request-channel.ts)
   * one peer may have open to us at once, counted per connection by libp2p; a hostile
   * peer gets its extra streams reset. A caller keeps one channel per peer; the slack
   * covers a broken channel still closing while its replacement opens. The caller's own
   * cap is the same.
   */
  transportRequestChannelsPerPeerMax: 4,
  /**
   * Requests outstanding on one channel. The caller counts a request until its answer
   * arrived or its cancellation was written, so the server never sees more; a channel
   * that carries more is hostile and is cut off. Equal to transportRequestsInFlightMax, so
   * an honest caller's requests to one peer are refused by the one per-peer bound only.
   */
  transportChannelRequestsInFlightMax: 256,
  /**
   * Pushes of one request (IncomingRequest.push) queued on its channel and not yet handed
   * to yamux. A caller that stops reading would otherwise have a server queue one push per
   * change for as long as the request lives; past this, push says no and the server
   * answers instead (machine-watches.ts), which ends the request.
   */
  transportRequestPushesUnwrittenMax: 2,
  /**
   * Time the rest of a request-channel frame may take to arrive once its first bytes
   * did. A caller writes each frame in one go, so only a stuck or hostile peer is this
   * slow; the channel is cut off, so half-sent frames do not pin memory.
   */
  transportRequestFrameReadTimeoutMs: 10_000,
  /** Bytes of small frames a channel joins into one write (fewer yamux frames and Noise seals under load). */
  transportChannelWriteCoalesceBytesMax: 64 * 1024,
  /**
   * Largest gossipsub RPC frame accepted from a peer (gossipsub's maxInboundDataLength):
   * one largest message with its signature and key fits many times over, and IWANT
   * replies, which bundle several messages, fit unless the messages are huge. Gossipsub
   * would otherwise take its library default (4 MiB) silently.
   */
  transportGossipRpcBytesMax: 4 * 1024 * 1024,
  /**
   * Bytes gossipsub may queue towards one slow peer (its maxOutboundBufferSize, unbounded
   * by default). Past this, sends to that peer fail and gossip to it is lost, which
   * gossip tolerates: applications recover by revision.
   */
  transportGossipOutboundBufferBytesMax: 16 * 1024 * 1024,
  /**
   * Peers' Ed25519 public keys one process keeps imported for signature checks
   * (agent/mesh/verify-key-cache.ts), least recently used forgotten first. A controller
   * verifies every machine agent's presence heartbeats: room for each agent of a
   * 10,000-machine model (issue 28's largest point), below which a controller would
   * import keys in a cycle and save nothing. One KeyObject each, a few hundred bytes.
   */
  meshVerifyKeysCachedMax: 16_384,
  /**
   * Names of topics and request protocols, in UTF-8 bytes. They ride in every message
   * (topic) or request frame (protocol), so they are short; the bound keeps them inside
   * transportEnvelopeOverheadBytesMax.
   */
  transportNameBytesMax: 256,
  /** Characters of a handler's error message sent back in an error frame; the rest is cut. */
  transportErrorMessageLengthMax: 1024,
  /**
   * How often libp2p pings each connection to find one cut without a close
   * (agent/mesh/libp2p-node.ts); libp2p's default is 10 s. Not a presence timing: presence
   * and Raft have their own timeouts.
   */
  transportConnectionPingIntervalMs: 30_000,
  /**
   * Redial of a bootstrap seed that is down or was lost: the first retry after the min,
   * doubling up to the max, for as long as the transport runs. A seed (a controller) is
   * expected back after an upgrade or reboot, so the agent never gives up on it, but it
   * knocks at most once a minute.
   */
  transportSeedRedialDelayMsMin: 1_000,
  transportSeedRedialDelayMsMax: 60_000,
  /**
   * Presence (runtime/presence/): members one agent's table holds, controllers and
   * machine agents of a model together. New members past this are refused and counted,
   * so a flood of valid-looking ids cannot grow memory without bound. 16,384, as the
   * machine watches and views a controller keeps: a model of 10,000 machine agents has
   * every one of them in each controller's table. A member costs about 220 bytes of heap
   * (measured: 4,000 machine members with 52-character peer ids), so a full table is
   * about 3.6 MB.
   */
  presenceMembersMax: 16_384,
  /** Presence: characters of a member id (a peer id); libp2p peer ids are about 52. */
  presenceMemberIdLengthMax: 128,
  /**
   * Presence: "not alive to me" claims (suspect, failed, left) one heartbeat carries so
   * the members named can refute them. A rotating window, so every claim is sent in turn
   * while each message stays small.
   */
  presenceDigestEntriesMax: 64,
  /** Presence: bytes of one presence message; a full digest of the longest ids fits twice over. */
  presenceMessageBytesMax: 32 * 1024,
  /**
   * Presence default timings. Serf's lan profile probes every 1 s and declares failure in
   * 5.9-11.1 s for 10-100 nodes (ANCHORS.md §3); heartbeats every 2 s, suspect after 8 s of
   * silence (four missed heartbeats) and failed 3 s after that land at 11 s, inside serf's
   * range. Detection is set by the timeouts, not the interval, so halving the heartbeats
   * (each one signed, sent on two topics, verified and forwarded by every controller) halves
   * presence's idle cost without slower failure detection. Four missed heartbeats in a row
   * at 10% loss happen once in 10,000 windows, and a false suspicion is refuted, not failed.
   */
  presenceHeartbeatIntervalMsDefault: 2_000,
  presenceSuspectAfterMsDefault: 8_000,
  presenceFailedAfterMsDefault: 3_000,
  /** Presence: failed and left members are forgotten after this (serf's reconnect and tombstone timeouts are 24 h). */
  presenceReapAfterMsDefault: 24 * 60 * 60 * 1000,
  /**
   * Supervisor (runtime/supervisor.ts) restart back-off: a failed worker restarts after
   * the min, doubling per consecutive failure up to the max. Juju's dependency engine
   * waits 3 s after a worker error and caps its back-off at 2 minutes, so a crash loop
   * knocks at most twice a minute once it has backed off.
   */
  supervisorRestartDelayMsMin: 3_000,
  supervisorRestartDelayMsMax: 120_000,
  supervisorRestartFactor: 2,
  /**
   * Supervisor: a worker that has run this long before failing counts as healthy, so its
   * back-off starts again from the min (Juju's engine resets after one minute).
   */
  supervisorHealthyAfterMs: 60_000,
  /**
   * Supervisor restart intensity: more restarts than this within the window and the worker
   * is given up on (and the supervisor escalates unless the worker is transient). The
   * window must hold more than that many restarts at the capped delay, or a steady crash
   * loop would never reach the limit: 6 restarts 2 minutes apart fit in 15 minutes, and a
   * worker that fails at once gives up after about 3 minutes of back-off.
   */
  supervisorRestartIntensityMax: 5,
  supervisorRestartIntensityWindowMs: 15 * 60 * 1000,
  /** Workers one supervisor holds; an agent runs a few dozen at most. */
  supervisorChildrenMax: 256,
  /**
   * Supervisor: time one worker's start (when it is still starting) and one worker's stop
   * may take while the supervisor stops; past it the worker is logged and abandoned, so
   * one stuck worker cannot keep an agent from shutting down.
   */
  supervisorStopTimeoutMs: 30_000,
  /** How often a leading controller may publish a change notice (coalescing a burst of commits into one). */
  changeNoticeIntervalMs: 50,
  /**
   * Every notice makes every machine agent fetch its view: with many agents the notices
   * are spaced further apart (this much per machine the model ever had), up to
   * changeNoticeIntervalMaxMs, so the fetch load grows with the agents, not with agents ×
   * commits (the simulator measured 1,000 agents × 5 units at 20 notices/s: quadratic).
   */
  changeNoticeIntervalPerMachineMs: 2,
  changeNoticeIntervalMaxMs: 2_000,
  /**
   * How long after a change its notice goes out (actors/controller/change-notices.ts): the
   * agents' watches bring the change first, and a notice is for an agent whose watch is
   * down, which watches again every machineWatchRetryMs anyway; so it waits as long,
   * rather than compete with the watch answers for CPU.
   */
  changeNoticeDelayMs: 250,
  /** A machine agent refetches its view this often even without notices (gossip is a hint). */
  remoteStateCatchUpMs: 30_000,
  /**
   * Machine view watches (actors/controller/machine-watches.ts): how long a controller
   * holds a machine agent's watch while nothing it sees changes, before answering
   * `unchanged` at its own revision. The agent watches again at once, so this bounds how
   * long an agent stays on a controller that has fallen behind without knowing it.
   */
  machineWatchHoldMs: 10_000,
  /**
   * Watches one controller holds at once. Each holds no changes of its own (a watch is
   * answered with the difference between the view its agent names and the view now, so
   * the changes an agent has not taken yet are one coalesced delta, never a queue); past
   * it a new watch is refused and its agent, told so, goes on with notices and fetches.
   * Room for one per machine agent of a 10,000-machine model (issue 28's largest point),
   * as a controller may be the one every agent watches.
   */
  machineWatchesHeldMax: 16_384,
  /**
   * The longest a machine agent's view fetch waits for its answer: the request timeout
   * doubles after each round in which no controller answered, up to this (a starved host
   * answers late rather than never; controller-client.ts).
   */
  machineFetchTimeoutMaxMs: 16_000,
  /**
   * The admin's model watch (actors/controller/model-watches.ts): how long a controller
   * holds it while the model it applied does not move past the caller's revision, before
   * answering with its own. The CLI watches again at once; this bounds how long it stays
   * on a controller that has stopped applying without knowing it.
   */
  modelWatchHoldMs: 20_000,
  /** Model watches one controller holds at once (one per waiting CLI command); past it a watch is refused. */
  modelWatchesHeldMax: 256,
  /** The CLI's model watch (agent/cli/model-watcher.ts) tries the next controller after a failure this long after, doubling up to the max. */
  cliModelWatchRetryMsMin: 200,
  cliModelWatchRetryMsMax: 2_000,
  /** A `wait-for --query` longer than this is refused before it is parsed (Juju's own examples are under 200). */
  queryLengthMax: 4_096,
  /** How deep a query's parentheses, operators and lambdas may nest: bounds the parser's and evaluator's recursion. */
  queryDepthMax: 64,
  /**
   * A controller that has had no leader for this many election timeouts ends the machine
   * watches it holds and refuses new ones until it hears a leader again
   * (actors/controller/watch-leader-guard.ts), so its agents move to a controller that is
   * not falling behind. etcd cancels its `WithRequireLeader` watches after 3 (its v3rpc
   * monitorLeader, maxNoLeaderCnt): an ordinary election ends well within that, and
   * moving every agent's watch during one would only add work.
   */
  machineWatchLeaderlessElectionTimeouts: 3,
  /** A machine agent whose watch failed (controller down, refused, behind) watches again after this. */
  machineWatchRetryMs: 250,
  /** Commands in one batched `controller/propose/1` request (Juju's bulk API calls): a machine agent's unit agents share round trips. */
  apiBatchCommandsMax: 64,
  /**
   * Commands one Raft entry carries (`apply-batch`): a leader commits an agent's batch in
   * entries of at most this many and at most modelEntryBytesMax, so one entry's apply on
   * every controller stays short. A retried request may be split differently: each
   * command is deduplicated by its own request id, not by the entry it travelled in.
   */
  modelEntryCommandsMax: 32,
  /**
   * Encoded bytes of the commands of one `apply-batch` entry: half of
   * raftMaxSizePerMessageBytes, so an entry always fits one append message with room for
   * the batch's framing. A single larger command is its own entry, as unbatched.
   */
  modelEntryBytesMax: 256 * 1024,
  /** Commands a machine agent's ControllerClient holds (queued or in flight) before refusing more. */
  apiBatchQueueMax: 4096,
  /**
   * Machines whose last view a controller keeps, to answer a fetch whose view has not
   * changed with "unchanged" (actors/controller/machine-view-cache.ts); the least recently
   * asked is forgotten first, and its agent's next fetch gets the whole view again.
   * Room for every machine of a 10,000-machine model: below it, a controller serving all
   * of them would forget views in a cycle and answer each fetch whole.
   */
  machineViewsCachedMax: 16_384,
  /** Charm replication: time one peer controller may take to answer for a missing archive. */
  charmFetchPeerTimeoutMs: 5_000,
  /** Charm replication: peer controllers asked per fetch, at most. */
  charmFetchPeersMax: 8,
  /** Charm replication: distinct archives being fetched at once. */
  charmFetchesInFlightMax: 64,
  /**
   * Charm replication: time a controller that accepted an upload waits for its peers to
   * copy the archive (chunk by chunk) before it answers, so a majority holds it and any
   * controller can serve it after a failover.
   */
  charmReplicationTimeoutMs: 120_000,
  /** Charm backfill: how often a controller missing an archive the model names asks its peers for it again (agent/controller/charm-backfill.ts). */
  charmBackfillIntervalMs: 10_000,
  /** Charm backfill: archives looked up in one pass; the rest wait for the pass that follows at once. */
  charmBackfillPerPassMax: 1_024,
  /** Provisioner: a pass over the model and the provider's instances at least this often, besides every model change. */
  provisionerReconcileIntervalMs: 5_000,
  /** Provisioner: passes caused by changes of the machines come at most this often (each looks at every machine). */
  provisionerPassIntervalMinMs: 100,
  /** Provisioner: instance starts in flight at once (the rest wait in `pending`). */
  provisionerStartsInFlightMax: 8,
  /** Provisioner: a machine in provisioning error starts a new round of attempts after this (unless the provider called it invalid). */
  provisionerRetryRoundMs: 60_000,
  /**
   * Provisioner: how often its machine actors are told when the controller's presence
   * last heard their agents (actors/provisioner/liveness-feed.ts) — at most one
   * `agent.heartbeat` per machine per interval, not one per gossip heartbeat. Far below
   * machineAgentDownAfterMs, so a healthy agent's down deadline is always pushed on in time.
   */
  provisionerLivenessFeedIntervalMs: 5_000,
  /**
   * Controllers an agent remembers (runtime/known-controllers.ts): the membership it last
   * learned plus its bootstrap data's, persisted in its data directory so a restart after
   * the original controllers died still finds the group. Twice enable-ha's 7 members, so a
   * whole replaced group and the one it replaced both fit; a longer list is cut here.
   */
  knownControllersMax: 14,
  /** Addresses kept per remembered controller. */
  knownControllerAddressesMax: 8,
  /**
   * A machine agent asks the group for its membership this often (agent/controller-follower.ts),
   * and sooner, after controllerFollowRetryMs, while a controller names voters it has not
   * yet met (no address: a member just added by enable-ha), at most
   * controllerFollowRetriesMax rounds in a row — so the agent knows where the new members
   * listen within a few seconds of enable-ha, not only after the next full period.
   */
  controllerFollowPeriodMs: 5_000,
  controllerFollowRetryMs: 1_000,
  controllerFollowRetriesMax: 10,
  /** A provisioned machine agent's registration: rounds over every controller before its start fails (and its supervisor backs off). */
  registrationAttemptsMax: 30,
  /**
   * Local provider (providers/local-provider.ts): how often its watchdog looks for
   * dead agent processes; a restarted agent restarts after the min, doubling per
   * consecutive crash up to the max, so a crash loop knocks at most once a minute; an agent
   * that ran this long before dying counts as healthy and its back-off starts again.
   */
  localProviderWatchIntervalMs: 1_000,
  localProviderRestartDelayMsMin: 1_000,
  localProviderRestartDelayMsMax: 60_000,
  localProviderHealthyAfterMs: 60_000,
  /** Local provider: how long a new agent process must stay alive before its start counts (catches a bad bootstrap file). */
  localProviderStartCheckMs: 1_000,
  /** Local provider: grace between SIGTERM and SIGKILL when an instance is stopped. */
  localProviderStopGraceMs: 10_000,
  /** Local provider: bytes of an agent's log read to explain a failed start; one line of it shows. */
  localProviderLogTailBytes: 4096,
  /** Manual provider: files in the agent code it ships to a host (the project with node_modules has ~5.5k). */
  manualSourceFilesMax: 200_000,
  /** Inspection (`cantripd --inspect`): messages queued for one WebSocket client; a slow client loses the oldest and is told how many. */
  inspectClientQueueMax: 10_000,
  /** Inspection: messages written to one client and not yet flushed by the socket, before the rest wait in its queue. */
  inspectClientInFlightMax: 64,
  /** Inspection: recent messages kept for clients that connect later (after the current actors). */
  inspectRecentRingMax: 2_000,
  /** Inspection: actors remembered as current (a new client gets each); the oldest are forgotten beyond it. */
  inspectActorsMax: 10_000,
  /** Inspection: nesting kept of a snapshot's context or an event, deeper values show as "<…>". */
  inspectValueDepthMax: 12,
  /** Inspection: characters kept of one string in a snapshot or event. */
  inspectStringCharsMax: 4_096,
  /** libp2p transport: raw connections whose handshake is followed at once for the refusal counters (agent/mesh/refusal-counters.ts). */
  transportHandshakesWatchedMax: 4_096,
  /**
   * libp2p transport: time for a new connection's peer to send its network nonce
   * (agent/mesh/network-handshake.ts). @libp2p/pnet's default is 1 s; a host with ten
   * processes starting at once on loaded cores missed it (a clean-clone CI beside another
   * failed libp2p-transport's burst case: "0 bytes" after 1,000 ms), and a process whose
   * event loop stalled longer than the bound runs the timer before it reads the socket that
   * holds the nonce. 5 s stays well inside libp2p's whole inbound upgrade bound (10 s); a
   * silent peer is held no longer than that, and transportHandshakesWatchedMax and the
   * per-host connection rate bound how many.
   */
  transportNetworkHandshakeTimeoutMs: 5_000
} as const
