/**
 * relation-set (juju-semantics §5.3): writes the unit's own settings in a relation, or
 * with `--app` (leader only) its application's. Values are strings; `k=` deletes. With
 * `--file` (a path, or `-` for stdin) a YAML map is read first and the arguments
 * override it. The writes are buffered in the context until the hook succeeds (§4.3).
 * `--format` is accepted for compatibility and only draws Juju's deprecation warning.
 */
import { HookToolError } from '../hook-context.ts'
import { goQuote } from './args.ts'
import type { HookTool } from './hook-tool.ts'
import { fileFlag, findRelation, parseKeyValues, readSettingsFile, relationFlag, relationId } from './hook-tool.ts'

export const relationSet: HookTool = {
  name: 'relation-set',
  args: 'key=value [key=value ...]',
  purpose: 'Set relation settings.',
  doc: 'Writes the local unit\'s settings for a relation (the current one unless -r is given). Values are stored as strings; an empty value removes the setting; duplicate keys are not allowed. The leader may set the application settings with --app. --file reads a YAML map (- means stdin), overridden by key=value arguments.',
  flags: (context) => ({
    relation: relationFlag(context),
    file: fileFlag,
    app: { names: ['app'], usage: 'pick whether you are setting "application" settings or "unit" settings' },
    format: { names: ['format'], value: 'format', usage: 'deprecated format flag' }
  }),
  async run (call, parsed) {
    const { context } = call
    const id = relationId(context, parsed)
    const overrides = parseKeyValues(parsed.args)
    const format = parsed.string('format')
    // Juju writes this warning without a newline; so does cantrip.
    if (format !== undefined && format !== '') call.stderr += `--format flag deprecated for command ${goQuote('relation-set')}`
    const settings = { ...await readSettingsFile(call, parsed.string('file')), ...overrides }

    if (await findRelation(context, id) === undefined) throw new HookToolError(1, 'relation not found')
    const application = parsed.bool('app')
    if (application && !await context.isLeader()) throw new HookToolError(1, 'cannot write relation settings')
    if (Object.keys(settings).length > 0) await context.setRelationSettings(id, application, settings)
  }
}
