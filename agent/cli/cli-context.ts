/**
 * What every CLI command gets: a connection to the chosen controller, output streams,
 * and whether to draw for a terminal (progress, colour) or write plain lines (a pipe,
 * CI, `--no-color`, `NO_COLOR`). Errors a command throws are printed by the entry point
 * as one line naming the component and exit 1.
 */
import type { Command } from 'commander'
import { CantripError, InvalidInputError } from '../../runtime/errors.ts'
import type { CommandResult } from '../../runtime/model/model-types.ts'
import { defaultModelName } from '../../runtime/ids.ts'
import { tableGet, tableKeys } from '../../runtime/model/table.ts'
import { modelTarget } from './cli-home.ts'
import type { Connection } from './connection.ts'
import { cantripVersion } from '../version.ts'

export { cantripVersion } from '../version.ts'

export interface CliContext {
  /**
   * Opens the named (or current) controller, speaking to the model `-m` names (or the
   * controller's current one), which must exist and not be dying; closed by the entry
   * point when the command ends.
   */
  connect (controller?: string): Promise<Connection>
  /** `-m [controller:]model`, as given on the command line. */
  model?: string | undefined
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
    model: undefined,
    out: text => { process.stdout.write(text.endsWith('\n') ? text : `${text}\n`) },
    err: text => { process.stderr.write(text.endsWith('\n') ? text : `${text}\n`) },
    async connect (controller?: string): Promise<Connection> {
      const target = modelTarget(this.model, controller)
      // Loaded on use: the transport stack (libp2p, Noise, yamux) is most of the client's
      // code, and commands that speak to no controller (version, help) need none of it.
      const { openConnection } = await import('./open-connection.ts')
      const connection = await openConnection(target.entry, target.controller)
      open.push(connection)
      if (target.model !== defaultModelName) await checkModel(connection, target.controller, target.model)
      connection.useModel(target.model)
      return connection
    },
    async closeAll (): Promise<void> {
      await Promise.allSettled(open.map(async c => { await c.close() }))
    }
  }
}

/** The model must be in the controller group's registry (which the default model holds) and alive. */
export async function checkModel (connection: Connection, controller: string, model: string): Promise<void> {
  const registry = (await connection.model()).model.models
  const record = tableGet(registry, model)
  if (record === undefined) {
    throw new InvalidInputError('cantrip', `a model of controller "${controller}" (${[defaultModelName, ...tableKeys(registry)].join(', ')})`, model)
  }
  if (record.life !== 'alive') throw new CantripError(`cantrip: model "${model}" of controller "${controller}" is being destroyed`)
}
