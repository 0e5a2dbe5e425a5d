import { isApplicationName } from '../ids.ts'
import { endpointNamePattern, sectionEntriesMax, storageNamePattern } from '../model/charm-summary.ts'
import { CharmFieldChecker, fieldPath, quotedAlternatives } from './charm-fields.ts'

/**
 * metadata.yaml (juju-semantics.md §7.1), checked the way juju/charm's meta.go checks it,
 * with every rejection naming the field. Unknown top-level keys are ignored, as Juju's
 * schema ignores them; known ones are type-checked even when cantrip does not use them,
 * so a charm Juju would refuse is refused here too.
 */

export type RelationRole = 'provides' | 'requires' | 'peers'

export interface CharmRelationSpec {
  readonly interface: string
  /** Most relations this endpoint may join; null for no limit. */
  readonly limit: number | null
  readonly optional: boolean
  readonly scope: 'global' | 'container'
}

export interface CharmStorageSpec {
  readonly type: 'filesystem' | 'block'
  readonly description: string
  readonly shared: boolean
  readonly readOnly: boolean
  /** From `multiple.range`; a singleton store is 1..1. */
  readonly countMin: number
  /** -1 when the range has no upper bound (`m+` or `m-`). */
  readonly countMax: number
  /** `minimum-size` as written (a number of MiB with an optional M/G/T/P/E/Z/Y suffix). */
  readonly minimumSize: string | null
  readonly location: string | null
  readonly properties: readonly string[]
}

export interface CharmResourceSpec {
  readonly type: 'file' | 'oci-image'
  readonly filename: string | null
  readonly description: string
}

export interface CharmMetadata {
  readonly name: string
  readonly summary: string
  readonly description: string
  readonly subordinate: boolean
  /** 1: classic metadata (`series`); 2: `bases`/`containers`/`assumes`, or a manifest.yaml beside it. */
  readonly format: 1 | 2
  readonly provides: Readonly<Record<string, CharmRelationSpec>>
  readonly requires: Readonly<Record<string, CharmRelationSpec>>
  readonly peers: Readonly<Record<string, CharmRelationSpec>>
  readonly extraBindings: readonly string[]
  /** First is the default. */
  readonly series: readonly string[]
  readonly storage: Readonly<Record<string, CharmStorageSpec>>
  readonly resources: Readonly<Record<string, CharmResourceSpec>>
  readonly minJujuVersion: string | null
  /** `assumes:` as written (features and any-of/all-of maps); null when absent. Checked at deploy (charm-requirements.ts). */
  readonly assumes: readonly unknown[] | null
  readonly categories: readonly string[]
  readonly tags: readonly string[]
  readonly terms: readonly string[]
}

export interface CharmMetadataContext {
  /** Names the charm in messages until metadata.yaml's own name has been read (the directory name, say). */
  readonly label: string
  /** A manifest.yaml beside metadata.yaml makes the charm v2, whose metadata may not use v1 keys. */
  readonly hasManifest?: boolean
}

const file = 'metadata.yaml'
const v1Keys = ['deployment', 'min-juju-version', 'series']
const v2Keys = ['assumes', 'bases', 'containers']
const endpointNameExpected = 'an endpoint name of lower case letters and digits separated by "-" or "_"'
const interfaceNameExpected = 'an interface name of lower case letters and digits separated by "-" or "_"'
const seriesPattern = /^[a-z]+[a-z0-9]*$/
const storageRangePattern = /^([0-9]+)([-+]|-[0-9]+)$/
const storageSizePattern = /^[0-9]+(?:\.[0-9]+)?[MGTPEZY]?$/
const resourceNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]*$/
const versionPattern = /^[0-9]+\.[0-9]+(?:[.-][0-9A-Za-z.-]+)?$/

function isReserved (name: string): boolean {
  return name === 'juju' || name.startsWith('juju-')
}

