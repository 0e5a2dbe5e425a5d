/**
 * The secret-* hook tools, after Juju 3's internal/worker/uniter/runner/jujuc/secret-*.go:
 * the same flags, arguments, usage errors (exit 2) and refusals (exit 1). secret-get,
 * secret-ids and secret-info-get print YAML by default and JSON with `--format json`.
 * Changes are the hook's to commit (agent/uniter/unit-hook-secrets.ts).
 */
import { HookToolError } from '../hook-context.ts'
import { checkEmpty, goQuote, usageError } from './args.ts'
import { outputFlagsOf, writeOutput } from './format.ts'
import type { HookTool } from './hook-tool.ts'
import { findRelation } from './hook-tool.ts'
import { goTime, ownerFlag, secretContent, secretIdArg, secretsOf, upsertFields, upsertFlags } from './secret-args.ts'

const yamlOrJson = outputFlagsOf(['yaml', 'json'])

export const secretAdd: HookTool = {
  name: 'secret-add',
  args: '[key[#base64|#file]=value...]',
  purpose: 'Add a new secret.',
  flags: () => upsertFlags,
  async run (call, parsed) {
    if (parsed.args.length === 0 && (parsed.string('file') ?? '') === '') throw usageError('missing secret value or filename')
    const fields = upsertFields(parsed, Date.now())
    const owner = ownerFlag(parsed)
    const content = await secretContent(call, parsed.args, parsed.string('file'))
    call.stdout += `${await secretsOf(call).add(owner, content, fields)}\n`
  }
}

export const secretSet: HookTool = {
  name: 'secret-set',
  args: '<ID> [key[#base64|#file]=value...]',
  purpose: 'Update an existing secret.',
  flags: () => upsertFlags,
  async run (call, parsed) {
    const [uri, ...values] = parsed.args
    if (uri === undefined) throw usageError('missing secret URI')
    const id = secretIdArg(uri)
    const fields = upsertFields(parsed, Date.now())
    ownerFlag(parsed)
    const content = await secretContent(call, values, parsed.string('file'))
    await secretsOf(call).set(id, content, fields)
  }
}

export const secretGet: HookTool = {
  name: 'secret-get',
  args: '<ID> [key[#base64]]',
  purpose: 'Get the content of a secret.',
  flags: () => ({
    ...yamlOrJson,
    label: { names: ['label'], value: 'value', usage: 'a label used to identify the secret in hooks' },
    peek: { names: ['peek'], usage: 'get the latest revision just this time' },
    refresh: { names: ['refresh'], usage: 'get the latest revision and also get this same revision for subsequent calls' }
  }),
  async run (call, parsed) {
    const [uri, key, ...rest] = parsed.args
    const id = uri === undefined ? undefined : secretIdArg(uri)
    const label = parsed.string('label') ?? ''
    if (id === undefined && label === '') throw usageError('require either a secret URI or label')
    if (parsed.bool('peek') && parsed.bool('refresh')) throw usageError('specify one of --peek or --refresh but not both')
    checkEmpty(rest)
    const content = await secretsOf(call).get(
      { ...(id === undefined ? {} : { id }), ...(label === '' ? {} : { label }) },
      { refresh: parsed.bool('refresh'), peek: parsed.bool('peek') })
    if (key === undefined) {
      await writeOutput(call, parsed, content, 'yaml')
      return
    }
    const base64 = key.endsWith('#base64')
    const name = base64 ? key.slice(0, -'#base64'.length) : key
    const value = content[name]
    if (value === undefined) throw new HookToolError(1, `secret key ${goQuote(name)} not found`)
    await writeOutput(call, parsed, base64 ? Buffer.from(value, 'utf8').toString('base64') : value, 'yaml')
  }
}

export const secretRemove: HookTool = {
  name: 'secret-remove',
  args: '<ID>',
  purpose: 'Remove an existing secret.',
  flags: () => ({ revision: { names: ['revision'], value: 'value', usage: 'remove the specified revision' } }),
  async run (call, parsed) {
    const [uri, ...rest] = parsed.args
    if (uri === undefined) throw usageError('missing secret URI')
    const id = secretIdArg(uri)
    checkEmpty(rest)
    const text = parsed.string('revision')
    let revision: number | undefined
    if (text !== undefined) {
      revision = Number(text)
      if (!/^[0-9]+$/.test(text) || revision < 1) throw usageError(`revision ${goQuote(text)} not valid`)
    }
    await secretsOf(call).remove(id, revision)
  }
}

