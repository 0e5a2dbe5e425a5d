/**
 * Everything a controller's stores must hold for the model it serves, kept there by one
 * backfill per store (charm-backfill.ts): the charm store holds charm archives AND the
 * operator's resource files (`deploy --resource`, `attach-resource` put them there by
 * hash, resource-upload.ts), and the agent store holds the agent bundles `upgrade-model`
 * names. A controller that joined after an upload held none of them; had only the charms
 * been copied, a unit added after the uploading controller died would install its charm
 * and then fail `resource-get`, and a machine could not fetch the bundle it is told to run.
 * Juju's joining controllers take the whole blob store (charms, resources, tools) with the
 * database, so each of ours copies all three.
 */
import type { Clock } from '../../runtime/clock.ts'
import type { Logger } from '../../runtime/logger.ts'
import type { ModelContext } from '../../runtime/model/model-types.ts'
import { tableValues } from '../../runtime/model/table.ts'
import { CharmBackfill } from './charm-backfill.ts'

/** What a store answers: its local copy, and a copy fetched from the peers into it. */
export interface BackfilledStore {
  held: (hash: string) => Promise<boolean>
  fetch: (hash: string) => Promise<boolean>
}

export interface ModelBackfillsOptions {
  clock: Clock
  model: () => Pick<ModelContext, 'charms' | 'applications' | 'agentBinaries'>
  charms: BackfilledStore
  agentBinaries: BackfilledStore
  logger?: Logger
}

/** The charm store's content the model names: every charm's archive and every application's resource files. */
export function charmStoreHashes (model: Pick<ModelContext, 'charms' | 'applications'>): string[] {
  const hashes = new Set<string>()
  for (const charm of tableValues(model.charms)) hashes.add(charm.hash)
  for (const app of tableValues(model.applications)) {
    for (const resource of Object.values(app.resources ?? {})) hashes.add(resource.hash)
  }
  return [...hashes]
}

/** The agent store's content the model names: every recorded agent bundle. */
export function agentStoreHashes (model: Pick<ModelContext, 'agentBinaries'>): string[] {
  return model.agentBinaries === undefined ? [] : [...tableValues(model.agentBinaries)].map(binary => binary.hash)
}

export class ModelBackfills {
  readonly #charms: CharmBackfill
  readonly #agentBinaries: CharmBackfill
  readonly #model: ModelBackfillsOptions['model']
  /** The tables last looked at: tables are replaced, never changed in place, so the same object means no change. */
  #seen: { charms: unknown, applications: unknown, agentBinaries: unknown }
  /** The hashes last named per store: an application's status change replaces its table without naming new content. */
  #named: { charms: string, agentBinaries: string }

  constructor (options: ModelBackfillsOptions) {
    const { clock, logger } = options
    this.#model = options.model
    this.#charms = new CharmBackfill({ clock, hashes: () => charmStoreHashes(this.#model()), content: 'charm archive or resource', ...options.charms, ...(logger === undefined ? {} : { logger }) })
    this.#agentBinaries = new CharmBackfill({ clock, hashes: () => agentStoreHashes(this.#model()), content: 'agent bundle', ...options.agentBinaries, ...(logger === undefined ? {} : { logger }) })
    const model = this.#model()
    this.#seen = { charms: model.charms, applications: model.applications, agentBinaries: model.agentBinaries }
    this.#named = { charms: charmStoreHashes(model).join(), agentBinaries: agentStoreHashes(model).join() }
  }

  start (): void {
    this.#charms.start()
    this.#agentBinaries.start()
  }

  /** The model was applied: a pass for each store whose named content changed. */
  applied (): void {
    const model = this.#model()
    const seen = this.#seen
    if (model.charms === seen.charms && model.applications === seen.applications && model.agentBinaries === seen.agentBinaries) return
    this.#seen = { charms: model.charms, applications: model.applications, agentBinaries: model.agentBinaries }
    const charms = charmStoreHashes(model).join()
    if (charms !== this.#named.charms) {
      this.#named.charms = charms
      this.#charms.changed()
    }
    const agentBinaries = agentStoreHashes(model).join()
    if (agentBinaries !== this.#named.agentBinaries) {
      this.#named.agentBinaries = agentBinaries
      this.#agentBinaries.changed()
    }
  }

  stop (): void {
    this.#charms.stop()
    this.#agentBinaries.stop()
  }
}