/** The checked metadata; throws InvalidCharmError naming the first problem. */
export function parseCharmMetadata (raw: unknown, context: CharmMetadataContext): CharmMetadata {
  const label: CharmFieldChecker = new CharmFieldChecker(context.label, file)
  if (raw === undefined || raw === null) label.failWith(undefined, 'a map of charm metadata', 'an empty file')
  const top = label.map(raw, undefined, 'a map of charm metadata')

  if (typeof top.name !== 'string' || !isApplicationName(top.name)) {
    label.fail('name', 'a charm name of lower case letters, digits and dashes, like "mysql"', top.name)
  }
  const name = top.name
  const check: CharmFieldChecker = new CharmFieldChecker(name, file)
  const summary = check.string(top.summary, 'summary')
  const description = check.string(top.description, 'description')

  const keys = Object.keys(top)
  const v1 = v1Keys.filter(key => keys.includes(key))
  const v2 = v2Keys.filter(key => keys.includes(key))
  if (v1.length > 0 && v2.length > 0) {
    check.fail(v1[0], `no v1 key (${quotedAlternatives(v1Keys)}) in v2 metadata, which has ${JSON.stringify(v2[0])}`, v1[0])
  }
  if (v1.length > 0 && context.hasManifest === true) {
    check.fail(v1[0], `no v1 key (${quotedAlternatives(v1Keys)}) in a charm with a manifest.yaml`, v1[0])
  }
  const format = v2.length > 0 || context.hasManifest === true ? 2 : 1

  const subordinate = check.optionalBoolean(top.subordinate, 'subordinate', false)

  const sections: Record<RelationRole, Record<string, CharmRelationSpec>> = { provides: {}, requires: {}, peers: {} }
  const declaredIn = new Map<string, RelationRole>()
  for (const role of ['provides', 'requires', 'peers'] as const) {
    const section = check.optionalMap(top[role], role, 'a map of endpoint name to interface')
    for (const [endpoint, spec] of check.entries(section, role, sectionEntriesMax)) {
      const path = fieldPath(role, endpoint)
      if (!endpointNamePattern.test(endpoint)) check.fail(path, endpointNameExpected, endpoint)
      const earlier = declaredIn.get(endpoint)
      if (earlier !== undefined) check.fail(path, `an endpoint name not already declared in "${earlier}"`, endpoint)
      declaredIn.set(endpoint, role)
      const relation = parseRelation(check, path, spec)
      if (role === 'peers' && relation.scope !== 'global') check.fail(fieldPath(path, 'scope'), '"global" for a peer endpoint', relation.scope)
      // Container-scoped requires on subordinates may use the reserved names (that is how
      // they attach to a principal's implicit juju-info). Juju also exempts charms named
      // juju-*, but the model refuses reserved endpoint names for them, so cantrip does too.
      if (isReserved(endpoint) && !(role === 'requires' && subordinate && relation.scope === 'container')) {
        check.fail(path, 'an endpoint name other than "juju" or "juju-*" (reserved)', endpoint)
      }
      if (role !== 'requires' && isReserved(relation.interface) && !name.startsWith('juju-')) {
        check.fail(typeof spec === 'string' ? path : fieldPath(path, 'interface'), 'an interface other than "juju" or "juju-*" (reserved for providers and peers)', relation.interface)
      }
      sections[role][endpoint] = relation
    }
  }
  if (subordinate && !Object.values(sections.requires).some(relation => relation.scope === 'container')) {
    check.failWith('requires', 'a requires endpoint with scope "container" in a subordinate charm', 'none')
  }

  const extraBindings = parseExtraBindings(check, top['extra-bindings'], declaredIn)
  const series = check.stringList(top.series, 'series', sectionEntriesMax, { test: seriesPattern, expected: 'a series name like "jammy"' })

  const storage: Record<string, CharmStorageSpec> = {}
  const storageSection = check.optionalMap(top.storage, 'storage', 'a map of storage name to storage')
  for (const [store, spec] of check.entries(storageSection, 'storage', sectionEntriesMax)) {
    const path = fieldPath('storage', store)
    if (!storageNamePattern.test(store)) check.fail(path, 'a storage name of lower case letters and digits separated by "-"', store)
    storage[store] = parseStorage(check, path, spec)
  }

  const resources: Record<string, CharmResourceSpec> = {}
  const resourceSection = check.optionalMap(top.resources, 'resources', 'a map of resource name to resource')
  for (const [resource, spec] of check.entries(resourceSection, 'resources', sectionEntriesMax)) {
    if (!resourceNamePattern.test(resource)) check.fail(fieldPath('resources', resource), 'a resource name of letters, digits, ".", "_" and "-" starting with a letter or digit', resource)
    resources[resource] = parseResource(check, fieldPath('resources', resource), spec)
  }

  let minJujuVersion: string | null = null
  if (top['min-juju-version'] !== undefined && top['min-juju-version'] !== null) {
    minJujuVersion = check.string(top['min-juju-version'], 'min-juju-version', 'a version like "2.9.0"')
    if (!versionPattern.test(minJujuVersion)) check.fail('min-juju-version', 'a version like "2.9.0"', minJujuVersion)
  }

  // Informational and substrate-specific sections: checked for shape only.
  const categories = check.stringList(top.categories, 'categories', sectionEntriesMax)
  const tags = check.stringList(top.tags, 'tags', sectionEntriesMax)
  const terms = check.stringList(top.terms, 'terms', sectionEntriesMax)
  check.optionalString(top.maintainer, 'maintainer', '')
  check.stringList(top.maintainers, 'maintainers', sectionEntriesMax)
  let assumes: unknown[] | null = null
  if (top.assumes !== undefined && top.assumes !== null) {
    // Entries are feature names, or any-of/all-of maps of them.
    if (!Array.isArray(top.assumes)) check.fail('assumes', 'a list of features', top.assumes)
    if (top.assumes.length > sectionEntriesMax) check.failWith('assumes', `at most ${sectionEntriesMax} entries`, `${top.assumes.length}`)
    top.assumes.forEach((entry: unknown, index: number) => {
      if (typeof entry !== 'string' && (typeof entry !== 'object' || entry === null || Array.isArray(entry))) {
        check.fail(`assumes[${index}]`, 'a feature name or an "any-of"/"all-of" map', entry)
      }
    })
    assumes = top.assumes
  }
  for (const section of ['devices', 'payloads'] as const) {
    const map = check.optionalMap(top[section], section)
    for (const [key, spec] of check.entries(map, section, sectionEntriesMax)) {
      const entry = check.map(spec, fieldPath(section, key), 'a map with "type"')
      check.string(entry.type, fieldPath(fieldPath(section, key), 'type'))
    }
  }
  if (top.deployment !== undefined && top.deployment !== null) check.map(top.deployment, 'deployment')
  if (top.containers !== undefined && top.containers !== null) {
    const containers = check.map(top.containers, 'containers', 'a map of container name to container')
    for (const [key, spec] of check.entries(containers, 'containers', sectionEntriesMax)) check.optionalMap(spec, fieldPath('containers', key))
  }
  if (top.bases !== undefined && top.bases !== null) {
    if (!Array.isArray(top.bases)) check.fail('bases', 'a list of bases', top.bases)
    if (top.bases.length > sectionEntriesMax) check.failWith('bases', `at most ${sectionEntriesMax} entries`, `${top.bases.length}`)
    top.bases.forEach((base: unknown, index: number) => check.map(base, `bases[${index}]`, 'a map with "name" and "channel"'))
  }

  return {
    name,
    summary,
    description,
    subordinate,
    format,
    provides: sections.provides,
    requires: sections.requires,
    peers: sections.peers,
    extraBindings,
    series,
    storage,
    resources,
    minJujuVersion,
    assumes,
    categories,
    tags,
    terms
  }
}

