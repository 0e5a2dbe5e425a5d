/**
 * `cantrip resources APP [--details] [--format tabular|yaml|json]`, as Juju's
 * cmd/juju/resource list.go: every resource the application's charm declares, with what
 * the operator supplied for it (`deploy --resource`, `attach-resource`), from the model's
 * records. Tabular is Juju's `Resource  Supplied by  Revision`; `--details` is Juju's
 * `Unit  Resource  Revision  Expected`, one row per unit and resource.
 *
 * Where cantrip knows less than Juju, it says so rather than guess: the model records no
 * uploader's name, so "Supplied by" is the origin, `upload`, as Juju prints for an upload
 * without a user; and the controllers do not record which revision each unit fetched
 * (resource-get reads the store directly), so a unit's own revision is `unknown`, not a
 * number it may not have. Revisions are the model's numbers (Juju shows an upload's
 * timestamp, which cantrip does not keep); `-` is a resource nothing was supplied for.
 */
import { InvalidInputError } from '../../../runtime/errors.ts'
import { parseUnitName } from '../../../runtime/ids.ts'
import { readerOf } from '../../../runtime/model/model-draft.ts'
import type { ApplicationRecord, CharmResource, ModelContext, ResourceRecord } from '../../../runtime/model/model-types.ts'
import { tableValues } from '../../../runtime/model/table.ts'
import type { RegisterCommand } from '../cli-context.ts'
import { formatDocument, formatTable, parseFormat } from '../output-format.ts'
import { applicationRecord, checkApplication, type Connect, controllerFlags, controllerHelp, type Out, readModel } from './model-common.ts'

const component = 'cantrip resources'
/** Juju's line when there is nothing to list. */
export const noResources = 'No resources to display.'
/** A unit's own revision: the controllers do not record what each unit fetched. */
const unitRevisionUnknown = 'unknown'

interface ResourceRow {
  readonly name: string
  readonly declared: CharmResource
  readonly supplied: ResourceRecord | undefined
}

/** The charm's declared resources, by name, each with what was supplied for it. */
function rowsOf (model: ModelContext, app: ApplicationRecord): ResourceRow[] {
  const declared = readerOf(model).charm(app.charm)?.metadata.resources ?? {}
  return Object.keys(declared).sort().map(name => ({ name, declared: declared[name]!, supplied: app.resources?.[name] }))
}

const revisionOf = (row: ResourceRow): string => row.supplied === undefined ? '-' : String(row.supplied.revision)

/** Juju's FormattedAppResource keys, with what the model knows. */
function resourceDocument (application: string, row: ResourceRow): Record<string, unknown> {
  return {
    applicationId: application,
    name: row.name,
    type: row.declared.type,
    path: row.declared.filename,
    revision: revisionOf(row),
    fingerprint: row.supplied?.hash ?? '',
    size: row.supplied?.size ?? 0,
    origin: 'upload',
    used: row.supplied !== undefined
  }
}

function unitsOf (model: ModelContext, application: string): string[] {
  return tableValues(model.units)
    .filter(unit => unit.application === application)
    .map(unit => unit.name)
    .sort((a, b) => parseUnitName(a).number - parseUnitName(b).number)
}

/** What `cantrip resources` prints for `application` of `model`, or throws one line. */
export function resourcesOutput (model: ModelContext, application: string, options: { format?: string, details?: boolean }): string {
  const format = parseFormat(component, options.format ?? 'tabular', ['tabular', 'yaml', 'json'])
  checkApplication(component, application)
  const app = applicationRecord(model, application)
  if (app === undefined) throw new InvalidInputError(component, 'an application in the model', application)
  const rows = rowsOf(model, app)
  if (rows.length === 0) return noResources
  if (options.details === true) {
    const details = unitsOf(model, application).flatMap(unit => rows.map(row => ({ unit, row })))
    if (format === 'tabular') {
      return formatTable(['Unit', 'Resource', 'Revision', 'Expected'], details.map(({ unit, row }) => [unit, row.name, unitRevisionUnknown, revisionOf(row)]))
    }
    return formatDocument(format, { resources: details.map(({ unit, row }) => ({ unitID: unit, expected: resourceDocument(application, row) })) })
  }
  if (format === 'tabular') return formatTable(['Resource', 'Supplied by', 'Revision'], rows.map(row => [row.name, 'upload', revisionOf(row)]))
  return formatDocument(format, { resources: rows.map(row => resourceDocument(application, row)) })
}

export async function runResources (connect: Connect, application: string, options: { format?: string, details?: boolean }, out: Out): Promise<void> {
  // Arguments first, so a bad one is refused before anything is sent.
  parseFormat(component, options.format ?? 'tabular', ['tabular', 'yaml', 'json'])
  checkApplication(component, application)
  const model = await readModel(await connect())
  out(resourcesOutput(model, application, options))
}

export const registerResources: RegisterCommand = (program, context) => {
  program.command('resources')
    .alias('list-resources')
    .description('show the resources of an application and what was supplied for each')
    .argument('<application>', 'application name')
    .option('--details', 'one row per unit and resource')
    .option('--format <format>', 'tabular, yaml or json', 'tabular')
    .option(controllerFlags, controllerHelp)
    .action(async (application: string, options: { format?: string, details?: boolean, controller?: string }) => {
      await runResources(async () => await context.connect(options.controller), application, options, context.out)
    })
}
