/**
 * action-get, action-set, action-fail and action-log (juju-semantics §5.3). Argument
 * problems are usage errors (exit 2) found before the context is consulted; outside an
 * action the tools then fail with exit 1 "not running an action", as in Juju, where the
 * tools exist in every context but the hook context refuses them. (An action-set with no
 * arguments touches nothing and so succeeds anywhere, as in Juju.)
 *
 * Results and failure are recorded at once (§4.3). action-set passes the context a
 * nested map built from this call's arguments; the context merges it into the results
 * so far, a value replacing a map and a map replacing a value, as Juju's results do.
 */
import type { ActionContext, HookContext } from '../hook-context.ts'
import { HookToolError } from '../hook-context.ts'
import { checkEmpty, goQuote, usageError } from './args.ts'
import { outputFlags, writeOutput } from './format.ts'
import type { HookTool } from './hook-tool.ts'

export const defaultActionFailMessage = 'action failed without reason given, check action for errors'

const actionKey = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/
const reservedKeys = ['stdout', 'stdout-encoding', 'stderr', 'stderr-encoding']

function runningAction (context: HookContext): ActionContext {
  if (context.kind !== 'action' || context.action === undefined) throw new HookToolError(1, 'not running an action')
  return context.action
}

export const actionGet: HookTool = {
  name: 'action-get',
  args: '[<key>[.<key>.<key>...]]',
  purpose: 'Get action parameters.',
  doc: 'Prints the value of the parameter at the given key. A dotted key descends into nested maps; no key prints all parameters.',
  flags: () => ({ ...outputFlags }),
  async run (call, parsed) {
    const [path, ...rest] = parsed.args
    checkEmpty(rest)
    const params = runningAction(call.context).params
    if (path === undefined) {
      await writeOutput(call, parsed, params)
      return
    }
    let value: unknown = params
    for (const key of path.split('.')) {
      if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, key)) {
        value = null
        break
      }
      value = (value as Record<string, unknown>)[key]
    }
    await writeOutput(call, parsed, value)
  }
}

export const actionSet: HookTool = {
  name: 'action-set',
  args: '<key>=<value> [<key>=<value> ...]',
  purpose: 'Set action results.',
  doc: `Adds the given values to the results map of the action. Keys must start and end with lowercase alphanumeric, and contain only lowercase alphanumeric and hyphens; dots separate nested keys. The keys "${reservedKeys.join('", "')}" are reserved.`,
  flags: () => ({}),
  async run (call, parsed) {
    const assignments: Array<{ keys: string[], value: string }> = []
    for (const arg of parsed.args) {
      const eq = arg.indexOf('=')
      if (eq < 0) throw usageError(`argument ${goQuote(arg)} must be of the form key...=value`)
      const keys = arg.slice(0, eq).split('.')
      for (const key of keys) {
        if (!actionKey.test(key)) {
          throw usageError(`key ${goQuote(key)} must start and end with lowercase alphanumeric, and contain only lowercase alphanumeric, hyphens and periods`)
        }
        if (reservedKeys.includes(key)) throw usageError(`cannot set reserved action key "${key}"`)
      }
      assignments.push({ keys, value: arg.slice(eq + 1) })
    }
    if (assignments.length === 0) return
    runningAction(call.context)
    const results: Record<string, unknown> = {}
    for (const { keys, value } of assignments) {
      let map = results
      for (const key of keys.slice(0, -1)) {
        const next = map[key]
        if (next === null || typeof next !== 'object') map[key] = {}
        map = map[key] as Record<string, unknown>
      }
      map[keys[keys.length - 1]!] = value
    }
    await call.context.setActionResults(results)
  }
}

export const actionFail: HookTool = {
  name: 'action-fail',
  args: '["<failure message>"]',
  purpose: 'Set action fail status with message.',
  doc: 'Sets the fail state of the action with a given error message. Without a message a default one is used.',
  flags: () => ({}),
  async run (call, parsed) {
    const [message = defaultActionFailMessage, ...rest] = parsed.args
    checkEmpty(rest)
    runningAction(call.context)
    await call.context.failAction(message)
  }
}

export const actionLog: HookTool = {
  name: 'action-log',
  args: '<message>',
  purpose: 'Record a progress message for the current action.',
  flags: () => ({}),
  async run (call, parsed) {
    if (parsed.args.length === 0) throw usageError('no message specified')
    runningAction(call.context)
    await call.context.actionLog(parsed.args.join(' '))
  }
}
