/**
 * Agents as systemd units, where systemd runs the host, as Juju runs `jujud-machine-N`
 * (juju/juju service/systemd/conf.go: After syslog, network and user sessions; the
 * agent's environment; ExecStart; a restart policy; WantedBy multi-user.target). The unit
 * restarts the agent when it fails (a crash, kill -9; not a clean stop, so
 * destroy-controller's SIGTERM is final) and starts it at boot. Its ExecStart is the
 * agent's launch record (agent/agent-launch.ts), so a unit and `cantrip start-agent`
 * start the same thing.
 *
 * Without systemd as PID 1 (containers, this project's CI sandbox) the agents run as
 * detached processes, and `systemdPresence` says why in one line.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { quoteArgument, systemdUnit, unitFileName, type UnitScope } from '../providers/agent-service-unit.ts'
import type { AgentLaunch } from './agent-launch.ts'

export { quoteArgument, systemdUnit, unitFileName, type UnitScope }

export type SystemdPresence = { running: true } | { running: false, why: string }

/** Whether systemd manages this host: sd_booted()'s test (/run/systemd/system), and what PID 1 is when not. */
export function systemdPresence (): SystemdPresence {
  if (existsSync('/run/systemd/system')) return { running: true }
  let init = 'unknown'
  try {
    init = readFileSync('/proc/1/comm', 'utf8').trim()
  } catch { /* no /proc: not Linux */ }
  return { running: false, why: `systemd is not running on this host (PID 1 is ${JSON.stringify(init)})` }
}

/** The scope this process may install into: root's system manager, else the user's. */
export function defaultUnitScope (): UnitScope {
  return process.getuid?.() === 0 ? 'system' : 'user'
}

function unitDir (scope: UnitScope): string {
  return scope === 'system' ? '/etc/systemd/system' : join(process.env['XDG_CONFIG_HOME'] ?? join(homedir(), '.config'), 'systemd', 'user')
}

function systemctl (scope: UnitScope, ...args: string[]): string {
  return execFileSync('systemctl', [...(scope === 'user' ? ['--user'] : []), ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim()
}

/** Writes the unit, enables it (started at boot) and starts it now; returns its main pid. */
export function installAgentUnit (launch: AgentLaunch, scope: UnitScope): number {
  const dir = unitDir(scope)
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, unitFileName(launch)), systemdUnit(launch, scope), { mode: 0o644 })
  systemctl(scope, 'daemon-reload')
  systemctl(scope, 'enable', '--now', unitFileName(launch))
  return unitMainPid(launch.name, scope)
}

/** Starts an installed unit (systemctl start) and returns its main pid. */
export function startAgentUnit (name: string, scope: UnitScope): number {
  systemctl(scope, 'start', `${name}.service`)
  return unitMainPid(name, scope)
}

/** Stops an installed unit (systemctl stop; it stays enabled), as an upgrade does before it starts the new version. */
export function stopAgentUnit (name: string, scope: UnitScope): void {
  systemctl(scope, 'stop', `${name}.service`)
}

/** Stops and disables the unit and removes its file; nothing when it is not installed. */
export function removeAgentUnit (name: string, scope: UnitScope): void {
  const file = join(unitDir(scope), `${name}.service`)
  if (!existsSync(file)) return
  try { systemctl(scope, 'disable', '--now', `${name}.service`) } catch { /* already stopped */ }
  rmSync(file, { force: true })
  try { systemctl(scope, 'daemon-reload') } catch { /* the file is gone either way */ }
}

export function unitMainPid (name: string, scope: UnitScope): number {
  const pid = Number(systemctl(scope, 'show', '--property', 'MainPID', '--value', `${name}.service`))
  return Number.isSafeInteger(pid) ? pid : 0
}
