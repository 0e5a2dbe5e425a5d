/**
 * relation-list (juju-semantics §5.3): the remote units in a relation as the hook sees
 * them, sorted; with `--app`, the remote application's name instead.
 */
import { HookToolError } from '../hook-context.ts'
import { checkEmpty } from './args.ts'
import { outputFlags, writeOutput } from './format.ts'
import type { HookTool } from './hook-tool.ts'
import { findRelation, relationFlag, relationId } from './hook-tool.ts'

export const relationList: HookTool = {
  name: 'relation-list',
  args: '',
  purpose: 'List relation units.',
  doc: '-r must be specified when not in a relation hook.',
  flags: (context) => ({
    ...outputFlags,
    relation: relationFlag(context),
    app: { names: ['app'], usage: 'List remote application instead of participating units' }
  }),
  async run (call, parsed) {
    const id = relationId(call.context, parsed)
    checkEmpty(parsed.args)
    const relation = await findRelation(call.context, id)
    if (relation === undefined) throw new HookToolError(1, 'relation not found')
    if (parsed.bool('app')) {
      await writeOutput(call, parsed, relation.remoteApplication)
      return
    }
    await writeOutput(call, parsed, [...await call.context.relationUnits(id)].sort())
  }
}
