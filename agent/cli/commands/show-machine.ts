/**
 * `cantrip machines` (`list-machines`) and `cantrip show-machine M...`, as Juju's
 * (cmd/juju/machine/list.go, show.go): the Machine section of status as a table, or the
 * status document's machines as YAML/JSON (`show-machine` defaults to YAML, under
 * `model:` and `machines:` as Juju prints it).
 */
import { InvalidInputError } from '../../../runtime/errors.ts'
import type { RegisterCommand } from '../cli-context.ts'
import { modelTarget } from '../cli-home.ts'
import { formatDocument } from '../output-format.ts'
import { statusPainter } from '../status-colour.ts'
import { statusDocument, type StatusDocument } from '../status-document.ts'
import { machinesSection } from '../status-tabular.ts'
import { checkMachine, controllerFlags, controllerHelp } from './model-common.ts'

/** Juju's `machines` table: the Machine section of status. */
export function machinesTable (doc: StatusDocument, colour = false): string {
  return machinesSection(doc, statusPainter(colour))
}

function checkFormat (component: string, format: string, allowed: readonly string[]): string {
  if (!allowed.includes(format)) throw new InvalidInputError(component, `--format ${allowed.join(', ')}`, format)
  return format
}

export const registerShowMachine: RegisterCommand = (program, context) => {
  program.command('machines')
    .alias('list-machines')
    .description('list the model\'s machines')
    .option('--format <format>', 'tabular, yaml or json', 'tabular')
    .option(controllerFlags, controllerHelp)
    .action(async (options: { format: string, controller?: string }) => {
      const format = checkFormat('cantrip machines', options.format, ['tabular', 'yaml', 'json'])
      const name = modelTarget(context.model, options.controller).controller
      const doc = statusDocument(await (await context.connect(options.controller)).model(), name, Date.now())
      if (Object.keys(doc.machines).length === 0) {
        context.err('No machines to display.')
        return
      }
      context.out(format === 'tabular' ? machinesTable(doc, context.fancy) : formatDocument(format as 'yaml' | 'json', { model: doc.model, machines: doc.machines }))
    })

  program.command('show-machine')
    .description('show machines: status, address, instance, units')
    .argument('<machines...>', 'machine ids')
    .option('--format <format>', 'yaml or json', 'yaml')
    .option(controllerFlags, controllerHelp)
    .action(async (machines: string[], options: { format: string, controller?: string }) => {
      const component = 'cantrip show-machine'
      for (const id of machines) checkMachine(component, id)
      const format = checkFormat(component, options.format, ['yaml', 'json']) as 'yaml' | 'json'
      const name = modelTarget(context.model, options.controller).controller
      const doc = statusDocument(await (await context.connect(options.controller)).model(), name, Date.now())
      const missing = machines.filter(id => doc.machines[id] === undefined)
      if (missing.length > 0) throw new InvalidInputError(component, `machines of the model (${Object.keys(doc.machines).join(', ') || 'none'})`, missing.join(', '))
      context.out(formatDocument(format, { model: doc.model, machines: Object.fromEntries(machines.map(id => [id, doc.machines[id]])) }))
    })
}
