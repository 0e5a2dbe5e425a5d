/**
 * Output of the hook tools that print something (juju-semantics §5.2), after juju/cmd's
 * `Output`: `--format smart|yaml|json` (default smart) and `-o/--output <file>`, a path
 * relative to the tool's working directory that receives the output instead of stdout.
 *
 * Values are JSON-like. A plain object is a Go map: its keys are sorted. A `Map` is a Go
 * struct: its keys keep their order (network-get's output is the one such value).
 *
 * - smart: nil prints nothing; a string prints as-is plus a newline (nothing for '');
 *   a list of strings prints one per line (an empty list prints nothing: juju/cmd joins
 *   it into "" and writes nothing for "", which juju's relation-list_test.go pins as
 *   "default relation, no members"); a boolean prints `True`/`False`; a number prints
 *   in plain decimal (never an exponent); anything else is YAML.
 * - yaml: nil prints nothing; otherwise one YAML document ending in one newline.
 * - json: one JSON document and a newline, `null` for nil; `<`, `>` and `&` are escaped
 *   as Go's encoding/json escapes them.
 */
import { writeFile } from 'node:fs/promises'
import { isAbsolute, resolve } from 'node:path'
import { Document, YAMLMap, YAMLSeq, type Node, type ScalarTag, type Tags } from 'yaml'
import { HookToolError } from '../hook-context.ts'
import type { FlagDefs, ParsedArgs } from './args.ts'
import { goQuote } from './args.ts'

export type OutputFormat = 'smart' | 'yaml' | 'json'

const formats: readonly OutputFormat[] = ['json', 'smart', 'yaml']

/**
 * How deeply nested a printed value may be. Values such as action parameters come from
 * the controller, and formatting walks them recursively, so their depth is bounded here.
 * It belongs with the other maximums in runtime/limits.ts; it lives here only because
 * this change could not touch that file.
 */
export const outputDepthMax = 64

function checkDepth (depth: number): void {
  if (depth > outputDepthMax) throw new Error(`cannot format output: value nested deeper than ${outputDepthMax} levels`)
}

/**
 * The `--format`, `-o` and `--output` flags of a tool that offers only `allowed` formats
 * (goal-state: yaml and json), as juju/cmd's Output.AddFlags builds them.
 */
export function outputFlagsOf (allowed: readonly OutputFormat[]): FlagDefs {
  return {
    format: {
      names: ['format'],
      value: 'format',
      usage: `Specify output format (${[...allowed].sort().join('|')})`,
      check: (value) => {
        if (!(allowed as readonly string[]).includes(value)) throw new Error(`unknown format ${goQuote(value)}`)
      }
    },
    output: { names: ['o', 'output'], value: 'file', usage: 'Specify an output file' }
  }
}

/** The `--format`, `-o` and `--output` flags of every tool that prints a value. */
export const outputFlags: FlagDefs = outputFlagsOf(formats)

/** The format chosen on the command line, else the tool's default. */
export function outputFormat (parsed: ParsedArgs, fallback: OutputFormat = 'smart'): OutputFormat {
  return (parsed.string('format') ?? fallback) as OutputFormat
}

/** Where formatted output goes: the tool's stdout buffer, and the directory `-o` is relative to. */
export interface OutputTarget {
  cwd: string
  stdout: string
}

/**
 * Formats `value` as the flags ask and writes it to stdout, or to the `-o` file, which
 * is created (empty when there is nothing to print) as juju/cmd creates it.
 */
export async function writeOutput (target: OutputTarget, parsed: ParsedArgs, value: unknown, fallback: OutputFormat = 'smart'): Promise<void> {
  const text = formatValue(outputFormat(parsed, fallback), value)
  const path = parsed.string('output')
  if (path === undefined || path === '') {
    target.stdout += text
    return
  }
  const absolute = isAbsolute(path) ? path : resolve(target.cwd, path)
  try {
    await writeFile(absolute, text)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const reason = code === 'ENOENT' ? 'no such file or directory' : code === 'EACCES' ? 'permission denied' : (error as Error).message
    throw new HookToolError(1, `open ${absolute}: ${reason}`)
  }
}

export function formatValue (format: OutputFormat, value: unknown): string {
  switch (format) {
    case 'smart': return formatSmart(value)
    case 'yaml': return formatYaml(value)
    case 'json': return `${toJson(value, 0)}\n`
  }
}

function isNil (value: unknown): value is null | undefined {
  return value === null || value === undefined
}

