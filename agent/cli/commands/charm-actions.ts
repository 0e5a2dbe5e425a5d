/**
 * `cantrip actions APP [--schema] [--format]`, `cantrip show-action APP ACTION` and
 * `cantrip show-application APP...`, as Juju 3.6's (cmd/juju/action/list.go, show.go,
 * cmd/juju/application/show.go): what a deployed application's charm offers and how the
 * application is set up, read from the model (the charm's summary keeps each action's
 * description and parameter schema).
 */
import { stringify } from 'yaml'
import { CantripError, InvalidInputError } from '../../../runtime/errors.ts'
import type { ApplicationRecord, CharmRecord, ModelContext } from '../../../runtime/model/model-types.ts'
import { tableGet } from '../../../runtime/model/table.ts'
import type { RegisterCommand } from '../cli-context.ts'
import { formatDocument } from '../output-format.ts'
import { plainTable } from '../plain-table.ts'
import { applicationRecord, checkApplication, controllerFlags, controllerHelp, readModel } from './model-common.ts'

function findCharm (component: string, model: ModelContext, application: string): { app: ApplicationRecord, charm: CharmRecord } {
  const app = applicationRecord(model, application)
  if (app === undefined) throw new CantripError(`${component}: application ${JSON.stringify(application)} not found`)
  const charm = tableGet(model.charms, app.charm)
  if (charm === undefined) throw new CantripError(`${component}: the charm of application ${JSON.stringify(application)} is not in the model`)
  return { app, charm }
}

/** Juju's `actions` table, or a map name → description (or → schema with --schema). */
export function actionsOutput (model: ModelContext, application: string, options: { schema?: boolean, format?: string }): string {
  const component = 'cantrip actions'
  const format = options.format ?? (options.schema === true ? 'yaml' : 'tabular')
  if (!['tabular', 'yaml', 'json'].includes(format)) throw new InvalidInputError(component, '--format tabular, yaml or json', format)
  const { charm } = findCharm(component, model, application)
  const actions = Object.entries(charm.metadata.actions).sort(([a], [b]) => a.localeCompare(b))
  if (actions.length === 0) return `No actions defined for ${application}.`
  if (options.schema === true || format !== 'tabular') {
    const doc = Object.fromEntries(actions.map(([name, spec]) => [name, options.schema === true ? { ...(spec.schema ?? {}), description: spec.description } : spec.description]))
    return formatDocument(format === 'json' ? 'json' : 'yaml', doc)
  }
  return plainTable([['Action', 'Description'], ...actions.map(([name, spec]) => [name, spec.description])])
}

/** Juju's show-action: the description, then the arguments' schemas. */
export function showActionOutput (model: ModelContext, application: string, action: string): string {
  const component = 'cantrip show-action'
  const { charm } = findCharm(component, model, application)
  const spec = Object.hasOwn(charm.metadata.actions, action) ? charm.metadata.actions[action] : undefined
  if (spec === undefined) throw new CantripError(`${component}: unknown action ${JSON.stringify(action)}`)
  const properties = (spec.schema?.['properties'] ?? {}) as Record<string, unknown>
  const lines = [spec.description]
  if (Object.keys(properties).length > 0) lines.push('', 'Arguments', stringify(properties).trimEnd())
  return lines.join('\n')
}

/** Juju's show-application document for one application. */
export function showApplicationDocument (model: ModelContext, application: string): Record<string, unknown> {
  const { app, charm } = findCharm('cantrip show-application', model, application)
  const endpoints = [...Object.keys(charm.metadata.provides), ...Object.keys(charm.metadata.requires), ...Object.keys(charm.metadata.peers)].sort()
  return {
    charm: charm.metadata.name,
    ...(Object.keys(app.constraints).length === 0 ? {} : { constraints: Object.entries(app.constraints).map(([k, v]) => `${k}=${v}`).join(' ') }),
    principal: !app.subordinate,
    exposed: app.exposed,
    remote: false,
    life: app.life,
    'endpoint-bindings': Object.fromEntries([['', 'alpha'], ...endpoints.map(e => [e, 'alpha'])])
  }
}

export const registerCharmActions: RegisterCommand = (program, context) => {
  program.command('actions')
    .alias('list-actions')
    .description('list the actions an application\'s charm defines')
    .argument('<application>', 'application name')
    .option('--schema', 'the full parameter schema of each action (YAML unless --format json)')
    .option('--format <format>', 'tabular, yaml or json')
    .option(controllerFlags, controllerHelp)
    .action(async (application: string, options: { schema?: boolean, format?: string, controller?: string }) => {
      checkApplication('cantrip actions', application)
      context.out(actionsOutput(await readModel(await context.connect(options.controller)), application, options))
    })

  program.command('show-action')
    .description('show an action\'s description and arguments')
    .argument('<application>', 'application name')
    .argument('<action>', 'action name')
    .option(controllerFlags, controllerHelp)
    .action(async (application: string, action: string, options: { controller?: string }) => {
      checkApplication('cantrip show-action', application)
      context.out(showActionOutput(await readModel(await context.connect(options.controller)), application, action))
    })

  program.command('show-application')
    .description('show applications: charm, principal, exposed, life, endpoint bindings')
    .argument('<applications...>', 'application names')
    .option('--format <format>', 'yaml or json', 'yaml')
    .option(controllerFlags, controllerHelp)
    .action(async (applications: string[], options: { format: string, controller?: string }) => {
      for (const a of applications) checkApplication('cantrip show-application', a)
      if (options.format !== 'yaml' && options.format !== 'json') throw new InvalidInputError('cantrip show-application', '--format yaml or json', options.format)
      const model = await readModel(await context.connect(options.controller))
      context.out(formatDocument(options.format, Object.fromEntries(applications.map(a => [a, showApplicationDocument(model, a)]))))
    })
}
