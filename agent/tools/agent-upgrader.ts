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
 * A failed try (no controller answered, a bundle whose bytes do not match its sha256) is
 * tried again, as Juju's upgrader does (worker/upgrader/upgrader.go: "failed to fetch
 * agent binaries", then again after its 5 s retryAfter), since a store a controller
 * repaired, or a peer that now answers, cures it: after limits.agentUpgradeRetryDelayMs,
 * doubled each failure up to limits.agentUpgradeRetryDelayMsMax, and status says why it
 * waits and for how long. A new bundle or version starts the count again.
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
  /** Calls `fn` after `ms` (a retry); answers the cancel. A timer by default; tests drive it. */
  schedule?: (ms: number, fn: () => void) => () => void
}

/** The agent's timer: unref'd, so a pending retry never keeps a stopping agent alive. */
function timerSchedule (ms: number, fn: () => void): () => void {
  const timer = setTimeout(fn, ms)
  timer.unref()
  return () => { clearTimeout(timer) }
}

/** The wait before try `failures + 1` of one bundle: doubling from the first delay, bounded. */
export function upgradeRetryDelayMs (failures: number): number {
  const doublings = Math.min(Math.max(failures - 1, 0), 20)
  return Math.min(limits.agentUpgradeRetryDelayMs * 2 ** doublings, limits.agentUpgradeRetryDelayMsMax)
}

const agentStore: StoreSelector = { store: 'agent' }

export class AgentUpgrader {
  readonly #o: AgentUpgraderOptions
  readonly #component: string
  readonly #proposer: CommandProposer
  #running: Promise<void> | undefined
  /** The bundle that failed last and how often in a row; it is tried again only when its retry fires. */
  #failing: { hash: string, failures: number, waiting: boolean } | undefined
  #cancelRetry: (() => void) | undefined
  #reported: string | undefined
  #restarting = false
  #stopped = false

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

  /** No more tries: the agent stops, or its machine role restarts with a new upgrader. */
  stop (): void {
    this.#stopped = true
    this.#cancelRetry?.()
  }

  /** Looks at the model's agent-version again (each view); at most one upgrade runs at a time. Resolves when the one running is over. */
  async check (): Promise<void> {
    if (this.#restarting || this.#stopped) return
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
    if (this.#failing?.hash === binary.hash && this.#failing.waiting) return
    if (this.#failing !== undefined && this.#failing.hash !== binary.hash) this.#forgetFailures()
    await this.#upgrade(binary)
  }

  #forgetFailures (): void {
    this.#cancelRetry?.()
    this.#cancelRetry = undefined
    this.#failing = undefined
  }

  /** Counts a failed try of `hash` and schedules the next; answers what status adds: why it waits, how long. */
  #scheduleRetry (hash: string): string {
    const failures = (this.#failing?.hash === hash ? this.#failing.failures : 0) + 1
    const delayMs = upgradeRetryDelayMs(failures)
    this.#failing = { hash, failures, waiting: true }
    this.#cancelRetry?.()
    this.#cancelRetry = (this.#o.schedule ?? timerSchedule)(delayMs, () => {
      if (this.#failing?.hash === hash) this.#failing.waiting = false
      void this.check()
    })
    return `; trying again in ${Math.round(delayMs / 1000)} s (${failures} ${failures === 1 ? 'failure' : 'failures'})`
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
        await this.#fail(binary, error instanceof Error ? error.message : String(error))
        return
      }
      mkdirSync(dirname(versionDir(dataDir, binary.version)), { recursive: true })
      try {
        await unpackCharm(bytes, binary.hash, versionDir(dataDir, binary.version))
      } catch (error) {
        await this.#fail(binary, `${subject}: ${error instanceof Error ? error.message : String(error)}`)
        return
      }
      if (!hasVersion(dataDir, binary.version)) {
        // Whole and as hashed, but not that version's agent (a bundle recorded under the wrong version).
        rmSync(versionDir(dataDir, binary.version), { recursive: true, force: true })
        await this.#fail(binary, `${subject}: expected a bundle of agent ${binary.version} (package.json and dist/cantripd.mjs), got another`)
        return
      }
    }
    this.#forgetFailures()
    beginUpgrade(dataDir, currentVersion(dataDir) ?? this.#o.version, binary.version)
    this.#o.logger.log('info', `agent ${binary.version} (sha256 ${binary.hash}) in place; restarting into it`)
    this.#restarting = true
    this.#o.restart(binary.version)
  }

  async #fail (binary: AgentBinaryRecord, message: string): Promise<void> {
    const retry = this.#scheduleRetry(binary.hash)
    this.#o.logger.log('error', `${message}${retry}`)
    recordUpgradeFailure(this.#o.dataDir, binary.version, message)
    await this.#report(`upgrade to ${binary.version} failed: ${message}${retry}`)
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
