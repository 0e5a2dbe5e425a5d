/**
 * One unit's host, the same in the real agent and the simulator: the unit actor
 * (unit-machine.ts) given its ports — local state in the machine's store, the
 * machine-wide hook lock, and the world's effects (unit-host-effects.ts) — and wired to
 * the controllers the way Juju's uniter is. The remote state it watches is projected from
 * the machine's view of the model, on every change of the view (an unchanged projection
 * is dropped) and on a timer, since leadership belief moves with time alone; what the
 * actor emits (enter scope, clear resolved, action results, status, …) goes back as model
 * commands, one after another in the order emitted; and the unit claims its
 * application's leadership lease as Juju's leadership tracker does: the leader extends it
 * every half lease, any other unit claims only once the view shows the lease released
 * (leadership-claim-schedule.ts).
 */
import { applicationOf, type UnitName } from '../../runtime/ids.ts'
import type { Clock, TimerHandle } from '../../runtime/clock.ts'
import type { HookLock } from '../../runtime/hook-lock.ts'
import type { InspectObserver } from '../../runtime/inspect-hook.ts'
import { limits } from '../../runtime/limits.ts'
import type { Logger } from '../../runtime/logger.ts'
import { CommandProposer, type ModelCommandBody } from '../../runtime/model/command-proposer.ts'
import type { ModelLink } from '../../runtime/model/model-link.ts'
import { modelConfigSettings } from '../../runtime/model/model-config.ts'
import type { LeaseRecord, ModelContext } from '../../runtime/model/model-types.ts'
import { remoteStateFor } from '../../runtime/model/remote-state-view.ts'
import { tableGet } from '../../runtime/model/table.ts'
import { plainEqual } from '../../runtime/plain-equal.ts'
import type { RemoteState } from '../../runtime/unit-remote-state.ts'
import { commandForEmitted } from './emitted-commands.ts'
import { hookName } from './hook-info.ts'
import { planClaim, releaseSeen } from './leadership-claim-schedule.ts'
import { initialLocalState, type LocalState } from './local-state.ts'
import type { UnitEmitted } from './unit-effects.ts'
import type { UnitWorkspace } from './unit-host-effects.ts'
import { createUnitActor, type UnitActorRef, type UnitConfig } from './unit-machine.ts'
import type { UnitPorts } from './unit-ports.ts'
import type { UnitStateStore } from './unit-state-store.ts'

/** The machine's link to the controllers, as a unit host uses it (a ControllerClient). */
export type UnitHostController = ModelLink

export interface UnitHostOptions {
  unit: UnitName
  controller: UnitHostController
  clock: Clock
  logger: Logger
  /** The machine's store (the uniter state of all its units). */
  store: UnitStateStore
  hookLock: HookLock
  workspace: UnitWorkspace
  seed: number
  newStateId: () => string
  requestPrefix: string
  /** Leadership lease claims; default limits.leadershipLeaseDurationMsDefault. */
  leaseDurationMs?: number
  /** update-status-hook-interval while the model does not set it (default: Juju's 5 min). */
  updateStatusIntervalMs?: number
  /** The machine rebooted since this unit's agent last ran (Juju's reboot resolver: `start` once). */
  rebooted?: boolean
  /** A hook asked for the machine to reboot (`juju-reboot`); the unit's actor has stopped. */
  onReboot?: (event: Extract<UnitEmitted, { type: 'machine.reboot' }>) => void
  /** The inspector's observer of the unit actor and its relation actors. */
  inspect?: InspectObserver
  /** Every event the actor emits, before it becomes a command (the simulator's hook-order checker). */
  onEmitted?: (event: UnitEmitted) => void
  /** The unit's last log records shipped and kept (bounded by the world): awaited before the unit is marked dead. */
  flushLogs?: () => Promise<unknown>
}

