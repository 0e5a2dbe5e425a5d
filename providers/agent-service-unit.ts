/**
 * An agent as a systemd unit's exact text, wherever the agent runs: a controller or local
 * machine on this host (agent/systemd-unit.ts installs it) or a machine added over ssh
 * (providers/manual-provider.ts ships it to the host). Juju's layout for
 * `jujud-machine-N` (juju/juju service/systemd/conf.go): After syslog, network and user
 * sessions; the agent's environment; ExecStart; a restart policy; WantedBy
 * multi-user.target. `Restart=on-failure` brings back an agent that crashed or was killed
 * (not one stopped cleanly, so a SIGTERM from destroy-controller is final), and the
 * enabled unit starts it after a reboot. Pure text: no systemd is needed to make it.
 */

/** What a unit runs: the agent's launch record (agent/agent-launch.ts names it AgentLaunch). */
export interface AgentService {
  /** A name for people and systemd: `cantripd-local-c1`, `cantripd-machine-3`. */
  name: string
  /** One line: what this agent is. */
  description: string
  command: string
  args: string[]
  cwd: string
  /** Where its stdout and stderr are appended. */
  logFile: string
  env: Record<string, string>
}

/** Where a unit is installed: the system manager (root) or the user's (`systemctl --user`). */
export type UnitScope = 'system' | 'user'

/** Seconds systemd waits before starting a failed agent again, and for a start or stop. */
const restartSec = 2
const timeoutSec = 300

/** `cantripd-local-c1` → `cantripd-local-c1.service`. */
export function unitFileName (service: Pick<AgentService, 'name'>): string {
  return `${service.name}.service`
}

/** The unit file's exact text. */
export function systemdUnit (service: AgentService, scope: UnitScope): string {
  const environment = Object.entries(service.env).sort(([a], [b]) => a.localeCompare(b))
    .map(([name, value]) => `Environment=${quoteArgument(`${name}=${value}`)}`)
  return [
    '[Unit]',
    `Description=${service.description}`,
    'After=syslog.target',
    'After=network.target',
    'After=systemd-user-sessions.service',
    '',
    '[Service]',
    ...environment,
    `WorkingDirectory=${quoteArgument(service.cwd)}`,
    `ExecStart=${[service.command, ...service.args].map(quoteArgument).join(' ')}`,
    `StandardOutput=append:${service.logFile}`,
    `StandardError=append:${service.logFile}`,
    'Restart=on-failure',
    `RestartSec=${restartSec}`,
    `TimeoutSec=${timeoutSec}`,
    '',
    '[Install]',
    `WantedBy=${scope === 'system' ? 'multi-user.target' : 'default.target'}`,
    ''
  ].join('\n')
}

/**
 * One word of a systemd command line: bare when it is plain, else double-quoted with
 * systemd's escapes. `%` is a specifier and `$` a variable to systemd, so both are doubled.
 */
export function quoteArgument (word: string): string {
  const escaped = word.replaceAll('%', '%%').replaceAll('$', () => '$$')
  if (escaped !== '' && /^[A-Za-z0-9_@%+=:,./$-]+$/.test(escaped)) return escaped
  return `"${escaped.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n')}"`
}