function parseRelation (check: CharmFieldChecker, path: string, spec: unknown): CharmRelationSpec {
  if (typeof spec === 'string') {
    if (!endpointNamePattern.test(spec)) check.fail(path, interfaceNameExpected, spec)
    return { interface: spec, limit: null, optional: false, scope: 'global' }
  }
  const long = check.map(spec, path, 'an interface name or a map with "interface"')
  const iface = check.string(long.interface, fieldPath(path, 'interface'), interfaceNameExpected)
  if (!endpointNamePattern.test(iface)) check.fail(fieldPath(path, 'interface'), interfaceNameExpected, iface)
  let limit: number | null = null
  if (long.limit !== undefined && long.limit !== null) {
    if (!Number.isSafeInteger(long.limit) || (long.limit as number) < 0) check.fail(fieldPath(path, 'limit'), 'a whole number of relations, 0 or more', long.limit)
    limit = long.limit as number
  }
  const optional = check.optionalBoolean(long.optional, fieldPath(path, 'optional'), false)
  const scope = long.scope ?? 'global'
  if (scope !== 'global' && scope !== 'container') check.fail(fieldPath(path, 'scope'), '"global" or "container"', scope)
  return { interface: iface, limit, optional, scope }
}

function parseExtraBindings (check: CharmFieldChecker, raw: unknown, endpoints: ReadonlyMap<string, RelationRole>): string[] {
  if (raw === undefined) return []
  const bindings = check.map(raw, 'extra-bindings', 'a map of binding names (with no values)')
  const entries = check.entries(bindings, 'extra-bindings', sectionEntriesMax)
  if (entries.length === 0) check.failWith('extra-bindings', 'at least one binding name', 'an empty map')
  for (const [binding, value] of entries) {
    const path = fieldPath('extra-bindings', binding)
    if (binding === '') check.fail(path, 'a non-empty binding name', binding)
    if (value !== null) check.fail(path, 'no value (extra bindings are names only)', value)
    const role = endpoints.get(binding)
    if (role !== undefined) check.fail(path, `a name not used by an endpoint (it is in "${role}")`, binding)
  }
  return entries.map(([binding]) => binding)
}

