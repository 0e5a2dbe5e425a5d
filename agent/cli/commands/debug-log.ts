/**
 * `cantrip debug-log`, as Juju's: the model's log records in Juju's line format
 *
 *   unit-kv-0: 12:04:05 INFO unit.kv/0.juju-log installed
 *
 * (entity tag, the agent's local wall time, level, module, message). By default the last
 * `-n` (10) records, then every new one as it comes (follow); `--replay` starts from the
 * oldest record kept, `--no-tail` prints and exits. `--include`/`--exclude` take entities
 * (`unit-kv-0`, `kv/0`, `machine-1`, an application `kv`), `--include-module`/
 * `--exclude-module` modules and everything under them, `--level` a minimum level.
 *
 * Records come from one controller's ring (paged by its cursor); following listens to the
 * agents' log topic directly (pushed, no polling delay) and, because gossip is a hint, also
 * asks that controller for anything newer every few seconds. Records seen twice (by both
 * paths) are printed once, by their origin and sequence number.
 */
import { InvalidInputError } from '../../../runtime/errors.ts'
import type { LogEntry } from '../../../runtime/logs/log-entry.ts'
import { logFilter, type LogFilterSpec } from '../../../runtime/logs/log-filter.ts'
import { tableValues } from '../../../runtime/model/table.ts'
import type { RegisterCommand } from '../cli-context.ts'
import type { Connection } from '../connection.ts'
import { controllerFlags, controllerHelp, type Out, parseCount } from './model-common.ts'

const component = 'cantrip debug-log'
/** While following, the controller is asked for records newer than the last page this often (gossip may drop some). */
const followCatchUpMs = 3_000
/** While following, the model is read again for newly registered agents at most this often. */
const agentsRefreshMs = 2_000
/** Records remembered as printed (by origin and sequence), so one seen by both paths prints once. */
const seenMax = 50_000
/** `-n` at most: every record a controller keeps. */
const linesMax = 20_000
const levelNames = { trace: 'TRACE', debug: 'DEBUG', info: 'INFO', warning: 'WARNING', error: 'ERROR', critical: 'CRITICAL' } as const

export type LogClient = Pick<Connection, 'debugLog' | 'logs' | 'model' | 'members'>

export interface DebugLogOptions extends LogFilterSpec {
  lines?: string
  replay?: boolean
  tail?: boolean
  /** `text` (Juju's line format, the default) or `json`: one JSON object a line. */
  format?: string
}

/** A record as one JSON line (`--format json`): Juju's fields, the time as an RFC 3339 UTC time. */
export function formatLogJson (entry: LogEntry): string {
  return JSON.stringify({ entity: entry.entity, timestamp: new Date(entry.time).toISOString(), level: levelNames[entry.level], module: entry.module, message: entry.message })
}

/** One record as Juju prints it; the time is the local wall time of the record. */
export function formatLogLine (entry: LogEntry): string {
  const t = new Date(entry.time)
  const hms = [t.getHours(), t.getMinutes(), t.getSeconds()].map(n => String(n).padStart(2, '0')).join(':')
  return `${entry.entity}: ${hms} ${levelNames[entry.level]} ${entry.module} ${entry.message}`
}

/** Checks every option (before anything is sent) and returns the request's filter, lines and mode. */
export function debugLogPlan (options: DebugLogOptions): { spec: LogFilterSpec, lines: number | undefined, follow: boolean } {
  const spec: LogFilterSpec = {
    ...(options.include === undefined || options.include.length === 0 ? {} : { include: options.include }),
    ...(options.exclude === undefined || options.exclude.length === 0 ? {} : { exclude: options.exclude }),
    ...(options.includeModule === undefined || options.includeModule.length === 0 ? {} : { includeModule: options.includeModule }),
    ...(options.excludeModule === undefined || options.excludeModule.length === 0 ? {} : { excludeModule: options.excludeModule }),
    ...(options.level === undefined ? {} : { level: options.level })
  }
  logFilter(component, spec)
  const lines = parseCount(component, options.lines, 10)
  if (lines > linesMax) throw new InvalidInputError(component, `-n at most ${linesMax}`, options.lines)
  return { spec, lines: options.replay === true ? undefined : lines, follow: options.tail !== false }
}