export class UnitHost {
  readonly unit: UnitName
  readonly actor: UnitActorRef
  readonly #o: UnitHostOptions
  readonly #proposer: CommandProposer
  #unsubscribe: () => void = () => {}
  #leaseTimer: TimerHandle | undefined
  #refreshTimer: TimerHandle | undefined
  #stopped = false
  /** The remote state last sent to the actor by a refresh. */
  #lastRemote: RemoteState | undefined
  /** The model configuration last sent to the actor. */
  #lastConfig: UnitConfig | undefined
  /** The model's settings it was derived from. */
  #configSource: ModelContext['config'] | undefined
  /** Emitted effects still being sent to the controller, in order. */
  #outbox: Promise<void> = Promise.resolve()
  /** A command was refused or lost since the remote state was last sent: the periodic refresh sends it again. */
  #sendFailed = false
  /** Another unit's lease this unit waits to see released before it claims (Juju's BlockUntilLeadershipReleased). */
  #waitingOn: LeaseRecord | undefined
  /** Leadership claims sent (extensions included), for tests. */
  leadershipClaims = 0

  readonly #workloadSent: WorkloadSent

  private constructor (options: UnitHostOptions, actor: UnitActorRef, workloadSent: WorkloadSent) {
    this.unit = options.unit
    this.#o = options
    this.actor = actor
    this.#workloadSent = workloadSent
    this.#proposer = new CommandProposer({ proposer: { kind: 'unit', name: options.unit }, requestPrefix: options.requestPrefix })
  }

  /** Whether the machine's view holds what the unit's actor needs to start (the unit and its application). */
  static canStart (controller: UnitHostController, unit: UnitName): boolean {
    return remoteStateFor(controller.model(), unit, controller.now()) !== undefined
  }

