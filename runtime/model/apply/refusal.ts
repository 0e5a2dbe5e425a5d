import { describeValue } from '../../errors.ts'
import type { ModelDraft } from '../model-draft.ts'
import type { CommandOf, CommandSucceeded, ModelCommand, ModelCommandType } from '../model-types.ts'
import { describeCommand } from './describe-command.ts'

/**
 * Refusals: a handler that finds a command invalid throws one, and `applyCommand` turns it
 * into the one line the client sees (`controller: cannot <what>: <why>`).
 */

/** A refusal: the message is the one line the client sees. */
export class Refusal extends Error {
  override name = 'Refusal'
}

export type Succeeded = Omit<CommandSucceeded, 'ok' | 'index'>
export type Handler<T extends ModelCommandType> = (d: ModelDraft, c: CommandOf<T>) => Succeeded
/** The handlers of some command types, one per type: the concern files each export one. */
export type HandlerTable<K extends ModelCommandType> = { [T in K]: Handler<T> }

export const q = describeValue
export const textFieldLengthMax = 1024

export function refuse (c: ModelCommand, why: string): never {
  throw new Refusal(refusalMessage(c, why))
}

/** The line a refusal of `c` shows, for a controller that refuses before proposing (lease claims). */
export function refusalMessage (c: ModelCommand, why: string): string {
  return `controller: cannot ${describeCommand(c)}: ${why}`
}
