/**
 * storage-get, storage-list and storage-add (juju-semantics §5.3). storage-get reads the
 * storage instance named by `-s`, by default the storage hook's own; outside a storage
 * hook `-s` is required. storage-add takes `NAME[=COUNT]…` as Juju's
 * internal/worker/uniter/runner/jujuc/storage-add.go does and asks for the instances when
 * the hook succeeds.
 */
import { parseStorageDirectives } from '../../../runtime/model/storage-directives.ts'
import type { HookContext } from '../hook-context.ts'
import { HookToolError } from '../hook-context.ts'
import { checkEmpty, goQuote, usageError, type FlagDef } from './args.ts'
import { outputFlags, writeOutput } from './format.ts'
import type { HookTool } from './hook-tool.ts'
import { isValidStorageId } from './hook-tool.ts'

function storageFlag (context: HookContext): FlagDef {
  return {
    names: ['s'],
    value: 'id',
    usage: 'specify a storage instance by id',
    check: async (value) => {
      if (!isValidStorageId(value)) throw new Error(`invalid storage ID ${goQuote(value)}`)
      if (await context.storage(value) === undefined) throw new Error(`storage ${goQuote(value)} not found`)
    }
  }
}

export const storageGet: HookTool = {
  name: 'storage-get',
  args: '[<key>]',
  purpose: 'Print information for the storage instance with the specified ID.',
  doc: 'Prints the kind and location of a storage instance: the storage hook\'s own, or the one named with -s. When no <key> is supplied, all keys values are printed.',
  flags: (context) => ({ ...outputFlags, storage: storageFlag(context) }),
  async run (call, parsed) {
    const id = parsed.string('storage') ?? call.context.storageId
    if (id === undefined) throw usageError('no storage instance specified')
    const [key = '', ...rest] = parsed.args
    checkEmpty(rest)
    const storage = await call.context.storage(id)
    if (storage === undefined) throw new HookToolError(1, `storage ${goQuote(id)} not found`)
    const values: Record<string, string> = { kind: storage.kind, location: storage.location }
    if (key === '') {
      await writeOutput(call, parsed, values)
      return
    }
    if (!Object.hasOwn(values, key)) throw new HookToolError(1, `invalid storage attribute ${goQuote(key)}`)
    await writeOutput(call, parsed, values[key])
  }
}

export const storageList: HookTool = {
  name: 'storage-list',
  args: '[<storage-name>]',
  purpose: 'List storage attached to the unit.',
  doc: 'Lists the ids of the storage instances attached to the unit, optionally only those of one storage name. The ids can be passed to storage-get -s.',
  flags: () => ({ ...outputFlags }),
  async run (call, parsed) {
    const [name, ...rest] = parsed.args
    checkEmpty(rest)
    await writeOutput(call, parsed, await call.context.storageIds(name === '' ? undefined : name))
  }
}

export const storageAdd: HookTool = {
  name: 'storage-add',
  args: '<charm storage name>[=count] ...',
  purpose: 'Add storage instances.',
  doc: 'Storage add adds storage instances to unit using provided storage directives. A storage directive consists of a storage name as per charm specification and optional storage COUNT.\n\nCOUNT is a positive integer indicating how many instances of the storage to create. If unspecified, COUNT defaults to 1.',
  flags: () => ({}),
  async run (call, parsed) {
    if (parsed.args.length === 0) throw usageError('storage add requires a storage directive')
    const result = parseStorageDirectives(parsed.args, { countOnly: true })
    if ('error' in result) throw usageError(result.error)
    await call.context.addStorage(Object.fromEntries(Object.entries(result.directives).map(([name, d]) => [name, d.count ?? 1])))
  }
}
