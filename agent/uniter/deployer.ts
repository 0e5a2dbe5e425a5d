/**
 * The deployer of one machine agent: starts a UnitAgent for every unit the model assigns
 * to the machine (principals and their subordinates) and forgets each once its unit has
 * left the model. All units of the machine share one store and one hook lock.
 */
import { join } from 'node:path'
import { HookLock } from '../../runtime/hook-lock.ts'
import type { ActorInspect } from '../../runtime/inspect-hook.ts'
import type { Logger } from '../../runtime/logger.ts'
import { readerOf } from '../../runtime/model/model-draft.ts'
import type { ProcessRunner } from '../../runtime/process-runner.ts'
import type { Storage } from '../../runtime/storage.ts'
import type { Clock } from '../../runtime/clock.ts'
import { Supervisor, type Worker } from '../../runtime/supervisor.ts'
import { startHookToolService } from './hook-tool-service.ts'
import { UnitAgent, type HookToolService, type UnitAgentController } from './unit-agent.ts'
import { createActor } from 'xstate'
import { deployerMachine, type DeployerActorRef } from '../../actors/machine/deployer-machine.ts'

export interface DeployerOptions {
  machineId: string
  /** The model's name, for the hooks' JUJU_MODEL_NAME; "default" when not given. */
  modelName?: string
  /** Unit agents live in `<dataDir>/agents/unit-<app>-<n>`. */
  dataDir: string
  controller: UnitAgentController
  storage: Storage
  processRunner: ProcessRunner
  /**
   * One tool service per unit (its own socket and tools directory); by default the real
   * one (the C client and the unit's socket). The deployer closes each with its unit.
   */
  toolsFor?: (unit: string, agentDir: string) => Promise<HookToolService>
  fetchCharm: (url: string, dir: string) => Promise<void>
  logger: Logger
  clock: Clock
  leaseDurationMs?: number
  hookTimeoutMs?: number
  agentPath?: string
  /** Inspection of the unit actors. */
  inspect?: ActorInspect
}

export class Deployer {
  readonly #o: DeployerOptions
  readonly #agents = new Map<string, UnitAgent>()
  /** One supervisor per unit: a unit agent that fails (its actor ends `failed`) is restarted with back-off. */
  readonly #supervisors = new Map<string, Supervisor>()
  readonly #tools = new Map<string, HookToolService>()
  readonly #starting = new Set<string>()
  readonly #lock = new HookLock('machine')
  readonly #unsubscribe: () => void
  #stopped = false
  /** The deployer's statechart (actors/machine/deployer-machine.ts), for the inspector. */
  readonly worker: DeployerActorRef

  constructor (options: DeployerOptions) {
    this.#o = options
    const inspect = options.inspect?.('deployer', `deployer-${options.machineId}`)
    this.worker = createActor(deployerMachine, { clock: options.clock, input: { machineId: options.machineId }, ...(inspect === undefined ? {} : { inspect }) })
    this.worker.start()
    this.#unsubscribe = options.controller.onChange(() => { void this.#reconcile() })
    void this.#reconcile()
  }

