/**
 * Model commands built typed end to end. A proposer (a unit agent, a machiner, the
 * provisioner, the CLI) builds a command's body — `ModelCommandBody`, the command without
 * its request id and proposer — and hands it to one `CommandProposer`, which stamps both:
 * the entity it speaks for and a request id that is unique per proposer and stable across
 * retries of the same command (the model applies a request id once).
 */
import type { CommandResult, Entity, ModelCommand } from './model-types.ts'

/** Omit that distributes over a union, so each command keeps its own fields. */
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never

/** A model command as its proposer builds it: everything but `requestId` and `proposer`. */
export type ModelCommandBody = DistributiveOmit<ModelCommand, 'requestId' | 'proposer'>

/** Where commands go: a controller node, a controller client, a test's model. */
export interface CommandSink {
  submit (command: ModelCommand): Promise<CommandResult>
}

export interface CommandProposerOptions {
  /** Who proposes: the model checks that this entity may make each command. */
  readonly proposer: Entity
  /**
   * Unique per proposer and per start of its process (e.g. `kv/0/<uuid>` or
   * `machine-3/<incarnation>`): request ids are `<prefix>/<n>`, so they never repeat
   * across restarts.
   */
  readonly requestPrefix: string
}

export class CommandProposer {
  readonly proposer: Entity
  readonly #prefix: string
  #requests = 0

  constructor (options: CommandProposerOptions) {
    this.proposer = options.proposer
    this.#prefix = options.requestPrefix
  }

  /** The body stamped with this proposer and a fresh request id. */
  command (body: ModelCommandBody): ModelCommand {
    return { ...body, requestId: `${this.#prefix}/${++this.#requests}`, proposer: this.proposer } as ModelCommand
  }

  /** Builds the command and submits it to `sink`. */
  async submit (sink: CommandSink, body: ModelCommandBody): Promise<CommandResult> {
    return await sink.submit(this.command(body))
  }
}
