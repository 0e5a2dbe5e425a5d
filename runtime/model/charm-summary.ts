import { isApplicationName } from '../ids.ts'
import type { CharmEndpoint, CharmConfigOption, CharmResource, CharmStorage, CharmSummary, ConfigOptionType, ConfigValue } from './model-types.ts'

/**
 * The charm facts the model keeps (metadata.yaml endpoints, subordinate flag, storage;
 * config.yaml options; actions.yaml names), checked and put in one canonical form when
 * the charm is added so every controller stores exactly the same record.
 */

export interface EndpointInfo {
  readonly name: string
  readonly interface: string
  readonly role: 'provider' | 'requirer' | 'peer'
  readonly scope: 'global' | 'container'
  readonly implicit: boolean
}

export const endpointNamePattern = /^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$/
export const optionNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]*$/
export const actionNamePattern = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/
export const storageNamePattern = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/
export const optionTypes: readonly ConfigOptionType[] = ['string', 'int', 'float', 'boolean', 'secret']
/** Entries in one metadata section; a charm with more is refused rather than stored. */
export const sectionEntriesMax = 1024

export function isPlainRecord (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array)
}

/** The canonical summary, or the reason the input is not one. */
export function normaliseCharmSummary (input: unknown): CharmSummary | string {
  if (!isPlainRecord(input)) return 'metadata must be a map'
  const name = input.name
  if (typeof name !== 'string' || !isApplicationName(name)) return `metadata field "name" must be a charm name, got ${JSON.stringify(name) ?? 'nothing'}`
  const subordinate = input.subordinate ?? false
  if (typeof subordinate !== 'boolean') return 'metadata field "subordinate" must be true or false'

  const seen = new Set<string>()
  const sections: Partial<Record<'provides' | 'requires' | 'peers', Record<string, CharmEndpoint>>> = {}
  for (const section of ['provides', 'requires', 'peers'] as const) {
    const raw = input[section] ?? {}
    if (!isPlainRecord(raw)) return `metadata field "${section}" must be a map`
    const entries = Object.entries(raw)
    if (entries.length > sectionEntriesMax) return `metadata field "${section}" has more than ${sectionEntriesMax} endpoints`
    const out: Record<string, CharmEndpoint> = {}
    for (const [endpoint, spec] of entries.sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)) {
      if (!endpointNamePattern.test(endpoint)) return `endpoint name ${JSON.stringify(endpoint)} is not valid`
      if (seen.has(endpoint)) return `endpoint ${JSON.stringify(endpoint)} is declared twice`
      seen.add(endpoint)
      const parsed = typeof spec === 'string' ? { interface: spec } : spec
      if (!isPlainRecord(parsed) || typeof parsed.interface !== 'string' || !endpointNamePattern.test(parsed.interface)) {
        return `endpoint ${JSON.stringify(endpoint)} needs an interface name`
      }
      const scope = parsed.scope ?? 'global'
      if (scope !== 'global' && scope !== 'container') return `endpoint ${JSON.stringify(endpoint)} has scope ${JSON.stringify(scope)}, not global or container`
      if (section === 'peers' && scope !== 'global') return `peer endpoint ${JSON.stringify(endpoint)} cannot be container-scoped`
      const reserved = endpoint === 'juju' || endpoint.startsWith('juju-')
      if (reserved && !(section === 'requires' && subordinate && scope === 'container')) {
        return `endpoint name ${JSON.stringify(endpoint)} is reserved`
      }
      out[endpoint] = { interface: parsed.interface, scope }
    }
    sections[section] = out
  }
  if (subordinate && !Object.values(sections.requires!).some(ep => ep.scope === 'container')) {
    return 'a subordinate charm needs a container-scoped requires endpoint'
  }

  const rawConfig = input.config ?? {}
  if (!isPlainRecord(rawConfig)) return 'config must be a map of options'
  const config: Record<string, CharmConfigOption> = {}
  const configEntries = Object.entries(rawConfig)
  if (configEntries.length > sectionEntriesMax) return `config has more than ${sectionEntriesMax} options`
  for (const [option, spec] of configEntries.sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)) {
    if (!optionNamePattern.test(option)) return `config option name ${JSON.stringify(option)} is not valid`
    if (!isPlainRecord(spec)) return `config option ${JSON.stringify(option)} must be a map`
    const type = spec.type ?? 'string'
    if (!optionTypes.includes(type as ConfigOptionType)) return `config option ${JSON.stringify(option)} has unknown type ${JSON.stringify(type)}`
    const value = spec.default ?? null
    if (value !== null && configValueError(type as ConfigOptionType, value) !== undefined) {
      return `config option ${JSON.stringify(option)} has a default that is not ${String(type)}`
    }
    config[option] = { type: type as ConfigOptionType, default: value as ConfigValue | null }
  }

  const rawStorage = input.storage ?? {}
  if (!isPlainRecord(rawStorage)) return 'metadata field "storage" must be a map'
  const storage: Record<string, CharmStorage> = {}
  for (const [store, spec] of Object.entries(rawStorage).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)) {
    if (!storageNamePattern.test(store)) return `storage name ${JSON.stringify(store)} is not valid`
    if (!isPlainRecord(spec) || (spec.type !== 'filesystem' && spec.type !== 'block')) return `storage ${JSON.stringify(store)} needs type filesystem or block`
    const location = spec.location ?? null
    if (location !== null && (typeof location !== 'string' || !location.startsWith('/'))) return `storage ${JSON.stringify(store)} location must be an absolute path`
    const bounds = storageBounds(spec)
    if (typeof bounds === 'string') return `storage ${JSON.stringify(store)} ${bounds}`
    storage[store] = { type: spec.type, location, ...bounds }
  }

  const rawActions = input.actions ?? {}
  if (!isPlainRecord(rawActions)) return 'actions must be a map'
  const actions: Record<string, { description: string, schema?: Record<string, unknown> }> = {}
  for (const [action, spec] of Object.entries(rawActions).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)) {
    if (!actionNamePattern.test(action)) return `action name ${JSON.stringify(action)} is not valid`
    const description = isPlainRecord(spec) ? spec.description ?? '' : ''
    if (typeof description !== 'string') return `action ${JSON.stringify(action)} description must be a string`
    // The whole actions.yaml entry is kept as its JSON-Schema, so a controller refuses a
    // missing or mistyped parameter before anything is queued (Juju's apiserver does).
    actions[action] = { description, schema: actionSchema(action, isPlainRecord(spec) ? spec : {}) }
  }

  const resources = charmResources(input.resources ?? {})
  if (typeof resources === 'string') return resources

  return {
    name,
    subordinate,
    provides: sections.provides!,
    requires: sections.requires!,
    peers: sections.peers!,
    config,
    storage,
    actions,
    ...(Object.keys(resources).length === 0 ? {} : { resources })
  }
}

