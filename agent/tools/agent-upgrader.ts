/**
 * A machine agent's upgrader, as Juju's (juju/juju worker/upgrader/upgrader.go): on each
 * view of the model it compares the model's `agent-version` with the version it runs;
 * when they differ it fetches that version's bundle from the controllers' agent store
 * (chunk by chunk, each checked against the manifest, the whole against the sha256 the
 * model records), unpacks it beside the running one, switches `tools/current` to it
 * (agent-tools-dir.ts) and asks to be restarted: the launcher starts the new version in
 * the same data directory, so the units keep their state and run no install or start.
 *
 * It also reports: the version it runs, once it has its first view (its health check: an
 * agent that got this far has registered, read the model and started its units, so a
 * pending switch to it is kept), and why the last upgrade failed, which `status` shows.
 * Like Juju's it never downgrades: a model version below the running one is ignored.
 * A failure that fetching again would not cure (no binary recorded, a bundle whose hash
 * is wrong) is reported and not retried for that bundle; a transient one (no controller
 * answered) is retried on the next view, at most limits.agentUpgradeAttemptsMax times.
 */
import { tableValues } from '../../runtime/model/table.ts'
import { agentBinaryKey, compareAgentVersions, noAgentBinaries, parseAgentVersion, type AgentBinaryRecord } from '../../runtime/model/agent-binaries.ts'
import { agentVersionConfigKey, hostnamePattern } from '../../runtime/model/apply/agent-version-commands.ts'
import type { CommandResult, ModelCommand, ModelContext } from '../../runtime/model/model-types.ts'
import { CommandProposer } from '../../runtime/model/command-proposer.ts'
import { limits } from '../../runtime/limits.ts'
import type { Logger } from '../../runtime/logger.ts'
import type { StoreSelector } from '../../actors/controller/api-requests.ts'
import { unpackCharm } from '../charm/charm-archive.ts'
import { fetchCharmArchive } from '../uniter/charm-fetch.ts'
import { agentPlatform } from './agent-bundle.ts'
import { hostBase } from './host-base.ts'
import { beginUpgrade, completeUpgrade, currentVersion, hasVersion, readUpgrade, readUpgradeFailure, recordUpgradeFailure, versionDir } from './agent-tools-dir.ts'
import { mkdirSync, rmSync } from 'node:fs'
import { hostname } from 'node:os'
import { dirname } from 'node:path'

/** What the upgrader needs of the machine agent's controller client. */
export interface UpgraderClient {
  model (): ModelContext
  charmManifest (hash: string, selector: StoreSelector): Promise<unknown>
  charmChunk (hash: string, index: number, selector: StoreSelector): Promise<Uint8Array | undefined>
  submit (command: ModelCommand): Promise<CommandResult>
}

export interface AgentUpgraderOptions {
  machineId: string
  dataDir: string
  /** The version this process runs. */
  version: string
  /** This start's incarnation: request ids never repeat across restarts. */
  incarnation: number
  client: UpgraderClient
  logger: Logger
  /** The new version is in place: stop this agent so its launcher starts that one. */
  restart: (to: string) => void
}

const agentStore: StoreSelector = { store: 'agent' }

export class AgentUpgrader {
  readonly #o: AgentUpgraderOptions
  readonly #component: string
  readonly #proposer: CommandProposer
  #running: Promise<void> | undefined
  #attempts = 0
  /** The bundle hash a final failure was reported for: not fetched again. */
  #refused: string | undefined
  #reported: string | undefined
  #restarting = false

  constructor (options: AgentUpgraderOptions) {
    this.#o = options
    this.#component = `machine ${options.machineId} agent ${options.version}`
    this.#proposer = new CommandProposer({ proposer: { kind: 'machine', id: options.machineId }, requestPrefix: `machine-${options.machineId}/${options.incarnation}/upgrader` })
  }

