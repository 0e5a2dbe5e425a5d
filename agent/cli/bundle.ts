/**
 * A Juju bundle (bundle.yaml) as `cantrip deploy` reads it:
 *
 *   applications:            # (or the older `services:`)
 *     kv:
 *       charm: ./charms/kv   # a local charm directory, relative to the bundle file
 *       num_units: 3         # (or `scale:`); 0 for subordinates
 *       options: {port-base: 18000}
 *       constraints: mem=1G
 *       to: ["0", "new"]     # machines declared under `machines:`, or "new"
 *       expose: true
 *       trust: false
 *   machines:
 *     "0": {constraints: cores=2}
 *   relations:
 *     - [web:backend, kv:website]
 *
 * Every problem is one line naming the file, the key and what was expected:
 * `cantrip deploy: bundle.yaml: applications.kv.num_units: expected a whole number, got "x"`.
 */
import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { parse as parseYaml } from 'yaml'
import { InvalidInputError } from '../../runtime/errors.ts'
import { isApplicationName } from '../../runtime/ids.ts'

export interface BundleApplication {
  readonly name: string
  /** Absolute path of the charm directory. */
  readonly charm: string
  /** undefined: not given (1 for principals, 0 for subordinates). */
  readonly numUnits: number | undefined
  readonly options: Readonly<Record<string, unknown>>
  readonly constraints: Readonly<Record<string, string>>
  /** Bundle machine ids (declared under `machines:`) or "new", one per unit in turn. */
  readonly to: readonly string[]
  readonly expose: boolean
  readonly trust: boolean
}

export interface BundleMachine {
  readonly id: string
  readonly constraints: Readonly<Record<string, string>>
}

export interface Bundle {
  readonly file: string
  readonly applications: readonly BundleApplication[]
  readonly machines: readonly BundleMachine[]
  readonly relations: ReadonlyArray<readonly [string, string]>
}

const topKeys = ['name', 'description', 'series', 'default-base', 'applications', 'services', 'machines', 'relations']
const applicationKeys = ['charm', 'num_units', 'scale', 'options', 'constraints', 'to', 'expose', 'trust', 'annotations', 'series', 'base', 'channel', 'revision']
const machineKeys = ['constraints', 'annotations', 'series', 'base']
const endpointPattern = /^[a-z][a-z0-9]*(?:-[a-z0-9]*[a-z][a-z0-9]*)*(?::[a-z][a-z0-9_-]*)?$/

/** Whether `path` names a bundle file rather than a charm directory. */
export function isBundlePath (path: string): boolean {
  return /\.ya?ml$/i.test(path)
}

export function readBundle (component: string, path: string): Bundle {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new InvalidInputError(component, 'a readable bundle file', path, { cause: error })
  }
  return parseBundle(component, text, path)
}

