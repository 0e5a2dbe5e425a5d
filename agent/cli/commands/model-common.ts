/**
 * What the model commands share: the part of a Connection they use (so tests hand them a
 * fake that answers from an in-memory model), and the parsing of their arguments —
 * `key=value` pairs, unit counts, machine lists, durations, config values typed by the
 * charm's options — each refusal one `cantrip <command>: expected …, got …` line, raised
 * before anything is sent.
 */
import { parse as parseYaml } from 'yaml'
import { InvalidInputError } from '../../../runtime/errors.ts'
import { limits } from '../../../runtime/limits.ts'
import { isApplicationName, isMachineId, isUnitName } from '../../../runtime/ids.ts'
import { configValueError } from '../../../runtime/model/charm-summary.ts'
import type { ApplicationRecord, ConfigOptionType, ConfigValue, ModelContext } from '../../../runtime/model/model-types.ts'
import { tableGet } from '../../../runtime/model/table.ts'
import type { Connection, FullModel } from '../connection.ts'

/** The connection as the model commands use it; a test passes a fake. */
export type ModelClient = Pick<Connection, 'submit' | 'model' | 'putCharm' | 'watch'>

export type Out = (text: string) => void

/** Opens the connection; commands call it only once their arguments have been checked. */
export type Connect = () => Promise<ModelClient>

export interface ControllerOption {
  controller?: string
}

export const controllerFlags = '-c, --controller <name>'
export const controllerHelp = 'controller to operate in (default: the current one)'

/** Commander collector for a repeatable option. */
export function collect (value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value]
}

/** `-n`: a whole number of at least `min`. */
export function parseCount (component: string, value: string | undefined, fallback: number, min = 1): number {
  if (value === undefined) return fallback
  const n = /^\d+$/.test(value.trim()) ? Number(value.trim()) : NaN
  if (!Number.isSafeInteger(n) || n < min) throw new InvalidInputError(component, `-n to be a whole number of at least ${min}`, value)
  return n
}

/** `key=value` pairs, in order; duplicates: the last wins. */
export function parseKeyValues (component: string, items: readonly string[], what = 'key=value'): Array<[string, string]> {
  return items.map(item => {
    const eq = item.indexOf('=')
    if (eq <= 0) throw new InvalidInputError(component, what, item)
    return [item.slice(0, eq), item.slice(eq + 1)]
  })
}

/** `--to 1,2` (or repeated): machine ids. */
export function parseMachineList (component: string, value: string | undefined): string[] {
  if (value === undefined) return []
  const ids = value.split(',').map(s => s.trim())
  for (const id of ids) if (!isMachineId(id)) throw new InvalidInputError(component, '--to to list machine ids like 0 or 0,1', value)
  return ids
}

export function checkApplication (component: string, name: string): string {
  if (!isApplicationName(name)) throw new InvalidInputError(component, 'an application name like "web"', name)
  return name
}

export function checkUnit (component: string, name: string): string {
  if (!isUnitName(name)) throw new InvalidInputError(component, 'a unit name like "web/0"', name)
  return name
}

export function checkMachine (component: string, id: string): string {
  if (!isMachineId(id)) throw new InvalidInputError(component, 'a machine id like "0"', id)
  return id
}

/** `30s`, `1m`, `500ms`, `1h`, `1m30s`; a bare number is seconds. */
export function parseDuration (component: string, flag: string, value: string): number {
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }
  let total = 0
  let rest = value
  const part = /^(\d+(?:\.\d+)?)(ms|s|m|h)/
  if (rest === '') throw new InvalidInputError(component, `${flag} to be a duration like 30s, 1m or 1h`, value)
  while (rest !== '') {
    const match = part.exec(rest)
    if (match === null) throw new InvalidInputError(component, `${flag} to be a duration like 30s, 1m or 1h`, value)
    total += Number(match[1]) * units[match[2]!]!
    rest = rest.slice(match[0].length)
  }
  return total
}

export type ConfigSpecs = Readonly<Record<string, { readonly type?: ConfigOptionType, readonly default?: ConfigValue | null }>>

/** A command-line string as the value of an option of `type` (Juju parses them by the option's type). */
export function configValueFromText (component: string, charm: string, option: string, type: ConfigOptionType, text: string): ConfigValue {
  switch (type) {
    case 'int':
      if (/^[+-]?\d+$/.test(text.trim()) && Number.isSafeInteger(Number(text))) return Number(text)
      break
    case 'float':
      if (text.trim() !== '' && Number.isFinite(Number(text))) return Number(text)
      break
    case 'boolean':
      if (/^(true|yes|on)$/i.test(text)) return true
      if (/^(false|no|off)$/i.test(text)) return false
      break
    default:
      return text
  }
  throw new InvalidInputError(component, `option "${option}" of charm "${charm}" to be ${typeWord(type)}`, text)
}

/** Checks a YAML-typed value (bundle options, --config file.yaml); an int option accepts a whole float, as YAML gives. */
export function checkConfigValue (component: string, charm: string, option: string, type: ConfigOptionType, value: unknown): ConfigValue {
  if (typeof value === 'string' && type !== 'string' && type !== 'secret') return configValueFromText(component, charm, option, type, value)
  if (configValueError(type, value) !== undefined) throw new InvalidInputError(component, `option "${option}" of charm "${charm}" to be ${typeWord(type)}`, value)
  return value as ConfigValue
}

