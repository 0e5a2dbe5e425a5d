/**
 * `cantrip resolved UNIT [--no-retry]` and `cantrip run <unit> [<unit> ...] <action>
 * [key=value ...] [--params FILE] [--string-args] [--wait 1m] [--background] [--format
 * plain|yaml|json]`, as Juju 3.6's (cmd/juju/action/run.go, common.go). run enqueues one
 * operation with a task per unit (run-arguments.ts reads the words; `app/leader` is the
 * leader's unit), waits for them on the controllers' change notices (no polling), then
 * prints them: plain by default (task-plain-output.ts: for one task the failure line, the
 * charm's results, its stdout and stderr; for several a YAML map of each unit's id,
 * status and results), or the tasks' whole documents keyed by unit under --format
 * yaml|json. As Juju's, it exits non-zero only when an action's process returned
 * non-zero (the "following task failed" list) or a task did not finish within --wait
 * (default 60 s); an action failed by action-fail whose process exited 0 prints its
 * failure and exits 0.
 */
import { InvalidInputError } from '../../../runtime/errors.ts'
import { tableValues } from '../../../runtime/model/table.ts'
import { expectOk, type RegisterCommand } from '../cli-context.ts'
import { formatDocument } from '../output-format.ts'
import { taskDocument } from '../operation-view.ts'
import { reportRunning, reportScheduled, reportWaiting } from '../operation-progress.ts'
import { type ParameterSources, parseRunArguments } from '../run-arguments.ts'
import { plainTaskOutput, plainTasksOutput } from '../task-plain-output.ts'
import { failedTasks, unitOrLeader, waitForTasks } from './exec.ts'
import { checkUnit, type Connect, controllerFlags, controllerHelp, type Out, parseDuration } from './model-common.ts'

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

/** Juju's run waits 60 s for its tasks unless --wait says otherwise (common.go runCommandBase.Init). */
const runWaitMsDefault = 60_000

export interface RunOptions extends ParameterSources { wait?: string, format?: string, background?: boolean, colour?: boolean }

/**
 * `cantrip run <unit> [<unit> ...] <action> [key=value ...]`: one operation with a task
 * per unit; waits (60 s unless --wait) and prints them, or returns at once with
 * --background.
 */
export async function runAction (connect: Connect, words: readonly string[], options: RunOptions, out: Out, err: Out = () => {}): Promise<void> {
  const component = 'cantrip run'
  const format = options.format ?? 'plain'
  if (format !== 'plain' && format !== 'yaml' && format !== 'json') throw new InvalidInputError(component, '--format plain, yaml or json', format)
  if (options.background === true && options.wait !== undefined) throw new InvalidInputError(component, '--background or --wait, not both', `--wait ${options.wait}`)
  const { receivers, action, parameters } = parseRunArguments(words, options)
  const waitMs = options.wait === undefined ? runWaitMsDefault : parseDuration(component, '--wait', options.wait)
  const client = await connect()
  const model = (await client.model()).model
  const units = [...new Set(receivers.map(receiver => unitOrLeader(component, model, receiver)))]
  // One operation with a task per unit, as Juju 3's run: the controller checks the
  // parameters against the action's schema and refuses before anything is queued.
  const result = expectOk(await client.submit({ type: 'enqueue-operation', units, task: { kind: 'action', name: action, parameters }, now: Date.now() }))
  const queued = result.tasks ?? []
  // Juju 3's run (cmd/juju/action/common.go): the operation and its tasks, then the wait, on stderr.
  if (options.background === true) {
    reportScheduled(result.operationId!, queued, out, err)
    return
  }
  reportRunning(result.operationId!, queued, err)
  for (const task of queued) reportWaiting(task, err)
  const tasks = await waitForTasks(client, queued.map(t => t.id), waitMs, component)
  const sorted = [...tasks].sort((a, b) => a.unit.localeCompare(b.unit, 'en', { numeric: true }))
  if (format !== 'plain') out(formatDocument(format, Object.fromEntries(sorted.map(t => [t.unit, taskDocument(t)]))))
  else out(sorted.length === 1 ? plainTaskOutput(sorted[0]!, options.colour === true) : plainTasksOutput(sorted))
  const failure = failedTasks(tasks)
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
    .description('run an action on one or more units of an application and wait for the results')
    .usage('<unit> [<unit> ...] <action> [key[.key ...]=value ...] [options]')
    .addHelpText('after', '\nExamples:\n  cantrip run kv/0 put key=colour value=blue\n  cantrip run kv/0 kv/1 get key=colour --wait 1m\n  cantrip run kv/leader get key=colour --format yaml\n  cantrip run kv/0 put --params params.yaml key=colour\n  cantrip run kv/0 put --string-args key=colour value=yes\n  cantrip run kv/0 backup --background')
    .argument('<words...>', 'units (kv/0, kv/leader), then the action, then key=value parameters (values read as YAML)')
    .option('--params <file>', 'a YAML file of parameters; key=value arguments override its keys')
    .option('--string-args', 'keep key=value values as text instead of reading them as YAML')
    .option('--wait <duration>', 'give up waiting after this long (default 60s), e.g. 30s, 5m')
    .option('--background', 'queue the action and return without waiting (see show-operation, show-task)')
    .option('--format <format>', 'plain (the results, stdout and stderr), or the whole task as yaml or json', 'plain')
    .option(controllerFlags, controllerHelp)
    .action(async (words: string[], options: { wait?: string, format?: string, background?: boolean, params?: string, stringArgs?: boolean, controller?: string }) => {
      const { controller, params, ...rest } = options
      await runAction(async () => await context.connect(controller), words, { ...rest, ...(params === undefined ? {} : { paramsFile: params }), colour: context.fancy }, context.out, context.err)
    })
}
