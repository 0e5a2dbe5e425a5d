/**
 * `debug-log`'s filter, as Juju's: `--include`/`--exclude` entities (a tag `unit-kv-0` or
 * `machine-1`, a unit `kv/0`, or an application `kv` meaning all its units; a trailing
 * `*` matches any suffix), `--include-module`/`--exclude-module` (a module and everything
 * under it: `juju.worker` covers `juju.worker.uniter`) and `--level` (the minimum).
 * Checked in the CLI before anything is sent, and again by the controller.
 */
import { InvalidInputError } from '../errors.ts'
import { limits } from '../limits.ts'
import { logLevelOrder, type LogLevel } from '../logger.ts'
import type { LogEntry } from './log-entry.ts'

export interface LogFilterSpec {
  include?: readonly string[]
  exclude?: readonly string[]
  includeModule?: readonly string[]
  excludeModule?: readonly string[]
  level?: string
}

export type LogFilter = (entry: LogEntry) => boolean

const applicationPattern = /^[a-z][a-z0-9-]*$/
const unitPattern = /^([a-z][a-z0-9-]*)\/(\d+)$/
const tagPattern = /^(unit-[a-z][a-z0-9-]*-\d+|machine-\d+|controller-[A-Za-z0-9]+)$/
const modulePattern = /^[A-Za-z0-9_./-]+$/

/** Juju's level names (`WARNING`, also `warn`), any case, to a level. */
export function parseLogLevel (component: string, value: string): LogLevel {
  const lower = value.toLowerCase()
  const level = lower === 'warn' ? 'warning' : lower
  if (!Object.hasOwn(logLevelOrder, level)) throw new InvalidInputError(component, 'a level TRACE, DEBUG, INFO, WARNING, ERROR or CRITICAL', value)
  return level as LogLevel
}

/** One `--include`/`--exclude` value to a test on entity tags. */
export function entityMatcher (component: string, value: string): (tag: string) => boolean {
  const expected = 'an entity like unit-kv-0, kv/0, machine-1 or an application kv (a trailing * matches any suffix)'
  if (value.endsWith('*') && value.length > 1) {
    const prefix = value.slice(0, -1)
    if (!/^[a-z][a-z0-9-]*$/.test(prefix)) throw new InvalidInputError(component, expected, value)
    return tag => tag.startsWith(prefix)
  }
  const unit = unitPattern.exec(value)
  if (unit !== null) return tag => tag === `unit-${unit[1]!}-${unit[2]!}`
  if (tagPattern.test(value)) return tag => tag === value
  if (applicationPattern.test(value)) {
    const prefix = `unit-${value}-`
    return tag => tag.startsWith(prefix) && /^\d+$/.test(tag.slice(prefix.length))
  }
  throw new InvalidInputError(component, expected, value)
}

function moduleMatcher (component: string, value: string): (module: string) => boolean {
  if (!modulePattern.test(value)) throw new InvalidInputError(component, 'a module name like juju.worker.uniter or unit.kv/0.juju-log', value)
  return module => module === value || module.startsWith(`${value}.`)
}

/** The spec, checked, as one test; throws InvalidInputError naming `component` on bad input. */
export function logFilter (component: string, spec: LogFilterSpec): LogFilter {
  for (const [name, list] of Object.entries({ include: spec.include, exclude: spec.exclude, 'include-module': spec.includeModule, 'exclude-module': spec.excludeModule })) {
    if (list === undefined) continue
    if (!Array.isArray(list) || !list.every(item => typeof item === 'string')) throw new InvalidInputError(component, `--${name} as a list of strings`, list)
    if (list.length > limits.debugLogFilterItemsMax) throw new InvalidInputError(component, `at most ${limits.debugLogFilterItemsMax} --${name} values`, list.length)
  }
  const include = (spec.include ?? []).map(v => entityMatcher(component, v))
  const exclude = (spec.exclude ?? []).map(v => entityMatcher(component, v))
  const includeModule = (spec.includeModule ?? []).map(v => moduleMatcher(component, v))
  const excludeModule = (spec.excludeModule ?? []).map(v => moduleMatcher(component, v))
  if (spec.level !== undefined && typeof spec.level !== 'string') throw new InvalidInputError(component, 'a level as a string', spec.level)
  const levelMin = spec.level === undefined ? 0 : logLevelOrder[parseLogLevel(component, spec.level)]
  return entry => logLevelOrder[entry.level] >= levelMin &&
    (include.length === 0 || include.some(m => m(entry.entity))) &&
    !exclude.some(m => m(entry.entity)) &&
    (includeModule.length === 0 || includeModule.some(m => m(entry.module))) &&
    !excludeModule.some(m => m(entry.module))
}
