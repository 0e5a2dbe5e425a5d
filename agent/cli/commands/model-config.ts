/**
 * `cantrip model-config [KEY | KEY=VALUE ...] [--reset KEY[,KEY...]] [--format ...]`, as
 * Juju's `juju model-config`: with nothing, the keys as a table (Attribute, From, Value)
 * or as YAML/JSON (`value` and `source` per key); one KEY prints its value; KEY=VALUE
 * pairs and `--reset` change them in one set-model-config command. Values are typed and
 * checked here (runtime/model/model-config.ts), so a bad one is refused before anything is
 * sent, with the one line the controller would give.
 */
import {
  isModelConfigName, modelConfigNames, modelConfigValue, parseModelConfigText, unknownModelConfigKey, type ModelConfigName
} from '../../../runtime/model/model-config.ts'
import { agentVersionConfigKey } from '../../../runtime/model/agent-binaries.ts'
import { CantripError } from '../../../runtime/errors.ts'
import type { ConfigChanges, ConfigValue, ModelContext } from '../../../runtime/model/model-types.ts'
import { expectOk, type RegisterCommand } from '../cli-context.ts'
import { formatDocument, formatTable, parseFormat } from '../output-format.ts'
import { configRequest, type ConfigRequest } from './config.ts'
import { type Connect, controllerFlags, controllerHelp, type Out, readModel } from './model-common.ts'

const component = 'cantrip model-config'

function checkKey (key: string): ModelConfigName {
  // Juju's own check and line (cmd/juju/model/config.go): the version changes only through an upgrade.
  if (key === agentVersionConfigKey) throw new CantripError(`${component}: agent-version must be set via "upgrade-model"`)
  if (!isModelConfigName(key)) throw new CantripError(`${component}: ${unknownModelConfigKey(key)}`)
  return key
}

/** What `request` (a set) changes, typed; the first bad key or value throws its one line. */
export function modelConfigChanges (request: Extract<ConfigRequest, { kind: 'set' }>): ConfigChanges {
  const changes: Record<string, ConfigValue | null> = {}
  for (const [key, text] of request.pairs) {
    const parsed = parseModelConfigText(checkKey(key), text)
    if ('error' in parsed) throw new CantripError(`${component}: ${parsed.error}`)
    changes[key] = parsed.value
  }
  for (const key of request.reset) changes[checkKey(key)] = null
  return changes
}

interface ModelConfigEntry { value: ConfigValue, source: 'default' | 'model' }

export function modelConfigEntries (model: ModelContext): Record<ModelConfigName, ModelConfigEntry> {
  const config = model.config ?? {}
  const out = {} as Record<ModelConfigName, ModelConfigEntry>
  for (const key of modelConfigNames) out[key] = { value: modelConfigValue(config, key), source: Object.hasOwn(config, key) ? 'model' : 'default' }
  return out
}

/** The listing as Juju prints it: `Attribute  From  Value`, or a document of `value`/`source`. */
export function renderModelConfig (model: ModelContext, format: 'tabular' | 'yaml' | 'json'): string {
  const entries = modelConfigEntries(model)
  if (format !== 'tabular') return formatDocument(format, entries)
  return formatTable(['Attribute', 'From', 'Value'], modelConfigNames.map(key => [key, entries[key].source, String(entries[key].value)]))
}

export async function runModelConfig (connect: Connect, args: readonly string[], options: { reset?: string, format?: string }, out: Out): Promise<void> {
  const format = parseFormat(component, options.format ?? 'tabular', ['tabular', 'yaml', 'json'])
  const request = configRequest(args, options.reset)
  // Everything is checked before the controller is asked.
  const changes = request.kind === 'set' ? modelConfigChanges(request) : undefined
  if (request.kind === 'get') checkKey(request.key)
  const client = await connect()
  if (changes !== undefined) {
    expectOk(await client.submit({ type: 'set-model-config', config: changes }))
    return
  }
  const model = await readModel(client)
  if (request.kind === 'get') {
    const value = modelConfigEntries(model)[checkKey(request.key)].value
    out(format === 'tabular' ? String(value) : formatDocument(format, value))
    return
  }
  out(renderModelConfig(model, format))
}

export const registerModelConfig: RegisterCommand = (program, context) => {
  program.command('model-config')
    .description('display or set the configuration of a model')
    .argument('[settings...]', 'key to read, or key=value pairs to set')
    .option('--reset <keys>', 'reset these keys to their defaults (comma-separated)')
    .option('--format <format>', 'tabular (default), yaml or json')
    .option(controllerFlags, controllerHelp)
    .action(async (settings: string[], options: { reset?: string, format?: string, controller?: string }) => {
      await runModelConfig(async () => await context.connect(options.controller), settings, options, context.out)
    })
}
