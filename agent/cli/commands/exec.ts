/**
 * `cantrip exec (--all | --machine M | --application A | --unit U) [--wait 5m]
 * [--format plain|yaml|json] -- COMMANDS`, as Juju 3.6's (cmd/juju/action/exec.go and
 * common.go): one operation with a task per unit, each run by the unit's agent in a hook
 * context (the hook tools, JUJU_* environment) and serialised with hooks on the machine
 * lock, also on a unit whose hook is in error. Waits for every task, then prints each
 * unit's output (plain: just the output, under `unit:` headers when there are several);
 * a task whose commands returned non-zero makes the command fail with Juju's list of
 * failed tasks. cantrip has no machine-level runner, so `--machine` and `--all` run on the
 * principal units of the machines (keyed by unit, where Juju keys them by machine).
 */
import { Option } from 'commander'
import { CantripError, InvalidInputError } from '../../../runtime/errors.ts'
import { isApplicationName, isMachineId, isUnitName } from '../../../runtime/ids.ts'
import { limits } from '../../../runtime/limits.ts'
import type { ActionRecord, ModelContext } from '../../../runtime/model/model-types.ts'
import { tableGet, tableValues } from '../../../runtime/model/table.ts'
import { expectOk, type RegisterCommand } from '../cli-context.ts'
import { formatDocument } from '../output-format.ts'
import { isFinished, taskDocument } from '../operation-view.ts'
import { reportScheduled } from '../operation-progress.ts'
import { type Connect, controllerFlags, controllerHelp, type ModelClient, type Out, parseDuration, untilModel } from './model-common.ts'

const component = 'cantrip exec'
/** Juju's exec waits five minutes by default. */
const execWaitMsDefault = 5 * 60_000

export interface ExecOptions {
  all?: boolean
  machine?: string[]
  application?: string[]
  unit?: string[]
  wait?: string
  format?: string
  background?: boolean
}

/** Several tasks failed: Juju's multi-line message, printed whole by the entry point. */
export class TaskFailures extends CantripError {
  override name = 'TaskFailures'
}

/** `--unit a/0,b/1 --unit c/2`: comma-separated and repeatable, as Juju's strings flags. */
export function collectList (value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), ...value.split(',').map(s => s.trim()).filter(s => s !== '')]
}

/** Checks the targets and flags before anything is sent (Juju's Init). */
export function checkExec (commands: readonly string[], options: ExecOptions): { waitMs: number, format: 'plain' | 'yaml' | 'json' } {
  if (commands.length === 0) throw new InvalidInputError(component, 'commands to run', '')
  const given = [...(options.machine ?? []), ...(options.application ?? []), ...(options.unit ?? [])]
  if (options.all === true && given.length > 0) throw new InvalidInputError(component, '--all alone, without --machine, --application or --unit', given.join(','))
  if (options.all !== true && given.length === 0) throw new InvalidInputError(component, 'a target: --all, --machine, --application or --unit', 'none')
  for (const m of options.machine ?? []) if (!isMachineId(m)) throw new InvalidInputError(component, '--machine to name machine ids like 0', m)
  for (const a of options.application ?? []) if (!isApplicationName(a)) throw new InvalidInputError(component, '--application to name applications like "web"', a)
  for (const u of options.unit ?? []) if (!isUnitName(u) && !/^[a-z][a-z0-9-]*\/leader$/.test(u)) throw new InvalidInputError(component, '--unit to name units like "web/0" or "web/leader"', u)
  if (options.background === true && options.wait !== undefined) throw new InvalidInputError(component, '--background or --wait, not both', `--wait ${options.wait}`)
  const format = options.format ?? 'plain'
  if (format !== 'plain' && format !== 'yaml' && format !== 'json') throw new InvalidInputError(component, '--format plain, yaml or json', format)
  const waitMs = options.wait === undefined ? execWaitMsDefault : parseDuration(component, '--wait', options.wait)
  if (waitMs <= 0 || waitMs > limits.execTimeoutMsMax) throw new InvalidInputError(component, `--wait from 1ms to ${limits.execTimeoutMsMax / 3_600_000}h`, options.wait)
  return { waitMs, format }
}

/** The units the targets name, each once, in natural order; an unknown target is refused. */
export function execUnits (model: ModelContext, options: ExecOptions): string[] {
  const units = new Set<string>()
  const principalsOn = (machine: string): string[] => tableValues(model.units).filter(u => u.machine === machine && u.principal === null).map(u => u.name)
  if (options.all === true) for (const machine of tableValues(model.machines)) for (const u of principalsOn(machine.id)) units.add(u)
  for (const id of options.machine ?? []) {
    if (tableGet(model.machines, id) === undefined) throw new CantripError(`${component}: machine ${JSON.stringify(id)} not found`)
    for (const u of principalsOn(id)) units.add(u)
  }
  for (const name of options.application ?? []) {
    const app = tableGet(model.applications, name)
    if (app === undefined) throw new CantripError(`${component}: application ${JSON.stringify(name)} not found`)
    for (const u of app.units) units.add(u)
  }
  for (const name of options.unit ?? []) units.add(unitOrLeader(component, model, name))
  if (units.size === 0) throw new CantripError(`${component}: the targets have no units to run on`)
  return [...units].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
}

/** `web/0` if the model has it; `web/leader`: the unit holding web's leadership lease, resolved before anything is queued, as Juju does. */
export function unitOrLeader (component: string, model: ModelContext, name: string): string {
  if (!name.endsWith('/leader')) {
    if (tableGet(model.units, name) === undefined) throw new CantripError(`${component}: unit ${JSON.stringify(name)} not found`)
    return name
  }
  const application = name.slice(0, -'/leader'.length)
  const lease = tableGet(model.leases, application)
  if (lease === undefined) throw new CantripError(`${component}: application ${JSON.stringify(application)} has no leader`)
  return lease.holder
}

