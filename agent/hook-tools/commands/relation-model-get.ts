/**
 * relation-model-get (juju-semantics §5.3): the uuid of the model hosting the application
 * at the other end of a relation, as Juju's
 * internal/worker/uniter/runner/jujuc/relation-model-get.go prints it: a struct with one
 * field, `uuid` (smart and yaml: `uuid: <uuid>`; json: `{"uuid":"<uuid>"}`). `-r` chooses
 * the relation, by default the hook's own; none at all is a usage error. cantrip has no
 * cross-model relations, so the answer is always this model's uuid.
 */
import { checkEmpty } from './args.ts'
import { outputFlags, writeOutput } from './format.ts'
import type { HookTool } from './hook-tool.ts'
import { relationFlag, relationId } from './hook-tool.ts'

export const relationModelGet: HookTool = {
  name: 'relation-model-get',
  args: '',
  purpose: 'Get details about the model hosing a related application.',
  doc: '-r must be specified when not in a relation hook\n\nrelation-model-get outputs details about the model hosting the application on the other end of a unit relation. If not running in a relation hook context, -r needs to be specified with a relation identifier similar to the relation-get and relation-set commands.',
  flags: (context) => ({ ...outputFlags, relation: relationFlag(context) }),
  async run (call, parsed) {
    const id = relationId(call.context, parsed)
    checkEmpty(parsed.args)
    const uuid = await call.context.relationModelUuid(id)
    await writeOutput(call, parsed, new Map([['uuid', uuid]]))
  }
}
