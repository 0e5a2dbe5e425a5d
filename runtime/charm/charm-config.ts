import { configValueError, optionNamePattern, optionTypes, sectionEntriesMax } from '../model/charm-summary.ts'
import type { ConfigOptionType, ConfigValue } from '../model/model-types.ts'
import { CharmFieldChecker, fieldPath, quotedAlternatives } from './charm-fields.ts'

/**
 * config.yaml (juju-semantics.md §7.2): a top-level `options:` map of option name to
 * `{type, default, description}`. Keys Juju ignores (anything else in an option) are
 * ignored here too.
 */

export interface CharmConfigOptionSpec {
  readonly type: ConfigOptionType
  /** null: no default; the option is unset until the user sets it. */
  readonly default: ConfigValue | null
  readonly description: string
}

const file = 'config.yaml'

const defaultExpected: Record<ConfigOptionType, string> = {
  string: 'a string',
  secret: 'a string (a secret URI)',
  int: 'an int (a whole number)',
  float: 'a float (a number)',
  boolean: 'a boolean (true or false)'
}

/** The checked options; throws InvalidCharmError naming the first problem. */
export function parseCharmConfig (charm: string, raw: unknown): Record<string, CharmConfigOptionSpec> {
  const check: CharmFieldChecker = new CharmFieldChecker(charm, file)
  // Juju: "invalid config: empty configuration".
  if (raw === undefined || raw === null) check.failWith(undefined, 'a map with "options"', 'an empty file')
  const top = check.map(raw, undefined, 'a map with "options"')
  if (!Object.hasOwn(top, 'options')) check.failWith('options', 'a map of option name to option', 'nothing')
  const options = check.map(top.options, 'options', 'a map of option name to option')

  const out: Record<string, CharmConfigOptionSpec> = {}
  for (const [option, spec] of check.entries(options, 'options', sectionEntriesMax)) {
    const path = fieldPath('options', option)
    if (!optionNamePattern.test(option)) check.fail(path, 'an option name of letters, digits, ".", "_" and "-" starting with a letter or digit', option)
    // `name:` with nothing under it is a string option with no default, as in Juju.
    const entry = check.optionalMap(spec, path, 'a map with "type", "default" and "description"')
    const rawType = entry.type ?? 'string'
    // Juju (after pyjuju) reads a missing or empty type as string.
    const type = rawType === '' ? 'string' : rawType
    if (!optionTypes.includes(type as ConfigOptionType)) check.fail(fieldPath(path, 'type'), quotedAlternatives(optionTypes), rawType)
    const description = check.optionalString(entry.description, fieldPath(path, 'description'), '')
    const value = entry.default ?? null
    if (value !== null && configValueError(type as ConfigOptionType, value) !== undefined) {
      check.fail(fieldPath(path, 'default'), `${defaultExpected[type as ConfigOptionType]} for a ${String(type)} option`, value)
    }
    out[option] = { type: type as ConfigOptionType, default: value as ConfigValue | null, description }
  }
  return out
}
