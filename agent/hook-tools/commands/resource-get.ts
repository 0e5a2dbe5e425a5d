/**
 * resource-get (juju-semantics §5.3): the path of the unit's copy of a resource file,
 * fetched from the controllers when the copy is missing or not the application's current
 * revision. As Juju's internal/worker/uniter/runner/jujuc/resource-get.go: exactly one
 * argument, the resource name (none: `missing required resource name`, exit 2); no flags
 * but `--help`; the path is printed without a newline; a failure is
 * `could not download resource: <why>`, exit 1.
 */
import { HookToolError } from '../hook-context.ts'
import { checkEmpty, usageError } from './args.ts'
import type { HookTool } from './hook-tool.ts'

export const resourceGet: HookTool = {
  name: 'resource-get',
  args: '<resource name>',
  purpose: 'Get the path to the locally cached resource file.',
  doc: '"resource-get" is used while a hook is running to get the local path to the file for the identified resource. This file is an fs-local copy, unique to the unit for which the hook is running. It is downloaded from the controller, if necessary.',
  flags: () => ({}),
  async run (call, parsed) {
    const [name, ...rest] = parsed.args
    if (name === undefined) throw usageError('missing required resource name')
    checkEmpty(rest)
    let path: string
    try {
      path = await call.context.resourcePath(name)
    } catch (error) {
      throw new HookToolError(1, `could not download resource: ${error instanceof Error ? error.message : String(error)}`)
    }
    call.stdout += path
  }
}
