/**
 * The deployer of one machine agent, the same in the real agent and the simulator: it
 * starts a unit host (actors/unit/unit-host.ts) for every unit the model assigns to the
 * machine (principals and their subordinates), each under a supervisor that restarts it
 * with back-off when its actor fails, and forgets each once its unit has left the model.
 * All units of the machine share one store and one hook lock. Its statechart
 * (deployer-machine.ts) follows along for the inspector.
 */
import { createActor } from 'xstate'
import type { Clock } from '../../runtime/clock.ts'
import type { HookLock } from '../../runtime/hook-lock.ts'
import type { UnitName } from '../../runtime/ids.ts'
import type { ActorInspect } from '../../runtime/inspect-hook.ts'
import type { Logger } from '../../runtime/logger.ts'
import { readerOf } from '../../runtime/model/model-draft.ts'
import { Supervisor, type SupervisorPolicy, type Worker } from '../../runtime/supervisor.ts'
import type { UnitEmitted } from '../unit/unit-effects.ts'
import type { UnitEffects, UnitWorkspace } from '../unit/unit-host-effects.ts'
import { UnitHost, type UnitHostController } from '../unit/unit-host.ts'
import type { UnitStateStore } from '../unit/unit-state-store.ts'
import { deployerMachine, type DeployerActorRef } from './deployer-machine.ts'

export interface DeployerComponents {
  clock: Clock
  logger: Logger
}

export interface DeployerInit {
  machineId: string
  controller: UnitHostController
  effects: UnitEffects
  /** The machine's store of uniter states. */
  store: UnitStateStore
  hookLock: HookLock
  leaseDurationMs?: number
  updateStatusIntervalMs?: number
  /**
   * The identity of the machine's current boot (injected: the kernel's boot id, plus the
   * local provider's simulated reboots). A unit that last ran in another boot had its
   * machine rebooted: its first agent start runs `start` again. None: never rebooted.
   */
  bootId?: string
  /** A unit's hook asked for a reboot (`juju-reboot`); its actor has stopped. */
  onReboot?: (unit: UnitName, now: boolean) => void
  /** Back-off of a failing unit agent; the supervisor's defaults otherwise. */
  supervision?: SupervisorPolicy
  /** Inspection of the deployer and the unit actors. */
  inspect?: ActorInspect
  /** Every event a unit actor emits (the simulator's hook-order checker). */
  onUnitEvent?: (unit: UnitName, event: UnitEmitted) => void
  /**
   * A unit's actor ended `failed` (its state could not be saved, say) or threw; its
   * supervisor starts it again after the back-off.
   */
  onUnitFailed?: (unit: UnitName, reason: string, kind: 'failed' | 'error') => void
}

export class Deployer {
  /** The deployer's statechart, for the inspector. */
  readonly worker: DeployerActorRef
  readonly #c: DeployerComponents
  readonly #o: DeployerInit
  readonly #hosts = new Map<UnitName, UnitHost>()
  /** One supervisor per unit: a unit agent that fails is restarted with back-off. */
  readonly #supervisors = new Map<UnitName, Supervisor>()
  readonly #workspaces = new Map<UnitName, UnitWorkspace>()
  readonly #starting = new Set<UnitName>()
  readonly #unsubscribe: () => void
  #stopped = false

  constructor (components: DeployerComponents, init: DeployerInit) {
    this.#c = components
    this.#o = init
    const inspect = init.inspect?.('deployer', `deployer-${init.machineId}`)
    this.worker = createActor(deployerMachine, { clock: components.clock, input: { machineId: init.machineId }, ...(inspect === undefined ? {} : { inspect }) })
    this.worker.start()
    this.#unsubscribe = init.controller.onChange(() => { void this.#reconcile() })
    void this.#reconcile()
  }

