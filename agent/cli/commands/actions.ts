/**
 * `cantrip resolved UNIT [--no-retry]` and `cantrip run UNIT ACTION [key=value...]
 * [--wait 1m] [--format plain|yaml|json]`, as Juju 3.6's (cmd/juju/action/run.go,
 * common.go). run enqueues the action (an operation of one task, see operations.ts),
 * waits for it on the controllers' change notices (no polling), then prints it: plain by
 * default (task-plain-output.ts: the failure line, the charm's results, its stdout and
 * stderr), or the task's whole document keyed by unit under --format yaml|json. As
 * Juju's, it exits non-zero only when the action's process returned non-zero (the
 * "following task failed" list) or did not finish within --wait (default: wait until it
 * does); an action failed by action-fail whose process exited 0 prints its failure and
 * exits 0.
 */
import { CantripError, InvalidInputError } from '../../../runtime/errors.ts'
import type { ActionRecord } from '../../../runtime/model/model-types.ts'
import { tableGet, tableValues } from '../../../runtime/model/table.ts'
import { expectOk, type RegisterCommand } from '../cli-context.ts'
import { formatDocument } from '../output-format.ts'
import { isFinished, taskDocument } from '../operation-view.ts'
import { type QueuedTask, reportRunning, reportScheduled, reportWaiting } from '../operation-progress.ts'
import { plainTaskOutput } from '../task-plain-output.ts'
import { failedTasks } from './exec.ts'
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
export async function waitForAction (client: ModelClient, task: QueuedTask, timeoutMs: number | undefined): Promise<ActionRecord | undefined> {
  const { id, unit } = task
  let action: ActionRecord | undefined
  const finished = await untilModel(client, full => {
    action = tableGet(full.model.actions, id)
    return action === undefined || isFinished(action.status)
  }, timeoutMs)
  // Juju's handleTimeout: the units whose results did not come.
  if (!finished) throw new CantripError(`cantrip run: timed out waiting for results from: unit ${unit}`)
  return action
}

export interface RunOptions { wait?: string, format?: string, background?: boolean, colour?: boolean }

export async function runAction (connect: Connect, unit: string, action: string, params: readonly string[], options: RunOptions, out: Out, err: Out = () => {}): Promise<void> {
  const component = 'cantrip run'
  const format = options.format ?? 'plain'
  if (format !== 'plain' && format !== 'yaml' && format !== 'json') throw new InvalidInputError(component, '--format plain, yaml or json', format)
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
  const record = await waitForAction(client, task, timeoutMs)
  if (record === undefined) throw new CantripError(`${component}: action ${id} finished, but the model no longer keeps its record`)
  out(format === 'plain' ? plainTaskOutput(record, options.colour === true) : formatDocument(format, { [record.unit]: taskDocument(record) }))
  const failure = failedTasks([record])
  if (failure !== undefined) throw failure
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
    .addHelpText('after', '\nExamples:\n  cantrip run kv/0 put key=colour value=blue\n  cantrip run kv/0 get key=colour --wait 1m\n  cantrip run kv/0 get key=colour --format yaml\n  cantrip run kv/0 backup --background')
    .argument('<unit>', 'unit name, e.g. kv/0')
    .argument('<action>', 'action name')
    .argument('[params...]', 'parameters as key=value (values read as YAML)')
    .option('--wait <duration>', 'give up waiting after this long, e.g. 30s, 1m')
    .option('--background', 'queue the action and return without waiting (see show-operation, show-task)')
    .option('--format <format>', 'plain (the results, stdout and stderr), or the whole task as yaml or json', 'plain')
    .option(controllerFlags, controllerHelp)
    .action(async (unit: string, action: string, params: string[], options: { wait?: string, format?: string, background?: boolean, controller?: string }) => {
      const { controller, ...rest } = options
      await runAction(async () => await context.connect(controller), unit, action, params, { ...rest, colour: context.fancy }, context.out, context.err)
    })
}