function parseStorage (check: CharmFieldChecker, path: string, spec: unknown): CharmStorageSpec {
  const store = check.map(spec, path, 'a map with "type"')
  const type = store.type
  if (type !== 'filesystem' && type !== 'block') check.fail(fieldPath(path, 'type'), '"filesystem" or "block"', type)
  const description = check.optionalString(store.description, fieldPath(path, 'description'), '')
  const shared = check.optionalBoolean(store.shared, fieldPath(path, 'shared'), false)
  const readOnly = check.optionalBoolean(store['read-only'], fieldPath(path, 'read-only'), false)

  let countMin = 1
  let countMax = 1
  if (store.multiple !== undefined && store.multiple !== null) {
    const multiple = check.map(store.multiple, fieldPath(path, 'multiple'), 'a map with "range"')
    const rangePath = fieldPath(fieldPath(path, 'multiple'), 'range')
    const range = multiple.range
    const rangeExpected = 'a count "m" (1 or more), or a range "m-n", "m+" or "m-"'
    if (typeof range === 'number') {
      if (!Number.isSafeInteger(range) || range <= 0) check.fail(rangePath, rangeExpected, range)
      countMin = countMax = range
    } else if (typeof range === 'string') {
      const match = storageRangePattern.exec(range)
      if (match === null) check.fail(rangePath, rangeExpected, range)
      countMin = Number(match[1])
      countMax = match[2]!.length === 1 ? -1 : Number(match[2]!.slice(1))
      if (!Number.isSafeInteger(countMin) || !Number.isSafeInteger(countMax) || (countMax !== -1 && (countMax === 0 || countMax < countMin))) {
        check.fail(rangePath, `${rangeExpected} with n at least m and at least 1`, range)
      }
    } else {
      check.fail(rangePath, rangeExpected, range)
    }
  }

  let minimumSize: string | null = null
  if (store['minimum-size'] !== undefined && store['minimum-size'] !== null) {
    const sizeExpected = 'a size in MiB with an optional M, G, T, P, E, Z or Y suffix, like "10G"'
    minimumSize = check.string(store['minimum-size'], fieldPath(path, 'minimum-size'), sizeExpected)
    if (!storageSizePattern.test(minimumSize)) check.fail(fieldPath(path, 'minimum-size'), sizeExpected, minimumSize)
  }

  let location: string | null = null
  if (store.location !== undefined && store.location !== null) {
    if (type !== 'filesystem') check.fail(fieldPath(path, 'location'), 'no location for block storage', store.location)
    location = check.string(store.location, fieldPath(path, 'location'), 'an absolute path')
    if (!location.startsWith('/')) check.fail(fieldPath(path, 'location'), 'an absolute path', location)
  }

  const properties = check.stringList(store.properties, fieldPath(path, 'properties'), sectionEntriesMax, { test: /^transient$/, expected: '"transient"' })
  return { type, description, shared, readOnly, countMin, countMax, minimumSize, location, properties }
}

function parseResource (check: CharmFieldChecker, path: string, spec: unknown): CharmResourceSpec {
  const resource = check.map(spec, path, 'a map with "type" and "filename"')
  const type = resource.type ?? 'file'
  if (type !== 'file' && type !== 'oci-image') check.fail(fieldPath(path, 'type'), '"file" or "oci-image"', type)
  let filename: string | null = null
  if (resource.filename !== undefined && resource.filename !== null) filename = check.string(resource.filename, fieldPath(path, 'filename'))
  if (type === 'file' && (filename === null || filename === '')) check.fail(fieldPath(path, 'filename'), 'a file name for a "file" resource', resource.filename)
  const description = check.optionalString(resource.description, fieldPath(path, 'description'), '')
  return { type, filename, description }
}

