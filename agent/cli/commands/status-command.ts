/**
 * `cantrip status [selectors...] [--format tabular|yaml|json] [--relations] [--watch]`
 * and `cantrip wait-for application|unit|machine NAME [--status S] [--timeout 10m]`.
 * Both read the whole model linearizably; `--watch` and `wait-for` re-read on every change
 * notice the leader gossips (pushed, not polled). Selectors keep the applications, units
 * and machines whose names match (`kv`, `kv/1`, `0`, with `*` globs).
 */
import { stringify } from 'yaml'
import { InvalidInputError } from '../../../runtime/errors.ts'
import type { RegisterCommand, CliContext } from '../cli-context.ts'
import { modelTarget } from '../cli-home.ts'
import type { FullModel } from '../connection.ts'
import { parseDuration, untilModel } from './model-common.ts'
import { statusDocument, type StatusDocument } from '../status-document.ts'
import { displayedUnit } from '../../../runtime/model/status-display.ts'
import { formatTabular } from '../status-tabular.ts'
import { readerOf } from '../../../runtime/model/model-draft.ts'

const formats = ['tabular', 'yaml', 'json'] as const
type Format = typeof formats[number]

export function parseFormat (value: string): Format {
  if (!formats.includes(value as Format)) throw new InvalidInputError('cantrip status', `--format ${formats.join(', ')}`, value)
  return value as Format
}

function glob (pattern: string): RegExp {
  return new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replaceAll('*', '.*')}$`)
}

/** Keeps what the selectors name: an application, a unit (and its application), a machine (and its units). */
export function selectStatus (doc: StatusDocument, selectors: readonly string[]): StatusDocument {
  if (selectors.length === 0) return doc
  const patterns = selectors.map(glob)
  const hit = (name: string): boolean => patterns.some(p => p.test(name))
  const applications: StatusDocument['applications'] = {}
  const machines = new Set<string>()
  for (const [name, app] of Object.entries(doc.applications)) {
    const units = Object.fromEntries(Object.entries(app.units ?? {}).filter(([unit, status]) => hit(name) || hit(unit) || hit(status.machine)))
    if (!hit(name) && Object.keys(units).length === 0) continue
    applications[name] = { ...app, ...(app.units === undefined ? {} : { units }) }
    for (const status of Object.values(units)) machines.add(status.machine)
  }
  for (const id of Object.keys(doc.machines)) if (hit(id)) machines.add(id)
  return { ...doc, applications, machines: Object.fromEntries(Object.entries(doc.machines).filter(([id]) => machines.has(id))) }
}

export function render (full: FullModel, controller: string, options: { format: Format, relations: boolean, selectors: string[], colour?: boolean }, now: number): string {
  const doc = selectStatus(statusDocument(full, controller, now), options.selectors)
  if (options.format === 'json') return JSON.stringify(doc) + '\n'
  if (options.format === 'yaml') return stringify(doc)
  return formatTabular(doc, full, { relations: options.relations, colour: options.colour === true })
}

export const registerStatus: RegisterCommand = (program, context) => {
  program.command('status')
    .description('show the model: applications, units, machines (and integrations)')
    .addHelpText('after', '\nExamples:\n  cantrip status\n  cantrip status kv --relations\n  cantrip status --format yaml')
    .argument('[selectors...]', 'applications, units or machines to show (globs allowed)')
    .option('--format <format>', 'tabular, yaml or json', 'tabular')
    .option('--relations', 'show the integrations section')
    .option('--watch', 'redraw on every change (pushed by the controller)')
    .option('-c, --controller <name>', 'controller (default: the current one)')
    .action(async (selectors: string[], options: { format: string, relations?: boolean, watch?: boolean, controller?: string }) => {
      const format = parseFormat(options.format)
      // -m may name the controller too (`-m local:staging`).
      const name = modelTarget(context.model, options.controller).controller
      const connection = await context.connect(name)
      const show = (full: FullModel): void => {
        const text = render(full, name, { format, relations: options.relations === true, selectors, colour: context.fancy }, Date.now())
        if (options.watch === true && context.fancy) process.stdout.write('\x1b[2J\x1b[H')
        context.out(options.watch === true && !context.fancy ? `${text}\n` : text)
      }
      if (options.watch !== true) {
        show(await connection.model())
        return
      }
      let last = ''
      await untilModel(connection, full => {
        const key = JSON.stringify(statusDocument(full, name, 0))
        if (key !== last) { last = key; show(full) }
        return false
      }, undefined)
    })

  program.command('wait-for')
    .description('wait until an application, unit or machine reaches a status (event-driven)')
    .argument('<kind>', 'application, unit or machine')
    .argument('<name>', 'its name')
    .option('--status <status>', 'the status to wait for (workload status; machine: agent state or instance status)', 'active')
    .option('--timeout <duration>', 'give up after this long', '10m')
    .option('-c, --controller <name>', 'controller (default: the current one)')
    .action(async (kind: string, target: string, options: { status: string, timeout: string, controller?: string }) => {
      if (!['application', 'unit', 'machine'].includes(kind)) throw new InvalidInputError('cantrip wait-for', 'application, unit or machine', kind)
      const timeoutMs = parseDuration('cantrip wait-for', '--timeout', options.timeout)
      const connection = await context.connect(options.controller)
      let seen = ''
      const reached = await untilModel(connection, full => {
        const now = currentStatus(full, kind, target)
        if (now !== seen) { seen = now; report(context, `${kind} ${target}: ${now}`) }
        return reachedStatus(kind, now, options.status)
      }, timeoutMs)
      if (!reached) throw new Error(`cantrip wait-for: ${kind} ${target} did not reach "${options.status}" within ${options.timeout} (last: ${seen || 'not found'})`)
      context.out(`${kind} ${target} is ${options.status}`)
    })
}

/**
 * A machine's is `<agent> <instance status>`: either counts (`started`, or `provisioning
 * error`, which leaves the agent `pending` as Juju's provisioner does); the others' first word.
 */
export function reachedStatus (kind: string, current: string, wanted: string): boolean {
  const [first = '', ...rest] = current.split(' ')
  return first === wanted || (kind === 'machine' && rest.join(' ') === wanted)
}

function report (context: CliContext, line: string): void {
  if (context.fancy) process.stderr.write(`\r\x1b[2K${line}`)
  else context.err(line)
}

/** `status message` of the target as status shows it, or `missing`. */
export function currentStatus (full: FullModel, kind: string, name: string): string {
  const reader = readerOf(full.model)
  if (kind === 'machine') {
    const machine = reader.machine(name)
    return machine === undefined ? 'missing' : `${machine.agent.status} ${machine.instance.status}`
  }
  if (kind === 'unit') {
    const unit = reader.unit(name)
    if (unit === undefined) return 'missing'
    const shown = displayedUnit(unit, full.presence[unit.machine]?.status === 'lost')
    return `${shown.workload.status} ${shown.workload.message}`.trim()
  }
  const doc = statusDocument(full, '', 0)
  const app = doc.applications[name]
  return app === undefined ? 'missing' : `${app['application-status'].current} ${app['application-status'].message ?? ''}`.trim()
}
