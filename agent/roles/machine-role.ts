/**
 * The machine role of cantripd: the machine's view of the model through a
 * ControllerClient over the mesh (refreshed on every change notice), the deployer's unit
 * agents with their hooks and tools, charms fetched from the controllers' stores, and the
 * machiner, which reports the agent started and marks the machine dead once the model
 * has emptied and killed it. Unit agents and their state live in `<data dir>/machine`
 * (LevelDB) and resume from it after kill -9.
 *
 * A Worker for the agent's supervisor: `done` resolves when the machine is dead or
 * removed (the agent's work is over) and rejects when the machiner fails.
 */
import { join } from 'node:path'
import { ControllerClient } from '../../actors/machine/controller-client.ts'
import { Machiner, type MachinerOutcome } from '../../actors/machine/machiner.ts'
import type { Clock } from '../../runtime/clock.ts'
import type { ActorInspect } from '../../runtime/inspect-hook.ts'
import type { Logger } from '../../runtime/logger.ts'
import type { Worker } from '../../runtime/supervisor.ts'
import type { Transport } from '../../runtime/transport.ts'
import { ChildProcessRunner } from '../child-process-runner.ts'
import { LevelStorage } from '../level-storage.ts'
import { deployCharmArchive } from '../uniter/charm-fetch.ts'
import { Deployer } from '../uniter/deployer.ts'

export interface MachineRoleOptions {
  machineId: string
  /** The model the machine belongs to (its change notices' topic); `transport` is already scoped to it. */
  model: string
  dataDir: string
  transport: Transport
  controllers: readonly string[]
  clock: Clock
  logger: Logger
  /** Unique per start of the agent process (request ids of the machiner). */
  incarnation: number
  /** Each new view of the model, with its revision. */
  onView: (revision: number) => void
  /** Inspection of the unit and relation actors (`cantripd --inspect`). */
  inspect?: ActorInspect
}

export class MachineRole implements Worker {
  readonly done: Promise<void>
  readonly client: ControllerClient
  readonly deployer: Deployer
  readonly machiner: Machiner
  readonly #storage: LevelStorage
  #stopping: Promise<void> | undefined

  private constructor (client: ControllerClient, deployer: Deployer, machiner: Machiner, storage: LevelStorage) {
    this.client = client
    this.deployer = deployer
    this.machiner = machiner
    this.#storage = storage
    // A failed machiner ends the whole role (the supervisor then starts a fresh one):
    // stop the rest first, so the restart finds the store unlocked.
    this.done = machiner.done.catch(async (error: unknown) => {
      await this.stop()
      throw error
    })
  }

  /** How the role ended by itself, once `done` resolved. */
  get outcome (): MachinerOutcome | undefined {
    return this.machiner.outcome
  }

  static async start (options: MachineRoleOptions): Promise<MachineRole> {
    const { machineId, transport, clock, logger } = options
    const client = new ControllerClient({ transport, clock, modelUuid: options.model, machine: machineId, controllers: options.controllers })
    client.start()
    let storage: LevelStorage
    try {
      await client.ready()
      storage = await LevelStorage.open(join(options.dataDir, 'machine'))
    } catch (error) {
      client.stop()
      throw error
    }
    const deployer = new Deployer({
      machineId,
      modelName: options.model,
      dataDir: options.dataDir,
      controller: client,
      storage,
      processRunner: new ChildProcessRunner(),
      fetchCharm: async (url, dir) => { await deployCharmArchive(client, url, dir) },
      logger,
      clock,
      ...(options.inspect === undefined ? {} : { inspect: options.inspect })
    })
    let lastRevision = -1
    const viewed = (): void => {
      const revision = client.model().revision
      if (revision === lastRevision) return
      lastRevision = revision
      options.onView(revision)
    }
    client.onChange(viewed)
    // The first view arrived before anyone listened (ready() waited for it): report it now,
    // or an agent whose model does not change again never says it has one.
    viewed()
    const machiner = Machiner.start({ machineId, controller: client, incarnation: options.incarnation })
    return new MachineRole(client, deployer, machiner, storage)
  }

  async stop (): Promise<void> {
    this.#stopping ??= (async () => {
      await this.machiner.stop()
      await this.deployer.stop()
      this.client.stop()
      await this.#storage.close()
    })()
    await this.#stopping
  }
}
