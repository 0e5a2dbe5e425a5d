import type { CommandGrouping } from './proposal-queue.ts'

/** Where a committed entry sits in the Raft log. */
export interface EntryPosition {
  readonly index: number
  readonly term: number
}

/**
 * What RaftHost replicates: any deterministic state machine, known to the host only
 * through this contract (the Juju model binds it in runtime/model/model-state-machine.ts).
 * Commands travel as entry bytes the machine itself encodes and decodes, and snapshots
 * are bytes the host stores and ships without looking inside, so nothing in runtime/raft
 * depends on what is replicated.
 *
 * The host calls `apply` and `skip` once per committed entry, in log order, with strictly
 * rising indexes, and `restore` when it starts (from its newest RaftSnapshot) or installs
 * a leader's RaftSnapshot. Every replica that applies the same entries from the same
 * snapshot must reach the same state and results: no clock, randomness or I/O inside.
 */
export interface ReplicatedStateMachine<Command, Result, State> {
  /** The entry bytes `propose` appends for `command` (decoded again by `apply`). */
  encodeCommand: (command: Command) => Uint8Array
  /**
   * How the leader may fold commands proposed together into one entry (group commit);
   * without it every command is an entry. `apply` of such an entry returns the result
   * that `splitResult` turns back into one per command.
   */
  readonly grouping?: CommandGrouping<Command, Result>
  /** Applies the committed entry at `at` carrying `data`; the result (never undefined) goes to its proposer. */
  apply: (data: Uint8Array, at: EntryPosition) => Result
  /** A committed entry without a command (a new leader's no-op, a membership change) moves the state to it. */
  skip: (at: EntryPosition) => void
  /** The state as RaftSnapshot data, taken when the host compacts its log. */
  snapshot: () => Uint8Array
  /** Replaces the state with RaftSnapshot data; empty data is the initial state (raft-bootstrap.ts). */
  restore: (data: Uint8Array) => void
  /**
   * The state as applied so far: what a linearizable read returns once its read point is
   * applied. Later applies must not change a value already returned (return an immutable
   * value or a copy).
   */
  state: () => State
}
