import { limits } from '../../limits.ts'
import { plainEqual } from '../../plain-equal.ts'
import { isPlainRecord } from '../charm-summary.ts'
import { keys } from '../keys.ts'
import { isModelConfigName, modelConfigValueProblem, unknownModelConfigKey } from '../model-config.ts'
import type { ConfigValue } from '../model-types.ts'
import { agentVersionConfigKey } from './agent-version-commands.ts'
import { requireAdmin } from './authorisation.ts'
import { q, refuse, type HandlerTable } from './refusal.ts'

/**
 * `model-config`: sets and resets the model's configuration keys, checked against their
 * types as the CLI checks them (a command from elsewhere gets the same line). The key
 * `model/config` tells every agent of the model to look again.
 */
export const modelConfigCommands: HandlerTable<'set-model-config'> = {
  'set-model-config': (d, c) => {
    requireAdmin(c)
    if (!isPlainRecord(c.config)) refuse(c, `expected a map of keys to values, got ${q(c.config)}`)
    const entries = Object.entries(c.config)
    if (entries.length === 0 || entries.length > limits.modelConfigKeysPerCommandMax) {
      refuse(c, `expected 1 to ${limits.modelConfigKeysPerCommandMax} keys, got ${entries.length}`)
    }
    const next: Record<string, ConfigValue> = { ...d.config }
    for (const [key, value] of entries) {
      // Juju's own line (cmd/juju/model/config.go): the version changes only through an upgrade.
      if (key === agentVersionConfigKey) refuse(c, 'agent-version must be set via "upgrade-model"')
      if (!isModelConfigName(key)) refuse(c, unknownModelConfigKey(key))
      if (value === null) {
        delete next[key]
        continue
      }
      const problem = modelConfigValueProblem(key, value)
      if (problem !== undefined) refuse(c, problem)
      next[key] = value
    }
    const sorted = Object.fromEntries(Object.keys(next).sort().map(key => [key, next[key]!]))
    if (plainEqual(sorted, d.config)) return {}
    d.config = sorted
    d.touch(keys.modelConfig())
    return {}
  }
}