  /** Starts the unit's actor; throws when the view does not hold the unit (see `canStart`). */
  static start (options: UnitHostOptions): UnitHost {
    const { controller, store, hookLock, workspace } = options
    const remote = remoteStateFor(controller.model(), options.unit, controller.now())
    if (remote === undefined) throw new Error(`unit agent "${options.unit}": the unit is not in the model`)
    const sent: WorkloadSent = { pending: Promise.resolve() }
    const ports: UnitPorts = {
      loadLocalState: async unit => withStateId(await store.load(unit), options.newStateId),
      persistLocalState: async ({ unit, local }) => { await store.save(unit, local) },
      acquireHookLock: (unit, acquired) => hookLock.acquire(unit, acquired),
      runHook: async (input, signal) => {
        await workloadStatusSent(sent)
        return await workspace.runHook(input, signal)
      },
      deployCharm: async (input, signal) => await workspace.deployCharm(input, signal),
      runAction: async (input, signal) => await workspace.runAction(input, signal),
      runCommand: async (input, signal) => await workspace.runCommand(input, signal)
    }
    const config = unitConfigOf(controller.model(), options.updateStatusIntervalMs)
    const actor = createUnitActor(ports, {
      clock: options.clock,
      ...(options.inspect === undefined ? {} : { inspect: options.inspect }),
      input: {
        unit: options.unit,
        remote,
        seed: options.seed,
        ...config,
        ...(options.rebooted === true ? { rebooted: true } : {})
      }
    })
    const host = new UnitHost(options, actor, sent)
    host.#lastConfig = config
    host.#configSource = controller.model().config
    host.#unsubscribe = controller.onChange(() => {
      host.#refresh(false)
      host.#watchRelease()
    })
    actor.on('*', event => { host.#onEmitted(event as UnitEmitted) })
    actor.subscribe({ complete: () => { host.#dispose() }, error: () => { host.#dispose() } })
    actor.start()
    host.#claimLeadership()
    host.#scheduleRefresh()
    return host
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

  /** SIGTERM: the running hook is killed and re-queued; resolves when the actor has stopped and its commands are sent. */
  async stop (): Promise<void> {
    if (this.#stopped) return
    this.#dispose()
    const done = new Promise<void>(resolve => {
      const sub = this.actor.subscribe({ complete: () => { sub.unsubscribe(); resolve() }, error: () => { sub.unsubscribe(); resolve() } })
      if (this.actor.getSnapshot().status !== 'active') resolve()
    })
    this.actor.send({ type: 'agent.stop' })
    await done
    await this.#outbox
  }

  /** kill -9 (the simulated process dies): the actor stops where it is; nothing more is saved or sent. */
  kill (): void {
    this.#dispose()
    this.actor.stop()
  }

  /** No more timers or view watching: the agent is stopping, or its actor has finished (the unit is gone). */
  #dispose (): void {
    this.#stopped = true
    this.#unsubscribe()
    if (this.#leaseTimer !== undefined) this.#o.clock.clearTimeout(this.#leaseTimer)
    if (this.#refreshTimer !== undefined) this.#o.clock.clearTimeout(this.#refreshTimer)
  }

  // -------------------------------------------------------------------------------
  // Remote state and leadership

  /**
   * Tells the actor the remote state. A change of the view that leaves this unit's remote
   * state as it was is dropped (every unit of a machine recomputes on every view). The
   * refreshes after a leadership claim always send (`always`): what the actor asked for
   * and the controllers lost or refused (a scope entry, a cleared resolved flag) is asked
   * for again on them. The periodic refresh (a few times per lease: leadership belief
   * moves with time alone) sends a changed remote state, and the same one only when a
   * command failed since the last send, so that a lost request is retried within a
   * refresh period; otherwise the actor would re-run its resolver on the state it holds.
   */
  #refresh (always = true): void {
    if (this.#stopped) return
    this.#refreshConfig()
    const remote = remoteStateFor(this.#o.controller.model(), this.unit, this.#o.controller.now())
    if (remote === undefined) return
    if (!always && this.#lastRemote !== undefined && plainEqual(remote, this.#lastRemote)) return
    this.#lastRemote = remote
    this.#sendFailed = false
    this.actor.send({ type: 'remote.changed', remote })
  }

  /** A changed model configuration goes to the actor, which applies it at once. */
  #refreshConfig (): void {
    // Parsing the model's settings costs more than seeing they are the ones parsed last.
    const source = this.#o.controller.model().config
    if (this.#configSource !== undefined && plainEqual(source, this.#configSource)) return
    this.#configSource = source
    const config = unitConfigOf(this.#o.controller.model(), this.#o.updateStatusIntervalMs)
    if (this.#lastConfig !== undefined && plainEqual(config, this.#lastConfig)) return
    this.#lastConfig = config
    this.actor.send({ type: 'config.changed', config })
  }

  /** Leadership belief changes with time alone; look again a few times per lease. */
  #scheduleRefresh (): void {
    const every = Math.max(limits.unitRemoteRefreshMsMin, Math.floor(this.#leaseDurationMs() / 6))
    this.#refreshTimer = this.#o.clock.setTimeout(() => {
      this.#refresh(this.#sendFailed)
      if (!this.#stopped) this.#scheduleRefresh()
    }, every)
  }

  #leaseDurationMs (): number {
    return this.#o.leaseDurationMs ?? limits.leadershipLeaseDurationMsDefault
  }

  /**
   * Claims (or extends) the lease, then plans the next claim as Juju's tracker does: the
   * holder again at half the lease; another unit once the holder's lease is released.
   */
  #claimLeadership (): void {
    if (this.#stopped) return
    this.#waitingOn = undefined
    this.leadershipClaims++
    const durationMs = this.#leaseDurationMs()
    void this.#send({ type: 'claim-leadership', application: applicationOf(this.unit), unit: this.unit, now: Math.floor(this.#o.clock.now()), durationMs })
      .finally(() => {
        this.#refresh()
        this.#planClaim()
      })
  }

  #planClaim (): void {
    if (this.#stopped) return
    if (this.#leaseTimer !== undefined) this.#o.clock.clearTimeout(this.#leaseTimer)
    const plan = planClaim(this.#lease(), this.unit, this.#o.clock.now(), this.#leaseDurationMs())
    this.#waitingOn = plan.kind === 'until-released' ? plan.lease : undefined
    this.#leaseTimer = this.#o.clock.setTimeout(() => { this.#claimLeadership() }, Math.ceil(plan.delayMs))
  }

  /** While waiting for another unit's lease: claim once the view shows it released, wait anew if it moved. */
  #watchRelease (): void {
    const waiting = this.#waitingOn
    if (waiting === undefined || this.#stopped) return
    const seen = releaseSeen(waiting, this.#lease())
    if (seen === 'released') {
      if (this.#leaseTimer !== undefined) this.#o.clock.clearTimeout(this.#leaseTimer)
      this.#claimLeadership()
    } else if (seen === 'moved') {
      this.#planClaim()
    }
  }

  /** The application's lease as the machine's view has it. */
  #lease (): LeaseRecord | undefined {
    return tableGet(this.#o.controller.model().leases, applicationOf(this.unit))
  }

  // -------------------------------------------------------------------------------
  // What the actor asks of the controllers

  #onEmitted (event: UnitEmitted): void {
    this.#o.onEmitted?.(event)
    if (event.type === 'machine.reboot') this.#o.onReboot?.(event)
    // As Juju's uniter logs it: `hook "install" failed: exit status 1`.
    if (event.type === 'hook.failed') this.#o.logger.log('error', `hook ${JSON.stringify(hookName(event.hook))} failed: ${event.reason}`)
    if (event.type === 'uniter.waiting') this.#o.logger.log('info', `${event.reason} before install`)
    if (event.type === 'uniter.loopError') this.#o.logger.log('error', `resolver loop error: ${event.reason}`)
    const body = commandForEmitted(this.unit, event, Math.floor(this.#o.clock.now()))
    if (body === undefined) return
    // Once dead the unit leaves the model, and the controllers stop taking its machine's
    // word for it: its last records (the stop and remove hooks' output) go first.
    const flushLogs = body.type === 'unit-dead' ? this.#o.flushLogs : undefined
    this.#outbox = this.#outbox.then(async () => {
      if (flushLogs !== undefined) await flushLogs().catch(() => {})
      await this.#send(body)
    })
    if (event.type === 'unit.workloadStatus') this.#workloadSent.pending = this.#outbox
  }

  /**
   * A refused or lost command is logged and the host goes on: the actor's next change
   * (or the periodic refresh) asks again for what still matters.
   */
  async #send (body: ModelCommandBody): Promise<void> {
    try {
      const result = await this.#proposer.submit(this.#o.controller, body)
      if (!result.ok) {
        this.#sendFailed = true
        this.#o.logger.log('debug', `controller refused ${body.type}: ${result.error}`)
      }
    } catch (error) {
      this.#sendFailed = true
      this.#o.logger.log('warning', `cannot send ${body.type}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
}

/** The model configuration the unit obeys; `updateStatusIntervalMs` stands in for the key's default. */
function unitConfigOf (model: ModelContext, updateStatusIntervalMs: number | undefined): UnitConfig {
  const config = model.config ?? {}
  const settings = modelConfigSettings(config)
  const intervalSet = Object.hasOwn(config, 'update-status-hook-interval')
  return {
    updateStatusIntervalMs: intervalSet || updateStatusIntervalMs === undefined ? settings.updateStatusIntervalMs : updateStatusIntervalMs,
    automaticallyRetryHooks: settings.automaticallyRetryHooks
  }
}

/** The uniter's last own workload status on its way to the controllers (sent, or given up on, when it settles). */
interface WorkloadSent { pending: Promise<void> }

/**
 * Juju's uniter sets the workload status before the hook runs (runHook.beforeHook, an
 * API call that returns when it is recorded), so a charm's own `status-set` in that hook
 * always lands after it. Here the status is an emitted effect sent in order by the
 * outbox, and the hook waits for it. The actor emits before it starts the hook's
 * invocation; one turn of the event loop lets a just-emitted status join the outbox
 * first.
 */
async function workloadStatusSent (sent: WorkloadSent): Promise<void> {
  await Promise.resolve()
  await sent.pending
}

/**
 * The unit's stored state, or a new one, with the id that makes its hook commits' keys
 * unique (LocalState.stateId); a state saved before there were ids gets one now.
 */
function withStateId (stored: LocalState | undefined, newStateId: () => string): LocalState {
  const local = stored ?? initialLocalState()
  return local.stateId === undefined ? { ...local, stateId: newStateId() } : local
}
