/**
 * What every CLI command gets: a connection to the chosen controller, output streams,
 * and whether to draw for a terminal (progress, colour) or write plain lines (a pipe,
 * CI, `--no-color`, `NO_COLOR`). Errors a command throws are printed by the entry point
 * as one line naming the component and exit 1.
 */
import type { Command } from 'commander'
import { CantripError } from '../../runtime/errors.ts'
import type { CommandResult } from '../../runtime/model/model-types.ts'
import { controllerEntry } from './cli-home.ts'
import { Connection } from './connection.ts'
import { cantripVersion } from '../version.ts'

export { cantripVersion } from '../version.ts'

export interface CliContext {
  /** Opens the named (or current) controller; closed by the entry point when the command ends. */
  connect (controller?: string): Promise<Connection>
  out (text: string): void
  err (text: string): void
  /** A terminal that wants progress drawn and colour (not a pipe, CI, --no-color or NO_COLOR). */
  readonly fancy: boolean
}

export type RegisterCommand = (program: Command, context: CliContext) => void

/** A command's refusal by the model, as `controller 0.1.0: cannot …`. */
export class CommandRefused extends CantripError {
  override name = 'CommandRefused'
}

/** The model's result, or a CommandRefused naming the controller and its version. */
export function expectOk (result: CommandResult): Extract<CommandResult, { ok: true }> {
  if (result.ok) return result
  throw new CommandRefused(result.error.replace(/^controller:/, `controller ${cantripVersion}:`))
}

export function createContext (options: { noColor: boolean }): CliContext & { closeAll: () => Promise<void> } {
  const open: Connection[] = []
  const fancy = process.stdout.isTTY === true && !options.noColor && process.env['NO_COLOR'] === undefined && process.env['CI'] === undefined
  return {
    fancy,
    out: text => { process.stdout.write(text.endsWith('\n') ? text : `${text}\n`) },
    err: text => { process.stderr.write(text.endsWith('\n') ? text : `${text}\n`) },
    async connect (controller?: string): Promise<Connection> {
      const { entry } = controllerEntry(controller)
      const connection = await Connection.open(entry)
      open.push(connection)
      return connection
    },
    async closeAll (): Promise<void> {
      await Promise.allSettled(open.map(async c => { await c.close() }))
    }
  }
}
