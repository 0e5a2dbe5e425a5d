import { isPlainRecord } from '../model/charm-summary.ts'
import { gotValue, InvalidCharmError } from './charm-error.ts'

/**
 * Field checks shared by the metadata.yaml, config.yaml and actions.yaml validators. Each
 * throws an InvalidCharmError naming the charm, the file and the field path; the checks
 * never recurse, since the data came from disk.
 */
export class CharmFieldChecker {
  constructor (readonly charm: string, readonly file: string) {}

  fail (field: string | undefined, expected: string, got: unknown): never {
    throw new InvalidCharmError(this.charm, this.file, field, expected, gotValue(got))
  }

  /** Like `fail`, with "got" already rendered. */
  failWith (field: string | undefined, expected: string, got: string): never {
    throw new InvalidCharmError(this.charm, this.file, field, expected, got)
  }

  /** A map, or `{}` when the key is absent or null (an empty YAML section). */
  optionalMap (value: unknown, field: string | undefined, expected = 'a map'): Record<string, unknown> {
    if (value === undefined || value === null) return {}
    if (!isPlainRecord(value)) this.fail(field, expected, value)
    return value
  }

  map (value: unknown, field: string | undefined, expected = 'a map'): Record<string, unknown> {
    if (!isPlainRecord(value)) this.fail(field, expected, value)
    return value
  }

  string (value: unknown, field: string, expected = 'a string'): string {
    if (typeof value !== 'string') this.fail(field, expected, value)
    return value
  }

  optionalString (value: unknown, field: string, fallback: string): string {
    return value === undefined || value === null ? fallback : this.string(value, field)
  }

  optionalBoolean (value: unknown, field: string, fallback: boolean): boolean {
    if (value === undefined || value === null) return fallback
    if (typeof value !== 'boolean') this.fail(field, 'true or false', value)
    return value
  }

  /** A list of strings; absent or null is an empty list. */
  stringList (value: unknown, field: string, entriesMax: number, pattern?: { test: RegExp, expected: string }): string[] {
    if (value === undefined || value === null) return []
    if (!Array.isArray(value)) this.fail(field, 'a list of strings', value)
    if (value.length > entriesMax) this.failWith(field, `at most ${entriesMax} entries`, `${value.length}`)
    return value.map((item, index) => {
      if (typeof item !== 'string') this.fail(`${field}[${index}]`, 'a string', item)
      if (pattern !== undefined && !pattern.test.test(item)) this.fail(`${field}[${index}]`, pattern.expected, item)
      return item
    })
  }

  /** Map entries sorted by key, so the first problem reported does not depend on file order. */
  entries (map: Record<string, unknown>, field: string | undefined, entriesMax: number): Array<[string, unknown]> {
    const entries = Object.entries(map)
    if (entries.length > entriesMax) this.failWith(field, `at most ${entriesMax} entries`, `${entries.length}`)
    return entries.sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
  }
}

/** `a.b` for a field path, or just `b` at the top. */
export function fieldPath (parent: string | undefined, key: string): string {
  return parent === undefined || parent === '' ? key : `${parent}.${key}`
}

/** A quoted list for messages: `"a", "b" or "c"`. */
export function quotedAlternatives (values: readonly string[]): string {
  const quoted = values.map(value => JSON.stringify(value))
  if (quoted.length <= 1) return quoted.join('')
  return `${quoted.slice(0, -1).join(', ')} or ${quoted[quoted.length - 1]!}`
}