  agents (): UnitAgent[] {
    return [...this.#agents.values()]
  }

  agent (unit: string): UnitAgent | undefined {
    return this.#agents.get(unit)
  }

  /** Stops every unit agent (SIGTERM semantics: running hooks are killed and re-queued). */
  async stop (): Promise<void> {
    this.#stopped = true
    this.#unsubscribe()
    this.worker.send({ type: 'deployer.stop' })
    await Promise.all([...this.#supervisors.values()].map(async supervisor => { await supervisor.stop() }))
    this.#supervisors.clear()
    this.#agents.clear()
    await Promise.all([...this.#tools.values()].map(async tools => { await tools.close?.() }))
    this.#tools.clear()
  }

  /** Failures are logged (one per unit that cannot start); the next change of the model tries again. */
  async #reconcile (): Promise<void> {
    this.worker.send({ type: 'reconcile.begin' })
    try {
      await this.#reconcileOnce()
    } catch (error) {
      this.#o.logger.log('warning', `deployer: ${error instanceof Error ? error.message : String(error)}; retrying on the next change`)
    } finally {
      this.worker.send({ type: 'reconcile.end' })
    }
  }

  async #reconcileOnce (): Promise<void> {
    if (this.#stopped) return
    const reader = readerOf(this.#o.controller.model())
    const assigned = reader.machine(this.#o.machineId)?.units ?? []
    for (const unit of assigned) {
      if (this.#stopped) return
      if (this.#supervisors.has(unit) || this.#starting.has(unit) || reader.unit(unit) === undefined) continue
      // One unit that cannot start (its socket will not bind, say) must not keep the units
      // after it, or the forgetting of units that left, waiting.
      try {
        await this.#startUnit(unit)
      } catch (error) {
        this.worker.send({ type: 'unit.failed', unit, reason: error instanceof Error ? error.message : String(error) })
        this.#o.logger.log('warning', `deployer: cannot start the agent of ${unit}: ${error instanceof Error ? error.message : String(error)}; retrying on the next change`)
      }
    }
    if (this.#stopped) return
    // A unit that left the model (its agent terminated and reported dead) is forgotten.
    for (const [unit, agent] of this.#agents) {
      if (reader.unit(unit) === undefined && agent.actor.getSnapshot().status !== 'active') {
        this.#agents.delete(unit)
        const supervisor = this.#supervisors.get(unit)
        this.#supervisors.delete(unit)
        await supervisor?.stop()
        await this.#closeTools(unit)
        this.worker.send({ type: 'unit.forgotten', unit })
      }
    }
  }

  /** Starts the unit's hook tool service, then its agent under a supervisor. */
  async #startUnit (unit: string): Promise<void> {
    this.#starting.add(unit)
    try {
      const agentDir = join(this.#o.dataDir, 'agents', `unit-${unit.replace('/', '-')}`)
      const tools = await (this.#o.toolsFor ?? (async (_unit, dir) => await startHookToolService(dir, this.#o.logger.child(unit))))(unit, agentDir)
      this.#tools.set(unit, tools)
      if (this.#stopped) {
        await this.#closeTools(unit)
        return
      }
      this.#supervise(unit, () => UnitAgent.start({
        unit,
        machineId: this.#o.machineId,
        ...(this.#o.modelName === undefined ? {} : { modelName: this.#o.modelName }),
        agentDir,
        controller: this.#o.controller,
        storage: this.#o.storage,
        hookLock: this.#lock,
        processRunner: this.#o.processRunner,
        tools,
        logger: this.#o.logger.child(unit),
        clock: this.#o.clock,
        fetchCharm: this.#o.fetchCharm,
        ...(this.#o.leaseDurationMs === undefined ? {} : { leaseDurationMs: this.#o.leaseDurationMs }),
        ...(this.#o.hookTimeoutMs === undefined ? {} : { hookTimeoutMs: this.#o.hookTimeoutMs }),
        ...(this.#o.agentPath === undefined ? {} : { agentPath: this.#o.agentPath }),
        ...(this.#o.inspect === undefined ? {} : { inspect: this.#o.inspect })
      }))
      this.worker.send({ type: 'unit.started', unit })
    } finally {
      this.#starting.delete(unit)
    }
  }

  /**
   * Runs the unit's agent under a supervisor: an agent whose actor ends `failed` (its
   * state could not be persisted, say) is started again after a back-off, and given up
   * (logged) when it keeps failing; one that terminates because its unit is gone is not.
   */
  #supervise (unit: string, start: () => UnitAgent): void {
    const child = {
      name: unit,
      start: (): Worker => {
        const agent = start()
        this.#agents.set(unit, agent)
        const done = new Promise<void>((resolve, reject) => {
          agent.actor.subscribe({
            complete: () => {
              const snapshot = agent.actor.getSnapshot()
              if (snapshot.value === 'failed') reject(new Error(`unit agent "${unit}" failed: ${snapshot.context.failure ?? 'unknown reason'}`))
              else resolve()
            },
            error: error => { reject(error instanceof Error ? error : new Error(String(error))) }
          })
        })
        return { done, stop: async () => { await agent.stop() } }
      }
    }
    const supervisor = new Supervisor({ clock: this.#o.clock, logger: this.#o.logger.child(unit) }, { name: `machine-${this.#o.machineId}/${unit}`, children: [child] })
    this.#supervisors.set(unit, supervisor)
    supervisor.done.catch((error: unknown) => {
      this.#o.logger.log('error', `deployer: gave up on ${unit}: ${error instanceof Error ? error.message : String(error)}`)
    })
    supervisor.start()
  }

  async #closeTools (unit: string): Promise<void> {
    const tools = this.#tools.get(unit)
    this.#tools.delete(unit)
    await tools?.close?.()
  }
}