  /** The agent is up (first view, units started): a pending switch to this version stands; the version is reported. */
  async started (): Promise<void> {
    const pending = readUpgrade(this.#o.dataDir)
    if (pending !== undefined && pending.to === this.#o.version) {
      completeUpgrade(this.#o.dataDir)
      this.#o.logger.log('info', `upgraded from ${pending.from} to ${this.#o.version}`)
    }
    const failure = readUpgradeFailure(this.#o.dataDir)
    await this.#report(failure === undefined ? '' : `upgrade to ${failure.version} failed: ${failure.error}`)
  }

  /** Looks at the model's agent-version again (each view); at most one upgrade runs at a time. Resolves when the one running is over. */
  async check (): Promise<void> {
    if (this.#restarting) return
    this.#running ??= this.#check().catch((error: unknown) => {
      this.#o.logger.log('error', `${this.#component}: upgrade failed: ${error instanceof Error ? error.message : String(error)}`)
    }).finally(() => { this.#running = undefined })
    await this.#running
  }

  async #check (): Promise<void> {
    const model = this.#o.client.model()
    const wanted = model.config[agentVersionConfigKey]
    if (typeof wanted !== 'string' || wanted === this.#o.version || parseAgentVersion(wanted) === undefined) return
    // Juju's upgrader refuses to go back (allowedTargetVersion); the model refuses it too.
    if (compareAgentVersions(wanted, this.#o.version) < 0) return
    const binaries = model.agentBinaries === undefined ? [] : tableValues(model.agentBinaries)
    const binary = binaries.find(b => agentBinaryKey(b.version, b.platform) === agentBinaryKey(wanted, agentPlatform))
    if (binary === undefined) {
      await this.#report(`cannot upgrade to ${wanted}: ${noAgentBinaries(wanted, agentPlatform, 'the model', binaries.map(b => b.version))}`)
      return
    }
    if (binary.hash === this.#refused || this.#attempts >= limits.agentUpgradeAttemptsMax) return
    this.#attempts++
    await this.#upgrade(binary)
  }

  async #upgrade (binary: AgentBinaryRecord): Promise<void> {
    const { dataDir } = this.#o
    const subject = `${this.#component}: cannot upgrade to ${binary.version}: agent bundle sha256 ${binary.hash}`
    if (!hasVersion(dataDir, binary.version)) {
      let bytes: Uint8Array
      try {
        bytes = await fetchCharmArchive({
          charmManifest: async hash => await this.#o.client.charmManifest(hash, agentStore),
          charmChunk: async (hash, index) => await this.#o.client.charmChunk(hash, index, agentStore)
        }, binary.hash, binary.version, subject)
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error)
        // Not in any controller's store: perhaps not replicated yet; anything else (a wrong hash) is final.
        if (!message.endsWith("not in the controller's store")) this.#refused = binary.hash
        await this.#fail(binary.version, message)
        return
      }
      mkdirSync(dirname(versionDir(dataDir, binary.version)), { recursive: true })
      try {
        await unpackCharm(bytes, binary.hash, versionDir(dataDir, binary.version))
      } catch (error) {
        this.#refused = binary.hash
        await this.#fail(binary.version, `${subject}: ${error instanceof Error ? error.message : String(error)}`)
        return
      }
      if (!hasVersion(dataDir, binary.version)) {
        // Whole and as hashed, but not that version's agent (a bundle recorded under the wrong version).
        rmSync(versionDir(dataDir, binary.version), { recursive: true, force: true })
        this.#refused = binary.hash
        await this.#fail(binary.version, `${subject}: expected a bundle of agent ${binary.version} (package.json and dist/cantripd.mjs), got another`)
        return
      }
    }
    beginUpgrade(dataDir, currentVersion(dataDir) ?? this.#o.version, binary.version)
    this.#o.logger.log('info', `agent ${binary.version} (sha256 ${binary.hash}) in place; restarting into it`)
    this.#restarting = true
    this.#o.restart(binary.version)
  }

  async #fail (version: string, message: string): Promise<void> {
    this.#o.logger.log('error', message)
    recordUpgradeFailure(this.#o.dataDir, version, message)
    await this.#report(`upgrade to ${version} failed: ${message}`)
  }

  /** The host's base, reported with the version so `status` shows it (read once; absent when /etc/os-release says nothing). */
  readonly #base = hostBase()
  /** The host's name, which Juju 3's status shows as the machine's `hostname` (one a model would refuse is left out). */
  readonly #hostname = hostnamePattern.test(hostname()) ? hostname() : undefined

  /** Tells the controllers the running version and the upgrade problem ('' for none), when either changed. */
  async #report (upgradeError: string): Promise<void> {
    const text = upgradeError.slice(0, limits.agentUpgradeErrorLengthMax)
    if (this.#reported === text) return
    const result = await this.#proposer.submit(this.#o.client, { type: 'set-machine-agent-version', machine: this.#o.machineId, version: this.#o.version, upgradeError: text, ...(this.#base === undefined ? {} : { base: this.#base }), ...(this.#hostname === undefined ? {} : { hostname: this.#hostname }) })
    if (!result.ok) {
      this.#o.logger.log('warning', `${this.#component}: cannot report the agent version: ${result.error}`)
      return
    }
    this.#reported = text
  }
}
