/**
 * Juju's storage directives (`juju deploy --storage data=2,10G`, `juju add-storage u/0
 * data=1`) and sizes, shared by the CLI, the charm loader and the model. A directive is
 * `NAME=PART[,PART…]` where each part is a pool, a count (a whole number) or a size (a
 * number with an M, G, T, P, E, Z or Y suffix, powers of 1024 MiB), in any order, as
 * `ParseConstraints` in Juju's internal/storage/constraints.go reads them. Pools are not
 * modelled beyond their names: every filesystem comes from `rootfs` and every block device
 * from `loop`, Juju's defaults on its local clouds.
 */
import type { StorageDirectiveInput } from './model-types.ts'

/** Juju's default size when neither the directive nor the charm's minimum names one: 1 GiB. */
export const defaultStorageSizeMiB = 1024

const poolPattern = /^[a-zA-Z]+[-?a-zA-Z0-9]*$/
const countPattern = /^-?[0-9]+$/
const sizePattern = /^(-?[0-9]+(?:\.[0-9]+)?)([MGTPEZY])(?:i?B)?$/
const multipliers: Readonly<Record<string, number>> = { M: 1, G: 1024, T: 1024 ** 2, P: 1024 ** 3, E: 1024 ** 4, Z: 1024 ** 5, Y: 1024 ** 6 }
/** The pools cantrip's local provider has: Juju's defaults for filesystems and block devices. */
export const localStoragePools = ['rootfs', 'loop'] as const

/** A size in MiB (`10G` → 10240, `512M` → 512), rounded up; undefined when `text` is not one. */
export function parseSizeMiB (text: string): number | undefined {
  const match = sizePattern.exec(text)
  if (match === null || match[1]!.startsWith('-')) return undefined
  const mib = Math.ceil(Number(match[1]) * multipliers[match[2]!]!)
  return Number.isSafeInteger(mib) ? mib : undefined
}

/** A charm's `minimum-size` (`10G`, or a bare number of MiB) in MiB. */
export function parseMinimumSizeMiB (text: string): number | undefined {
  return /^[0-9]+$/.test(text) ? Number(text) : parseSizeMiB(text)
}

export type ParsedDirective = { name: string, directive: StorageDirectiveInput } | { error: string }

function parseParts (text: string): StorageDirectiveInput | string {
  let count: number | undefined
  let sizeMiB: number | undefined
  let pool: string | undefined
  for (const field of text.split(',')) {
    if (field === '') continue
    if (poolPattern.test(field)) {
      if (pool !== undefined) return `pool name is already set to ${JSON.stringify(pool)}, new value ${JSON.stringify(field)} not valid`
      if (!(localStoragePools as readonly string[]).includes(field)) return `pool ${JSON.stringify(field)} not found: the local provider has the pools "rootfs" and "loop"`
      pool = field
    } else if (countPattern.test(field)) {
      count = Number(field)
      if (field.startsWith('-') || count === 0 || !Number.isSafeInteger(count)) return `cannot parse count: count must be greater than zero, got ${JSON.stringify(field)}`
    } else if (sizePattern.test(field)) {
      sizeMiB = parseSizeMiB(field)
      if (sizeMiB === undefined) return `cannot parse size: expected a non-negative number, got ${JSON.stringify(field)}`
    } else {
      return `unrecognized storage constraint ${JSON.stringify(field)} not valid`
    }
  }
  if (count === undefined && sizeMiB === undefined && pool === undefined) return 'storage constraints require at least one field to be specified'
  return { count: count ?? 1, ...(sizeMiB === undefined ? {} : { sizeMiB }) }
}

/**
 * One `NAME=CONSTRAINTS` or `NAME` (count 1) argument, as Juju's ParseConstraintsMap reads
 * it; `countOnly` for `storage-add`, which takes a count and nothing else. Errors read as
 * Juju's (`cannot parse constraints for storage "data": …`).
 */
export function parseStorageDirective (text: string, options: { countOnly?: boolean } = {}): ParsedDirective {
  const parts = text.split('=')
  const name = parts[0]!
  if (parts.length > 2 || name === '') return { error: `expected "name=constraints" or "name", got ${JSON.stringify(text)}` }
  const parsed = parseParts(parts[1] ?? '1')
  if (typeof parsed === 'string') return { error: `cannot parse constraints for storage ${JSON.stringify(name)}: ${parsed}` }
  if (options.countOnly === true && (parsed.sizeMiB !== undefined || (parts[1] ?? '1').split(',').some(f => poolPattern.test(f)))) {
    return { error: `only count can be specified for ${JSON.stringify(name)}` }
  }
  return { name, directive: parsed }
}

/** Several directives; a name given twice is refused, as Juju's. */
export function parseStorageDirectives (texts: readonly string[], options: { countOnly?: boolean } = {}): { directives: Record<string, StorageDirectiveInput> } | { error: string } {
  const directives: Record<string, StorageDirectiveInput> = {}
  for (const text of texts) {
    const parsed = parseStorageDirective(text, options)
    if ('error' in parsed) return parsed
    if (Object.hasOwn(directives, parsed.name)) return { error: `storage ${JSON.stringify(parsed.name)} specified more than once` }
    directives[parsed.name] = parsed.directive
  }
  return { directives }
}

/** `1.0 GiB`, `97 GiB`, `512 MiB`: Juju's `humanize.IBytes` of a size in MiB, as `juju storage` shows it. */
export function formatSizeMiB (mib: number): string {
  const units = ['MiB', 'GiB', 'TiB', 'PiB', 'EiB']
  let value = mib
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit++ }
  const shown = value < 10 ? (Math.floor(value * 10 + 0.5) / 10).toFixed(1) : String(Math.floor(value + 0.5))
  return `${shown} ${units[unit]!}`
}
