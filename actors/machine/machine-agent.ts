/**
 * A machine agent, the same in cantripd's machine role and in the simulator: the
 * machine's view of the model through a ControllerClient (refreshed on every change
 * notice), its presence heartbeat on the model's presence topic, and — once its view
 * shows the machine provisioned, not before — the machiner (which reports the agent started and marks
 * the machine dead once the model has emptied and killed it) and the deployer (one unit
 * host per unit assigned to the machine, all sharing the machine's store of uniter state
 * and its machine-wide hook lock). The world supplies the transport, clock, logger and
 * storage and the units' effects; the simulator also its process's crash and pause.
 *
 * A Worker for the agent's supervisor: `done` resolves when the machine is dead or
 * removed (`outcome`; the agent's work is over) or the agent was stopped, and rejects
 * when the machiner keeps failing or the controllers refuse who this agent is.
 */
import type { Clock } from '../../runtime/clock.ts'
import { HookLock } from '../../runtime/hook-lock.ts'
import { readerOf } from '../../runtime/model/model-draft.ts'
import type { ActorInspect } from '../../runtime/inspect-hook.ts'
import type { Logger } from '../../runtime/logger.ts'
import { PresenceAgent, type PresenceAgentInit } from '../../runtime/presence/presence-agent.ts'
import type { Storage } from '../../runtime/storage.ts'
import { Supervisor, type SupervisorPolicy, type Worker } from '../../runtime/supervisor.ts'
import type { Transport } from '../../runtime/transport.ts'
import type { UnitEffects } from '../unit/unit-host-effects.ts'
import { createUnitStateStore } from '../unit/unit-state-store.ts'
import { ControllerClient, type ControllerClientOptions } from './controller-client.ts'
import { Deployer, type DeployerInit } from './deployer.ts'
import { Machiner, type MachinerOutcome } from './machiner.ts'
import { modelLocationStorage, StorageProvisioner, type StorageProvisionerEffects } from './storage-provisioner.ts'

export interface MachineAgentComponents {
  /** Scoped to the agent's model (its request protocols). */
  transport: Transport
  clock: Clock
  logger: Logger
  /** The machine's store: the uniter state of all its units, resumed after kill -9. */
  storage: Storage
}

/** Presence heartbeat settings; the timings default to the limits'. */
export type MachinePresenceInit = Pick<PresenceAgentInit, 'heartbeatIntervalMs' | 'suspectAfterMs' | 'failedAfterMs' | 'version'>

export interface MachineAgentInit {
  machineId: string
  /** The model the machine belongs to: its change notices' and presence topics. */
  model: string
  /** The controllers' peer ids; read on every request, so a shared array may grow (enable-ha). */
  controllers: readonly string[]
  /**
   * A fresh incarnation, above every one this machine's agent used before: one for the
   * presence heartbeat of each start, one for each start of the machiner (its request ids).
   */
  incarnation: () => number
  /** The units' effects, over the agent's controller link (hook tools ask it, charms come from it). */
  unitEffects: (client: ControllerClient) => UnitEffects
  /**
   * The machine's presence heartbeat; `false` when the process already speaks for itself
   * as a controller (cantripd --role both), since one peer has one presence.
   */
  presence: MachinePresenceInit | false
  /** The process is a controller too (cantripd --role both): the machiner reports it (MachinerOptions.hostsController). */
  hostsController?: boolean
  /** Creates the units' storage on the machine; the model's locations when absent (the simulator). */
  storageEffects?: StorageProvisionerEffects
  leaseDurationMs?: number
  /** Back-off of a failing machiner; the supervisor's defaults otherwise. */
  supervision?: SupervisorPolicy
  inspect?: ActorInspect
  /** Each newer revision of the machine's view of the model (its content changed or not). */
  onView?: (revision: number) => void
  /** Timing a change's way to the agent (ControllerClientOptions.onStage). */
  onStage?: ControllerClientOptions['onStage']
  /** The identity of the machine's current boot (see DeployerInit.bootId). */
  bootId?: string
  onUnitEvent?: DeployerInit['onUnitEvent']
  onUnitFailed?: DeployerInit['onUnitFailed']
}

