/**
 * What the secret-* tools share (Juju's internal/worker/uniter/runner/jujuc/secret-add.go
 * and core/secrets): the upsert flags, `key[#base64|#file]=value` content, expiry as a
 * time or a duration, and the URI argument.
 */
import { readFile } from 'node:fs/promises'
import { isAbsolute, resolve } from 'node:path'
import { parseSecretUri, secretRotatePolicies, type SecretRotatePolicy } from '../../../runtime/model/secret-types.ts'
import { HookToolError } from '../hook-context.ts'
import type { HookSecrets, SecretFields } from '../hook-secrets.ts'
import { goQuote, usageError, type FlagDefs, type ParsedArgs } from './args.ts'
import { readSettingsFile, type ToolCall } from './hook-tool.ts'

export const upsertFlags: FlagDefs = {
  expire: { names: ['expire'], value: 'value', usage: 'either a duration or time when the secret should expire' },
  rotate: { names: ['rotate'], value: 'value', usage: 'the secret rotation policy' },
  description: { names: ['description'], value: 'value', usage: 'the secret description' },
  label: { names: ['label'], value: 'value', usage: 'a label used to identify the secret in hooks' },
  file: { names: ['file'], value: 'value', usage: 'a YAML file containing secret key values' },
  owner: { names: ['owner'], value: 'value', usage: 'the owner of the secret, either the application or unit' }
}

/** Juju's secret key rule (core/secrets.keyRegex): lower case, digits and single hyphens, 3 or more. */
const keyPattern = /^[a-z](?:-?[a-z0-9]){2,}$/

/** Go's time.ParseDuration for the units a charm writes. */
function parseDuration (text: string): number | undefined {
  const unitMs: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 }
  const match = /^([+-]?)((?:\d+(?:\.\d*)?(?:ns|us|µs|ms|s|m|h))+)$/.exec(text)
  if (match === null) return undefined
  let total = 0
  for (const part of match[2]!.matchAll(/(\d+(?:\.\d*)?)(ns|us|µs|ms|s|m|h)/g)) total += Number(part[1]) * unitMs[part[2]!]!
  return match[1] === '-' ? -total : total
}

/** `--expire`: RFC 3339, `2006-01-02T15:04:05` (UTC), or a duration from now. */
export function parseExpire (spec: string, now: number): number {
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)$/.test(spec)) return Date.parse(spec)
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/.test(spec)) return Date.parse(`${spec}Z`)
  const duration = parseDuration(spec)
  if (duration === undefined) throw usageError(`expire time or duration ${goQuote(spec)} not valid`)
  if (duration <= 0) throw usageError(`negative expire duration ${goQuote(spec)} not valid`)
  return now + Math.round(duration)
}

/** The fields of `--expire`, `--rotate`, `--description` and `--label`. */
export function upsertFields (parsed: ParsedArgs, now: number): SecretFields {
  const fields: SecretFields = {}
  const expire = parsed.string('expire')
  if (expire !== undefined && expire !== '') fields.expireTime = parseExpire(expire, now)
  const rotate = parsed.string('rotate')
  if (rotate !== undefined && rotate !== '') {
    if (!(secretRotatePolicies as readonly string[]).includes(rotate)) throw usageError(`rotate policy ${goQuote(rotate)} not valid`)
    fields.rotatePolicy = rotate as SecretRotatePolicy
  }
  const description = parsed.string('description')
  if (description !== undefined && description !== '') fields.description = description
  const label = parsed.string('label')
  if (label !== undefined && label !== '') fields.label = label
  return fields
}

export function ownerFlag (parsed: ParsedArgs): 'application' | 'unit' {
  const owner = parsed.string('owner') ?? 'application'
  if (owner !== 'application' && owner !== 'unit') throw usageError(`secret owner ${goQuote(owner)} not valid`)
  return owner
}

async function readValueFile (call: ToolCall, path: string): Promise<string> {
  const absolute = isAbsolute(path) ? path : resolve(call.cwd, path)
  try {
    return await readFile(absolute, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new HookToolError(1, `open ${absolute}: ${code === 'ENOENT' ? 'no such file or directory' : (error as Error).message}`)
  }
}

/**
 * `key=value`, `key#base64=<base64>` and `key#file=<path>` arguments, then `--file`'s
 * YAML map on top (Juju's CreateSecretData and ReadSecretData). Values are kept plain.
 */
export async function secretContent (call: ToolCall, args: readonly string[], file: string | undefined): Promise<Record<string, string>> {
  const content: Record<string, string> = {}
  for (const arg of args) {
    const eq = arg.indexOf('=')
    if (eq <= 0) throw usageError(`key value ${goQuote(arg)} not valid`)
    let key = arg.slice(0, eq)
    let value = arg.slice(eq + 1)
    if (key.endsWith('#base64')) {
      key = key.slice(0, -'#base64'.length)
      value = Buffer.from(value, 'base64').toString('utf8')
    } else if (key.endsWith('#file')) {
      key = key.slice(0, -'#file'.length)
      value = await readValueFile(call, value)
    }
    if (!keyPattern.test(key)) throw usageError(`key ${goQuote(key)} not valid`)
    content[key] = value
  }
  if (file !== undefined && file !== '') Object.assign(content, await readSettingsFile(call, file))
  return content
}

/** The `<ID>` argument: `secret:<id>`, `secret://<uuid>/<id>` or a bare id. */
export function secretIdArg (text: string): string {
  const id = parseSecretUri(text)
  if (id === undefined) throw usageError(`secret URI ${goQuote(text)} not valid`)
  return id
}

export function secretsOf (call: ToolCall): HookSecrets {
  const secrets = call.context.secrets
  if (secrets === undefined) throw new HookToolError(1, 'secrets are not available in this context')
  return secrets
}

/** Go's time.Time in JSON and YAML: RFC 3339, whole seconds without a fraction. */
export function goTime (ms: number): string {
  return new Date(ms).toISOString().replace(/\.000Z$/, 'Z')
}