  /** The unit hosts running now. */
  agents (): UnitHost[] {
    return [...this.#hosts.values()]
  }

  agent (unit: UnitName): UnitHost | undefined {
    return this.#hosts.get(unit)
  }

  units (): UnitName[] {
    return [...this.#hosts.keys()]
  }

  /** How many unit hosts run now (`units().length` without the copy). */
  get unitCount (): number {
    return this.#hosts.size
  }

  /** Stops every unit agent (SIGTERM: running hooks are killed and re-queued) and closes their workspaces. */
  async stop (): Promise<void> {
    this.#end()
    await Promise.all([...this.#supervisors.values()].map(async supervisor => { await supervisor.stop() }))
    this.#supervisors.clear()
    this.#hosts.clear()
    await Promise.all([...this.#workspaces.values()].map(async workspace => { await workspace.close() }))
    this.#workspaces.clear()
  }

  /**
   * kill -9 (the simulated process dies): every unit actor stops where it is, nothing
   * more is saved or sent; pending restarts die with the process's clock.
   */
  kill (): void {
    this.#end()
    for (const host of this.#hosts.values()) host.kill()
  }

  #end (): void {
    this.#stopped = true
    this.#unsubscribe()
    this.worker.send({ type: 'deployer.stop' })
  }

  /** Failures are logged (one per unit that cannot start); the next change of the model tries again. */
  async #reconcile (): Promise<void> {
    if (this.#stopped || !this.#hasWork()) return
    this.worker.send({ type: 'reconcile.begin' })
    try {
      await this.#reconcileOnce()
    } catch (error) {
      this.#c.logger.log('warning', `deployer: ${messageOf(error)}; retrying on the next change`)
    } finally {
      this.worker.send({ type: 'reconcile.end' })
    }
  }

  /**
   * Whether a change of the view concerns the deployer: a unit assigned here that has no
   * agent, or an agent whose unit left the model. Most changes (every hook's status and
   * settings) concern neither, and Juju's deployer only hears of its machine's units
   * changing (internal/worker/deployer/deployer.go watches the machine's units); the
   * statechart's reconcile then stands for real work, not for every commit.
   */
  #hasWork (): boolean {
    const reader = readerOf(this.#o.controller.model())
    const assigned = reader.machine(this.#o.machineId)?.units ?? []
    if (assigned.some(unit => !this.#supervisors.has(unit) && !this.#starting.has(unit))) return true
    for (const [unit, host] of this.#hosts) {
      if (reader.unit(unit) === undefined && !host.running) return true
    }
    return false
  }

  async #reconcileOnce (): Promise<void> {
    const { controller } = this.#o
    const reader = readerOf(controller.model())
    const assigned = reader.machine(this.#o.machineId)?.units ?? []
    for (const unit of assigned) {
      if (this.#stopped) return
      if (this.#supervisors.has(unit) || this.#starting.has(unit) || !UnitHost.canStart(controller, unit)) continue
      // One unit that cannot start (its socket will not bind, say) must not keep the units
      // after it, or the forgetting of units that left, waiting.
      try {
        await this.#startUnit(unit)
      } catch (error) {
        this.worker.send({ type: 'unit.failed', unit, reason: messageOf(error) })
        this.#c.logger.log('warning', `deployer: cannot start the agent of ${unit}: ${messageOf(error)}; retrying on the next change`)
      }
    }
    if (this.#stopped) return
    // A unit that left the model (its agent terminated and reported dead) is forgotten.
    for (const [unit, host] of this.#hosts) {
      if (reader.unit(unit) === undefined && !host.running) await this.#forget(unit)
    }
  }

  async #forget (unit: UnitName): Promise<void> {
    this.#hosts.delete(unit)
    const supervisor = this.#supervisors.get(unit)
    this.#supervisors.delete(unit)
    await supervisor?.stop()
    const workspace = this.#workspaces.get(unit)
    this.#workspaces.delete(unit)
    await workspace?.close()
    this.worker.send({ type: 'unit.forgotten', unit })
  }

  /** Opens the unit's workspace, then starts its host under a supervisor. */
  async #startUnit (unit: UnitName): Promise<void> {
    this.#starting.add(unit)
    try {
      const workspace = await this.#o.effects.openUnit(unit)
      const rebooted = this.#o.bootId === undefined ? false : await this.#o.store.recordBoot(unit, this.#o.bootId)
      if (this.#stopped) {
        await workspace.close()
        return
      }
      this.#workspaces.set(unit, workspace)
      this.#supervise(unit, workspace, rebooted)
      this.worker.send({ type: 'unit.started', unit })
    } finally {
      this.#starting.delete(unit)
    }
  }

  /**
   * Runs the unit's host under a supervisor: a host whose actor ends `failed` (its state
   * could not be persisted, say) or throws is started again after a back-off, and given
   * up (logged) when it keeps failing; one that ends because its unit is gone is not.
   */
  #supervise (unit: UnitName, workspace: UnitWorkspace, rebooted: boolean): void {
    const logger = this.#c.logger.child(unit)
    // Only the first start in this boot owes the charm its `start`; a supervisor restart does not.
    let owesStart = rebooted
    const child = {
      name: unit,
      start: (): Worker => {
        const host = this.#startHost(unit, workspace, logger, owesStart)
        owesStart = false
        this.#hosts.set(unit, host)
        const done = new Promise<void>((resolve, reject) => {
          host.actor.subscribe({
            complete: () => {
              const snapshot = host.actor.getSnapshot()
              if (snapshot.value !== 'failed') { resolve(); return }
              const reason = `unit agent "${unit}" failed: ${snapshot.context.failure ?? 'unknown reason'}`
              if (!this.#stopped) this.#o.onUnitFailed?.(unit, reason, 'failed')
              reject(new Error(reason))
            },
            error: error => {
              if (!this.#stopped) this.#o.onUnitFailed?.(unit, messageOf(error), 'error')
              reject(error instanceof Error ? error : new Error(String(error)))
            }
          })
        })
        return { done, stop: async () => { await host.stop() } }
      }
    }
    const supervisor = new Supervisor({ clock: this.#c.clock, logger }, { ...this.#o.supervision, name: `machine-${this.#o.machineId}/${unit}`, children: [child] })
    this.#supervisors.set(unit, supervisor)
    supervisor.done.catch((error: unknown) => {
      this.#c.logger.log('error', `deployer: gave up on ${unit}: ${messageOf(error)}`)
    })
    supervisor.start()
  }

  #startHost (unit: UnitName, workspace: UnitWorkspace, logger: Logger, rebooted: boolean): UnitHost {
    const { effects } = this.#o
    const inspect = this.#o.inspect?.('unit', `unit-${unit.replace('/', '-')}`)
    const onUnitEvent = this.#o.onUnitEvent
    return UnitHost.start({
      unit,
      controller: this.#o.controller,
      clock: this.#c.clock,
      logger,
      store: this.#o.store,
      hookLock: this.#o.hookLock,
      workspace,
      seed: effects.unitSeed(unit),
      newStateId: () => effects.newStateId(),
      requestPrefix: effects.requestPrefix(unit),
      ...(effects.flushLogs === undefined ? {} : { flushLogs: async () => await effects.flushLogs?.(unit) }),
      ...(this.#o.leaseDurationMs === undefined ? {} : { leaseDurationMs: this.#o.leaseDurationMs }),
      ...(this.#o.updateStatusIntervalMs === undefined ? {} : { updateStatusIntervalMs: this.#o.updateStatusIntervalMs }),
      ...(inspect === undefined ? {} : { inspect }),
      ...(rebooted ? { rebooted: true } : {}),
      onReboot: event => { if (!this.#stopped) this.#o.onReboot?.(unit, event.now) },
      ...(onUnitEvent === undefined ? {} : { onEmitted: (event: UnitEmitted) => { if (!this.#stopped) onUnitEvent(unit, event) } })
    })
  }
}

function messageOf (error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