export class MachineAgent implements Worker {
  readonly done: Promise<void>
  readonly machineId: string
  readonly client: ControllerClient
  /** Undefined when the process speaks for itself as a controller (`presence: false`). */
  readonly presence: PresenceAgent | undefined
  readonly hookLock: HookLock
  readonly #c: MachineAgentComponents
  readonly #o: MachineAgentInit
  readonly #machiners: Supervisor
  #machiner: Machiner | undefined
  #deployer: Deployer | undefined
  #storage: StorageProvisioner | undefined
  #outcome: MachinerOutcome | undefined
  #rebootRequested = false
  #ended = false
  #stopping: Promise<void> | undefined
  #resolve!: () => void
  #reject!: (error: unknown) => void

  private constructor (components: MachineAgentComponents, init: MachineAgentInit) {
    this.#c = components
    this.#o = init
    this.machineId = init.machineId
    this.hookLock = new HookLock(`machine-${init.machineId}`)
    const { transport, clock } = components
    this.client = new ControllerClient({
      transport, clock, modelUuid: init.model, machine: init.machineId, controllers: init.controllers, ...(init.onStage === undefined ? {} : { onStage: init.onStage })
    })
    this.presence = init.presence === false
      ? undefined
      : new PresenceAgent({ transport, clock }, {
        modelUuid: init.model, role: 'machine', incarnation: init.incarnation(), ...init.presence, controllers: () => new Set(init.controllers)
      })
    this.#machiners = new Supervisor({ clock, logger: components.logger.child('machiner') }, {
      ...init.supervision,
      name: `machine-${init.machineId}`,
      children: [{ name: 'machiner', start: () => this.#startMachiner() }]
    })
    this.done = new Promise<void>((resolve, reject) => { this.#resolve = resolve; this.#reject = reject })
    this.done.catch(() => {})
  }

  /** Starts the controller link and the heartbeat now, the machiner and the deployer once the view shows the machine provisioned. */
  static start (components: MachineAgentComponents, init: MachineAgentInit): MachineAgent {
    const agent = new MachineAgent(components, init)
    agent.client.start()
    agent.presence?.start()
    void agent.client.ready().then(() => { agent.#beginOnceProvisioned() })
    return agent
  }

  /** Resolves once the first view of the model has arrived (the deployer starts once the machine is provisioned). */
  async ready (): Promise<void> {
    await this.client.ready()
  }

  /** How the agent ended by itself, once `done` resolved. */
  get outcome (): MachinerOutcome | undefined {
    return this.#outcome
  }

  /** Undefined until the view shows the machine provisioned. */
  get deployer (): Deployer | undefined {
    return this.#deployer
  }

  /**
   * A hook asked for the machine to reboot (`juju-reboot`) and the agent has stopped for
   * it (`done` resolved): its host restarts the agent as a rebooted machine.
   */
  get rebootRequested (): boolean {
    return this.#rebootRequested
  }

  get machiner (): Machiner | undefined {
    return this.#machiner
  }

  /** Orderly stop: the machiner, then every unit agent (SIGTERM: running hooks are re-queued), then the link; the heartbeat says goodbye. */
  async stop (): Promise<void> {
    await this.#shutdown()
    this.#resolve()
  }

  #shutdown (): Promise<void> {
    this.#stopping ??= (async () => {
      this.#ended = true
      await this.#machiners.stop()
      this.#storage?.stop()
      await this.#deployer?.stop()
      this.client.stop()
      await this.presence?.leave()
    })()
    return this.#stopping
  }

  /** kill -9 (the simulated process dies): everything stops where it is; nothing more is saved or sent. */
  kill (): void {
    this.#ended = true
    this.#storage?.stop()
    this.#deployer?.kill()
    void this.#machiners.stop()
    this.client.stop()
    this.presence?.stop()
  }

  /**
   * Juju's controllers refuse a machine agent's login until its machine is provisioned
   * (apiserver's CheckProvisioned: the instance recorded), so no unit runs on a machine
   * whose instance status still says pending. A provider may start the agent before the
   * provisioner records the instance it started (the local provider records it after its
   * start check), so the agent holds its workers until its view shows the instance.
   */
  #beginOnceProvisioned (): void {
    if (this.#provisioned()) {
      this.#begin()
      return
    }
    this.#c.logger.log('info', `machine ${this.machineId} is not provisioned yet; waiting for its instance to be recorded`)
    const unsubscribe = this.client.onChange(() => {
      if (!this.#ended && !this.#provisioned()) return
      unsubscribe()
      this.#begin()
    })
  }

  /**
   * Not provisioned: a provisioner has taken the machine (its token recorded) and has not
   * recorded the instance yet, as Juju's nonce without instance data. A machine no
   * provisioner starts (the bootstrap machine, a manual host, a simulated fixture's) or
   * one not in the view yet is the agent's to run at once.
   */
  #provisioned (): boolean {
    const machine = readerOf(this.client.model()).machine(this.machineId)
    return machine === undefined || machine.provisioning === null || machine.instanceId !== null
  }

