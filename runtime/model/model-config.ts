import { describeValue } from '../errors.ts'
import { limits } from '../limits.ts'
import { parseLoggingConfig } from '../logging-config.ts'
import type { ConfigValue } from './model-types.ts'

/**
 * Model configuration (`juju model-config`): the keys cantrip's agents obey, with Juju's
 * names, types and defaults (juju/juju environs/config/config.go). The model stores only
 * what the user set (`ModelContext.config`); everything else reads as its default.
 * Values are typed: booleans as booleans, durations and logging specs as strings as the
 * user gave them (canonical for logging-config), so `model-config KEY` prints them back.
 */

export type ModelConfigType = 'bool' | 'duration' | 'string'

export interface ModelConfigKey {
  readonly type: ModelConfigType
  readonly default: ConfigValue
  readonly description: string
}

export const modelConfigSchema = {
  'automatically-retry-hooks': {
    type: 'bool',
    default: true,
    description: 'Determines whether the uniter should automatically retry failed hooks'
  },
  'logging-config': {
    type: 'string',
    default: '<root>=INFO',
    description: 'The configuration string to use when configuring Juju agent logging'
  },
  'update-status-hook-interval': {
    type: 'duration',
    default: '5m',
    description: 'How often to run the charm update-status hook, in time.Duration format (e.g. 5m, 10s)'
  }
} as const satisfies Readonly<Record<string, ModelConfigKey>>

export type ModelConfigName = keyof typeof modelConfigSchema
export const modelConfigNames = Object.keys(modelConfigSchema).sort() as ModelConfigName[]

export function isModelConfigName (key: string): key is ModelConfigName {
  return Object.hasOwn(modelConfigSchema, key)
}

/** What the agents act on: the effective values, typed. */
export interface ModelConfigSettings {
  readonly automaticallyRetryHooks: boolean
  readonly updateStatusIntervalMs: number
  readonly loggingConfig: string
}

const durationUnitsMs: Readonly<Record<string, number>> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }
const durationPattern = /^(?:[0-9]+(?:\.[0-9]+)?(?:ns|us|µs|ms|s|m|h))+$/
const durationPart = /([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h)/g

/** A Go `time.ParseDuration` string (`5m`, `1m30s`, `10s`) in ms; undefined if it is not one. */
export function parseDurationMs (text: string): number | undefined {
  if (!durationPattern.test(text)) return undefined
  let ms = 0
  for (const match of text.matchAll(durationPart)) ms += Number(match[1]) * durationUnitsMs[match[2]!]!
  return Number.isFinite(ms) ? ms : undefined
}

function expected (key: ModelConfigName): string {
  switch (modelConfigSchema[key].type) {
    case 'bool': return 'bool (true or false)'
    case 'duration': return `duration from ${limits.updateStatusIntervalMsMin / 1000}s to ${limits.updateStatusIntervalMsMax / 60_000}m (e.g. 5m, 10s)`
    case 'string': return 'logging config like "<root>=INFO;unit=DEBUG"'
  }
}

/**
 * Why `value` cannot be `key`'s value (one line naming the key, the expected type and
 * what arrived), or undefined when it can. Shared by the CLI and the model's handler.
 */
export function modelConfigValueProblem (key: ModelConfigName, value: unknown): string | undefined {
  const bad = `${key}: expected ${expected(key)}, got ${describeValue(value)}`
  switch (modelConfigSchema[key].type) {
    case 'bool':
      return typeof value === 'boolean' ? undefined : bad
    case 'duration': {
      if (typeof value !== 'string') return bad
      const ms = parseDurationMs(value)
      // Juju allows 1m to 60m; cantrip allows down to 1s (limits.updateStatusIntervalMsMin)
      // so tests and demos can watch update-status run without waiting minutes.
      if (ms === undefined || ms < limits.updateStatusIntervalMsMin || ms > limits.updateStatusIntervalMsMax) return bad
      return undefined
    }
    case 'string': {
      if (typeof value !== 'string') return bad
      const parsed = parseLoggingConfig(value)
      return typeof parsed === 'string' ? `${key}: ${parsed}` : undefined
    }
  }
}

/**
 * A value typed from the command line (`KEY=VALUE`): `true`/`false` for booleans (Juju
 * also takes these spellings only), the text itself otherwise. Returns the value or the
 * one-line problem.
 */
export function parseModelConfigText (key: ModelConfigName, text: string): { value: ConfigValue } | { error: string } {
  let value: ConfigValue = text
  if (modelConfigSchema[key].type === 'bool') {
    if (text === 'true') value = true
    else if (text === 'false') value = false
  }
  if (modelConfigSchema[key].type === 'string' && key === 'logging-config') {
    const parsed = parseLoggingConfig(text)
    if (typeof parsed !== 'string') value = parsed.canonical
  }
  const problem = modelConfigValueProblem(key, value)
  return problem === undefined ? { value } : { error: problem }
}

export function unknownModelConfigKey (key: string): string {
  return `${describeValue(key)} is not a model configuration key; the keys are ${modelConfigNames.join(', ')}`
}

/** The value in effect for `key`: the user's, else the default. */
export function modelConfigValue (config: Readonly<Record<string, ConfigValue>>, key: ModelConfigName): ConfigValue {
  return Object.hasOwn(config, key) ? config[key]! : modelConfigSchema[key].default
}

/** The settings the agents apply; a stored value that no longer checks reads as the default. */
export function modelConfigSettings (config: Readonly<Record<string, ConfigValue>> | undefined): ModelConfigSettings {
  const stored = config ?? {}
  const pick = (key: ModelConfigName): ConfigValue => {
    const value = modelConfigValue(stored, key)
    return modelConfigValueProblem(key, value) === undefined ? value : modelConfigSchema[key].default
  }
  return {
    automaticallyRetryHooks: pick('automatically-retry-hooks') === true,
    updateStatusIntervalMs: parseDurationMs(String(pick('update-status-hook-interval'))) ?? limits.updateStatusIntervalMs,
    loggingConfig: String(pick('logging-config'))
  }
}