/** Juju's plain exec output: each unit's stdout then stderr, under `unit:` headers when there are several. */
export function plainExecOutput (tasks: readonly ActionRecord[]): string {
  const outputs = [...tasks].sort((a, b) => a.unit.localeCompare(b.unit, 'en', { numeric: true })).map(task => {
    const text = (value: unknown): string => typeof value === 'string' && value !== '' ? (value.endsWith('\n') ? value : `${value}\n`) : ''
    return { unit: task.unit, output: text(task.results['stdout']) + text(task.results['stderr']) }
  })
  if (outputs.length === 1) return outputs[0]!.output
  return outputs.map(o => `${o.unit}:\n${o.output}\n`).join('')
}

/** Waits for the tasks to leave pending; a timeout names the units that did not answer, as Juju does. */
export async function waitForTasks (client: ModelClient, ids: readonly string[], waitMs: number, what: string): Promise<ActionRecord[]> {
  let tasks: Array<ActionRecord | undefined> = []
  const done = await untilModel(client, full => {
    tasks = ids.map(id => tableGet(full.model.actions, id))
    return tasks.every(t => t === undefined || isFinished(t.status))
  }, waitMs)
  if (!done) {
    const late = tasks.filter((t): t is ActionRecord => t !== undefined && !isFinished(t.status)).map(t => `unit ${t.unit}`)
    throw new CantripError(`${what}: timed out waiting for results from: ${late.join(', ')}`)
  }
  const kept = tasks.filter((t): t is ActionRecord => t !== undefined)
  if (kept.length !== ids.length) throw new CantripError(`${what}: the model no longer keeps the records of some tasks of ${ids.join(', ')}`)
  return kept
}

export async function runExec (connect: Connect, commands: readonly string[], options: ExecOptions, out: Out, err: Out = () => {}): Promise<void> {
  const { waitMs, format } = checkExec(commands, options)
  const client = await connect()
  const units = execUnits((await client.model()).model, options)
  const result = expectOk(await client.submit({ type: 'enqueue-operation', units, task: { kind: 'exec', commands: commands.join(' '), timeoutMs: waitMs }, now: Date.now() }))
  // Juju's exec keeps its progress quiet while it waits; in the background it says what it scheduled.
  if (options.background === true) {
    reportScheduled(result.operationId!, result.tasks ?? [], out, err)
    return
  }
  const tasks = await waitForTasks(client, (result.tasks ?? []).map(t => t.id), waitMs, component)
  if (format === 'plain') {
    const text = plainExecOutput(tasks)
    // Written as it is: with several units Juju ends each unit's part with a blank line.
    if (text !== '') out(text)
  } else {
    out(formatDocument(format, Object.fromEntries(tasks.map(t => [t.unit, taskDocument(t)]))))
  }
  const failure = failedTasks(tasks)
  if (failure !== undefined) throw failure
}

/** Juju's processOperationResults: only a task whose process returned non-zero fails the command. */
export function failedTasks (tasks: readonly ActionRecord[]): TaskFailures | undefined {
  const failed = tasks.filter(t => typeof t.results['return-code'] === 'number' && t.results['return-code'] > 0)
  if (failed.length === 0) return undefined
  const s = failed.length > 1 ? 's' : ''
  const list = failed.map(t => ` - id ${JSON.stringify(t.id)} with return code ${String(t.results['return-code'])}`).sort()
  return new TaskFailures(`the following task${s} failed:\n${list.join('\n')}\n\nuse 'cantrip show-task' to inspect the failure${s}`)
}

export const registerExec: RegisterCommand = (program, context) => {
  program.command('exec')
    .description('run commands on units in their hook context and print each one\'s output')
    .argument('<commands...>', 'the commands (put -- before them when they have options)')
    .option('--all', 'run on every machine\'s units')
    .option('--machine <ids>', 'machine ids, comma separated (repeatable)', collectList)
    .option('-a, --application <names>', 'application names, comma separated (repeatable; also --app)', collectList)
    .addOption(new Option('--app <names>').hideHelp().argParser(collectList))
    .option('-u, --unit <names>', 'unit names or app/leader, comma separated (repeatable)', collectList)
    .option('--wait <duration>', 'how long to wait for the results, and for the commands to run (default 5m; also --timeout)')
    .addOption(new Option('--timeout <duration>').hideHelp())
    .option('--background', 'queue the commands and return without waiting (see show-operation, show-task)')
    .option('--format <format>', 'plain, yaml or json', 'plain')
    .option(controllerFlags, controllerHelp)
    .addHelpText('after', '\nExamples:\n  cantrip exec --all -- hostname -f\n  cantrip exec --unit kv/0 env\n  cantrip exec --application kv --format yaml -- config-get\n  cantrip exec --application kv --background -- ./backup.sh')
    .action(async (commands: string[], options: ExecOptions & { app?: string[], timeout?: string, controller?: string }) => {
      const { app, timeout, controller, ...rest } = options
      const merged: ExecOptions = {
        ...rest,
        ...(app === undefined ? {} : { application: [...(rest.application ?? []), ...app] }),
        ...(timeout === undefined || rest.wait !== undefined ? {} : { wait: timeout })
      }
      await runExec(async () => await context.connect(controller), commands, merged, context.out, context.err)
    })
}
