/**
 * What every hook tool command is, and the helpers several of them share. A command
 * parses its arguments (usage problems throw a `HookToolError` with code 2, as juju/cmd's
 * `Init` does), then acts on the `HookContext` (refusals throw code 1, as `Run` does).
 * Output accumulates in the `ToolCall`; `runTool` turns it into the RPC answer.
 */
import { readFile } from 'node:fs/promises'
import { isAbsolute, resolve } from 'node:path'
import { LineCounter, parseAllDocuments, isMap, isScalar, isSeq, type Node } from 'yaml'
import type { ContextRelation, HookContext } from '../hook-context.ts'
import { HookToolError } from '../hook-context.ts'
import type { FlagDef, FlagDefs, ParsedArgs } from './args.ts'
import { goQuote, usageError } from './args.ts'

export interface ToolIo {
  /** The caller's working directory; relative paths (`-o`, `--file`) resolve against it. */
  cwd: string
  /** The caller's stdin, once a tool has asked for it. */
  stdin?: Uint8Array
}

/** One invocation of a tool: what it runs against, and the output it has produced so far. */
export class ToolCall {
  readonly context: HookContext
  readonly io: ToolIo
  stdout = ''
  stderr = ''

  constructor (context: HookContext, io: ToolIo) {
    this.context = context
    this.io = io
  }

  get cwd (): string {
    return this.io.cwd
  }
}

export interface HookTool {
  readonly name: string
  /** The positional part of the usage line, e.g. `[<key>]`. */
  readonly args: string
  readonly purpose: string
  readonly doc?: string
  /** The tool's flags; a function because some check their values against the context. */
  flags (context: HookContext): FlagDefs
  run (call: ToolCall, parsed: ParsedArgs): Promise<void>
}

/**
 * Thrown when a tool needs stdin that the client has not sent (`--file -`); the server
 * answers "needs stdin" and the client calls again with it (juju-semantics §5.1).
 */
export class NeedsStdin extends Error {
  override name = 'NeedsStdin'
  constructor () {
    super('hook tool requires stdin, none supplied')
  }
}

// ---------------------------------------------------------------------------------
// Names (juju/names).

const applicationPattern = '[a-z][a-z0-9]*(?:-[a-z0-9]*[a-z][a-z0-9]*)*'
const applicationName = new RegExp(`^${applicationPattern}$`)
const unitName = new RegExp(`^${applicationPattern}/(?:0|[1-9][0-9]*)$`)
const storageId = new RegExp(`^${applicationPattern}/(?:0|[1-9][0-9]*)$`)

export const isValidApplication = (name: string): boolean => applicationName.test(name)
export const isValidUnit = (name: string): boolean => unitName.test(name)
export const isValidStorageId = (id: string): boolean => storageId.test(id)

// ---------------------------------------------------------------------------------
// Relations.

/**
 * The relation with `id`, if the unit is in it. The relation of a -broken hook is no
 * longer listed by `relations()` but is still the hook's to use, as in Juju.
 */
export async function findRelation (context: HookContext, id: number): Promise<ContextRelation | undefined> {
  const listed = (await context.relations()).find(relation => relation.id === id)
  if (listed !== undefined) return listed
  const current = context.relation
  if (current?.id === id) return { id, endpoint: current.endpoint, interface: '', remoteApplication: current.remoteApplication }
  return undefined
}

/** `name:N` or `N` as Juju reads it: whatever follows the last colon must be an integer. */
function parseRelationId (value: string): number {
  const text = value.slice(value.lastIndexOf(':') + 1)
  if (!/^[+-]?[0-9]+$/.test(text)) throw new Error('invalid relation id')
  return Number(text)
}

/** `-r/--relation`: checked as it is parsed, like Juju's relationIdValue. */
export function relationFlag (context: HookContext): FlagDef {
  return {
    names: ['r', 'relation'],
    value: 'id',
    usage: 'Specify a relation by id',
    check: async (value) => {
      if (await findRelation(context, parseRelationId(value)) === undefined) throw new Error('relation not found')
    }
  }
}

/** The relation chosen by `-r`, else the hook's own; exit 2 when there is neither. */
export function relationId (context: HookContext, parsed: ParsedArgs, key = 'relation'): number {
  const value = parsed.string(key)
  if (value !== undefined) return parseRelationId(value)
  if (context.relation !== undefined) return context.relation.id
  throw usageError('no relation id specified')
}