  #begin (): void {
    if (this.#ended) return
    let lastRevision = -1
    const viewed = (): void => {
      const revision = this.client.model().revision
      if (revision === lastRevision) return
      lastRevision = revision
      this.#o.onView?.(revision)
    }
    this.client.onRevision(viewed)
    // The first view arrived before anyone listened (ready() waited for it): report it now,
    // or an agent whose model does not change again never says it has one.
    viewed()
    this.#machiners.start()
    // A machiner that keeps failing, or is refused for good, ends the agent.
    this.#machiners.done.catch((error: unknown) => { void this.#fail(error) })
    if (this.#ended) return
    const init = this.#o
    this.#storage = new StorageProvisioner({
      machineId: init.machineId,
      controller: this.client,
      effects: init.storageEffects ?? modelLocationStorage,
      logger: this.#c.logger.child('storageprovisioner'),
      incarnation: init.incarnation()
    })
    this.#deployer = new Deployer({ clock: this.#c.clock, logger: this.#c.logger }, {
      machineId: init.machineId,
      controller: this.client,
      effects: init.unitEffects(this.client),
      store: createUnitStateStore(this.#c.storage),
      hookLock: this.hookLock,
      ...(init.leaseDurationMs === undefined ? {} : { leaseDurationMs: init.leaseDurationMs }),
      ...(init.inspect === undefined ? {} : { inspect: init.inspect }),
      ...(init.bootId === undefined ? {} : { bootId: init.bootId }),
      onReboot: (unit, now) => { this.#reboot(unit, now) },
      ...(init.onUnitEvent === undefined ? {} : { onUnitEvent: init.onUnitEvent }),
      ...(init.onUnitFailed === undefined ? {} : { onUnitFailed: init.onUnitFailed })
    })
  }

  /** One start of the machiner; when it ends by itself (the machine is dead or gone) the agent's work is over. */
  #startMachiner (): Worker {
    const machiner = Machiner.start({ machineId: this.machineId, controller: this.client, incarnation: this.#o.incarnation(), hostsController: this.#o.hostsController === true })
    this.#machiner = machiner
    void machiner.done.then(() => {
      if (machiner.outcome === undefined || this.#ended) return
      this.#outcome = machiner.outcome
      this.#ended = true
      this.#resolve()
    }, () => {})
    return machiner
  }

  /**
   * `juju-reboot` from one of the units: as Juju's reboot worker, take the machine lock
   * (a hook of another unit finishes first), then stop every unit agent and end.
   */
  #reboot (unit: string, now: boolean): void {
    if (this.#rebootRequested || this.#ended) return
    this.#rebootRequested = true
    this.#c.logger.log('info', `${unit} requested a reboot${now ? ' (--now)' : ''}; stopping the machine's agents`)
    // Held while the units stop, so no other hook starts; the grant may come at once.
    let release = (): void => {}
    release = this.hookLock.acquire(`reboot-${this.machineId}`, () => {
      void Promise.resolve().then(async () => { await this.#shutdown() }).then(() => { release(); this.#resolve() }, (error: unknown) => { release(); this.#reject(error) })
    })
  }

  async #fail (error: unknown): Promise<void> {
    await this.#shutdown().catch(() => {})
    this.#reject(error)
  }
}
