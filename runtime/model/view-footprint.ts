import type { ApplicationName, MachineId, RelationId, UnitName } from '../ids.ts'
import { readerOf, type ModelReader } from './model-draft.ts'
import type { ActionRecord, ApplicationRecord, CharmRecord, ControllerLeaseRecord, LeaseRecord, MachineRecord, ModelContext, RelationRecord, SettingsRecord, UnitRecord } from './model-types.ts'
import type { SecretRecord } from './secret-types.ts'

/**
 * What a machine's view (machine-view.ts) was built from, key by key: the footprint that
 * lets a controller tell, from the keys one commit touched, which machines' views it may
 * have changed, instead of looking at every machine after every commit. That look was
 * O(machines) per commit, so a deploy cost O(machines²): most of the 1,000-agent
 * simulator point's CPU.
 *
 * The view reads these tables record by record; the parts in `viewWholeParts` it reads
 * whole (a change to one of them may change every view).
 */
export const viewReadTables = ['machines', 'units', 'applications', 'relations', 'charms', 'leases', 'settings', 'actions'] as const
export type ViewReadTable = typeof viewReadTables[number]
export const viewWholeParts = ['config', 'uuid', 'secrets', 'agentBinaries'] as const

/** Told each (table, key) a view reads, found or not: a key that appears later changes the view too. */
export type ViewReads = (table: ViewReadTable, key: string) => void

/** A reader of a committed context that reports every read; `readerOf` when nobody listens. */
export function footprintReader (context: ModelContext, reads: ViewReads | undefined): ModelReader {
  return reads === undefined ? readerOf(context) : new RecordingReader(readerOf(context), reads)
}

class RecordingReader implements ModelReader {
  readonly #inner: ModelReader
  readonly #reads: ViewReads
  constructor (inner: ModelReader, reads: ViewReads) {
    this.#inner = inner
    this.#reads = reads
  }

  charm (url: string): CharmRecord | undefined { this.#reads('charms', url); return this.#inner.charm(url) }
  application (name: ApplicationName): ApplicationRecord | undefined { this.#reads('applications', name); return this.#inner.application(name) }
  unit (name: UnitName): UnitRecord | undefined { this.#reads('units', name); return this.#inner.unit(name) }
  machine (id: MachineId): MachineRecord | undefined { this.#reads('machines', id); return this.#inner.machine(id) }
  relation (id: RelationId): RelationRecord | undefined { this.#reads('relations', String(id)); return this.#inner.relation(id) }
  settings (key: string): SettingsRecord | undefined { this.#reads('settings', key); return this.#inner.settings(key) }
  lease (application: ApplicationName): LeaseRecord | undefined { this.#reads('leases', application); return this.#inner.lease(application) }
  action (id: string): ActionRecord | undefined { this.#reads('actions', id); return this.#inner.action(id) }
  // Views read neither record by record: secrets are a whole part, controller leases not in views.
  controllerLease (name: string): ControllerLeaseRecord | undefined { return this.#inner.controllerLease(name) }
  secret (id: string): SecretRecord | undefined { return this.#inner.secret(id) }
}
