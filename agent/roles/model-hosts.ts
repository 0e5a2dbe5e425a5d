/**
 * The controller group's other models, hosted in this controller process: one
 * HostedModel per entry of the default model's registry (add-model), each with its
 * own presence agent, LevelDB under `<data dir>/models/<name>-<created at>/controller`
 * (the creating revision in the name, so a model re-added under an old name never
 * starts from a stale log) and its own provisioner. When an entry leaves the registry
 * (remove-model, after destroy-model emptied it) the model's controller is stopped and
 * its data deleted; the data of models removed while this controller was down goes on
 * its next pass.
 *
 * Reconciling is serial and coalesced: one pass at a time, and any change seen during
 * a pass asks for one more.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { ModelName } from '../../runtime/ids.ts'
import type { Logger } from '../../runtime/logger.ts'
import type { ModelContext, ModelRegistryRecord } from '../../runtime/model/model-types.ts'
import { tableValues } from '../../runtime/model/table.ts'
import type { PresenceAgent } from '../../runtime/presence/presence-agent.ts'
import type { HostedModel } from './hosted-model.ts'

/** After a model's controller failed to start, how long until the next attempt. */
const startRetryMs = 2_000

export interface ModelHostsOptions {
  dataDir: string
  /** The default model as this controller has applied it. */
  registry: () => ModelContext
  /** A started presence agent for the model's topic. */
  presenceFor: (model: ModelName) => PresenceAgent
  start: (model: ModelName, dir: string, presence: PresenceAgent) => Promise<HostedModel>
  /** After a removed model's controller stopped and its data is gone (its machine directories, say). */
  onRemoved?: (model: ModelName) => void
  logger: Logger
}

interface Hosted {
  readonly record: ModelRegistryRecord
  readonly controller: HostedModel
  readonly presence: PresenceAgent
  readonly dir: string
}

export class ModelHosts {
  readonly #o: ModelHostsOptions
  readonly #hosted = new Map<ModelName, Hosted>()
  #pass: Promise<void> | undefined
  #again = false
  #seen: ModelContext['models'] | undefined
  #retry: ReturnType<typeof setTimeout> | undefined
  #stopped = false

  constructor (options: ModelHostsOptions) {
    this.#o = options
  }

  /** The models served here now. */
  get models (): ReadonlyMap<ModelName, HostedModel> {
    return new Map([...this.#hosted].map(([name, hosted]) => [name, hosted.controller]))
  }

  /** The registry may have changed: reconcile (coalesced). */
  changed (): void {
    if (this.#stopped) return
    // Called on every applied entry: an unchanged registry is the same table object, so nearly free.
    const models = this.#o.registry().models
    if (models === this.#seen) return
    this.#seen = models
    if (this.#pass !== undefined) {
      this.#again = true
      return
    }
    this.#pass = this.#reconcile().finally(() => {
      this.#pass = undefined
      if (this.#again) {
        this.#again = false
        this.#seen = undefined
        this.changed()
      }
    })
  }

  async stop (): Promise<void> {
    this.#stopped = true
    if (this.#retry !== undefined) clearTimeout(this.#retry)
    await this.#pass
    await Promise.all([...this.#hosted.values()].map(async hosted => { await this.#stopHosted(hosted) }))
    this.#hosted.clear()
  }

  async #reconcile (): Promise<void> {
    const registry = this.#o.registry()
    const wanted = new Map(tableValues(registry.models).map(record => [record.name, record]))
    for (const [name, hosted] of [...this.#hosted]) {
      const record = wanted.get(name)
      if (record !== undefined && record.createdAt === hosted.record.createdAt) continue
      this.#hosted.delete(name)
      await this.#stopHosted(hosted)
      rmSync(hosted.dir, { recursive: true, force: true })
      this.#o.logger.log('info', `model ${JSON.stringify(name)} removed: its controller stopped and its data deleted`)
      this.#o.onRemoved?.(name)
    }
    this.#collectStale(registry, wanted)
    for (const [name, record] of wanted) {
      if (this.#hosted.has(name) || this.#stopped) continue
      const dir = join(this.#o.dataDir, 'models', `${name}-${record.createdAt}`)
      const presence = this.#o.presenceFor(name)
      try {
        const controller = await this.#o.start(name, join(dir, 'controller'), presence)
        this.#hosted.set(name, { record, controller, presence, dir })
        this.#o.logger.log('info', `serving model ${JSON.stringify(name)}`)
      } catch (error) {
        await presence.leave().catch(() => {})
        this.#o.logger.log('warning', `cannot serve model ${JSON.stringify(name)} yet: ${error instanceof Error ? error.message : String(error)}`)
        this.#retry ??= setTimeout(() => { this.#retry = undefined; this.#seen = undefined; this.changed() }, startRetryMs)
      }
    }
  }

  /**
   * Deletes the data of models removed while this controller was down. A directory
   * `<name>-<N>` exists only if this controller applied the add-model at index N; once
   * the registry here has applied N or later and holds no such model, it was removed.
   */
  #collectStale (registry: ModelContext, wanted: ReadonlyMap<ModelName, ModelRegistryRecord>): void {
    const root = join(this.#o.dataDir, 'models')
    if (!existsSync(root)) return
    for (const entry of readdirSync(root)) {
      const match = /^(.+)-(\d+)$/.exec(entry)
      if (match === null) continue
      const [name, createdAt] = [match[1]!, Number(match[2])]
      if (createdAt > registry.revision || wanted.get(name)?.createdAt === createdAt || this.#hosted.get(name)?.dir === join(root, entry)) continue
      rmSync(join(root, entry), { recursive: true, force: true })
      this.#o.logger.log('info', `deleted the data of model ${JSON.stringify(name)}, removed while this controller was away`)
    }
  }

  async #stopHosted (hosted: Hosted): Promise<void> {
    await hosted.controller.stop().catch(() => {})
    await hosted.presence.leave().catch(() => {})
  }
}
