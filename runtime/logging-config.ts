import { describeValue } from './errors.ts'
import { logLevelOrder, type LogLevel } from './logger.ts'

/**
 * Juju's `logging-config` (loggo's specification): `<root>=INFO;unit=DEBUG` — module
 * names and levels separated by `;` (or white space), `<root>` for every module no other
 * entry names. A module's entry covers its sub-modules: `unit` covers `unit.web/0` and
 * `unit.web/0.install`; the longest matching name wins. Levels are loggo's: TRACE, DEBUG,
 * INFO, WARNING (WARN), ERROR, CRITICAL (cantrip has no CRITICAL: it logs as ERROR).
 */

export interface LoggingConfig {
  readonly root: LogLevel
  /** Module name → level, without `<root>`. */
  readonly modules: Readonly<Record<string, LogLevel>>
  /** The specification written back in one form: `<root>` first, then modules sorted. */
  readonly canonical: string
}

const levelsByName: Readonly<Record<string, LogLevel>> = {
  TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARNING: 'warning', WARN: 'warning', ERROR: 'error', CRITICAL: 'critical'
}
const namesByLevel: Readonly<Record<LogLevel, string>> = { trace: 'TRACE', debug: 'DEBUG', info: 'INFO', warning: 'WARNING', error: 'ERROR', critical: 'CRITICAL' }
const modulePattern = /^(<root>|[A-Za-z0-9_./@-]+)$/

/** The parsed specification, or one line saying what is wrong with it. */
export function parseLoggingConfig (text: string): LoggingConfig | string {
  let root: LogLevel = 'info'
  const modules: Record<string, LogLevel> = {}
  const entries = text.split(/[;\s]+/).filter(entry => entry !== '')
  if (entries.length === 0) return `expected a logging config like "<root>=INFO;unit=DEBUG", got ${describeValue(text)}`
  for (const entry of entries) {
    const eq = entry.indexOf('=')
    const module = eq < 0 ? '<root>' : entry.slice(0, eq).trim()
    const levelName = (eq < 0 ? entry : entry.slice(eq + 1)).trim().toUpperCase()
    const level = levelsByName[levelName]
    if (!modulePattern.test(module)) return `expected a module name in ${describeValue(entry)}, got ${describeValue(module)}`
    if (level === undefined) return `expected a level (TRACE, DEBUG, INFO, WARNING, ERROR or CRITICAL) for ${describeValue(module)}, got ${describeValue(levelName)}`
    if (module === '<root>') root = level
    else modules[module] = level
  }
  const names = Object.keys(modules).sort()
  const canonical = [`<root>=${namesByLevel[root]}`, ...names.map(name => `${name}=${namesByLevel[modules[name]!]}`)].join(';')
  return { root, modules, canonical }
}

/** The level in force for `module` under `config`: its longest named ancestor's, else the root's. */
export function levelForModule (config: LoggingConfig, module: string): LogLevel {
  let name = module
  for (;;) {
    const level = config.modules[name]
    if (level !== undefined) return level
    const dot = name.lastIndexOf('.')
    if (dot <= 0) return config.root
    name = name.slice(0, dot)
  }
}

/** Whether a record at `level` from `module` is written under `config`. */
export function loggingEnabled (config: LoggingConfig, module: string, level: LogLevel): boolean {
  return logLevelOrder[level] >= logLevelOrder[levelForModule(config, module)]
}
