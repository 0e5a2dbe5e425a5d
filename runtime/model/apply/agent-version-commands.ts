import { limits } from '../../limits.ts'
import { agentBinaryKey, agentBinaryProblem, agentVersionConfigKey, compareAgentVersions, noAgentBinaries, parseAgentVersion } from '../agent-binaries.ts'
import { keys } from '../keys.ts'
import { tableValues } from '../table.ts'
import { requireAdmin, requireMachineAgent } from './authorisation.ts'
import { q, refuse, type HandlerTable } from './refusal.ts'

/**
 * Agent versions (Juju's upgrade-model and upgrader worker, juju/juju
 * worker/upgrader/upgrader.go): the model records which agent binaries exist in the
 * controllers' store and which version its agents should run, the config key
 * `agent-version`; each machine agent records the version it actually runs. Every agent
 * sees the config and the binaries (`model/config`), so a new `agent-version` is what
 * tells the machine agents to upgrade.
 */
export { agentVersionConfigKey } from '../agent-binaries.ts'

/** Juju's base, `<os>@<channel>` (core/base: `ubuntu@22.04`), as a machine agent reports its host's. */
const basePattern = /^[a-z][a-z0-9-]{0,31}@[0-9A-Za-z][0-9A-Za-z._/-]{0,31}$/
/** A host name as RFC 1123 allows it (labels of letters, digits and hyphens), at most 253 characters. */
export const hostnamePattern = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/

export const agentVersionCommands: HandlerTable<'add-agent-binary' | 'set-agent-version' | 'set-machine-agent-version'> = {
  'add-agent-binary': (d, c) => {
    requireAdmin(c)
    const problem = agentBinaryProblem(c)
    if (problem !== undefined) refuse(c, problem)
    const key = agentBinaryKey(c.version, c.platform)
    const held = d.agentBinaries.get(key)
    if (held !== undefined && held.hash === c.hash) return {}
    if (held === undefined && d.agentBinaries.size >= limits.agentBinariesMax) refuse(c, `the model records ${limits.agentBinariesMax} agent binaries, the maximum`)
    // A version's bundle is rebuilt by whoever built it (the same tree, a later build): the newest upload is the one served.
    d.agentBinaries.set(key, { version: c.version, platform: c.platform, hash: c.hash, size: c.size })
    d.touch(keys.modelConfig())
    return {}
  },
  'set-agent-version': (d, c) => {
    requireAdmin(c)
    if (typeof c.version !== 'string' || parseAgentVersion(c.version) === undefined) refuse(c, `expected an agent version like "0.2.0", got ${q(c.version)}`)
    const current = d.config[agentVersionConfigKey]
    if (current === c.version) return {}
    const recorded = tableValues(d.agentBinaries.finish())
    if (!recorded.some(binary => binary.version === c.version)) {
      const platform = recorded[0]?.platform ?? 'linux/x64'
      refuse(c, noAgentBinaries(c.version, platform, 'the model', recorded.map(binary => binary.version)))
    }
    // Juju refuses to go back: an agent's state may already be in the newer version's form.
    if (typeof current === 'string' && compareAgentVersions(c.version, current) < 0) refuse(c, `cannot downgrade from ${current} to ${c.version}`)
    d.config = Object.fromEntries(Object.entries({ ...d.config, [agentVersionConfigKey]: c.version }).sort(([a], [b]) => a < b ? -1 : 1))
    d.touch(keys.modelConfig())
    return {}
  },
  'set-machine-agent-version': (d, c) => {
    requireMachineAgent(c, c.machine)
    const machine = d.machine(c.machine)
    if (machine === undefined) refuse(c, `machine ${q(c.machine)} not found`)
    if (typeof c.version !== 'string' || parseAgentVersion(c.version) === undefined) refuse(c, `expected an agent version like "0.2.0", got ${q(c.version)}`)
    if (typeof c.upgradeError !== 'string' || c.upgradeError.length > limits.agentUpgradeErrorLengthMax) refuse(c, `expected an upgrade error of at most ${limits.agentUpgradeErrorLengthMax} characters, got ${q(c.upgradeError)}`)
    if (c.base !== undefined && (typeof c.base !== 'string' || !basePattern.test(c.base))) refuse(c, `expected a base like "ubuntu@22.04", got ${q(c.base)}`)
    if (c.hostname !== undefined && (typeof c.hostname !== 'string' || !hostnamePattern.test(c.hostname))) refuse(c, `expected a host name like "node-1.example.com", got ${q(c.hostname)}`)
    const upgradeError = c.upgradeError === '' ? undefined : c.upgradeError
    const base = c.base ?? machine.base
    const hostname = c.hostname ?? machine.hostname
    if (machine.agentVersion === c.version && machine.agentUpgradeError === upgradeError && machine.base === base && machine.hostname === hostname) return {}
    const { agentUpgradeError: _dropped, ...rest } = machine
    d.machines.set(c.machine, {
      ...rest, agentVersion: c.version, ...(upgradeError === undefined ? {} : { agentUpgradeError: upgradeError }), ...(base === undefined ? {} : { base }), ...(hostname === undefined ? {} : { hostname })
    })
    d.touch(keys.machine(c.machine))
    return {}
  }
}
