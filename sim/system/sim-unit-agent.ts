/**
 * One unit's agent in the simulated machine agent, the counterpart of agent/uniter/
 * unit-agent.ts (sim/ may not import agent/): the same unit actor, provided with
 * simulated effects — local state in the machine's SimStorage through the same store,
 * the machine-wide hook lock, hooks of the unit's scripted charm (SimUnitHooks), charms
 * that deploy at once — and wired to the controllers the same way: remote state
 * projected from the machine's view of the model (refreshed on every change, by the
 * deployer, and on a timer, since leadership belief moves with time alone), what the
 * actor emits sent back as the same model commands in order, and the application's
 * leadership lease claimed now and every half lease, as Juju's tracker does.
 */
import { commandForEmitted } from '../../actors/unit/emitted-commands.ts'
import type { LocalState } from '../../actors/unit/local-state.ts'
import type { ActionOutcome, CommandOutcome, DeployOutcome } from '../../actors/unit/operation.ts'
import type { UnitEmitted } from '../../actors/unit/unit-effects.ts'
import { createUnitActor, type UnitActorRef } from '../../actors/unit/unit-machine.ts'
import type { UnitPorts } from '../../actors/unit/unit-ports.ts'
import type { UnitStateStore } from '../../actors/unit/unit-state-store.ts'
import type { Clock, TimerHandle } from '../../runtime/clock.ts'
import { simInspectOption } from '../inspect/sim-inspect-log.ts'
import type { HookLock } from '../../runtime/hook-lock.ts'
import type { ModelCommand } from '../../runtime/model/model-types.ts'
import { remoteStateFor } from '../../runtime/model/remote-state-view.ts'
import { plainEqual } from '../../runtime/plain-equal.ts'
import type { RemoteState } from '../../runtime/unit-remote-state.ts'
import { hashString32 } from '../../runtime/random.ts'
import type { HookController, SimUnitHooks } from './sim-unit-hooks.ts'

export interface SimUnitAgentOptions {
  unit: string
  seed: number
  controller: HookController
  clock: Clock
  store: UnitStateStore
  hookLock: HookLock
  hooks: SimUnitHooks
  leaseDurationMs: number
  /** Makes request ids unique across runs of the machine agent. */
  requestPrefix: string
  onEmitted: (event: UnitEmitted) => void
  /** The actor threw (an invariant: never). */
  onError: (error: unknown) => void
  /** The actor ended by itself: `failed` (its state could not be saved) or done (unit gone). */
  onDone: (failed: boolean) => void
}

export class SimUnitAgent {
  readonly unit: string
  readonly actor: UnitActorRef
  readonly #o: SimUnitAgentOptions
  #leaseTimer: TimerHandle | undefined
  #refreshTimer: TimerHandle | undefined
  #stopped = false
  /** The remote state last sent to the actor by a refresh. */
  #lastRemote: RemoteState | undefined
  #requests = 0
  #outbox: Promise<void> = Promise.resolve()

  private constructor (options: SimUnitAgentOptions, actor: UnitActorRef) {
    this.unit = options.unit
    this.#o = options
    this.actor = actor
  }