function formatSmart (value: unknown): string {
  if (isNil(value)) return ''
  if (typeof value === 'string') return value === '' ? '' : `${value}\n`
  if (typeof value === 'boolean') return value ? 'True\n' : 'False\n'
  if (typeof value === 'number') return `${plainDecimal(value)}\n`
  if (Array.isArray(value) && value.every(item => typeof item === 'string')) return formatSmart(value.join('\n'))
  return formatYaml(value)
}

/** Go's strconv.FormatFloat(v, 'f', -1, 64): shortest digits, never an exponent. */
function plainDecimal (value: number): string {
  const text = String(value)
  if (!/e/i.test(text)) return text
  const [mantissa = '', exponentText = '0'] = text.toLowerCase().split('e')
  const exponent = Number(exponentText)
  const negative = mantissa.startsWith('-')
  const [whole = '', fraction = ''] = mantissa.replace('-', '').split('.')
  const digits = whole + fraction
  const point = whole.length + exponent
  let result: string
  if (point <= 0) result = `0.${'0'.repeat(-point)}${digits}`
  else if (point >= digits.length) result = digits + '0'.repeat(point - digits.length)
  else result = `${digits.slice(0, point)}.${digits.slice(point)}`
  return negative ? `-${result}` : result
}

/**
 * Go's yaml.v2 quotes a string that would read back as a timestamp only in the forms its
 * parseTimestamp knows (`2006-1-2`, `2006-1-2T15:4:5Z07:00`, `2006-1-2 15:4:5`), where
 * YAML 1.1's own timestamp pattern is wider: goal-state's `2200-11-05 15:29:12Z` is plain
 * in Juju's output. So the schema's timestamp tag is swapped for one that knows Go's forms.
 */
const goTimestamp = /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:[0-9]{2})| [0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?)?$/
const goTimestampTag: ScalarTag = {
  tag: 'tag:yaml.org,2002:timestamp',
  default: true,
  test: goTimestamp,
  resolve: (text: string) => text
}
function goTimestampTags (tags: Tags): Tags {
  return [...tags.filter(tag => typeof tag === 'string' || tag.tag !== 'tag:yaml.org,2002:timestamp'), goTimestampTag]
}

function formatYaml (value: unknown): string {
  if (isNil(value)) return ''
  // YAML 1.1 quoting, as Go's yaml.v2 does: a string such as "yes" or "on" is quoted so
  // that a YAML 1.1 reader (PyYAML in charms) does not read it as a boolean.
  const doc = new Document(null, { version: '1.1', customTags: goTimestampTags })
  doc.contents = toYamlNode(doc, value, 0)
  const text = doc.toString({ indentSeq: false, lineWidth: 0 }).replace(/\n+$/, '')
  return text === '' ? '' : `${text}\n`
}

function toYamlNode (doc: Document, value: unknown, depth: number): Node {
  checkDepth(depth)
  if (value instanceof Map) {
    const map = new YAMLMap()
    for (const [key, item] of value) map.items.push(doc.createPair(key, toYamlNode(doc, item, depth + 1)))
    return map
  }
  if (Array.isArray(value)) {
    const seq = new YAMLSeq()
    for (const item of value) seq.items.push(toYamlNode(doc, item, depth + 1))
    return seq
  }
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>
    return toYamlNode(doc, new Map(Object.keys(record).sort(compareGo).map(key => [key, record[key]])), depth)
  }
  return doc.createNode(value ?? null)
}

/** Go sorts map keys by bytes; for the keys hook tools print, code-unit order is the same. */
function compareGo (a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** JSON as Go's encoding/json writes it: maps with sorted keys, structs in order, HTML-safe. */
function toJson (value: unknown, depth = 0): string {
  checkDepth(depth)
  if (isNil(value)) return 'null'
  if (typeof value === 'string') {
    return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, ch => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`)
  }
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : 'null'
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (value instanceof Map) {
    return `{${[...value].map(([key, item]) => `${toJson(String(key))}:${toJson(item, depth + 1)}`).join(',')}}`
  }
  if (Array.isArray(value)) return `[${value.map(item => toJson(item, depth + 1)).join(',')}]`
  if (typeof value === 'object') {
    const record = value as Record<string, unknown>
    return `{${Object.keys(record).sort(compareGo).map(key => `${toJson(key)}:${toJson(record[key], depth + 1)}`).join(',')}}`
  }
  return 'null'
}
