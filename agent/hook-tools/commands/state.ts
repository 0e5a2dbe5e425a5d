/**
 * state-get, state-set and state-delete (juju-semantics §5.3): the unit's charm state.
 * Reads see this hook's own changes; set and delete are buffered until the hook
 * succeeds (§4.3). state-set takes key=value arguments and `--file` like relation-set.
 */
import { HookToolError } from '../hook-context.ts'
import { checkEmpty, goQuote } from './args.ts'
import { outputFlags, writeOutput } from './format.ts'
import type { HookTool } from './hook-tool.ts'
import { fileFlag, parseKeyValues, readSettingsFile } from './hook-tool.ts'

export const stateGet: HookTool = {
  name: 'state-get',
  args: '[<key>]',
  purpose: 'Print server-side-state value.',
  doc: 'Prints the value of the charm state specified by key. If no key is given, or if the key is "-", all keys and values will be printed.',
  flags: () => ({
    ...outputFlags,
    strict: { names: ['strict'], usage: 'Return an error if the requested key does not exist' }
  }),
  async run (call, parsed) {
    const [first, ...rest] = parsed.args
    const key = first === undefined || first === '-' ? '' : first
    checkEmpty(rest)
    const state = await call.context.charmState()
    if (key === '') {
      await writeOutput(call, parsed, state)
      return
    }
    if (!Object.hasOwn(state, key) && parsed.bool('strict')) throw new HookToolError(1, `${goQuote(key)} not found`)
    // Juju prints the empty string for a missing key (json: ""), not nil.
    await writeOutput(call, parsed, state[key] ?? '')
  }
}

export const stateSet: HookTool = {
  name: 'state-set',
  args: 'key=value [key=value ...]',
  purpose: 'Set server-side-state values.',
  doc: 'Sets charm state values. --file reads a YAML map of strings (- means stdin), overridden by key=value arguments. An empty value deletes the key.',
  flags: () => ({ file: fileFlag }),
  async run (call, parsed) {
    const overrides = parseKeyValues(parsed.args)
    const values = { ...await readSettingsFile(call, parsed.string('file')), ...overrides }
    if (Object.keys(values).length > 0) await call.context.setCharmState(values)
  }
}

export const stateDelete: HookTool = {
  name: 'state-delete',
  args: '<key>',
  purpose: 'Delete server-side-state key value pair.',
  flags: () => ({}),
  async run (call, parsed) {
    const [key, ...rest] = parsed.args
    checkEmpty(rest)
    if (key === undefined || key === '') return
    await call.context.deleteCharmState([key])
  }
}
