import { assert } from '../assert.ts'
import { limits } from '../limits.ts'
import { payloadBytes } from './entry-size.ts'
import { Raft, type RaftOptions } from './raft.ts'
import type { ConfigChangeResult, ProposeResult, ReadIndexResult, TransferResult } from './raft-results.ts'
import type { RaftBasicStatus, RaftStatus } from './raft-status.ts'
import type { ConfigChange, HardState, Message, NodeId, Ready, SoftState } from './raft-types.ts'

export type RawNodeOptions = RaftOptions

/** What a handed-out Ready promised, so `advance()` can record it as done. */
interface Outstanding {
  softState: SoftState | undefined
  hardState: HardState | undefined
  lastEntry: { index: number, term: number } | undefined
  snapshotIndex: number | undefined
  lastCommittedIndex: number | undefined
  committedPayloadBytes: number
}

/**
 * The Raft core as the host drives it, shaped like etcd's RawNode. Inputs: `tick()`,
 * `step(message)`, `propose`, `proposeConfigChange`, `readIndex`, `campaign`,
 * `transferLeadership`, the `report*` calls and `connectionClosed`. Output: a `Ready`, which the host
 * handles in this order before calling `advance()`:
 *
 *   1. persist `snapshot` (if any), then `entries`, then `hardState`, durably (fsync)
 *      when `mustSync`; entries and hard state together or entries first, never a
 *      commit index whose entries are not yet on disk;
 *   2. only then send `messages`: vote grants and append acknowledgements in them
 *      promise that the vote and the entries in this same Ready are durable. (A leader's
 *      appends, heartbeats and snapshots of a term already durable promise nothing about
 *      its own disk and may go out before the write, as RaftHost sends them.);
 *   3. restore the state machine from `snapshot` (if any), then apply `committedEntries`
 *      in order, and serve `readStates` once the applied index reaches their index. (When
 *      `mustSync` is false the Ready writes only a commit index, its committed entries are
 *      durable already, and steps 2 and 3 may run while that write is under way. The
 *      committed entries below the Ready's first entry were persisted by earlier Readies
 *      and may be applied during the write too, unless the Ready changes the role, the
 *      term or brings a RaftSnapshot.);
 *   4. call `advance()`.
 *
 * `ready()` may not be called again until `advance()`; inputs may arrive in between and
 * go into the next Ready. Everything is synchronous and deterministic: same storage,
 * same Random seed and same inputs give the same Readies.
 */
export class RawNode {
  readonly #raft: Raft
  #previousSoftState: SoftState
  #previousHardState: HardState
  #outstanding: Outstanding | undefined

  constructor (options: RawNodeOptions) {
    this.#raft = new Raft(options)
    this.#previousSoftState = this.#raft.softState()
    this.#previousHardState = this.#raft.hardState()
  }

  get id (): NodeId {
    return this.#raft.id
  }

  tick (): void {
    this.#raft.tick()
  }

  /** Ticks until one does more than count (Raft.ticksUntilDue); Infinity when none will. */
  ticksUntilDue (): number {
    return this.#raft.ticksUntilDue()
  }

  /** `count` ticks, none of them due (count < ticksUntilDue()), at once. */
  tickIdle (count: number): void {
    this.#raft.tickIdle(count)
  }

  /**
   * A message from another node. Malformed messages (including any term or index that
   * is not a safe integer) are dropped and counted in `status().invalidMessages`; a
   * simulator should treat a non-zero count as a failure.
   */
  step (message: Message): void {
    this.#raft.step(message)
  }

  /** Start an election now (with PreVote first, if enabled). */
  campaign (): void {
    this.#raft.campaign()
  }

  propose (data: Uint8Array): ProposeResult {
    return this.#raft.propose(data)
  }

  proposeConfigChange (change: ConfigChange): ConfigChangeResult {
    return this.#raft.proposeConfigChange(change)
  }

  /**
   * Ask for a linearizable read point. The answer is a ReadState carrying `context` in
   * a later Ready (or nothing, if leadership changes first: the host must time reads
   * out). `context` must be non-empty and unique among pending reads.
   */
  readIndex (context: Uint8Array): ReadIndexResult {
    return this.#raft.readIndex(context)
  }

  transferLeadership (to: NodeId): TransferResult {
    return this.#raft.transferLeadership(to)
  }

  /**
   * The transport saw the connection to `peer` close (Raft.connectionClosed): when it was
   * our leader's, the ticks (a fraction of a heartbeat) after which to call
   * `campaignAfterClose()`; otherwise undefined.
   */
  connectionClosed (peer: NodeId): number | undefined {
    return this.#raft.connectionClosed(peer)
  }

