/**
 * The hook tools' command-line parser, in the style of Juju's gnuflag (juju-semantics
 * §5.2): `-r x`, `-rx`, `-r=x`, `--relation x`, `--relation=x`, clustered short booleans
 * (`-ab`), `--flag=false` for booleans, flags interspersed with positional arguments, and
 * `--` ending the flags. `-h`/`--help` asks for the usage text. Every parse failure is a
 * usage error: exit 2 with gnuflag's wording.
 */
import { HookToolError } from '../hook-context.ts'

/**
 * gnuflag's noun for a flag in its messages. Juju 3.x sets `FlagKnownAs: "option"` for
 * hook tools, so a real 3.x agent says `option provided but not defined: -x`; cantrip
 * keeps gnuflag's own word "flag", as older agents print it, since charms match on exit
 * codes rather than on this text. Change it here to switch every message at once.
 */
export const flagNoun = 'flag'

export interface FlagDef {
  /** Names without dashes: one rune is a short flag (`-r`), longer a long one (`--relation`). */
  readonly names: readonly string[]
  /** Placeholder for the value in the usage text; absent for a boolean flag. */
  readonly value?: string
  readonly usage: string
  /**
   * Checks a value as it is parsed, like a gnuflag `Value.Set`. A thrown error's message
   * becomes `invalid value "<v>" for flag -x: <message>`.
   */
  readonly check?: (value: string) => Promise<void> | void
}

export type FlagDefs = Readonly<Record<string, FlagDef>>

/** A usage problem: `ERROR <message>`, exit 2. */
export function usageError (message: string): HookToolError {
  return new HookToolError(2, message)
}

/** Thrown by `parseArgs` when `-h` or `--help` is given and not defined by the tool. */
export class HelpRequested extends Error {
  override name = 'HelpRequested'
  constructor () {
    super('help requested')
  }
}

/** What `parseArgs` found: the last value of each flag, booleans, and positional arguments. */
export class ParsedArgs {
  readonly args: string[]
  private readonly values: ReadonlyMap<string, string | boolean>

  constructor (values: ReadonlyMap<string, string | boolean>, args: string[]) {
    this.values = values
    this.args = args
  }

  /** The value of a value flag, or undefined when it was not given. */
  string (key: string): string | undefined {
    const value = this.values.get(key)
    return typeof value === 'string' ? value : undefined
  }

  /** A boolean flag; false when not given. */
  bool (key: string): boolean {
    return this.values.get(key) === true
  }

  has (key: string): boolean {
    return this.values.has(key)
  }
}

/** Go's `%q` for the strings that appear in messages. */
export function goQuote (text: string): string {
  return JSON.stringify(text)
    .replace(/\\u00([01][0-9a-f])/g, '\\x$1')
    .replace(/\u007f/g, '\\x7f')
}

/** juju/cmd's `CheckEmpty`: any argument left over is a usage error. */
export function checkEmpty (args: readonly string[]): void {
  if (args.length > 0) throw usageError(`unrecognized args: [${args.map(goQuote).join(' ')}]`)
}

function dashed (name: string): string {
  return name.length > 1 ? `--${name}` : `-${name}`
}

/** Go's strconv.ParseBool, which gnuflag uses for `--flag=value` on booleans. */
function parseBool (name: string, value: string): boolean {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false
  throw usageError(`invalid value ${goQuote(value)} for ${flagNoun} ${dashed(name)}: strconv.ParseBool: parsing ${goQuote(value)}: invalid syntax`)
}

/**
 * Parses `args` against `defs`. Flags may come after positional arguments (juju/cmd
 * allows interspersed flags); a lone `-` is positional. One deliberate difference from
 * gnuflag: a short flag written `-r=x` takes `x`, where gnuflag would take `=x`.
 */
export async function parseArgs (defs: FlagDefs, args: readonly string[]): Promise<ParsedArgs> {
  const byName = new Map<string, { key: string, def: FlagDef }>()
  for (const [key, def] of Object.entries(defs)) {
    for (const name of def.names) byName.set(name, { key, def })
  }
  const values = new Map<string, string | boolean>()
  const positional: string[] = []
  let i = 0
  while (i < args.length) {
    const arg = args[i++]!
    if (arg === '--') {
      positional.push(...args.slice(i))
      break
    }
    if (arg === '-' || arg === '' || !arg.startsWith('-')) {
      positional.push(arg)
      continue
    }
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=')
      const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq)
      if (name === '') throw usageError(`empty ${flagNoun} in argument ${goQuote(arg)}`)
      const attached = eq < 0 ? undefined : arg.slice(eq + 1)
      i = await takeFlag(name, attached, i)
      continue
    }
    // One or more single-rune flags; a value flag takes the rest of the cluster (or the
    // next argument) as its value.
    const runes = Array.from(arg.slice(1))
    for (let r = 0; r < runes.length; r++) {
      const name = runes[r]!
      const rest = runes.slice(r + 1).join('')
      const isBool = byName.get(name)?.def.value === undefined
      if (isBool && !rest.startsWith('=')) {
        i = await takeFlag(name, undefined, i)
        continue
      }
      i = await takeFlag(name, rest === '' ? undefined : rest.replace(/^=/, ''), i)
      break
    }
  }
  return new ParsedArgs(values, positional)

  /** Applies one flag; returns the index of the next unread argument. */
  async function takeFlag (name: string, attached: string | undefined, next: number): Promise<number> {
    const found = byName.get(name)
    if (found === undefined) {
      if (name === 'h' || name === 'help') throw new HelpRequested()
      throw usageError(`${flagNoun} provided but not defined: ${dashed(name)}`)
    }
    const { key, def } = found
    if (def.value === undefined) {
      values.set(key, attached === undefined ? true : parseBool(name, attached))
      return next
    }
    let value = attached
    if (value === undefined) {
      if (next >= args.length) throw usageError(`${flagNoun} needs an argument: ${dashed(name)}`)
      value = args[next++]!
    }
    if (def.check !== undefined) {
      try {
        await def.check(value)
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error)
        throw usageError(`invalid value ${goQuote(value)} for ${flagNoun} ${dashed(name)}: ${reason}`)
      }
    }
    values.set(key, value)
    return next
  }
}

/** The usage text printed by `--help`, laid out like juju/cmd's. */
export function usageText (info: { name: string, args: string, purpose: string, doc?: string }, defs: FlagDefs): string {
  const lines: string[] = []
  const flags = Object.values(defs)
  lines.push(`Usage: ${info.name}${flags.length > 0 ? ' [options]' : ''}${info.args === '' ? '' : ` ${info.args}`}`, '')
  lines.push('Summary:', info.purpose, '')
  if (flags.length > 0) {
    lines.push('Options:')
    const sorted = [...flags].sort((a, b) => (a.names[0] ?? '').localeCompare(b.names[0] ?? ''))
    for (const def of sorted) {
      const names = def.names.map(dashed).join(', ')
      lines.push(def.value === undefined ? `${names}  (= false)` : `${names} <${def.value}>`)
      lines.push(`    ${def.usage}`)
    }
    lines.push('')
  }
  if (info.doc !== undefined && info.doc.trim() !== '') lines.push('Details:', info.doc.trim(), '')
  return lines.join('\n')
}
