/**
 * Who keeps a local machine's agent running: the host's systemd, as Juju's machines run
 * `jujud-machine-N` units (juju/juju service/systemd/conf.go), or the controllers'
 * watchdog (providers/local-provider.ts). Machines are units exactly when their
 * controllers are (`cantrip bootstrap --systemd`, cantripd `--systemd`) and systemd runs
 * this host: a machine unit without a controller unit would come back after a reboot to
 * a group that does not, and crash-loop. Without systemd the watchdog keeps them, and the
 * controller says why in one line. Machines added over ssh decide on their own host
 * (providers/manual-remote-script.ts), where nothing else would restart them.
 */
import { type LocalAgentServices } from '../providers/local-provider.ts'
import { keptEnvironment } from './agent-launch.ts'
import { defaultUnitScope, installAgentUnit, removeAgentUnit, systemdPresence, unitMainPid, type SystemdPresence, type UnitScope } from './systemd-unit.ts'

export type MachineSupervision = { kind: 'systemd', scope: UnitScope } | { kind: 'watchdog', why: string }

/** The decision, from what was asked and what the host is. */
export function localMachineSupervision (requested: boolean, presence: SystemdPresence, scope: UnitScope): MachineSupervision {
  if (!requested) return { kind: 'watchdog', why: 'the controllers are not systemd units (bootstrap --systemd makes them so)' }
  if (!presence.running) return { kind: 'watchdog', why: presence.why }
  return { kind: 'systemd', scope }
}

/** This host's decision for a controller started with or without `--systemd`. */
export function hostMachineSupervision (requested: boolean): MachineSupervision {
  return localMachineSupervision(requested, systemdPresence(), defaultUnitScope())
}

/**
 * A unit's environment: the controller's CANTRIP_* settings, and the PATH and HOME the
 * agent's hooks expect; not the rest of whatever environment the controller had.
 */
export function unitEnvironment (env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const kept = keptEnvironment(env)
  for (const name of ['PATH', 'HOME']) {
    const value = env[name]
    if (value !== undefined) kept[name] = value
  }
  return kept
}

/** systemd units in `scope` as the local provider's services. */
export function systemdServices (scope: UnitScope): LocalAgentServices {
  return {
    start: service => {
      const pid = installAgentUnit({ ...service, env: unitEnvironment(service.env) }, scope)
      return pid > 0 ? pid : undefined
    },
    mainPid: name => {
      try {
        const pid = unitMainPid(name, scope)
        return pid > 0 ? pid : undefined
      } catch {
        return undefined
      }
    },
    remove: name => { removeAgentUnit(name, scope) }
  }
}
