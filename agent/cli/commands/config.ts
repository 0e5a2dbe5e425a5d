/**
 * `cantrip config APP [key[=value]...] [--reset key,...]`, `cantrip expose APP` and
 * `cantrip unexpose APP`, as Juju's. With no keys, config prints the application's
 * options as YAML (default, source, type, value; `trust` under application-config);
 * one key prints its value; `key=value` pairs (typed by the charm's options, `trust`
 * for the application's trust) and `--reset` change them in one set-config command.
 */
import { stringify } from 'yaml'
import { InvalidInputError } from '../../../runtime/errors.ts'
import type { ConfigValue, ModelContext } from '../../../runtime/model/model-types.ts'
import type { ModelCommandBody } from '../../../runtime/model/command-proposer.ts'
import { tableGet } from '../../../runtime/model/table.ts'
import { expectOk, type RegisterCommand } from '../cli-context.ts'
import {
  applicationRecord, checkApplication, checkOption, type Connect, configValueFromText, controllerFlags, controllerHelp,
  type Out, parseKeyValues, readModel
} from './model-common.ts'

const component = 'cantrip config'

export type ConfigRequest =
  | { readonly kind: 'show' }
  | { readonly kind: 'get', readonly key: string }
  | { readonly kind: 'set', readonly pairs: ReadonlyArray<[string, string]>, readonly reset: readonly string[] }

/** What the arguments ask for; refuses a mix of reads and writes. */
export function configRequest (args: readonly string[], reset: string | undefined): ConfigRequest {
  const resets = reset === undefined ? [] : reset.split(',').map(k => k.trim())
  if (resets.some(k => k === '')) throw new InvalidInputError(component, '--reset key[,key...]', reset)
  const sets = args.filter(a => a.includes('='))
  const gets = args.filter(a => !a.includes('='))
  if (gets.length > 0 && (sets.length > 0 || resets.length > 0)) throw new InvalidInputError(component, 'either one key to read or key=value pairs to set', args.join(' '))
  if (gets.length > 1) throw new InvalidInputError(component, 'one key to read (or key=value pairs to set)', gets.join(' '))
  if (gets.length === 1) return { kind: 'get', key: gets[0]! }
  if (sets.length === 0 && resets.length === 0) return { kind: 'show' }
  const pairs = parseKeyValues(component, sets)
  for (const [key] of pairs) if (resets.includes(key)) throw new InvalidInputError(component, `"${key}" either set or reset`, 'both')
  return { kind: 'set', pairs, reset: resets }
}

/** The application's settings as Juju's `config` shows them. */
export function describeConfig (model: ModelContext, application: string): Record<string, unknown> {
  const app = applicationRecord(model, application)
  if (app === undefined) throw new InvalidInputError(component, 'an application in the model', application)
  const charm = tableGet(model.charms, app.charm)
  const settings: Record<string, unknown> = {}
  for (const [option, spec] of Object.entries(charm?.metadata.config ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    const set = Object.hasOwn(app.config, option)
    const value = set ? app.config[option] : spec.default
    settings[option] = {
      ...(spec.default === null ? {} : { default: spec.default }),
      source: set ? 'user' : spec.default === null ? 'unset' : 'default',
      type: spec.type,
      ...(value === null || value === undefined ? {} : { value })
    }
  }
  return {
    application,
    'application-config': { trust: { default: false, source: app.trust ? 'user' : 'default', type: 'bool', value: app.trust } },
    charm: charm?.metadata.name ?? app.charm,
    settings
  }
}

/** The set-config body for `request` against the model's charm. */
export function configCommand (model: ModelContext, application: string, request: Extract<ConfigRequest, { kind: 'set' }>): Extract<ModelCommandBody, { type: 'set-config' }> {
  const app = applicationRecord(model, application)
  if (app === undefined) throw new InvalidInputError(component, 'an application in the model', application)
  const charm = tableGet(model.charms, app.charm)
  const specs = charm?.metadata.config ?? {}
  const name = charm?.metadata.name ?? app.charm
  const config: Record<string, ConfigValue | null> = {}
  let trust: boolean | undefined
  for (const [key, text] of request.pairs) {
    if (key === 'trust' && !Object.hasOwn(specs, 'trust')) {
      trust = configValueFromText(component, name, 'trust', 'boolean', text) as boolean
      continue
    }
    config[key] = configValueFromText(component, name, key, checkOption(component, name, specs, key), text)
  }
  for (const key of request.reset) {
    if (key === 'trust' && !Object.hasOwn(specs, 'trust')) { trust = false; continue }
    checkOption(component, name, specs, key)
    config[key] = null
  }
  return { type: 'set-config', application, config, ...(trust === undefined ? {} : { trust }) }
}

export async function runConfig (connect: Connect, application: string, args: readonly string[], reset: string | undefined, out: Out, format = 'yaml'): Promise<void> {
  checkApplication(component, application)
  if (format !== 'yaml' && format !== 'json') throw new InvalidInputError(component, '--format yaml or json', format)
  const request = configRequest(args, reset)
  const client = await connect()
  const model = await readModel(client)
  if (request.kind === 'show') {
    const described = describeConfig(model, application)
    out(format === 'json' ? JSON.stringify(described) : stringify(described).trimEnd())
  } else if (request.kind === 'get') {
    const described = describeConfig(model, application)
    const settings = described['settings'] as Record<string, { value?: unknown }>
    if (request.key === 'trust' && !Object.hasOwn(settings, 'trust')) {
      out(String(applicationRecord(model, application)!.trust))
      return
    }
    const charm = String(described['charm'])
    const names = Object.keys(settings)
    if (!Object.hasOwn(settings, request.key)) throw new InvalidInputError(component, `an option of charm "${charm}" (${names.length === 0 ? 'it has none' : names.join(', ')})`, request.key)
    const value = settings[request.key]!.value
    out(value === undefined ? '' : String(value))
  } else {
    expectOk(await client.submit(configCommand(model, application, request)))
  }
}

export async function runExpose (connect: Connect, application: string, expose: boolean): Promise<void> {
  checkApplication(expose ? 'cantrip expose' : 'cantrip unexpose', application)
  const client = await connect()
  expectOk(await client.submit({ type: expose ? 'expose' : 'unexpose', application }))
}

export const registerConfig: RegisterCommand = (program, context) => {
  program.command('config')
    .description('get, set or reset an application\'s configuration')
    .addHelpText('after', '\nExamples:\n  cantrip config kv\n  cantrip config kv log-level=debug\n  cantrip config kv --reset log-level')
    .argument('<application>', 'application name')
    .argument('[settings...]', 'key to read, or key=value pairs to set')
    .option('--reset <keys>', 'reset these options to their defaults (comma-separated)')
    .option('--format <format>', 'yaml or json (showing the configuration)', 'yaml')
    .option(controllerFlags, controllerHelp)
    .action(async (application: string, settings: string[], options: { reset?: string, format: string, controller?: string }) => {
      await runConfig(async () => await context.connect(options.controller), application, settings, options.reset, context.out, options.format)
    })

  for (const expose of [true, false]) {
    program.command(expose ? 'expose' : 'unexpose')
      .description(expose ? 'make an application\'s opened ports reachable from outside' : 'stop exposing an application')
      .argument('<application>', 'application name')
      .option(controllerFlags, controllerHelp)
      .action(async (application: string, options: { controller?: string }) => {
        await runExpose(async () => await context.connect(options.controller), application, expose)
      })
  }
}
