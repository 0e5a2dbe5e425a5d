/**
 * The machine role of cantripd: the shared machine agent (actors/machine/machine-agent.ts:
 * controller client, presence heartbeat, machiner, deployer) with the real world's
 * effects — unit hooks and tools as processes, charms fetched from the controllers'
 * stores, and the units' state in `<data dir>/machine` (LevelDB), from which they resume
 * after kill -9.
 *
 * A Worker for the agent's supervisor: `done` resolves when the machine is dead or
 * removed (the agent's work is over) and rejects when the machiner keeps failing.
 */
import { join } from 'node:path'
import { MachineAgent, type MachinePresenceInit } from '../../actors/machine/machine-agent.ts'
import type { MachinerOutcome } from '../../actors/machine/machiner.ts'
import type { Clock } from '../../runtime/clock.ts'
import type { ActorInspect } from '../../runtime/inspect-hook.ts'
import type { Logger } from '../../runtime/logger.ts'
import type { Worker } from '../../runtime/supervisor.ts'
import type { Transport } from '../../runtime/transport.ts'
import { ChildProcessRunner } from '../child-process-runner.ts'
import { LevelStorage } from '../level-storage.ts'
import { countReboot, machineBootId } from '../machine-boot.ts'
import { deployCharmArchive } from '../uniter/charm-fetch.ts'
import { machineStorage } from '../uniter/machine-storage.ts'
import { ProcessUnitEffects } from '../uniter/process-unit-effects.ts'

/** How a machine agent process ends for `juju-reboot`: its watchdog starts it again. */
export const machineRebootExitCode = 75

export interface MachineRoleOptions {
  machineId: string
  /** The model the machine belongs to (its change notices' topic); `transport` is already scoped to it. */
  model: string
  dataDir: string
  transport: Transport
  controllers: readonly string[]
  clock: Clock
  logger: Logger
  /** A fresh incarnation, above every one used before (presence and the machiner's request ids). */
  incarnation: () => number
  /** The machine's presence heartbeat; `false` when the process is a controller too (one peer, one presence). */
  presence: MachinePresenceInit | false
  /** The process is a controller too (cantripd --role both). */
  hostsController?: boolean
  /** Each new view of the model, with its revision. */
  onView: (revision: number) => void
  /** Timing a change's way to the agent (agent/write-stage-trace.ts); unset in a deployment. */
  onStage?: (stage: string, detail: number) => void
  /** Inspection of the unit and relation actors (`cantripd --inspect`). */
  inspect?: ActorInspect
  /** Ships the agent's log records so far, acknowledged (bounded): before a unit is marked dead. */
  flushLogs?: () => Promise<unknown>
}

export class MachineRole implements Worker {
  readonly done: Promise<void>
  readonly agent: MachineAgent
  readonly #storage: LevelStorage
  readonly #runner: ChildProcessRunner
  readonly #dataDir: string
  #stopping: Promise<void> | undefined

  private constructor (agent: MachineAgent, storage: LevelStorage, runner: ChildProcessRunner, dataDir: string) {
    this.agent = agent
    this.#storage = storage
    this.#runner = runner
    this.#dataDir = dataDir
    // A failed agent has stopped its parts; close the store too, so the supervisor's
    // restart finds it unlocked.
    this.done = agent.done.catch(async (error: unknown) => {
      await this.stop()
      throw error
    })
  }

  /** How the role ended by itself, once `done` resolved. */
  get outcome (): MachinerOutcome | undefined {
    return this.agent.outcome
  }

  /** The agent stopped for `juju-reboot`: its host restarts it (local provider: the process exits, its watchdog starts it again). */
  get rebootRequested (): boolean {
    return this.agent.rebootRequested
  }

  /**
   * What a reboot does to the machine besides stopping its agents: every process the
   * units started (hook process groups, with the workloads they left running) is killed,
   * and the next start of the agent counts as a new boot.
   */
  async reboot (): Promise<void> {
    await this.stop()
    this.#runner.killAllGroups()
    countReboot(this.#dataDir)
  }

  /** Resolves once the machine agent has its first view of the model. */
  static async start (options: MachineRoleOptions): Promise<MachineRole> {
    const { machineId, transport, clock, logger } = options
    const storage = await LevelStorage.open(join(options.dataDir, 'machine'))
    const runner = new ChildProcessRunner()
    const agent = MachineAgent.start({ transport, clock, logger, storage }, {
      machineId,
      bootId: machineBootId(options.dataDir),
      model: options.model,
      controllers: options.controllers,
      incarnation: options.incarnation,
      presence: options.presence,
      hostsController: options.hostsController === true,
      unitEffects: client => new ProcessUnitEffects({
        machineId,
        modelName: options.model,
        dataDir: options.dataDir,
        controller: client,
        processRunner: runner,
        fetchCharm: async (url, dir) => { await deployCharmArchive(client, url, dir) },
        logger,
        ...(options.flushLogs === undefined ? {} : { flushLogs: options.flushLogs })
      }),
      storageEffects: machineStorage(options.dataDir),
      onView: options.onView,
      ...(options.onStage === undefined ? {} : { onStage: options.onStage }),
      ...(options.inspect === undefined ? {} : { inspect: options.inspect })
    })
    await agent.ready()
    return new MachineRole(agent, storage, runner, options.dataDir)
  }

  async stop (): Promise<void> {
    this.#stopping ??= (async () => {
      await this.agent.stop()
      await this.#storage.close()
    })()
    await this.#stopping
  }
}
