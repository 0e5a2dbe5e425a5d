/**
 * The client's side of agent versions: the agent bundle this installation holds (its own
 * version, packed from its dist/ once and cached beside it), putting it into the
 * controllers' agent store and the model's records, and the versions a model and its
 * controllers run — with the one-line errors the issue asks for, which name the
 * component and its version, the version wanted, the versions there are and where:
 * `controller 0.2.0: cannot upgrade model "default" to agent 0.3.0: no agent binaries for
 * 0.3.0 linux/x64 in the controller store (have 0.1.0, 0.2.0)`.
 */
import { CantripError } from '../../runtime/errors.ts'
import { agentBinaryKey, compareAgentVersions, modelAgentVersion, noAgentBinaries, type AgentBinaryRecord } from '../../runtime/model/agent-binaries.ts'
import type { ModelContext } from '../../runtime/model/model-types.ts'
import { tableValues } from '../../runtime/model/table.ts'
import { packageRoot } from '../package-root.ts'
import { fetchCharmArchive } from '../uniter/charm-fetch.ts'
import { agentPlatform, installationAgentBundle, type AgentBundle } from '../tools/agent-bundle.ts'
import { cantripVersion, expectOk } from './cli-context.ts'
import type { Connection } from './connection.ts'

export class AgentVersionError extends CantripError {
  override name = 'AgentVersionError'
}

/** This installation's agent bundle (its own version), packed once and cached in dist/. */
export function clientAgentBundle (root: string = packageRoot): AgentBundle {
  return installationAgentBundle(root)
}

export function recordedBinaries (model: ModelContext): AgentBinaryRecord[] {
  return model.agentBinaries === undefined ? [] : tableValues(model.agentBinaries)
}

export { modelAgentVersion }

/** Puts `bundle` into the controllers' agent store (unless held) and records it in the connection's model. */
export async function putAgentBinary (connection: Connection, bundle: AgentBundle): Promise<void> {
  const held = recordedBinaries((await connection.model()).model).find(b => agentBinaryKey(b.version, b.platform) === agentBinaryKey(bundle.version, bundle.platform))
  if (held?.hash === bundle.hash) return
  const hash = await connection.putCharm(bundle.bytes, { store: 'agent' })
  expectOk(await connection.submit({ type: 'add-agent-binary', version: bundle.version, platform: bundle.platform, hash, size: bundle.bytes.byteLength }))
}

/** The controllers' version, as the member answering reports it (the client's when it reports none). */
export async function controllerVersion (connection: Connection): Promise<string> {
  const status = await connection.api({ op: 'controller-status' })
  return status.version ?? cantripVersion
}

export interface UpgradeTarget {
  /** How the error lines name the subject: `model "default"`. */
  subject: string
  controller: string
  wanted: string
  model: ModelContext
}

/**
 * Points the connection's model at `wanted`: refuses a version below the controllers' or
 * the model's (no downgrades), uploads the client's own bundle when it is that version,
 * and otherwise needs the controllers to hold it already. Answers whether anything changed.
 */
export async function upgradeModelAgents (connection: Connection, target: UpgradeTarget): Promise<boolean> {
  const { subject, controller, wanted, model } = target
  const fail = (why: string): never => { throw new AgentVersionError(`controller ${controller}: cannot upgrade ${subject} to agent ${wanted}: ${why}`) }
  const current = modelAgentVersion(model) ?? controller
  // Juju's wording (cmd/juju/commands/upgrademodel.go downgradeErrMsg), after the prefix.
  if (compareAgentVersions(wanted, controller) < 0) fail(`cannot change version from the controllers' ${controller} to lower version ${wanted}`)
  if (compareAgentVersions(wanted, current) < 0) fail(`cannot change version from ${current} to lower version ${wanted}`)
  if (wanted === modelAgentVersion(model)) return false
  const recorded = recordedBinaries(model)
  if (wanted === cantripVersion) {
    await putAgentBinary(connection, clientAgentBundle())
  } else if (!recorded.some(b => b.version === wanted && b.platform === agentPlatform)) {
    // Juju: "no matching agent versions available"; a controller without internet access is fed by sync-agent-binary.
    fail(`${noAgentBinaries(wanted, agentPlatform, 'the controller store', recorded.map(b => b.version))}; copy one there with "cantrip sync-agent-binary --agent-version ${wanted} --source <installation>"`)
  }
  expectOk(await connection.submit({ type: 'set-agent-version', version: wanted }))
  return true
}

/** The binary of `version` for this platform that the connection's model records, if any. */
export function recordedBinary (model: ModelContext, version: string): AgentBinaryRecord | undefined {
  return recordedBinaries(model).find(b => b.version === version && b.platform === agentPlatform)
}

/**
 * The bundle of `record` from the connection's model's agent store, checked chunk by chunk
 * and whole against its sha256 (agent/uniter/charm-fetch.ts), for copying into another
 * model's store (each model keeps its own).
 */
export async function fetchAgentBinary (connection: Connection, record: AgentBinaryRecord): Promise<AgentBundle> {
  const selector = { store: 'agent' as const }
  const bytes = await fetchCharmArchive({
    charmManifest: async hash => (await connection.api({ op: 'charm-manifest', hash, ...selector })).manifest ?? undefined,
    charmChunk: async (hash, index) => (await connection.api({ op: 'charm-chunk', hash, index, ...selector })).bytes ?? undefined
  }, record.hash, record.version, `cantrip: agent binary ${record.version} ${record.platform} (sha256 ${record.hash})`)
  return { version: record.version, platform: record.platform, bytes, hash: record.hash }
}