  /** Undefined while the unit (or its application) is not in the agent's view yet. */
  static start (options: SimUnitAgentOptions): SimUnitAgent | undefined {
    const remote = remoteStateFor(options.controller.model(), options.unit, options.controller.now())
    if (remote === undefined) return undefined
    const { store, hooks, hookLock } = options
    const ports: UnitPorts = {
      loadLocalState: async unit => await store.load(unit),
      persistLocalState: async ({ unit, local }) => { await store.save(unit, local) },
      acquireHookLock: (unit, acquired) => hookLock.acquire(unit, acquired),
      runHook: async ({ unit, hook, local }, signal) => await hooks.run(unit, hook, local, signal),
      // A charm named by a URL is the scenario's script: there is nothing to fetch.
      deployCharm: async (): Promise<DeployOutcome> => ({ kind: 'deployed' }),
      runAction: async (): Promise<ActionOutcome> => ({ status: 'completed', results: {} }),
      runCommand: async (): Promise<CommandOutcome> => ({ exitCode: 0, stdout: '', stderr: '' })
    }
    const actor = createUnitActor(ports, { clock: options.clock, input: { unit: options.unit, remote, seed: hashString32(options.unit, options.seed) }, ...simInspectOption(hookLock.name, 'unit', `unit-${options.unit.replace('/', '-')}`, () => options.clock.now()) })
    const agent = new SimUnitAgent(options, actor)
    actor.on('*', event => { agent.#onEmitted(event as UnitEmitted) })
    actor.subscribe({
      complete: () => {
        agent.#dispose()
        options.onDone(actor.getSnapshot().value === 'failed')
      },
      error: error => {
        agent.#dispose()
        options.onError(error)
      }
    })
    actor.start()
    agent.#claimLeadership()
    agent.#scheduleRefresh()
    return agent
  }

  get running (): boolean {
    return this.actor.getSnapshot().status === 'active'
  }

  /** The uniter region's state: `idle`, `hookError`, `executing`… or the final state. */
  get state (): string {
    const value = this.actor.getSnapshot().value
    if (typeof value === 'string') return value
    const uniter = (value as { running?: { uniter?: unknown } }).running?.uniter
    if (uniter === undefined) return Object.keys(value)[0] ?? 'unknown'
    return typeof uniter === 'string' ? uniter : Object.keys(uniter as object)[0] ?? 'unknown'
  }

  get local (): LocalState | undefined {
    return this.actor.getSnapshot().context.local
  }

  /** The model changed: tell the actor the unit's remote state. */
  /** As the real agent's: an unchanged remote state is dropped unless `always` (periodic and leadership refreshes). */
  refresh (always = true): void {
    if (this.#stopped) return
    const remote = remoteStateFor(this.#o.controller.model(), this.unit, this.#o.controller.now())
    if (remote === undefined) return
    if (!always && this.#lastRemote !== undefined && plainEqual(remote, this.#lastRemote)) return
    this.#lastRemote = remote
    this.actor.send({ type: 'remote.changed', remote })
  }

  /** kill -9: the actor stops where it is; nothing more is saved or sent. */
  kill (): void {
    this.#dispose()
    this.actor.stop()
  }

  /** SIGTERM: the running hook is killed and re-queued. */
  stop (): void {
    if (this.#stopped) return
    this.#dispose()
    this.actor.send({ type: 'agent.stop' })
  }

  #dispose (): void {
    this.#stopped = true
    if (this.#leaseTimer !== undefined) this.#o.clock.clearTimeout(this.#leaseTimer)
    if (this.#refreshTimer !== undefined) this.#o.clock.clearTimeout(this.#refreshTimer)
  }

  #scheduleRefresh (): void {
    const every = Math.max(1_000, Math.floor(this.#o.leaseDurationMs / 6))
    this.#refreshTimer = this.#o.clock.setTimeout(() => {
      this.refresh()
      if (!this.#stopped) this.#scheduleRefresh()
    }, every)
  }

  #claimLeadership (): void {
    if (this.#stopped) return
    const application = this.unit.slice(0, this.unit.lastIndexOf('/'))
    const durationMs = this.#o.leaseDurationMs
    void this.#send({ type: 'claim-leadership', application, unit: this.unit, now: Math.floor(this.#o.clock.now()), durationMs })
      .finally(() => {
        this.refresh()
        if (!this.#stopped) this.#leaseTimer = this.#o.clock.setTimeout(() => { this.#claimLeadership() }, Math.floor(durationMs / 2))
      })
  }

  /** The emitted events → model commands mapping of the real unit agent. */
  #onEmitted (event: UnitEmitted): void {
    this.#o.onEmitted(event)
    const body = commandForEmitted(this.unit, event, Math.floor(this.#o.clock.now()))
    if (body !== undefined) this.#queue(body)
  }

  #queue (body: Record<string, unknown>): void {
    this.#outbox = this.#outbox.then(async () => { await this.#send(body) })
  }

  /** Refusals and lost commands are the real agent's too: it logs them and goes on. */
  async #send (body: Record<string, unknown>): Promise<void> {
    const command = { ...body, requestId: `${this.#o.requestPrefix}/${++this.#requests}`, proposer: { kind: 'unit', name: this.unit } } as unknown as ModelCommand
    try {
      await this.#o.controller.submit(command)
    } catch {
      // The client gave up (controllers unreachable); the actor's next change retries what matters.
    }
  }
}
