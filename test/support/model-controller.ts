/**
 * An in-memory controller for unit-agent tests: one model, every command applied at once
 * with `applyCommand` at the next index, and a clock the test sets (`clock`). It
 * implements the UnitControllerApi a unit agent and its hook contexts use, and records
 * what they submitted.
 */
import type { UnitControllerApi } from '../../agent/uniter/unit-hook-context.ts'
import { leaderApplicationStatus, type ApplicationStatusReply } from '../../runtime/model/application-status.ts'
import { applyCommand, emptyModel } from '../../runtime/model/model-store.ts'
import type { CommandOf, CommandResult, Entity, ModelCommand, ModelCommandType, ModelContext } from '../../runtime/model/model-types.ts'

export type CommandFields<T extends ModelCommandType> = Omit<CommandOf<T>, 'type' | 'requestId' | 'proposer'>

export class MemoryController implements UnitControllerApi {
  context: ModelContext = emptyModel()
  index = 0
  /** What `now()` answers: the test moves it. */
  clock = 0
  /** Every command that came through `submit` (agents), in order. */
  readonly submitted: ModelCommand[] = []
  /** How many `application-status` calls came in. */
  applicationStatusAsks = 0
  #requests = 0

  model (): ModelContext { return this.context }
  now (): number { return this.clock }

  async submit (command: ModelCommand): Promise<CommandResult> {
    this.submitted.push(command)
    return this.apply(command)
  }

  /** As the controller API answers it (leader only, at `clock`), counted in applicationStatusAsks. */
  async applicationStatus (unit: string): Promise<ApplicationStatusReply> {
    this.applicationStatusAsks++
    const answer = leaderApplicationStatus(this.context, unit, this.clock)
    return answer === undefined ? { ok: false, error: `memory controller: permission denied: unit ${JSON.stringify(unit)} does not lead` } : { ok: true, ...answer }
  }

  apply (command: ModelCommand): CommandResult {
    const outcome = applyCommand(this.context, command, { index: ++this.index, term: 1 })
    this.context = outcome.context
    return outcome.result
  }

  /** Applies a command as `proposer` (the admin by default); throws if it is refused. */
  run<T extends ModelCommandType> (type: T, fields: CommandFields<T>, proposer: Entity = { kind: 'user', name: 'admin' }): CommandResult & { ok: true } {
    const result = this.apply({ type, requestId: `test-${this.#requests++}`, proposer, ...fields } as unknown as ModelCommand)
    if (!result.ok) throw new Error(`${type} refused: ${result.error}`)
    return result
  }

  /** The same, proposed by a unit agent for itself. */
  runAs<T extends ModelCommandType> (unit: string, type: T, fields: CommandFields<T>): CommandResult & { ok: true } {
    return this.run(type, fields, { kind: 'unit', name: unit })
  }
}
