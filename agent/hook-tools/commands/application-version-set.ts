/** application-version-set (juju-semantics §5.3): the workload version, set at once (§4.3). */
import { checkEmpty, usageError } from './args.ts'
import type { HookTool } from './hook-tool.ts'

export const applicationVersionSet: HookTool = {
  name: 'application-version-set',
  args: '<new-version>',
  purpose: 'Specify which version of the application is deployed.',
  doc: 'Tells Juju which version of the application software is running; it is shown in the Version column of "juju status".',
  flags: () => ({}),
  async run (call, parsed) {
    const [version, ...rest] = parsed.args
    if (version === undefined) throw usageError('no version specified')
    checkEmpty(rest)
    await call.context.setApplicationVersion(version)
  }
}