export const resourceNamePattern = /^[a-zA-Z0-9][a-zA-Z0-9._-]*$/
/** A resource's file name: one path element, no separators (the unit writes it under resources/<name>/). */
const resourceFilenamePattern = /^[^/\\\0]+$/

function charmResources (raw: unknown): Record<string, CharmResource> | string {
  if (!isPlainRecord(raw)) return 'metadata field "resources" must be a map'
  const entries = Object.entries(raw)
  if (entries.length > sectionEntriesMax) return `metadata field "resources" has more than ${sectionEntriesMax} resources`
  const out: Record<string, CharmResource> = {}
  for (const [name, spec] of entries.sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)) {
    if (!resourceNamePattern.test(name)) return `resource name ${JSON.stringify(name)} is not valid`
    if (!isPlainRecord(spec) || (spec.type !== 'file' && spec.type !== 'oci-image')) return `resource ${JSON.stringify(name)} needs type file or oci-image`
    const filename = spec.filename ?? ''
    if (typeof filename !== 'string') return `resource ${JSON.stringify(name)} filename must be a string`
    if (spec.type === 'file' && (!resourceFilenamePattern.test(filename) || filename === '.' || filename === '..')) return `resource ${JSON.stringify(name)} needs a file name without "/"`
    out[name] = { type: spec.type, filename: spec.type === 'file' ? filename : '' }
  }
  return out
}

