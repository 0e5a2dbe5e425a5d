/**
 * `cantrip status [selectors...] [--format tabular|yaml|json] [--relations] [--watch]`.
 * It reads the whole model linearizably; `--watch` re-reads on every change the
 * controllers push (not polled), as `wait-for` (wait-for.ts) does. Selectors keep the
 * applications, units and machines whose names match (`kv`, `kv/1`, `0`, with `*` globs).
 */
import { stringify } from 'yaml'
import { InvalidInputError } from '../../../runtime/errors.ts'
import type { RegisterCommand } from '../cli-context.ts'
import { modelTarget } from '../cli-home.ts'
import type { FullModel } from '../connection.ts'
import { untilModel } from './model-common.ts'
import { statusDocument, type StatusDocument } from '../status-document.ts'
import { formatTabular } from '../status-tabular.ts'

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
}
