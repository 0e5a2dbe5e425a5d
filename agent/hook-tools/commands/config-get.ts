/**
 * config-get (juju-semantics §5.3): the whole configuration, or one option's value.
 * Without a key, options that are null (unset, no default) are left out unless `--all`.
 * A missing or null option prints nothing (json: null) and exits 0.
 */
import { checkEmpty, goQuote, usageError } from './args.ts'
import { outputFlags, writeOutput } from './format.ts'
import type { HookTool } from './hook-tool.ts'

export const configGet: HookTool = {
  name: 'config-get',
  args: '[<key>]',
  purpose: 'Print application configuration.',
  doc: 'With no key, prints the options that are set or have a non-null default; --all includes the null ones. <key> and --all are mutually exclusive.',
  flags: () => ({
    ...outputFlags,
    all: { names: ['a', 'all'], usage: 'print all keys' }
  }),
  async run (call, parsed) {
    const [key = '', ...rest] = parsed.args
    if (key !== '' && parsed.bool('all')) throw usageError(`cannot use argument --all together with key ${goQuote(key)}`)
    checkEmpty(rest)
    const config = await call.context.config()
    if (key === '') {
      const shown = parsed.bool('all') ? config : Object.fromEntries(Object.entries(config).filter(([, value]) => value !== null))
      await writeOutput(call, parsed, shown)
      return
    }
    await writeOutput(call, parsed, Object.hasOwn(config, key) ? config[key] : null)
  }
}
