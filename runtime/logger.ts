/** Structured logging; real output goes to files or stderr in agent/, the sim records it. */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warning' | 'error' | 'critical'

export const logLevelOrder: Readonly<Record<LogLevel, number>> = {
  trace: 0, debug: 1, info: 2, warning: 3, error: 4, critical: 5
}

export interface LogRecord {
  level: LogLevel
  module: string
  message: string
  fields?: Readonly<Record<string, unknown>>
}

export interface Logger {
  readonly module: string
  log (level: LogLevel, message: string, fields?: Readonly<Record<string, unknown>>): void
  /** A logger for a sub-module: `unit.web/0` → `unit.web/0.install`. */
  child (name: string): Logger
}

/** A logger that drops everything: the simulator's agents, whose trace and checkers say what happened. */
export const silentLogger: Logger = { module: 'silent', log: () => {}, child: () => silentLogger }

/** A logger that keeps records in memory, bounded; used by tests and the simulator. */
export function createMemoryLogger (module: string, records: LogRecord[] = [], recordsMax = 10_000): Logger & { records: LogRecord[] } {
  return {
    module,
    records,
    log (level, message, fields) {
      if (records.length >= recordsMax) records.shift()
      records.push(fields === undefined ? { level, module, message } : { level, module, message, fields })
    },
    child (name) { return createMemoryLogger(`${module}.${name}`, records, recordsMax) }
  }
}