/** Parses and checks bundle text; charm paths resolve against the directory of `file`. */
export function parseBundle (component: string, text: string, file: string): Bundle {
  const fail = (key: string, expected: string, got: unknown): never => {
    throw new InvalidInputError(`${component}: ${file}${key === '' ? '' : `: ${key}`}`, expected, got)
  }
  let doc: unknown
  try {
    doc = parseYaml(text) as unknown
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0]! : String(error)
    return fail('', 'valid YAML', message)
  }
  if (!isRecord(doc)) return fail('', 'a map with "applications"', doc)
  checkKeys(fail, '', doc, topKeys)
  if (doc['applications'] !== undefined && doc['services'] !== undefined) fail('services', 'either "applications" or the older "services", not both', 'both')
  const appsKey = doc['applications'] !== undefined ? 'applications' : 'services'
  const apps = doc[appsKey]
  if (!isRecord(apps) || Object.keys(apps).length === 0) fail(appsKey === 'services' && apps === undefined ? 'applications' : appsKey, 'a map of at least one application', apps)

  const machinesValue = doc['machines'] ?? {}
  if (!isRecord(machinesValue)) fail('machines', 'a map of machine ids', machinesValue)
  const machines: BundleMachine[] = Object.entries(machinesValue as Record<string, unknown>).map(([id, spec]) => {
    const key = `machines.${id}`
    if (!/^\d+$/.test(id)) fail(key, 'a machine id like "0"', id)
    if (spec !== null && spec !== undefined && !isRecord(spec)) fail(key, 'a map (or nothing)', spec)
    const record = (spec ?? {}) as Record<string, unknown>
    checkKeys(fail, key, record, machineKeys)
    return { id, constraints: constraintsOf(fail, `${key}.constraints`, record['constraints']) }
  })
  const machineIds = new Set(machines.map(m => m.id))

  const base = dirname(resolve(file))
  const applications: BundleApplication[] = Object.entries(apps as Record<string, unknown>).map(([name, spec]) => {
    const key = `${appsKey}.${name}`
    if (!isApplicationName(name)) fail(key, 'an application name like "web"', name)
    if (!isRecord(spec)) return fail(key, 'a map with "charm"', spec)
    checkKeys(fail, key, spec, applicationKeys)
    const charm = spec['charm']
    if (typeof charm !== 'string' || charm === '') return fail(`${key}.charm`, 'a local charm directory', charm)
    if (spec['num_units'] !== undefined && spec['scale'] !== undefined) fail(`${key}.scale`, 'either num_units or scale, not both', 'both')
    const unitsValue = spec['num_units'] ?? spec['scale']
    if (unitsValue !== undefined && (!Number.isSafeInteger(unitsValue) || (unitsValue as number) < 0)) fail(`${key}.${spec['num_units'] !== undefined ? 'num_units' : 'scale'}`, 'a whole number', unitsValue)
    const options = spec['options'] ?? {}
    if (!isRecord(options)) fail(`${key}.options`, 'a map of option values', options)
    for (const [option, value] of Object.entries(options as Record<string, unknown>)) {
      if (!['string', 'number', 'boolean'].includes(typeof value)) fail(`${key}.options.${option}`, 'a string, number or boolean', value)
    }
    const toValue = spec['to'] ?? []
    const to = (typeof toValue === 'string' || typeof toValue === 'number' ? [toValue] : toValue) as unknown
    if (!Array.isArray(to)) return fail(`${key}.to`, 'a list of machines', toValue)
    const placements = to.map((entry: unknown, i) => {
      const placement = typeof entry === 'number' ? String(entry) : entry
      if (placement !== 'new' && (typeof placement !== 'string' || !machineIds.has(placement))) {
        fail(`${key}.to[${i}]`, `a machine declared under machines: (${machineIds.size === 0 ? 'none are' : [...machineIds].join(', ')}) or "new"`, entry)
      }
      return placement as string
    })
    const numUnits = unitsValue as number | undefined
    if (placements.length > (numUnits ?? 1)) fail(`${key}.to`, `at most num_units (${numUnits ?? 1}) placements`, placements.length)
    return {
      name,
      charm: resolve(base, charm),
      numUnits,
      options: options as Record<string, unknown>,
      constraints: constraintsOf(fail, `${key}.constraints`, spec['constraints']),
      to: placements,
      expose: booleanOf(fail, `${key}.expose`, spec['expose']),
      trust: booleanOf(fail, `${key}.trust`, spec['trust'])
    }
  })
  const names = new Set(applications.map(a => a.name))

  const relationsValue = doc['relations'] ?? []
  if (!Array.isArray(relationsValue)) fail('relations', 'a list of endpoint pairs', relationsValue)
  const relations = (relationsValue as unknown[]).map((pair, i): [string, string] => {
    const key = `relations[${i}]`
    if (!Array.isArray(pair) || pair.length !== 2) return fail(key, 'a pair like [web:backend, kv:website]', pair)
    for (const [j, end] of pair.entries()) {
      if (typeof end !== 'string' || !endpointPattern.test(end)) fail(`${key}[${j}]`, 'an endpoint like "app" or "app:endpoint"', end)
      const app = (end as string).split(':')[0]!
      if (!names.has(app)) fail(`${key}[${j}]`, `an application of the bundle (${[...names].join(', ')})`, end)
    }
    return [pair[0] as string, pair[1] as string]
  })
  return { file, applications, machines, relations }
}

/** `mem=4G cores=2` (one string, Juju's form) or a map. */
export function constraintsOf (fail: (key: string, expected: string, got: unknown) => never, key: string, value: unknown): Record<string, string> {
  if (value === undefined || value === null || value === '') return {}
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, String(v)]))
  if (typeof value !== 'string') return fail(key, 'constraints like "mem=4G cores=2"', value)
  return parseConstraintText(value, got => fail(key, 'constraints like "mem=4G cores=2"', got))
}

export function parseConstraintText (value: string, bad: (got: string) => never): Record<string, string> {
  const out: Record<string, string> = {}
  for (const part of value.split(/\s+/).filter(p => p !== '')) {
    const eq = part.indexOf('=')
    if (eq <= 0) bad(part)
    out[part.slice(0, eq)] = part.slice(eq + 1)
  }
  return out
}

function booleanOf (fail: (key: string, expected: string, got: unknown) => never, key: string, value: unknown): boolean {
  if (value === undefined || value === null) return false
  if (typeof value !== 'boolean') fail(key, 'true or false', value)
  return value as boolean
}

function checkKeys (fail: (key: string, expected: string, got: unknown) => never, at: string, record: Record<string, unknown>, allowed: readonly string[]): void {
  for (const key of Object.keys(record)) {
    if (!allowed.includes(key)) fail(at === '' ? key : `${at}.${key}`, `one of the keys ${allowed.join(', ')}`, key)
  }
}

function isRecord (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
