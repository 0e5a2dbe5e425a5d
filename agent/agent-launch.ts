/**
 * How an agent is started, kept in its data directory (`launch.json`), so the agent can be
 * brought back on its host from that directory alone (`cantrip start-agent`), as Juju
 * keeps `/etc/systemd/system/jujud-machine-N-exec-start.sh` beside the agent's data
 * (juju/juju service/systemd/conf.go). The same record is a systemd unit's ExecStart
 * (agent/systemd-unit.ts). Written by whoever starts the agent (the CLI for controllers),
 * atomically; whatever flags the starter passes are kept as they were given.
 */
import { spawn } from 'node:child_process'
import { closeSync, existsSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { InvalidInputError } from '../runtime/errors.ts'
import type { AgentService } from '../providers/agent-service-unit.ts'

export const agentLaunchFileName = 'launch.json'
const component = 'agent launch'
/** Bounds what is read back: a launch record is a few kilobytes. */
const launchBytesMax = 64 * 1024
/** Settings of the starter's environment that the agent is started with again (the rest is the restarter's). */
const keptEnvPrefix = 'CANTRIP_'

/** An agent's launch record: the same shape a service unit runs (providers/agent-service-unit.ts), so either can start it. */
export type AgentLaunch = AgentService

/** The CANTRIP_* settings of `env`, which a restarted agent must see as the first start did. */
export function keptEnvironment (env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const kept: Record<string, string> = {}
  for (const [name, value] of Object.entries(env)) if (name.startsWith(keptEnvPrefix) && value !== undefined) kept[name] = value
  return kept
}

/** Written whole to a temporary file and renamed, so a crash never leaves half a record. */
export function writeAgentLaunch (dataDir: string, launch: AgentLaunch): void {
  const file = join(dataDir, agentLaunchFileName)
  writeFileSync(`${file}.tmp`, `${JSON.stringify(launch, null, 2)}\n`, { mode: 0o600 })
  renameSync(`${file}.tmp`, file)
}

/** The record in `dataDir`, or undefined when there is none; a record that is not one is refused in one line. */
export function readAgentLaunch (dataDir: string): AgentLaunch | undefined {
  const file = join(dataDir, agentLaunchFileName)
  if (!existsSync(file)) return undefined
  const text = readFileSync(file, 'utf8')
  let value: unknown
  try {
    value = text.length > launchBytesMax ? undefined : JSON.parse(text)
  } catch {
    value = undefined
  }
  if (!isAgentLaunch(value)) throw new InvalidInputError(component, `${file} with name, description, command, args, cwd, logFile and env`, text.length > 80 ? `${text.slice(0, 80)}…` : text)
  return value
}

function isAgentLaunch (value: unknown): value is AgentLaunch {
  if (typeof value !== 'object' || value === null) return false
  const v = value as Record<string, unknown>
  const strings = ['name', 'description', 'command', 'cwd', 'logFile'].every(key => typeof v[key] === 'string' && v[key] !== '')
  const args = Array.isArray(v.args) && v.args.every(arg => typeof arg === 'string')
  const env = typeof v.env === 'object' && v.env !== null && Object.values(v.env).every(s => typeof s === 'string')
  return strings && args && env
}

/**
 * Starts the agent detached (its own session and process group, output appended to its
 * log), so it outlives the caller; its environment is the caller's with the record's
 * settings over it. Returns the pid.
 */
export function startAgentProcess (launch: AgentLaunch): number {
  const log = openSync(launch.logFile, 'a', 0o600)
  try {
    const child = spawn(launch.command, launch.args, { cwd: launch.cwd, env: { ...process.env, ...launch.env }, detached: true, stdio: ['ignore', log, log] })
    child.unref()
    return child.pid ?? 0
  } finally {
    closeSync(log)
  }
}

/** Names of the agent launcher (agent/cantripd-stub.ts), bundled or as source. */
const launcherNames = ['cantripd-stub.mjs', 'cantripd-stub.ts']

/**
 * The same agent started through the launcher `launcher` (a cantripd-stub.mjs), for a
 * record written before controllers were started through it: the program and its
 * loader arguments (everything before the agent's own flags, which begin at `--role`)
 * are replaced; a record that runs a launcher already is kept as it is.
 */
export function launchThroughLauncher (launch: AgentLaunch, launcher: string): AgentLaunch {
  if (launch.args.some(arg => launcherNames.some(name => arg.endsWith(`/${name}`)))) return launch
  const first = launch.args.indexOf('--role')
  if (first < 0) throw new InvalidInputError(component, `a launch record of a controller (its arguments with --role)`, launch.args.join(' ').slice(0, 80))
  return { ...launch, command: process.execPath, args: [launcher, ...launch.args.slice(first)] }
}
