/**
 * is-leader, leader-get and leader-set (juju-semantics §5.3). Leader settings are
 * written at once (§4.3), and only by the leader.
 */
import { HookToolError } from '../hook-context.ts'
import { checkEmpty, goQuote, usageError } from './args.ts'
import { outputFlags, writeOutput } from './format.ts'
import type { HookTool } from './hook-tool.ts'
import { parseKeyValues } from './hook-tool.ts'

export const isLeader: HookTool = {
  name: 'is-leader',
  args: '',
  purpose: 'Print application leadership status.',
  doc: 'Prints a boolean indicating whether the local unit is guaranteed to be application leader for at least 30 seconds. If it fails, you should assume that there is no such guarantee.',
  flags: () => ({ ...outputFlags }),
  async run (call, parsed) {
    checkEmpty(parsed.args)
    await writeOutput(call, parsed, await call.context.isLeader())
  }
}

export const leaderGet: HookTool = {
  name: 'leader-get',
  args: '[<key>]',
  purpose: 'Print application leadership settings.',
  doc: 'Prints the value of a leadership setting specified by key. If no key is given, or if the key is "-", all keys and values will be printed.',
  flags: () => ({ ...outputFlags }),
  async run (call, parsed) {
    const [first, ...rest] = parsed.args
    const key = first === undefined || first === '-' ? '' : first
    if (key.includes('=')) throw usageError(`invalid key ${goQuote(key)}`)
    checkEmpty(rest)
    const settings = await call.context.leaderSettings()
    if (key === '') {
      await writeOutput(call, parsed, settings)
      return
    }
    await writeOutput(call, parsed, Object.hasOwn(settings, key) ? settings[key] : null)
  }
}

export const leaderSet: HookTool = {
  name: 'leader-set',
  args: '<key>=<value> [...]',
  purpose: 'Write application leadership settings.',
  doc: 'Immediately writes the key=value pairs to the controller, which informs the other units. Fails if the unit is not the leader. An empty value removes the key.',
  flags: () => ({}),
  async run (call, parsed) {
    const settings = parseKeyValues(parsed.args)
    if (!await call.context.isLeader()) throw new HookToolError(1, 'cannot write leadership settings: cannot write settings: not the leader')
    await call.context.setLeaderSettings(settings)
  }
}
