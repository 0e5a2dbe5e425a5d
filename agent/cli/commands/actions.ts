/**
 * `cantrip resolved UNIT [--no-retry]` and `cantrip run UNIT ACTION [key=value...]
 * [--wait 1m]`, as Juju's. run enqueues the action (an operation of one task, see
 * operations.ts), then waits for it to finish on the
 * controllers' change notices (no polling), prints its results as YAML, and fails when
 * the action failed or did not finish within --wait (default: wait until it does).
 */
import { stringify } from 'yaml'
import { CantripError, InvalidInputError } from '../../../runtime/errors.ts'
import type { ActionRecord } from '../../../runtime/model/model-types.ts'
import { tableGet } from '../../../runtime/model/table.ts'
import { expectOk, type RegisterCommand } from '../cli-context.ts'
import { actionParameters, checkUnit, type Connect, controllerFlags, controllerHelp, type ModelClient, type Out, parseDuration, untilModel } from './model-common.ts'

export async function runResolved (connect: Connect, unit: string, options: { retry?: boolean }): Promise<void> {
  checkUnit('cantrip resolved', unit)
  const client = await connect()
  expectOk(await client.submit({ type: 'resolved', unit, mode: options.retry === false ? 'no-hooks' : 'retry-hooks' }))
}

/** Resolves with the action once it is no longer pending (undefined: the model forgot it). */
export async function waitForAction (client: ModelClient, id: string, timeoutMs: number | undefined): Promise<ActionRecord | undefined> {
  let action: ActionRecord | undefined
  const finished = await untilModel(client, full => {
    action = tableGet(full.model.actions, id)
    return action === undefined || action.status !== 'pending'
  }, timeoutMs)
  if (!finished) throw new CantripError(`cantrip run: action ${id} did not complete within ${(timeoutMs ?? 0) / 1000}s; it is still queued`)
  return action
}

export async function runAction (connect: Connect, unit: string, action: string, params: readonly string[], options: { wait?: string }, out: Out): Promise<void> {
  const component = 'cantrip run'
  checkUnit(component, unit)
  if (!/^[a-z][a-z0-9_-]*$/i.test(action)) throw new InvalidInputError(component, 'an action name', action)
  const parameters = actionParameters(component, params)
  const timeoutMs = options.wait === undefined ? undefined : parseDuration(component, '--wait', options.wait)
  const client = await connect()
  // One operation with one task, as Juju 3's run: the controller checks the parameters
  // against the action's schema and refuses before anything is queued.
  const result = expectOk(await client.submit({ type: 'enqueue-operation', units: [unit], task: { kind: 'action', name: action, parameters }, now: Date.now() }))
  const id = result.tasks![0]!.id
  const record = await waitForAction(client, id, timeoutMs)
  if (record === undefined) throw new CantripError(`${component}: action ${id} finished, but the model no longer keeps its record`)
  if (Object.keys(record.results).length > 0) out(stringify(record.results).trimEnd())
  if (record.status !== 'completed') {
    throw new CantripError(`${component}: action "${action}" (${id}) on ${unit} ${record.status}${record.message === '' ? '' : `: ${record.message}`}`)
  }
}

export const registerActions: RegisterCommand = (program, context) => {
  program.command('resolved')
    .description('mark a unit\'s hook error resolved (retrying the hook unless --no-retry)')
    .addHelpText('after', '\nExamples:\n  cantrip resolved kv/0\n  cantrip resolved --no-retry kv/0')
    .argument('<unit>', 'unit name, e.g. web/0')
    .option('--no-retry', 'do not run the failed hook again')
    .option(controllerFlags, controllerHelp)
    .action(async (unit: string, options: { retry?: boolean, controller?: string }) => {
      await runResolved(async () => await context.connect(options.controller), unit, options)
    })

  program.command('run')
    .description('run an action on a unit and wait for its results')
    .addHelpText('after', '\nExamples:\n  cantrip run kv/0 put key=colour value=blue\n  cantrip run kv/0 get key=colour --wait 1m')
    .argument('<unit>', 'unit name, e.g. kv/0')
    .argument('<action>', 'action name')
    .argument('[params...]', 'parameters as key=value (values read as YAML)')
    .option('--wait <duration>', 'give up waiting after this long, e.g. 30s, 1m')
    .option(controllerFlags, controllerHelp)
    .action(async (unit: string, action: string, params: string[], options: { wait?: string, controller?: string }) => {
      await runAction(async () => await context.connect(options.controller), unit, action, params, options, context.out)
    })
}