export async function runDebugLog (connect: () => Promise<LogClient>, options: DebugLogOptions, out: Out, signal?: AbortSignal): Promise<void> {
  if (options.format !== undefined && options.format !== 'text' && options.format !== 'json') throw new InvalidInputError(component, '--format text or json', options.format)
  const render = options.format === 'json' ? formatLogJson : formatLogLine
  const { spec, lines, follow } = debugLogPlan(options)
  const filter = logFilter(component, spec)
  const client = await connect()
  const seen = new Map<string, true>()
  const print = (origin: string, entry: LogEntry): void => {
    const key = `${origin}/${entry.entity}/${entry.seq}/${entry.time}`
    if (seen.has(key)) return
    seen.set(key, true)
    if (seen.size > seenMax) seen.delete(seen.keys().next().value!)
    out(render(entry))
  }
  // Listen before the replay, so nothing logged in between is missed; print live records after it.
  const early: Array<[string, LogEntry]> = []
  let replayed = false
  let stopListening = (): void => {}
  if (follow) {
    const agents = new Set<string>(client.members)
    // Registered agents, from the model: read at the start and again (at most every
    // agentsRefreshMs) when a peer not yet known sends a batch — a machine added since.
    let refreshedAt = 0
    let refreshing = false
    const refreshAgents = async (): Promise<void> => {
      refreshing = true
      refreshedAt = Date.now()
      try {
        const { model } = await client.model()
        for (const machine of tableValues(model.machines)) if (machine.agentPeer !== null) agents.add(machine.agentPeer)
      } finally {
        refreshing = false
      }
    }
    await refreshAgents()
    const entitled = (peer: string): boolean => {
      if (agents.has(peer)) return true
      if (!refreshing && Date.now() - refreshedAt > agentsRefreshMs) void refreshAgents().catch(() => {})
      return false
    }
    const unsubscribe = client.logs(entitled, (origin, records) => {
      for (const entry of records) {
        if (!filter(entry)) continue
        if (replayed) print(origin, entry)
        else if (early.length < seenMax) early.push([origin, entry])
      }
    })
    stopListening = unsubscribe
  }
  try {
    let page = await client.debugLog({ ...spec, after: 0, ...(lines === undefined ? {} : { lines }) })
    for (;;) {
      for (const entry of page.records) print(entry.origin, entry)
      if (!page.more) break
      page = await client.debugLog({ ...spec, after: page.next })
    }
    if (!follow) return
    replayed = true
    for (const [origin, entry] of early.splice(0)) print(origin, entry)
    let next = page.next
    let controller = page.controller
    const aborted = (): boolean => signal?.aborted === true
    while (!aborted()) {
      await pause(followCatchUpMs, signal)
      if (aborted()) break
      try {
        const newer = await client.debugLog({ ...spec, after: next })
        // Another controller's cursor means nothing here: carry on from its newest record
        // (live gossip covered the switch; what it missed is lost, as with Juju's reconnect).
        if (newer.controller !== controller) {
          controller = newer.controller
          next = newer.latest
          continue
        }
        for (const entry of newer.records) print(entry.origin, entry)
        next = newer.next
      } catch {
        // The controllers are unreachable for now; live records still arrive, and the next round asks again.
      }
    }
  } finally {
    stopListening()
  }
}

async function pause (ms: number, signal: AbortSignal | undefined): Promise<void> {
  await new Promise<void>(resolve => {
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener('abort', () => { clearTimeout(timer); resolve() }, { once: true })
  })
}

const collect = (value: string, previous: string[]): string[] => [...previous, value]

export const registerDebugLog: RegisterCommand = (program, context) => {
  program.command('debug-log')
    .description('show the model\'s log records, then follow new ones')
    .addHelpText('after', '\nExamples:\n  cantrip debug-log\n  cantrip debug-log --replay --no-tail --include kv/0 --level WARNING')
    .option('-n, --lines <n>', 'show this many of the most recent records first', '10')
    .option('--replay', 'show every record kept, then follow')
    .option('--no-tail', 'print the records and exit instead of following')
    .option('--include <entity>', 'only these entities: unit-kv-0, kv/0, machine-1 or an application kv (repeatable)', collect, [])
    .option('--exclude <entity>', 'not these entities (repeatable)', collect, [])
    .option('--include-module <module>', 'only these modules and those under them (repeatable)', collect, [])
    .option('--exclude-module <module>', 'not these modules (repeatable)', collect, [])
    .option('--level <level>', 'the lowest level shown: TRACE, DEBUG, INFO, WARNING, ERROR or CRITICAL')
    .option('--format <format>', 'text (Juju\'s lines) or json (one object a line)', 'text')
    .option(controllerFlags, controllerHelp)
    .action(async (options: DebugLogOptions & { controller?: string }) => {
      await runDebugLog(async () => await context.connect(options.controller), options, context.out)
    })
}
