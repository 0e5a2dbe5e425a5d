/**
 * Agent versions and the agent binaries a model may run (Juju's "agent binaries", once
 * called tools): a version is `MAJOR.MINOR.PATCH` with an optional `-tag`
 * (Juju's version.Number, e.g. `3.1.6`, `3.2-beta1`); a binary is the bundle of one version
 * for one platform, held by content address (sha256) in the controllers' agent store.
 * The model records which binaries exist and, in its config, which version its agents
 * should run (`agent-version`, as Juju's model config names it).
 */
import { sha256Pattern } from '../charm/charm-manifest.ts'
import { describeValue } from '../errors.ts'
import type { MachineId } from '../ids.ts'

/** The model config key holding the version the model's agents should run (Juju's name). */
export const agentVersionConfigKey = 'agent-version'

/** The model's agent-version; undefined when none was ever set (its agents run the controllers' version). */
export function modelAgentVersion (model: { readonly config: Readonly<Record<string, unknown>> }): string | undefined {
  const value = model.config[agentVersionConfigKey]
  return typeof value === 'string' ? value : undefined
}

/** The model commands of agent versions (runtime/model/apply/agent-version-commands.ts). */
export type AgentVersionCommand =
  /** Admins: a bundle in the controllers' agent store, recorded so the model's agents may fetch it. */
  | { readonly type: 'add-agent-binary', readonly version: string, readonly platform: string, readonly hash: string, readonly size: number }
  /** `upgrade-model`, `add-model --agent-version`: the version the model's agents should run (its config's `agent-version`). */
  | { readonly type: 'set-agent-version', readonly version: string }
  /** A machine agent reports the version it runs and why its last upgrade failed ('' when it did not). */
  | { readonly type: 'set-machine-agent-version', readonly machine: MachineId, readonly version: string, readonly upgradeError: string, readonly base?: string, readonly hostname?: string }

export const agentVersionCommandTypes = ['add-agent-binary', 'set-agent-version', 'set-machine-agent-version'] as const

/** One bundle of one version for one platform, as the model records it. */
export interface AgentBinaryRecord {
  readonly version: string
  /** `os/arch` as Node names them (`linux/x64`). */
  readonly platform: string
  /** sha256 of the bundle, in lower-case hex: its address in the agent store. */
  readonly hash: string
  readonly size: number
}

export const agentVersionPattern = /^(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})(?:\.(0|[1-9][0-9]{0,8}))?(?:-([0-9A-Za-z.]{1,32}))?$/
export const agentPlatformPattern = /^[a-z0-9]{1,16}\/[a-z0-9_]{1,16}$/

export interface ParsedVersion {
  readonly major: number
  readonly minor: number
  readonly patch: number
  /** The tag after `-`; '' for a release, which sorts after every tagged build of the same numbers. */
  readonly tag: string
}

export function parseAgentVersion (version: string): ParsedVersion | undefined {
  const match = agentVersionPattern.exec(version)
  if (match === null) return undefined
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3] ?? '0'), tag: match[4] ?? '' }
}

/** Negative, zero or positive as `a` is older than, the same as or newer than `b`; both must parse. */
export function compareAgentVersions (a: string, b: string): number {
  const x = parseAgentVersion(a)
  const y = parseAgentVersion(b)
  if (x === undefined || y === undefined) throw new Error(`agent version: expected versions like "0.2.0", got ${describeValue(x === undefined ? a : b)}`)
  if (x.major !== y.major) return x.major - y.major
  if (x.minor !== y.minor) return x.minor - y.minor
  if (x.patch !== y.patch) return x.patch - y.patch
  if (x.tag === y.tag) return 0
  if (x.tag === '') return 1
  if (y.tag === '') return -1
  return x.tag < y.tag ? -1 : 1
}

/** Versions sorted oldest first, without repeats. */
export function sortAgentVersions (versions: Iterable<string>): string[] {
  return [...new Set(versions)].sort(compareAgentVersions)
}

/** The table key of a binary: one per version and platform. */
export function agentBinaryKey (version: string, platform: string): string {
  return `${version} ${platform}`
}

/** Why `record` is not an agent binary record (the "expected …, got …" half of a refusal); undefined when it is. */
export function agentBinaryProblem (record: { version: unknown, platform: unknown, hash: unknown, size: unknown }): string | undefined {
  if (typeof record.version !== 'string' || parseAgentVersion(record.version) === undefined) return `expected an agent version like "0.2.0", got ${describeValue(record.version)}`
  if (typeof record.platform !== 'string' || !agentPlatformPattern.test(record.platform)) return `expected a platform like "linux/x64", got ${describeValue(record.platform)}`
  if (typeof record.hash !== 'string' || !sha256Pattern.test(record.hash)) return `expected a sha256 in lower-case hex, got ${describeValue(record.hash)}`
  if (typeof record.size !== 'number' || !Number.isSafeInteger(record.size) || record.size <= 0) return `expected a size in bytes (an integer > 0), got ${describeValue(record.size)}`
  return undefined
}

/**
 * The one line for a version a component cannot find binaries for (the form):
 * `no agent binaries for 0.3.0 linux/x64 in the controller store (have 0.1.0, 0.2.0)`.
 */
export function noAgentBinaries (version: string, platform: string, where: string, have: Iterable<string>): string {
  const versions = sortAgentVersions(have)
  return `no agent binaries for ${version} ${platform} in ${where} (have ${versions.length === 0 ? 'none' : versions.join(', ')})`
}
