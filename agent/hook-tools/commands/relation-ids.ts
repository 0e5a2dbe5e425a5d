/**
 * relation-ids (juju-semantics §5.3): `endpoint:id` for each relation of an endpoint
 * that is not broken, sorted as strings (as Juju sorts them). The endpoint defaults to
 * the hook's relation's endpoint; outside a relation hook it is required.
 */
import { checkEmpty, usageError } from './args.ts'
import { outputFlags, writeOutput } from './format.ts'
import type { HookTool } from './hook-tool.ts'

export const relationIds: HookTool = {
  name: 'relation-ids',
  args: '[<name>]',
  purpose: 'List all relation IDs for the given endpoint.',
  doc: 'Accepts a single argument (an endpoint name) which, in a relation hook, defaults to the name of the current relation. Only relations which are not broken are listed.',
  flags: () => ({ ...outputFlags }),
  async run (call, parsed) {
    const [named, ...rest] = parsed.args
    const endpoint = named ?? call.context.relation?.endpoint
    if (endpoint === undefined || endpoint === '') throw usageError('no endpoint name specified')
    checkEmpty(rest)
    const ids = (await call.context.relations())
      .filter(relation => relation.endpoint === endpoint)
      .map(relation => `${relation.endpoint}:${relation.id}`)
      .sort()
    await writeOutput(call, parsed, ids)
  }
}
