/**
 * `cantrip operations` (`list-operations`), `show-operation ID` and `show-task ID`, as
 * Juju 3.6's (cmd/juju/action/listoperations.go, showoperation.go, showtask.go): the
 * operations `run` and `exec` queued, filtered by application, unit, machine, action and
 * status; an operation's tasks with their hosts, statuses, times and results; one task's
 * output. Formats: a table (operations), plain (show-task), YAML or JSON.
 */
import { CantripError, InvalidInputError } from '../../../runtime/errors.ts'
import { isApplicationName, isMachineId, isUnitName } from '../../../runtime/ids.ts'
import { tableGet } from '../../../runtime/model/table.ts'
import type { ActionRecord } from '../../../runtime/model/model-types.ts'
import type { RegisterCommand } from '../cli-context.ts'
import { operationDocument, operationsOf, plainTime, taskDocument, type OperationView } from '../operation-view.ts'
import { formatDocument, formatTable } from '../output-format.ts'
import { plainTaskOutput } from '../task-plain-output.ts'
import { collectList } from './exec.ts'
import { type Connect, controllerFlags, controllerHelp, type Out, readModel } from './model-common.ts'

const taskStatuses = ['pending', 'running', 'completed', 'failed', 'cancelled', 'aborting', 'aborted']

export interface OperationFilter {
  apps?: string[]
  units?: string[]
  machines?: string[]
  actions?: string[]
  status?: string[]
  format?: string
}

export function checkOperationFilter (filter: OperationFilter): 'tabular' | 'yaml' | 'json' {
  const component = 'cantrip operations'
  for (const a of filter.apps ?? []) if (!isApplicationName(a)) throw new InvalidInputError(component, '--apps to name applications like "web"', a)
  for (const u of filter.units ?? []) if (!isUnitName(u)) throw new InvalidInputError(component, '--units to name units like "web/0"', u)
  for (const m of filter.machines ?? []) if (!isMachineId(m)) throw new InvalidInputError(component, '--machines to name machine ids like 0', m)
  for (const s of filter.status ?? []) if (!taskStatuses.includes(s)) throw new InvalidInputError(component, `--status of ${taskStatuses.join(', ')}`, s)
  const format = filter.format ?? 'tabular'
  if (format !== 'tabular' && format !== 'yaml' && format !== 'json') throw new InvalidInputError(component, '--format tabular, yaml or json', format)
  return format
}

/** Juju keeps an operation when any of its tasks matches every filter given. */
export function matchingOperations (operations: readonly OperationView[], filter: OperationFilter): OperationView[] {
  const matches = (task: ActionRecord): boolean =>
    (filter.apps === undefined || filter.apps.includes(task.unit.split('/')[0]!)) &&
    (filter.units === undefined || filter.units.includes(task.unit)) &&
    (filter.machines === undefined || filter.machines.includes(task.machine)) &&
    (filter.actions === undefined || filter.actions.includes(task.name)) &&
    (filter.status === undefined || filter.status.includes(task.status))
  return operations.filter(op => op.tasks.some(matches))
}

/** Juju's table: Id (right-aligned), Status, Started, Finished, Task IDs (at most 5, then "..."), Summary. */
export function operationsTable (operations: readonly OperationView[]): string {
  const rows = operations.map(op => {
    const ids = op.tasks.map(t => t.id)
    return [op.id, op.status, plainTime(op.startedAtMs), plainTime(op.completedAtMs), ids.slice(0, 5).join(',') + (ids.length > 5 ? '...' : ''), op.summary]
  })
  const width = Math.max(2, ...rows.map(r => r[0]!.length))
  return formatTable(['Id'.padStart(width), 'Status', 'Started', 'Finished', 'Task IDs', 'Summary'], rows.map(r => [r[0]!.padStart(width), ...r.slice(1)]))
}

export async function runOperations (connect: Connect, filter: OperationFilter, out: Out, err: Out): Promise<void> {
  const format = checkOperationFilter(filter)
  const client = await connect()
  const operations = matchingOperations(operationsOf(await readModel(client)), filter)
  if (operations.length === 0) {
    err('no matching operations')
    return
  }
  if (format === 'tabular') out(operationsTable(operations))
  else out(formatDocument(format, Object.fromEntries(operations.map(op => [op.id, operationDocument(op)]))))
}

function checkId (component: string, id: string, what: string): string {
  if (!/^\d+$/.test(id)) throw new InvalidInputError(component, `${what} id like 1`, id)
  return id
}

function documentFormat (component: string, format: string | undefined, allowed: readonly string[]): string {
  const f = format ?? allowed[0]!
  if (!allowed.includes(f)) throw new InvalidInputError(component, `--format ${allowed.join(', ')}`, f)
  return f
}

export async function runShowOperation (connect: Connect, id: string, options: { format?: string }, out: Out): Promise<void> {
  const component = 'cantrip show-operation'
  checkId(component, id, 'an operation')
  const format = documentFormat(component, options.format, ['yaml', 'json']) as 'yaml' | 'json'
  const op = operationsOf(await readModel(await connect())).find(o => o.id === id)
  if (op === undefined) throw new CantripError(`${component}: operation ${JSON.stringify(id)} not found`)
  out(formatDocument(format, operationDocument(op)))
}

export async function runShowTask (connect: Connect, id: string, options: { format?: string }, out: Out): Promise<void> {
  const component = 'cantrip show-task'
  checkId(component, id, 'a task')
  const format = documentFormat(component, options.format, ['plain', 'yaml', 'json'])
  const task = tableGet((await readModel(await connect())).actions, id)
  if (task === undefined) throw new CantripError(`${component}: task ${JSON.stringify(id)} not found`)
  // Juju's showtask.go prints plain output with run's formatter (common.go printOutput).
  out(format === 'plain' ? plainTaskOutput(task) : formatDocument(format as 'yaml' | 'json', taskDocument(task)))
}

export const registerOperations: RegisterCommand = (program, context) => {
  program.command('operations')
    .alias('list-operations')
    .description('list the operations run and exec queued, pending, running or finished')
    .option('--apps <names>', 'only operations on these applications, comma separated', collectList)
    .option('--units <names>', 'only operations on these units', collectList)
    .option('--machines <ids>', 'only operations on these machines', collectList)
    .option('--actions <names>', 'only these actions (juju-exec for exec)', collectList)
    .option('--status <statuses>', `only tasks in these statuses (${taskStatuses.join(', ')})`, collectList)
    .option('--format <format>', 'tabular, yaml or json', 'tabular')
    .option(controllerFlags, controllerHelp)
    .action(async (options: OperationFilter & { controller?: string }) => {
      await runOperations(async () => await context.connect(options.controller), options, context.out, context.err)
    })

  program.command('show-operation')
    .description('show an operation: its action, status, times and each task\'s results')
    .argument('<id>', 'operation id')
    .option('--format <format>', 'yaml or json', 'yaml')
    .option(controllerFlags, controllerHelp)
    .action(async (id: string, options: { format?: string, controller?: string }) => {
      await runShowOperation(async () => await context.connect(options.controller), id, options, context.out)
    })

  program.command('show-task')
    .description('show a task\'s output and results')
    .argument('<id>', 'task id')
    .option('--format <format>', 'plain, yaml or json', 'plain')
    .option(controllerFlags, controllerHelp)
    .action(async (id: string, options: { format?: string, controller?: string }) => {
      await runShowTask(async () => await context.connect(options.controller), id, options, context.out)
    })
}
