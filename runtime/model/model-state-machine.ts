import { decode, encode } from '../codec.ts'
import { limits } from '../limits.ts'
import type { RaftHost } from '../raft/raft-host.ts'
import type { CommandGrouping } from '../raft/proposal-queue.ts'
import type { EntryPosition, ReplicatedStateMachine } from '../raft/replicated-state-machine.ts'
import { modelEntryGrouping } from './model-entry-group.ts'
import { applyCommand } from './model-apply.ts'
import { emptyModel } from './model-draft.ts'
import { restoreModel, snapshotModel } from './model-snapshot.ts'
import type { CommandResult, ModelCommand, ModelContext } from './model-types.ts'

const component = 'model state machine'

/** A Raft host that replicates the model: what a controller runs. */
export type ModelRaftHost = RaftHost<ModelCommand, CommandResult, ModelContext>

/**
 * The model bound to Raft's state-machine contract. Each committed command goes through
 * the pure `applyCommand` (request-id dedup and the refusal results live there), and an
 * entry without a command still moves the model to its index, so the model's revision is
 * always the index of the last entry applied. Contexts are immutable: `state()` hands
 * out the current one, which later applies do not change.
 */
export class ModelStateMachine implements ReplicatedStateMachine<ModelCommand, CommandResult, ModelContext> {
  #model: ModelContext = emptyModel()
  /** Group commit: commands proposed together become one `apply-batch` entry (model-entry-group.ts). */
  readonly grouping: CommandGrouping<ModelCommand, CommandResult>

  /** `controller` is the id the leader's `apply-batch` entries are proposed as. */
  constructor (controller = 'leader') {
    this.grouping = modelEntryGrouping(controller)
  }

  encodeCommand (command: ModelCommand): Uint8Array {
    return encode(command, component)
  }

  apply (data: Uint8Array, at: EntryPosition): CommandResult {
    // The entry came from a leader's encodeCommand; applyCommand checks the envelope
    // (type, request id, proposer) and each handler its fields.
    const outcome = applyCommand(this.#model, decode(data, component) as ModelCommand, at)
    this.#model = outcome.context
    return outcome.result
  }

  skip (at: EntryPosition): void {
    this.#model = { ...this.#model, revision: at.index, term: at.term }
  }

  // RaftSnapshot data is stored and sent in chunks (stored-snapshot.ts, snapshot-transfer.ts),
  // so it may be larger than one codec frame: a 10,000-machine model is.
  snapshot (): Uint8Array {
    return encode(snapshotModel(this.#model), component, limits.raftSnapshotBytesMax)
  }

  restore (data: Uint8Array): void {
    // Empty RaftSnapshot data is the empty model (see raft-bootstrap.ts).
    this.#model = data.length === 0 ? emptyModel() : restoreModel(decode(data, component, limits.raftSnapshotBytesMax))
  }

  state (): ModelContext {
    return this.#model
  }
}
