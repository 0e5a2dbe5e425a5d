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
import { tableGet, tableValues } from '../../../runtime/model/table.ts'
import { expectOk, type RegisterCommand } from '../cli-context.ts'
import { isFinished } from '../operation-view.ts'
import { reportRunning, reportScheduled, reportWaiting } from '../operation-progress.ts'
import { actionParameters, checkUnit, type Connect, controllerFlags, controllerHelp, type ModelClient, type Out, parseDuration, untilModel } from './model-common.ts'

/** `resolved --all` (Juju 3): every unit whose hook failed; `resolved U...`: those units. */
export async function runResolvedMany (connect: Connect, units: readonly string[], options: { retry?: boolean, all?: boolean }): Promise<void> {
  const component = 'cantrip resolved'
  if (options.all === true && units.length > 0) throw new InvalidInputError(component, '--all or unit names, not both', units.join(' '))
  if (options.all !== true && units.length === 0) throw new InvalidInputError(component, 'a unit name like "web/0" or --all', 'none')
  for (const unit of units) checkUnit(component, unit)
  const client = await connect()
  const targets = options.all === true
    ? tableValues((await client.model()).model.units).filter(u => u.agent.status === 'error' || u.workload.status === 'error').map(u => u.name)
    : units
  for (const unit of targets) expectOk(await client.submit({ type: 'resolved', unit, mode: options.retry === false ? 'no-hooks' : 'retry-hooks' }))
}

export async function runResolved (connect: Connect, unit: string, options: { retry?: boolean }): Promise<void> {
  checkUnit('cantrip resolved', unit)
  const client = await connect()
  expectOk(await client.submit({ type: 'resolved', unit, mode: options.retry === false ? 'no-hooks' : 'retry-hooks' }))
}

/** Resolves with the action once it has finished (undefined: the model forgot it). */
export async function waitForAction (client: ModelClient, id: string, timeoutMs: number | undefined): Promise<ActionRecord | undefined> {
  let action: ActionRecord | undefined
  const finished = await untilModel(client, full => {
    action = tableGet(full.model.actions, id)
    return action === undefined || isFinished(action.status)
  }, timeoutMs)
  if (!finished) throw new CantripError(`cantrip run: action ${id} did not complete within ${(timeoutMs ?? 0) / 1000}s; it is still ${action?.status ?? 'queued'}`)
  return action
}

export async function runAction (connect: Connect, unit: string, action: string, params: readonly string[], options: { wait?: string, format?: string, background?: boolean }, out: Out, err: Out = () => {}): Promise<void> {
  const component = 'cantrip run'
  const format = options.format ?? 'yaml'
  if (format !== 'yaml' && format !== 'json') throw new InvalidInputError(component, '--format yaml or json', format)
  if (options.background === true && options.wait !== undefined) throw new InvalidInputError(component, '--background or --wait, not both', `--wait ${options.wait}`)
  checkUnit(component, unit)
  if (!/^[a-z][a-z0-9_-]*$/i.test(action)) throw new InvalidInputError(component, 'an action name', action)
  const parameters = actionParameters(component, params)
  const timeoutMs = options.wait === undefined ? undefined : parseDuration(component, '--wait', options.wait)
  const client = await connect()
  // One operation with one task, as Juju 3's run: the controller checks the parameters
  // against the action's schema and refuses before anything is queued.
  const result = expectOk(await client.submit({ type: 'enqueue-operation', units: [unit], task: { kind: 'action', name: action, parameters }, now: Date.now() }))
  const task = result.tasks![0]!
  const id = task.id
  // Juju 3's run (cmd/juju/action/common.go): the operation and its task, then the wait, on stderr.
  if (options.background === true) {
    reportScheduled(result.operationId!, [task], out, err)
    return
  }
  reportRunning(result.operationId!, [task], err)
  reportWaiting(task, err)
  const record = await waitForAction(client, id, timeoutMs)
  if (record === undefined) throw new CantripError(`${component}: action ${id} finished, but the model no longer keeps its record`)
  if (Object.keys(record.results).length > 0) out(format === 'json' ? JSON.stringify(record.results) : stringify(record.results).trimEnd())
  if (record.status !== 'completed') {
    throw new CantripError(`${component}: action "${action}" (${id}) on ${unit} ${record.status}${record.message === '' ? '' : `: ${record.message}`}`)
  }
}

export const registerActions: RegisterCommand = (program, context) => {
  program.command('resolved')
    .description('mark a unit\'s hook error resolved (retrying the hook unless --no-retry)')
    .addHelpText('after', '\nExamples:\n  cantrip resolved kv/0\n  cantrip resolved --no-retry kv/0')
    .argument('[units...]', 'unit names, e.g. web/0')
    .option('--all', 'every unit whose hook failed')
    .option('--no-retry', 'do not run the failed hook again')
    .option(controllerFlags, controllerHelp)
    .action(async (units: string[], options: { retry?: boolean, all?: boolean, controller?: string }) => {
      await runResolvedMany(async () => await context.connect(options.controller), units, options)
    })

  program.command('run')
    .description('run an action on a unit and wait for its results')
    .addHelpText('after', '\nExamples:\n  cantrip run kv/0 put key=colour value=blue\n  cantrip run kv/0 get key=colour --wait 1m\n  cantrip run kv/0 backup --background')
    .argument('<unit>', 'unit name, e.g. kv/0')
    .argument('<action>', 'action name')
    .argument('[params...]', 'parameters as key=value (values read as YAML)')
    .option('--wait <duration>', 'give up waiting after this long, e.g. 30s, 1m')
    .option('--background', 'queue the action and return without waiting (see show-operation, show-task)')
    .option('--format <format>', 'the results as yaml or json', 'yaml')
    .option(controllerFlags, controllerHelp)
    .action(async (unit: string, action: string, params: string[], options: { wait?: string, format?: string, background?: boolean, controller?: string }) => {
      await runAction(async () => await context.connect(options.controller), unit, action, params, options, context.out, context.err)
    })
}