function grantRevoke (name: 'secret-grant' | 'secret-revoke', purpose: string): HookTool {
  return {
    name,
    args: '<ID>',
    purpose,
    flags: () => ({
      relation: { names: ['r', 'relation'], value: 'value', usage: 'the relation with which to associate the grant' },
      unit: { names: ['unit'], value: 'value', usage: 'the unit to grant access' },
      ...(name === 'secret-revoke' ? { app: { names: ['app', 'application'], value: 'value', usage: 'the application to revoke access' } } : {})
    }),
    async run (call, parsed) {
      const [uri, ...rest] = parsed.args
      if (uri === undefined) throw usageError('missing secret URI')
      const id = secretIdArg(uri)
      checkEmpty(rest)
      const relationText = parsed.string('relation')
      const relationId = relationText === undefined ? call.context.relation?.id : Number(relationText.slice(relationText.lastIndexOf(':') + 1))
      if (relationId === undefined || !Number.isSafeInteger(relationId)) throw usageError('no relation id specified')
      const relation = await findRelation(call.context, relationId)
      if (relation === undefined) throw usageError(`invalid value ${goQuote(relationText ?? String(relationId))} for option -r: relation not found`)
      const unit = parsed.string('unit')
      if (unit !== undefined && unit.slice(0, unit.lastIndexOf('/')) !== relation.remoteApplication) {
        throw usageError(`cannot specify unit ${goQuote(unit)} in relation to application ${goQuote(relation.remoteApplication)}`)
      }
      const secrets = secretsOf(call)
      if (name === 'secret-grant') await secrets.grant(id, relationId, unit)
      else await secrets.revoke(id, relationId, unit)
    }
  }
}

export const secretGrant = grantRevoke('secret-grant', 'Grant access to a secret.')
export const secretRevoke = grantRevoke('secret-revoke', 'Revoke access to a secret.')

export const secretIds: HookTool = {
  name: 'secret-ids',
  args: '',
  purpose: 'Print secret IDs.',
  flags: () => yamlOrJson,
  async run (call, parsed) {
    checkEmpty(parsed.args)
    await writeOutput(call, parsed, await secretsOf(call).ids(), 'yaml')
  }
}

export const secretInfoGet: HookTool = {
  name: 'secret-info-get',
  args: '<ID>',
  purpose: "Get a secret's metadata info.",
  flags: () => ({ ...yamlOrJson, label: { names: ['label'], value: 'value', usage: 'a label used to identify the secret' } }),
  async run (call, parsed) {
    const [uri, ...rest] = parsed.args
    const id = uri === undefined ? undefined : secretIdArg(uri)
    const label = parsed.string('label') ?? ''
    if (id === undefined && label === '') throw usageError('require either a secret URI or label')
    if (id !== undefined && label !== '') throw usageError('specify either a secret URI or label but not both')
    checkEmpty(rest)
    const info = await secretsOf(call).info(id === undefined ? { label } : { id })
    if (info === undefined) throw new HookToolError(1, `secret ${goQuote(id ?? label)} not found`)
    // A Go struct: its fields in declaration order, the omitempty ones left out when empty.
    const display = new Map<string, unknown>([['revision', info.revision], ['label', info.label], ['owner', info.owner]])
    if (info.description !== '') display.set('description', info.description)
    if (info.rotation !== '' && info.rotation !== 'never') display.set('rotation', info.rotation)
    if (info.expiry !== null) display.set('expiry', goTime(info.expiry))
    if (info.rotates !== null) display.set('rotates', goTime(info.rotates))
    if (info.access.length > 0) display.set('access', info.access.map(a => new Map<string, unknown>([['target', a.target], ['scope', a.scope], ['role', a.role]])))
    await writeOutput(call, parsed, { [info.id]: display }, 'yaml')
  }
}
