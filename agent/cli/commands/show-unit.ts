/**
 * `cantrip show-unit UNIT... [--format yaml|json] [--endpoint EP] [--related-unit U] [--app]`,
 * Juju's shape:
 *
 *   kv/0:
 *     opened-ports: [8080/tcp]
 *     charm: local:kv-0
 *     leader: true
 *     life: alive
 *     relation-info:
 *     - relation-id: 0
 *       endpoint: db
 *       related-endpoint: server
 *       application-data: {…}        # the related application's databag
 *       local-unit: {in-scope: true, data: {…}}
 *       related-units:
 *         db/0: {in-scope: true, data: {…}}
 *     machine: "0"
 *     public-address: 10.0.0.5
 *     workload-version: "1.2"
 *
 * Read from the whole model (admins see every databag). `--app` shows only application
 * data (no units' databags); `--endpoint` and `--related-unit` narrow the relations.
 */
import { stringify } from 'yaml'
import { InvalidInputError } from '../../../runtime/errors.ts'
import { keys } from '../../../runtime/model/keys.ts'
import { readerOf } from '../../../runtime/model/model-draft.ts'
import type { ModelContext, OpenedPortRange, RelationRecord } from '../../../runtime/model/model-types.ts'
import { tableEntries } from '../../../runtime/model/table.ts'
import type { RegisterCommand } from '../cli-context.ts'
import { checkUnit, type Connect, controllerFlags, controllerHelp, type Out, readModel } from './model-common.ts'

const component = 'cantrip show-unit'
const formats = ['yaml', 'json'] as const

export interface ShowUnitOptions {
  format?: string
  endpoint?: string
  relatedUnit?: string
  app?: boolean
}

interface UnitData {
  'in-scope': boolean
  data: Record<string, string>
}

interface RelationInfo {
  'relation-id': number
  endpoint: string
  'related-endpoint': string
  'application-data': Record<string, string>
  'local-unit'?: UnitData
  'related-units'?: Record<string, UnitData>
}

export function showUnitDocument (model: ModelContext, units: readonly string[], options: ShowUnitOptions): Record<string, Record<string, unknown>> {
  const reader = readerOf(model)
  const doc: Record<string, Record<string, unknown>> = {}
  for (const name of units) {
    const unit = reader.unit(name)
    if (unit === undefined) throw new InvalidInputError(component, 'a unit in the model', name)
    const app = reader.application(unit.application)!
    const relationInfo: RelationInfo[] = []
    for (const id of app.relations) {
      const relation = reader.relation(id)
      if (relation === undefined) continue
      const info = relationInfoOf(model, relation, unit.application, name, options)
      if (info !== undefined) relationInfo.push(info)
    }
    const address = reader.machine(unit.machine)?.addresses[0]
    doc[name] = {
      'opened-ports': unit.openedPorts.map(portText),
      charm: app.charm,
      ...(reader.lease(unit.application)?.holder === name ? { leader: true } : {}),
      life: unit.life,
      ...(relationInfo.length > 0 ? { 'relation-info': relationInfo } : {}),
      machine: unit.machine,
      ...(address === undefined ? {} : { 'public-address': address }),
      'workload-version': app.workloadVersion
    }
  }
  return doc
}

function relationInfoOf (model: ModelContext, relation: RelationRecord, application: string, unitName: string, options: ShowUnitOptions): RelationInfo | undefined {
  const reader = readerOf(model)
  const own = relation.endpoints.find(e => e.application === application)
  if (own === undefined || (options.endpoint !== undefined && own.name !== options.endpoint)) return undefined
  const other = relation.peer ? own : relation.endpoints.find(e => e !== own) ?? own
  const databag = (key: string): Record<string, string> => ({ ...reader.settings(key)?.values ?? {} })
  const info: RelationInfo = {
    'relation-id': relation.id,
    endpoint: own.name,
    'related-endpoint': other.name,
    'application-data': databag(keys.applicationSettings(relation.id, other.application))
  }
  if (options.app === true) return info
  const related: Record<string, UnitData> = {}
  for (const [member, state] of tableEntries(relation.members)) {
    if (member === unitName) {
      info['local-unit'] = { 'in-scope': state.inScope, data: databag(keys.unitSettings(relation.id, member)) }
      continue
    }
    if (member.split('/')[0] !== other.application) continue
    // A departed unit's bag outlives it (juju-semantics §2.4); show-unit lists units of the model only.
    if (!state.inScope && reader.unit(member) === undefined) continue
    if (options.relatedUnit !== undefined && member !== options.relatedUnit) continue
    related[member] = { 'in-scope': state.inScope, data: databag(keys.unitSettings(relation.id, member)) }
  }
  if (options.relatedUnit !== undefined && Object.keys(related).length === 0) return undefined
  info['related-units'] = related
  return info
}

function portText (range: OpenedPortRange): string {
  if (range.protocol === 'icmp') return 'icmp'
  return range.from === range.to ? `${range.from}/${range.protocol}` : `${range.from}-${range.to}/${range.protocol}`
}

export function renderShowUnit (model: ModelContext, units: readonly string[], options: ShowUnitOptions): string {
  const doc = showUnitDocument(model, units, options)
  return options.format === 'json' ? `${JSON.stringify(doc)}\n` : stringify(doc)
}

/** Every argument checked before anything is sent. */
export function checkShowUnit (units: readonly string[], options: ShowUnitOptions): void {
  for (const unit of units) checkUnit(component, unit)
  if (options.format !== undefined && !(formats as readonly string[]).includes(options.format)) throw new InvalidInputError(component, `--format ${formats.join(' or ')}`, options.format)
  if (options.relatedUnit !== undefined) checkUnit(component, options.relatedUnit)
  if (options.endpoint !== undefined && !/^[a-z][a-z0-9-]*$/.test(options.endpoint)) throw new InvalidInputError(component, 'an endpoint name', options.endpoint)
}

export async function runShowUnit (connect: Connect, units: readonly string[], options: ShowUnitOptions, out: Out): Promise<void> {
  checkShowUnit(units, options)
  const model = await readModel(await connect())
  out(renderShowUnit(model, units, options))
}

export const registerShowUnit: RegisterCommand = (program, context) => {
  program.command('show-unit')
    .description('show units: ports, leadership, and each relation\'s data')
    .argument('<units...>', 'unit names, e.g. kv/0')
    .option('--format <format>', 'yaml or json', 'yaml')
    .option('--endpoint <endpoint>', 'only relations on this endpoint')
    .option('--related-unit <unit>', 'only this related unit')
    .option('--app', 'only application data')
    .option(controllerFlags, controllerHelp)
    .action(async (units: string[], options: ShowUnitOptions & { controller?: string }) => {
      await runShowUnit(async () => await context.connect(options.controller), units, options, context.out)
    })
}