export function checkOption (component: string, charm: string, specs: ConfigSpecs, option: string): ConfigOptionType {
  const spec = Object.hasOwn(specs, option) ? specs[option] : undefined
  if (spec === undefined) {
    const known = Object.keys(specs).sort()
    throw new InvalidInputError(component, `an option of charm "${charm}" (${known.length === 0 ? 'it has none' : known.join(', ')})`, option)
  }
  return spec.type ?? 'string'
}

function typeWord (type: ConfigOptionType): string {
  return type === 'int' ? 'an int' : type === 'float' ? 'a float' : type === 'boolean' ? 'a boolean (true or false)' : 'a string'
}

/** `key=value` pairs as typed config for a charm. */
export function configFromPairs (component: string, charm: string, specs: ConfigSpecs, pairs: ReadonlyArray<[string, string]>): Record<string, ConfigValue> {
  const config: Record<string, ConfigValue> = {}
  for (const [key, text] of pairs) config[key] = configValueFromText(component, charm, key, checkOption(component, charm, specs, key), text)
  return config
}

/** Values of a YAML map (bundle options, a --config file) checked against the charm's options. */
export function configFromValues (component: string, charm: string, specs: ConfigSpecs, values: Readonly<Record<string, unknown>>): Record<string, ConfigValue> {
  const config: Record<string, ConfigValue> = {}
  for (const [key, value] of Object.entries(values)) config[key] = checkConfigValue(component, charm, key, checkOption(component, charm, specs, key), value)
  return config
}

/**
 * Action parameters: `key=value`, the value read as YAML (as Juju does) unless `strings`,
 * dotted keys nested, laid over `base` (a `--params` file: the arguments win, as Juju's
 * addValueToMap merges them).
 */
export function actionParameters (component: string, items: readonly string[], options: { base?: Record<string, unknown>, strings?: boolean } = {}): Record<string, unknown> {
  const out: Record<string, unknown> = structuredClone(options.base ?? {})
  for (const [key, text] of parseKeyValues(component, items)) {
    let value: unknown = text
    if (options.strings !== true) {
      try {
        // Juju reads them with yaml.v2, i.e. YAML 1.1: `yes` and `on` are booleans there.
        value = text === '' ? '' : parseYaml(text, { version: '1.1' }) as unknown
      } catch {
        value = text
      }
    }
    const path = key.split('.')
    if (path.some(p => p === '')) throw new InvalidInputError(component, 'a parameter name like "key" or "a.b"', key)
    let node = out
    for (const p of path.slice(0, -1)) {
      const next = node[p]
      if (typeof next !== 'object' || next === null || Array.isArray(next)) node[p] = {}
      node = node[p] as Record<string, unknown>
    }
    node[path.at(-1)!] = value
  }
  return out
}

/** The model as the controller answers it. */
export async function readModel (client: ModelClient): Promise<ModelContext> {
  return (await client.model()).model
}

export function applicationRecord (model: ModelContext, name: string): ApplicationRecord | undefined {
  return tableGet(model.applications, name)
}

/** Between attempts to reach a model's controllers that have not answered yet (a model just added). */
const servedPollMs = 250

/**
 * Reads the connection's model until its controllers answer (a model just added has its
 * group start after the registry commits it); the last error, or undefined once one answers.
 */
export async function untilServed (connection: ModelClient, deadline: number): Promise<string | undefined> {
  let last = 'no attempt before the deadline'
  while (Date.now() < deadline) {
    try {
      await connection.model()
      return undefined
    } catch (error) {
      last = error instanceof Error ? error.message : String(error)
    }
    await new Promise(resolve => setTimeout(resolve, Math.min(servedPollMs, Math.max(0, deadline - Date.now()))))
  }
  return last
}

/**
 * Calls `check` on the current model and again on every change notice the leader
 * gossips (and after 1, 2, 4 … up to 30 s without one, in case a notice was lost:
 * limits.cliModelRecheckMs*), until it returns true (resolves
 * true) or `timeoutMs` passes (resolves false). What `wait-for`, `status --watch` and
 * `run --wait` wait with.
 */
export async function untilModel (connection: ModelClient, check: (full: FullModel) => boolean | Promise<boolean>, timeoutMs: number | undefined): Promise<boolean> {
  let wake: () => void = () => {}
  let changed = true
  const unsubscribe = connection.watch(() => { changed = true; wake() })
  const deadline = timeoutMs === undefined ? undefined : Date.now() + timeoutMs
  let recheckMs: number = limits.cliModelRecheckMsMin
  try {
    for (;;) {
      if (changed) {
        changed = false
        if (await check(await connection.model())) return true
      }
      const left = deadline === undefined ? recheckMs : deadline - Date.now()
      if (left <= 0) return false
      // Woken by a notice; the timer also re-reads now and then, in case a notice was lost.
      const pauseMs = Math.min(left, recheckMs)
      recheckMs = Math.min(recheckMs * 2, limits.cliModelRecheckMsMax)
      await new Promise<void>(resolve => {
        const timer = setTimeout(() => { changed = true; resolve() }, pauseMs)
        wake = () => { clearTimeout(timer); resolve() }
      })
    }
  } finally {
    unsubscribe()
  }
}
