/** unit-get (juju-semantics §5.3): the unit's private or public address. */
import { checkEmpty, goQuote, usageError } from './args.ts'
import { outputFlags, writeOutput } from './format.ts'
import type { HookTool } from './hook-tool.ts'

export const unitGet: HookTool = {
  name: 'unit-get',
  args: '<setting>',
  purpose: 'Print public-address or private-address.',
  flags: () => ({ ...outputFlags }),
  async run (call, parsed) {
    const [setting, ...rest] = parsed.args
    if (setting === undefined) throw usageError('no setting specified')
    if (setting !== 'private-address' && setting !== 'public-address') throw usageError(`unknown setting ${goQuote(setting)}`)
    checkEmpty(rest)
    await writeOutput(call, parsed, await call.context.unitAddress(setting))
  }
}