  /** The delay `connectionClosed` returned has passed: campaign unless a leader has been heard from since. */
  campaignAfterClose (): void {
    this.#raft.campaignAfterClose()
  }

  /** The transport could not deliver to `to`. */
  reportUnreachable (to: NodeId): void {
    this.#raft.reportUnreachable(to)
  }

  /** The transport finished (or failed) sending a RaftSnapshot message to `to`. */
  reportSnapshot (to: NodeId, outcome: 'finished' | 'failed'): void {
    this.#raft.reportSnapshot(to, outcome)
  }

  get voters (): readonly NodeId[] {
    return this.#raft.voters
  }

  status (): RaftStatus {
    return this.#raft.status()
  }

  basicStatus (): RaftBasicStatus {
    return this.#raft.basicStatus()
  }

  /** Whether `ready()` has anything to hand out; false while a Ready awaits `advance()`. */
  hasReady (): boolean {
    if (this.#outstanding !== undefined) return false
    const raft = this.#raft
    const soft = this.#previousSoftState
    const hard = this.#previousHardState
    // Field by field, not through softState()/hardState(): this runs for every input.
    return raft.lead !== soft.leader || raft.role !== soft.role ||
      raft.term !== hard.term || raft.vote !== hard.vote || raft.log.committed !== hard.commit ||
      raft.log.unstable.entries.length > 0 ||
      raft.log.unstable.snapshot !== undefined ||
      raft.messages.length > 0 ||
      raft.readStates.length > 0 ||
      raft.log.hasNextCommittedEntries()
  }

  ready (): Ready {
    assert(this.#outstanding === undefined, `raft node "${this.id}": ready() called again before advance()`)
    const raft = this.#raft
    const softState = raft.softState()
    const hardState = raft.hardState()
    const entries = raft.log.unstable.entries.slice()
    const snapshot = raft.log.unstable.snapshot
    const committedEntries = raft.log.nextCommittedEntries(limits.raftEntriesPerReadyMax, limits.raftCommittedBytesPerReadyMax)
    const softChanged = !sameSoftState(softState, this.#previousSoftState)
    const hardChanged = !sameHardState(hardState, this.#previousHardState)
    const ready: Ready = {
      entries,
      committedEntries,
      messages: raft.takeMessages(),
      readStates: raft.takeReadStates(),
      // A vote or a new term must be durable before anyone hears of it; a commit index
      // alone can be recomputed after a crash, so it needs no fsync.
      mustSync: entries.length > 0 || snapshot !== undefined ||
        hardState.term !== this.#previousHardState.term || hardState.vote !== this.#previousHardState.vote
    }
    if (softChanged) ready.softState = softState
    if (hardChanged) ready.hardState = hardState
    if (snapshot !== undefined) ready.snapshot = snapshot
    const lastEntry = entries[entries.length - 1]
    const lastCommitted = committedEntries[committedEntries.length - 1]
    this.#outstanding = {
      softState: softChanged ? softState : undefined,
      hardState: hardChanged ? hardState : undefined,
      lastEntry: lastEntry === undefined ? undefined : { index: lastEntry.index, term: lastEntry.term },
      snapshotIndex: snapshot?.metadata.index,
      lastCommittedIndex: lastCommitted?.index,
      committedPayloadBytes: payloadBytes(committedEntries)
    }
    return ready
  }

  /** The host has persisted, sent and applied everything in the last Ready. */
  advance (): void {
    const done = this.#outstanding
    assert(done !== undefined, `raft node "${this.id}": advance() called without a Ready`)
    const log = this.#raft.log
    if (done.snapshotIndex !== undefined) {
      log.unstable.stableSnapshotTo(done.snapshotIndex)
      // The host restored its state machine from the RaftSnapshot.
      if (done.snapshotIndex > log.applied) log.appliedTo(done.snapshotIndex)
    }
    if (done.lastEntry !== undefined) log.unstable.stableTo(done.lastEntry.index, done.lastEntry.term)
    if (done.lastCommittedIndex !== undefined) this.#raft.appliedTo(done.lastCommittedIndex, done.committedPayloadBytes)
    if (done.softState !== undefined) this.#previousSoftState = done.softState
    if (done.hardState !== undefined) this.#previousHardState = done.hardState
    this.#outstanding = undefined
  }
}

function sameSoftState (a: SoftState, b: SoftState): boolean {
  return a.leader === b.leader && a.role === b.role
}

function sameHardState (a: HardState, b: HardState): boolean {
  return a.term === b.term && a.vote === b.vote && a.commit === b.commit
}
