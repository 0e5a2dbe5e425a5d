/**
 * relation-get (juju-semantics §5.3): one key, or the whole bag (no key or `-`), of a
 * unit's or an application's settings in a relation.
 *
 * The target follows Juju's relation-get: an explicit unit (or, with `--app`, an
 * application or a unit standing for its application); else with `--app` the hook's
 * remote application; else the hook's remote unit; else (created, broken, app-level
 * changed) the hook's remote application bag. The defaults come from the hook's own
 * relation even when `-r` names another, as in Juju. An application name without
 * `--app` is a usage error. A missing key prints nothing and exits 0.
 */
import { HookToolError } from '../hook-context.ts'
import { checkEmpty, goQuote, usageError } from './args.ts'
import { outputFlags, writeOutput } from './format.ts'
import type { HookTool } from './hook-tool.ts'
import { findRelation, isValidApplication, isValidUnit, relationFlag, relationId } from './hook-tool.ts'

type Target = { unit: string } | { application: string }

export const relationGet: HookTool = {
  name: 'relation-get',
  args: '[<key> [<unit id>]]',
  purpose: 'Get relation settings.',
  doc: 'Prints the value of a relation setting, or all settings when the key is omitted or "-". A unit reads its own settings, including changes made with relation-set in this hook, by naming itself.',
  flags: (context) => ({
    ...outputFlags,
    relation: relationFlag(context),
    app: { names: ['app'], usage: 'Get the relation data for the overall application, not just a unit' }
  }),
  async run (call, parsed) {
    const { context } = call
    const id = relationId(context, parsed)
    const [first, ...afterKey] = parsed.args
    const key = first === undefined || first === '-' ? '' : first
    const [named, ...rest] = afterKey
    const target = defaultTarget(named, parsed.bool('app'))
    checkEmpty(rest)

    const relation = await findRelation(context, id)
    if (relation === undefined) throw new HookToolError(1, 'relation not found')
    const settings = await context.relationSettings(id, target)
    if (settings === undefined) {
      const what = 'unit' in target ? `unit ${goQuote(target.unit)}` : `application ${goQuote(target.application)}`
      throw new HookToolError(1, `cannot read settings for ${what} in relation ${goQuote(`${relation.endpoint}:${id}`)}: settings not found`)
    }
    if (key === '') {
      await writeOutput(call, parsed, settings)
      return
    }
    await writeOutput(call, parsed, Object.hasOwn(settings, key) ? settings[key] : null)

    function defaultTarget (supplied: string | undefined, app: boolean): Target {
      if (supplied !== undefined) {
        if (app) {
          if (isValidApplication(supplied)) return { application: supplied }
          if (isValidUnit(supplied)) return { application: supplied.slice(0, supplied.indexOf('/')) }
          // Juju passes such a name on and the controller refuses it; cantrip refuses it here.
          throw usageError(`invalid application name ${goQuote(supplied)}`)
        }
        if (isValidUnit(supplied)) return { unit: supplied }
        if (isValidApplication(supplied)) throw usageError(`expected unit name, got application name ${goQuote(supplied)}`)
        throw usageError(`invalid unit name ${goQuote(supplied)}`)
      }
      const current = context.relation
      if (app) {
        if (current === undefined || current.remoteApplication === '') throw usageError('no unit or application specified')
        return { application: current.remoteApplication }
      }
      if (current !== undefined && current.remoteUnit !== '') return { unit: current.remoteUnit }
      if (current !== undefined && current.remoteApplication !== '') return { application: current.remoteApplication }
      throw usageError('no unit or application specified')
    }
  }
}