/** The relation chosen by `-r`, else the hook's own, else undefined (network-get). */
export function optionalRelationId (context: HookContext, parsed: ParsedArgs): number | undefined {
  const value = parsed.string('relation')
  if (value !== undefined) return parseRelationId(value)
  return context.relation?.id
}

// ---------------------------------------------------------------------------------
// key=value arguments and --file (relation-set, leader-set, state-set).

/**
 * juju/utils keyvalues.Parse with empty values allowed: `k=` is kept (it deletes), a
 * repeated key or an argument without `=` (or with an empty key) is a usage error.
 */
export function parseKeyValues (args: readonly string[]): Record<string, string> {
  const result: Record<string, string> = {}
  const seen = new Set<string>()
  for (const arg of args) {
    const eq = arg.indexOf('=')
    if (eq <= 0) throw usageError(`expected "key=value", got ${goQuote(arg)}`)
    const key = arg.slice(0, eq)
    if (seen.has(key)) throw usageError(`key ${goQuote(key)} specified more than once`)
    seen.add(key)
    result[key] = arg.slice(eq + 1)
  }
  return result
}

/** The `--file` flag: a path relative to the caller's cwd, or `-` for stdin. */
export const fileFlag: FlagDef = { names: ['file'], value: 'path', usage: 'file containing key-value pairs' }

/**
 * Reads the YAML map named by `--file` (nothing when the flag is absent or empty).
 * Throws `NeedsStdin` for `-` when stdin has not been sent yet.
 */
export async function readSettingsFile (call: ToolCall, path: string | undefined): Promise<Record<string, string>> {
  if (path === undefined || path === '') return {}
  let text: string
  if (path === '-') {
    if (call.io.stdin === undefined) throw new NeedsStdin()
    text = new TextDecoder().decode(call.io.stdin)
  } else {
    const absolute = isAbsolute(path) ? path : resolve(call.cwd, path)
    try {
      text = await readFile(absolute, 'utf8')
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      const reason = code === 'ENOENT' ? 'no such file or directory' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : (error as Error).message
      throw new HookToolError(1, `open ${absolute}: ${reason}`)
    }
  }
  return parseSettingsYaml(text)
}

/**
 * A YAML map of strings, read the way Go's yaml.v2 reads one into map[string]string:
 * scalars keep their source text (`1.50` stays "1.50"), null becomes "" (which deletes),
 * an empty document is an empty map, and anything but a map of scalars is an error.
 */
export function parseSettingsYaml (text: string): Record<string, string> {
  const lineCounter = new LineCounter()
  const docs = parseAllDocuments(text, { lineCounter, version: '1.1' })
  const doc = Array.isArray(docs) ? docs[0] : undefined
  if (doc === undefined) return {}
  const firstError = doc.errors[0]
  if (firstError !== undefined) {
    const line = lineCounter.linePos(firstError.pos[0]).line
    throw new HookToolError(1, `yaml: line ${line}: ${firstError.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`)
  }
  const contents = doc.contents
  if (contents === null || (isScalar(contents) && contents.value === null)) return {}
  const lineOf = (node: Node): number => lineCounter.linePos(node.range?.[0] ?? 0).line
  if (!isMap(contents)) {
    const what = isSeq(contents) ? '!!seq' : `!!str \`${scalarText(contents).slice(0, 7)}${scalarText(contents).length > 7 ? '...' : ''}\``
    throw new HookToolError(1, `yaml: unmarshal errors:\n  line ${lineOf(contents)}: cannot unmarshal ${what} into map[string]string`)
  }
  const result: Record<string, string> = {}
  for (const pair of contents.items) {
    const key = pair.key as Node | null
    const value = pair.value as Node | null
    if (key !== null && !isScalar(key)) {
      throw new HookToolError(1, `yaml: unmarshal errors:\n  line ${lineOf(key)}: cannot unmarshal ${isSeq(key) ? '!!seq' : '!!map'} into string`)
    }
    if (value !== null && !isScalar(value)) {
      throw new HookToolError(1, `yaml: unmarshal errors:\n  line ${lineOf(value)}: cannot unmarshal ${isSeq(value) ? '!!seq' : '!!map'} into string`)
    }
    result[key === null ? '' : scalarText(key)] = value === null ? '' : scalarText(value)
  }
  return result
}

function scalarText (node: Node): string {
  if (!isScalar(node)) return ''
  if (node.value === null) return ''
  if (node.type === 'PLAIN' && typeof node.source === 'string') return node.source
  return String(node.value)
}