/** The count range and minimum size of one store; a singleton of any size when the input names none. */
function storageBounds (spec: Record<string, unknown>): Pick<CharmStorage, 'countMin' | 'countMax' | 'minimumSizeMiB'> | string {
  const countMin = spec.countMin ?? 1
  const countMax = spec.countMax ?? 1
  const minimumSizeMiB = spec.minimumSizeMiB ?? 0
  const whole = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0
  if (!whole(countMin) || !(countMax === -1 || (whole(countMax) && countMax >= Math.max(countMin, 1)))) return 'count range must be m..n with n at least m and 1, or m..-1'
  if (!whole(minimumSizeMiB)) return 'minimum size must be a whole number of MiB'
  return { countMin, countMax, minimumSizeMiB }
}

/** Why `value` is not a valid value for an option of `type`; undefined when it is. */
export function configValueError (type: ConfigOptionType, value: unknown): string | undefined {
  switch (type) {
    case 'string':
    case 'secret':
      return typeof value === 'string' ? undefined : `expects a string, got ${JSON.stringify(value) ?? typeof value}`
    case 'int':
      return Number.isSafeInteger(value) ? undefined : `expects an int, got ${JSON.stringify(value) ?? typeof value}`
    case 'float':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : `expects a float, got ${JSON.stringify(value) ?? typeof value}`
    case 'boolean':
      return typeof value === 'boolean' ? undefined : `expects a boolean, got ${JSON.stringify(value) ?? typeof value}`
  }
}

/** Every endpoint of a charm, including the implicit `juju-info` provider. */
export function charmEndpoints (charm: CharmSummary): EndpointInfo[] {
  const endpoints: EndpointInfo[] = []
  for (const [name, ep] of Object.entries(charm.provides)) endpoints.push({ name, interface: ep.interface, role: 'provider', scope: ep.scope, implicit: false })
  for (const [name, ep] of Object.entries(charm.requires)) endpoints.push({ name, interface: ep.interface, role: 'requirer', scope: ep.scope, implicit: false })
  for (const [name, ep] of Object.entries(charm.peers)) endpoints.push({ name, interface: ep.interface, role: 'peer', scope: ep.scope, implicit: false })
  endpoints.push({ name: 'juju-info', interface: 'juju-info', role: 'provider', scope: 'global', implicit: true })
  return endpoints
}

/** The configuration units see: user values over charm defaults, unset options left out. */
export function effectiveConfig (charm: CharmSummary, user: Readonly<Record<string, ConfigValue>>): Record<string, ConfigValue> {
  const effective: Record<string, ConfigValue> = {}
  for (const option of Object.keys(charm.config).sort()) {
    const value = Object.hasOwn(user, option) ? user[option] : charm.config[option]!.default
    if (value !== null && value !== undefined) effective[option] = value
  }
  return effective
}

/**
 * An actions.yaml entry as the JSON-Schema object it stands for (juju/charm's
 * ReadActionsYaml): `params` become `properties`, `additionalProperties` defaults to false.
 */
function actionSchema (action: string, entry: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const actionOnly = new Set(['description', 'params', 'parallel', 'execution-group'])
  const schema: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(entry)) {
    if (!actionOnly.has(key)) Object.defineProperty(schema, key, { value, enumerable: true, writable: true, configurable: true })
  }
  schema.title = Object.hasOwn(entry, 'title') ? entry.title : action
  schema.type = 'object'
  // Raw actions.yaml says `params`; a schema parseCharmActions already built says `properties`.
  schema.properties = isPlainRecord(entry.params) ? entry.params : isPlainRecord(entry.properties) ? entry.properties : {}
  schema.additionalProperties = Object.hasOwn(entry, 'additionalProperties') ? entry.additionalProperties : false
  return schema
}
