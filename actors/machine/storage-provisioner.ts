/**
 * The machine agent's storage provisioner, the same in the real agent and the simulator:
 * for each storage instance of a unit on this machine that the model has not yet seen
 * attached, it asks the world to create it (the local provider makes a directory under the
 * machine's directory; the simulator has nothing to make) and tells the model where it is
 * with `storage-attached`, which lets the unit's `-storage-attached` hook run. Juju's
 * machine-scoped storage provisioner (internal/worker/storageprovisioner) does this for
 * rootfs filesystems and loop devices on the unit's machine.
 *
 * A failed provisioning is logged and tried again on the next change of the model.
 */
import type { UnitName } from '../../runtime/ids.ts'
import type { Logger } from '../../runtime/logger.ts'
import { CommandProposer } from '../../runtime/model/command-proposer.ts'
import { readerOf } from '../../runtime/model/model-draft.ts'
import type { ModelLink } from '../../runtime/model/model-link.ts'
import type { StorageRecord } from '../../runtime/model/model-types.ts'

export interface StorageProvisionerEffects {
  /** Makes `storage` exist on the machine for `unit`; resolves with where the unit finds it. */
  provisionStorage (unit: UnitName, storage: StorageRecord): Promise<string>
}

/** The simulator's (and any world without disks'): the instance is where the model says. */
export const modelLocationStorage: StorageProvisionerEffects = {
  provisionStorage: async (_unit, storage) => await Promise.resolve(storage.location)
}

export interface StorageProvisionerOptions {
  machineId: string
  controller: ModelLink
  effects: StorageProvisionerEffects
  logger: Logger
  /** Makes request ids unique across restarts of the agent. */
  incarnation: number
}

export class StorageProvisioner {
  readonly #o: StorageProvisionerOptions
  readonly #proposer: CommandProposer
  /** `unit storage-id` pairs being provisioned now, so a change of the model does not start them twice. */
  readonly #busy = new Set<string>()
  readonly #unsubscribe: () => void
  #stopped = false

  constructor (options: StorageProvisionerOptions) {
    this.#o = options
    this.#proposer = new CommandProposer({
      proposer: { kind: 'machine', id: options.machineId },
      requestPrefix: `machine-${options.machineId}/${options.incarnation}/storage`
    })
    this.#unsubscribe = options.controller.onChange(() => { this.#reconcile() })
    this.#reconcile()
  }

  stop (): void {
    this.#stopped = true
    this.#unsubscribe()
  }

  #reconcile (): void {
    if (this.#stopped) return
    const model = readerOf(this.#o.controller.model())
    const machine = model.machine(this.#o.machineId)
    for (const name of machine?.units ?? []) {
      const unit = model.unit(name)
      if (unit === undefined || unit.life !== 'alive') continue
      for (const storage of Object.values(unit.storage)) {
        if (storage.attached || storage.life !== 'alive') continue
        const key = `${name} ${storage.id}`
        if (this.#busy.has(key)) continue
        this.#busy.add(key)
        void this.#attach(name, storage).finally(() => { this.#busy.delete(key) })
      }
    }
  }

  async #attach (unit: UnitName, storage: StorageRecord): Promise<void> {
    try {
      const location = await this.#o.effects.provisionStorage(unit, storage)
      if (this.#stopped) return
      const result = await this.#o.controller.submit(this.#proposer.command({ type: 'storage-attached', unit, storageId: storage.id, location }))
      if (!result.ok) throw new Error(result.error)
    } catch (error) {
      if (this.#stopped) return
      this.#o.logger.log('warning', `cannot attach storage ${storage.id} to ${unit}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
}
