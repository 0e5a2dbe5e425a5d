/**
 * What a charm asks of the Juju running it, checked at deploy and refresh against the
 * version cantrip presents to hooks as JUJU_VERSION (Juju's own checks, juju/juju
 * core/charm/minversion.go and core/assumes/sat_checker.go):
 *
 * - `min-juju-version: X`: refused when X is above that version, with Juju's line
 *   `charm's min version (X) is higher than this juju model's version (V)`.
 * - `assumes:` a list (implicitly all-of) of features — `juju`, optionally with
 *   `>= X` or `< X` — and `any-of:` / `all-of:` maps of the same. A machine model offers
 *   one feature, `juju` at that version (Juju's k8s-only features are absent). Lines as
 *   Juju's: `charm requires feature "k8s-api" but model does not support it`,
 *   `charm requires feature "juju" (version >= 4.0) but model currently supports version 3.5.0`.
 */
import { describeValue } from '../errors.ts'
import { limits } from '../limits.ts'
import { compareAgentVersions, parseAgentVersion } from '../model/agent-binaries.ts'

/** The Juju version cantrip behaves as: what hooks see as JUJU_VERSION. */
export const providedJujuVersion = '3.5.0'

const featurePattern = /^([a-z][a-z0-9-]*)(?:\s*(>=|<)\s*(\S+))?$/

/** Why the charm cannot run here (one line), or undefined when it can. */
export function charmRequirementsProblem (charm: { minJujuVersion: string | null, assumes: readonly unknown[] | null }, jujuVersion: string = providedJujuVersion): string | undefined {
  if (charm.minJujuVersion !== null && parseAgentVersion(charm.minJujuVersion) !== undefined && compareAgentVersions(charm.minJujuVersion, jujuVersion) > 0) {
    return `charm's min version (${charm.minJujuVersion}) is higher than this juju model's version (${jujuVersion})`
  }
  if (charm.assumes === null) return undefined
  const problems = allOf(charm.assumes, jujuVersion, 0)
  return problems.length === 0 ? undefined : `Charm feature requirements cannot be met: ${problems.join('; ')}`
}

/**
 * The unmet entries of an all-of list. Nesting is bounded (limits.charmAssumesDepthMax):
 * the depth is the charm author's, and the recursion stops there.
 */
function allOf (entries: readonly unknown[], jujuVersion: string, depth: number): string[] {
  return entries.flatMap(entry => {
    const problem = entryProblem(entry, jujuVersion, depth)
    return problem === undefined ? [] : [problem]
  })
}

function entryProblem (entry: unknown, jujuVersion: string, depth: number): string | undefined {
  if (typeof entry === 'string') return featureProblem(entry, jujuVersion)
  if (depth >= limits.charmAssumesDepthMax) return `assumes nested deeper than ${limits.charmAssumesDepthMax} levels`
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return `expected a feature or an any-of/all-of map, got ${describeValue(entry)}`
  const map = entry as Record<string, unknown>
  const [kind, ...others] = Object.keys(map)
  const list = kind === undefined ? undefined : map[kind]
  if (others.length > 0 || (kind !== 'any-of' && kind !== 'all-of') || !Array.isArray(list)) return `expected a map with one "any-of" or "all-of" list, got ${describeValue(entry)}`
  const problems = allOf(list, jujuVersion, depth + 1)
  if (kind === 'all-of') return problems.length === 0 ? undefined : `charm requires all of the following: ${problems.join('; ')}`
  return problems.length < list.length ? undefined : `charm requires at least one of the following: ${problems.join('; ')}`
}

function featureProblem (expression: string, jujuVersion: string): string | undefined {
  const match = featurePattern.exec(expression.trim())
  if (match === null) return `expected a feature like "juju >= 3.1", got ${describeValue(expression)}`
  const [, name, constraint, version] = match
  if (name !== 'juju') return `charm requires feature ${JSON.stringify(name)} but model does not support it`
  if (constraint === undefined || version === undefined) return undefined
  // A bare major version (`juju < 4`) means its first release.
  const comparable = /^[0-9]+$/.test(version) ? `${version}.0` : version
  if (parseAgentVersion(comparable) === undefined) return `expected a version after ${JSON.stringify(`juju ${constraint}`)}, got ${describeValue(version)}`
  const order = compareAgentVersions(jujuVersion, comparable)
  const satisfied = constraint === '>=' ? order >= 0 : order < 0
  return satisfied ? undefined : `charm requires feature "juju" (version ${constraint} ${version}) but model currently supports version ${jujuVersion}`
}
