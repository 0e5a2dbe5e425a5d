import { existsSync } from 'node:fs'
import { InvalidInputError } from '../../runtime/errors.ts'
import { agentNameOf } from './upstream-agent.ts'
import { checkListenAddress, type ViewerSource } from './viewer-server.ts'

/**
 * `cantrip inspect`'s options checked and turned into what to open, before anything
 * connects: live agents (discovered for the controller, plus `--agent [NAME=]ws://…`,
 * which override a discovered one with the same URL), or recorded logs (`--log`, a sim
 * run's `--sim REPORT.json` → its `.inspect.jsonl` beside it), and where to listen.
 */

const component = 'cantrip inspect'

export interface InspectOptions {
  agent?: string[]
  log?: string[]
  sim?: string
  listen?: string
  open?: boolean
  controller?: string
}

export interface InspectPlan {
  host: string
  port: number
  /** Live agents; empty when only logs are opened. */
  agents: ViewerSource[]
  logs: string[]
  /** Whether to ask the controller for its agents (no --log/--sim given). */
  discover: boolean
  open: boolean
}

export function parseAgentFlag (value: string): ViewerSource {
  const eq = value.indexOf('=')
  const name = eq > 0 && !value.slice(0, eq).includes('/') ? value.slice(0, eq) : undefined
  const url = name === undefined ? value : value.slice(eq + 1)
  if (!/^wss?:\/\/[^/\s]+/.test(url)) throw new InvalidInputError(component, '--agent as ws://HOST:PORT or NAME=ws://HOST:PORT', value)
  return { name: name ?? agentNameOf(url), url }
}

export function parseListen (value: string): { host: string, port: number } {
  const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(value)
  if (match === null) throw new InvalidInputError(component, '--listen as HOST:PORT (e.g. 127.0.0.1:8765)', value)
  const host = match[1]!.replace(/^\[|\]$/g, '')
  const port = Number(match[2])
  checkListenAddress(host, port)
  return { host, port }
}

/** The recorded inspection log of a sim run: `<scenario>-<seed>.json` → `<scenario>-<seed>.inspect.jsonl`. */
export function simInspectLog (report: string): string {
  if (!report.endsWith('.json')) throw new InvalidInputError(component, '--sim naming a run\'s <scenario>-<seed>.json report', report)
  return report.replace(/\.json$/, '.inspect.jsonl')
}

export function inspectPlan (options: InspectOptions): InspectPlan {
  const { host, port } = parseListen(options.listen ?? '127.0.0.1:0')
  const agents = (options.agent ?? []).map(parseAgentFlag)
  const logs = [...(options.log ?? [])]
  if (options.sim !== undefined) {
    const log = simInspectLog(options.sim)
    if (!existsSync(log)) throw new InvalidInputError(component, `the run's inspection log ${log} (run the scenario with cantrip sim … --report DIR --inspect-log)`, 'no such file')
    logs.push(log)
  }
  // The path in the expected part: InvalidInputError shortens what it got.
  for (const log of logs) if (!existsSync(log)) throw new InvalidInputError(component, `a recorded log at ${log} for --log`, 'no such file')
  return { host, port, agents, logs, discover: logs.length === 0, open: options.open !== false }
}

/** Discovered endpoints with the --agent ones added; an --agent with the same URL wins. */
export function mergeSources (discovered: readonly ViewerSource[], flags: readonly ViewerSource[]): ViewerSource[] {
  const byUrl = new Map<string, ViewerSource>()
  for (const source of [...discovered, ...flags]) byUrl.set(source.url, source)
  return [...byUrl.values()]
}
