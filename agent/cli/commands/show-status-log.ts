/**
 * `cantrip show-status-log ENTITY [--type unit|workload|juju-unit|machine|juju-machine|application]
 * [-n N] [--format tabular|json|yaml]`, as Juju's: the entity's status history, oldest
 * first, the last `-n` (20) entries:
 *
 *   Time                   Type       Status       Message
 *   24 Nov 2026 11:02:03Z  juju-unit  executing    running install hook
 *   24 Nov 2026 11:02:04Z  workload   maintenance  installing
 *
 * `--type unit` (the default) is both the workload's and the agent's (`juju-unit`)
 * changes of unit ENTITY; `machine` a machine's instance status and `juju-machine` its
 * agent's (ENTITY a machine id); `application` what the leader set for it. The history is
 * kept in the replicated model (runtime/model/status-history.ts), bounded per entity.
 * Times are shown in UTC (Juju's `--utc`).
 */
import { stringify } from 'yaml'
import { InvalidInputError } from '../../../runtime/errors.ts'
import type { ModelContext, StatusHistoryEntry } from '../../../runtime/model/model-types.ts'
import { tableGet } from '../../../runtime/model/table.ts'
import type { RegisterCommand } from '../cli-context.ts'
import { checkApplication, checkMachine, checkUnit, type Connect, controllerFlags, controllerHelp, type Out, parseCount, readModel } from './model-common.ts'

const component = 'cantrip show-status-log'
const types = ['unit', 'workload', 'juju-unit', 'machine', 'juju-machine', 'application'] as const
const formats = ['tabular', 'json', 'yaml'] as const
const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']

export interface ShowStatusLogOptions {
  type?: string
  n?: string
  format?: string
}

export interface StatusLogRow {
  time: string
  type: StatusHistoryEntry['type']
  status: string
  message: string
  /** Juju's DetailedStatus.Data (cmd/juju/status/history.go): in yaml and json, when the status has any. */
  data?: Readonly<Record<string, string | number>>
}

/** Checks the arguments before anything is sent; returns the type and count. */
export function statusLogPlan (entity: string, options: ShowStatusLogOptions): { type: typeof types[number], n: number, format: typeof formats[number] } {
  const type = options.type ?? 'unit'
  if (!(types as readonly string[]).includes(type)) throw new InvalidInputError(component, `--type ${types.join(', ')}`, type)
  if (type === 'machine' || type === 'juju-machine') checkMachine(component, entity)
  else if (type === 'application') checkApplication(component, entity)
  else checkUnit(component, entity)
  const format = options.format ?? 'tabular'
  if (!(formats as readonly string[]).includes(format)) throw new InvalidInputError(component, `--format ${formats.join(', ')}`, format)
  return { type: type as typeof types[number], n: parseCount(component, options.n, 20), format: format as typeof formats[number] }
}

/** Juju's time format, in UTC: `24 Nov 2026 11:02:03Z`; empty for statuses the model set itself. */
export function statusTime (since: number | null): string {
  if (since === null) return ''
  const t = new Date(since)
  const hms = [t.getUTCHours(), t.getUTCMinutes(), t.getUTCSeconds()].map(n => String(n).padStart(2, '0')).join(':')
  return `${String(t.getUTCDate()).padStart(2, '0')} ${months[t.getUTCMonth()]!} ${t.getUTCFullYear()} ${hms}Z`
}

export function statusLogRows (model: ModelContext, entity: string, options: ShowStatusLogOptions): StatusLogRow[] {
  const { type, n } = statusLogPlan(entity, options)
  const kind = type === 'machine' || type === 'juju-machine' ? 'machine' : type === 'application' ? 'application' : 'unit'
  const record = kind === 'machine' ? tableGet(model.machines, entity) : kind === 'application' ? tableGet(model.applications, entity) : tableGet(model.units, entity)
  if (record === undefined) throw new InvalidInputError(component, `${{ machine: 'a machine', application: 'an application', unit: 'a unit' }[kind]} in the model`, entity)
  const entries = record.statusHistory.filter(e => type === 'unit' ? e.type === 'workload' || e.type === 'juju-unit' : e.type === type)
  return entries.slice(Math.max(0, entries.length - n)).map(e => ({ time: statusTime(e.since), type: e.type, status: e.status, message: e.message, ...(e.data === undefined ? {} : { data: e.data }) }))
}

export function renderStatusLog (rows: readonly StatusLogRow[], format: typeof formats[number]): string {
  if (format === 'json') return `${JSON.stringify(rows)}\n`
  if (format === 'yaml') return stringify(rows)
  const table = [['Time', 'Type', 'Status', 'Message'], ...rows.map(r => [r.time, r.type, r.status, r.message])]
  const widths = [0, 1, 2].map(i => Math.max(...table.map(row => row[i]!.length)))
  return table.map(row => row.map((cell, i) => i < 3 ? cell.padEnd(widths[i]! + 2) : cell).join('').trimEnd()).join('\n') + '\n'
}

export async function runShowStatusLog (connect: Connect, entity: string, options: ShowStatusLogOptions, out: Out): Promise<void> {
  const { format } = statusLogPlan(entity, options)
  const model = await readModel(await connect())
  out(renderStatusLog(statusLogRows(model, entity, options), format))
}

export const registerShowStatusLog: RegisterCommand = (program, context) => {
  program.command('show-status-log')
    .description('show the status history of a unit, machine or application')
    .argument('<entity>', 'a unit (kv/0), or with --type a machine id or an application')
    .option('--type <type>', 'unit (workload and agent), workload, juju-unit, machine, juju-machine or application', 'unit')
    .option('-n <n>', 'the last this many entries', '20')
    .option('--format <format>', 'tabular, json or yaml', 'tabular')
    .option(controllerFlags, controllerHelp)
    .action(async (entity: string, options: ShowStatusLogOptions & { controller?: string }) => {
      await runShowStatusLog(async () => await context.connect(options.controller), entity, options, context.out)
    })
}
