/**
 * Field readers for scenario files: each checks one value at a path inside the file and
 * throws one line naming the file, the path, what was expected and what arrived:
 *
 *   sim: scenario examples/sim/x.yaml: faults[2].at: expected a duration like 5s or 500ms, got "soon"
 */

export class ScenarioError extends Error {
  constructor (readonly file: string, readonly where: string, expected: string, got: string) {
    super(`sim: scenario ${file}: ${where === '' ? '' : `${where}: `}expected ${expected}, got ${got}`)
    this.name = 'ScenarioError'
  }
}

export type Json = unknown
export type YamlMap = Record<string, Json>

/** How a value that arrived is shown in an error: short, quoted when a string. */
export function shown (value: Json): string {
  if (value === undefined || value === null) return 'nothing'
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value)
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  if (Array.isArray(value)) return `a list of ${value.length}`
  return `a map with keys ${Object.keys(value).slice(0, 5).join(', ') || '(none)'}`
}

/** Longest duration a scenario may name: a day of simulated time. */
const durationMaxMs = 86_400_000
const durationPattern = /^(\d+(?:\.\d+)?)(ms|s|m)$/
const unitMs: Record<string, number> = { ms: 1, s: 1_000, m: 60_000 }

export class Fields {
  constructor (readonly file: string) {}

  fail (where: string, expected: string, got: Json): never {
    throw new ScenarioError(this.file, where, expected, shown(got))
  }

  /** Like fail, with what arrived already described (`6000ms`, `sql and kv`, `ENOENT`). */
  refuse (where: string, expected: string, got: string): never {
    throw new ScenarioError(this.file, where, expected, got)
  }

  /** A map whose keys are all in `allowed` (unknown keys are refused, not ignored). */
  map (value: Json, where: string, allowed?: readonly string[]): YamlMap {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) this.fail(where, 'a map', value)
    if (allowed !== undefined) {
      for (const key of Object.keys(value)) {
        if (!allowed.includes(key)) throw new ScenarioError(this.file, join(where, key), `one of the keys ${allowed.join(', ')}`, `unknown key ${JSON.stringify(key)}`)
      }
    }
    return value as YamlMap
  }

  /** An optional map (absent → {}). */
  optionalMap (value: Json, where: string, allowed?: readonly string[]): YamlMap {
    return value === undefined || value === null ? {} : this.map(value, where, allowed)
  }

  list (value: Json, where: string): Json[] {
    if (!Array.isArray(value)) this.fail(where, 'a list', value)
    return value
  }

  optionalList (value: Json, where: string): Json[] {
    return value === undefined || value === null ? [] : this.list(value, where)
  }

  string (value: Json, where: string, pattern?: RegExp, expected = 'a string'): string {
    if (typeof value !== 'string' || (pattern !== undefined && !pattern.test(value))) this.fail(where, expected, value)
    return value
  }

  oneOf<T extends string> (value: Json, where: string, choices: readonly T[]): T {
    if (typeof value !== 'string' || !(choices as readonly string[]).includes(value)) this.fail(where, `one of ${choices.join(', ')}`, value)
    return value as T
  }

  integer (value: Json, where: string, min: number, max: number): number {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) this.fail(where, `a whole number from ${min} to ${max}`, value)
    return value
  }

  number (value: Json, where: string, min: number, max: number): number {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) this.fail(where, `a number from ${min} to ${max}`, value)
    return value
  }

  probability (value: Json, where: string): number {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1) this.fail(where, 'a probability from 0 to 1', value)
    return value
  }

  /** `2s`, `500ms`, `1.5s`, `2m`, or a number of ms; whole ms, at most a day. */
  duration (value: Json, where: string): number {
    let ms: number | undefined
    if (typeof value === 'number' && Number.isFinite(value)) ms = value
    else if (typeof value === 'string') {
      const match = durationPattern.exec(value.trim())
      if (match !== null) ms = Number(match[1]) * unitMs[match[2]!]!
    }
    if (ms !== undefined) ms = Math.round(ms * 1000) / 1000
    if (ms === undefined || !Number.isInteger(ms) || ms < 0 || ms > durationMaxMs) this.fail(where, 'a duration like 5s or 500ms', value)
    return ms
  }

  /** A scalar config value (string, number or boolean). */
  scalar (value: Json, where: string): string | number | boolean {
    if (typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) return value
    this.fail(where, 'a string, number or boolean', value)
  }

  /** A map of string values; numbers and booleans are written as their text. */
  strings (value: Json, where: string): Record<string, string> {
    const out: Record<string, string> = {}
    for (const [key, item] of Object.entries(this.map(value, where))) out[key] = String(this.scalar(item, join(where, key)))
    return out
  }

  config (value: Json, where: string): Record<string, string | number | boolean> {
    const out: Record<string, string | number | boolean> = {}
    for (const [key, item] of Object.entries(this.optionalMap(value, where))) out[key] = this.scalar(item, join(where, key))
    return out
  }
}

/** `a.b`, `a[2]`: the path of a key or index inside the file. */
export function join (where: string, key: string | number): string {
  if (typeof key === 'number') return `${where}[${key}]`
  return where === '' ? key : `${where}.${key}`
}
