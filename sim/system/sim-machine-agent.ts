/**
 * A machine agent on the simulator: the code that ships (ControllerClient, Machiner, the
 * unit actor) on a SimTransport, a drifting AgentClock and a SimStorage disk, with a
 * deployer that runs one SimUnitAgent per unit the model puts on the machine (principals
 * and subordinates), all sharing one machine-wide HookLock — what agent/roles/
 * machine-role.ts and agent/uniter/deployer.ts do for real (sim/ may not import agent/).
 *
 * kill -9 (`crash`) stops every actor where it is, loses the disk's unsynced writes and
 * drops the transport; `start` after it resumes from what the disk kept. SIGSTOP
 * (`pause`) holds the agent's timers, the change notices and replies that reach it and
 * the ends of its hooks until `resume`.
 *
 * Cost per agent stays proportional to its own units: the deployer looks only at its
 * machine's unit list, and each unit agent only at its own remote state.
 */
import type { LocalState } from '../../actors/unit/local-state.ts'
import type { UnitEmitted } from '../../actors/unit/unit-effects.ts'
import { checkLocalState, createUnitStateStore, unitStateKey } from '../../actors/unit/unit-state-store.ts'
import { decode } from '../../runtime/codec.ts'
import { ControllerClient } from '../../actors/machine/controller-client.ts'
import { Machiner } from '../../actors/machine/machiner.ts'
import type { IdentifyPeer } from '../../actors/controller/controller-api.ts'
import type { Clock, TimerHandle } from '../../runtime/clock.ts'
import { HookLock } from '../../runtime/hook-lock.ts'
import { limits } from '../../runtime/limits.ts'
import { believesLeader } from '../../runtime/model/leases.ts'
import type { LeaseRecord } from '../../runtime/model/model-types.ts'
import { readerOf } from '../../runtime/model/model-draft.ts'
import type { Transport } from '../../runtime/transport.ts'
import { PresenceAgent } from '../../runtime/presence/presence-agent.ts'
import { AgentClock } from '../agent-clock.ts'
import { SimStorage } from '../sim-storage.ts'
import type { AgentState, SimMachineAgentApi, SimMachineAgentOptions } from './machine-agent-types.ts'
import { SimUnitAgent } from './sim-unit-agent.ts'
import { SimUnitHooks } from './sim-unit-hooks.ts'

/** Back-off before a failed unit agent or machiner starts again (the real supervisor's first delay). */
export const simAgentRestartDelayMs = 1_000
/** Actor errors kept for the report; more are counted only. */
const errorsKeptMax = 100

/**
 * Who a simulated peer is, for the controllers' `agents.identify`: `machine-<id>` is the
 * agent of machine `<id>`, a controller id (`c0`, …) a controller.
 */
export function simIdentifyPeer (controllers: readonly string[]): IdentifyPeer {
  const known = new Set(controllers)
  return peer => {
    if (known.has(peer)) return { kind: 'controller', id: peer }
    if (peer.startsWith('machine-') && peer.length > 'machine-'.length) return { kind: 'machine', id: peer.slice('machine-'.length) }
    return undefined
  }
}

/** The agent's clock for one run: timers of a run that crashed never fire. */
class RunClock implements Clock {
  alive = true
  readonly #clock: AgentClock
  constructor (clock: AgentClock) { this.#clock = clock }
  now (): number { return this.#clock.now() }
  setTimeout (callback: () => void, delayMs: number): TimerHandle {
    return this.#clock.setTimeout(() => { if (this.alive) callback() }, delayMs)
  }

  clearTimeout (handle: TimerHandle): void { this.#clock.clearTimeout(handle) }
}

/** One run of the agent process, from `start` to `crash` or `stop`. */
interface Run {
  readonly clock: RunClock
  readonly transport: Transport
  readonly client: ControllerClient
  readonly lock: HookLock
  readonly units: Map<string, SimUnitAgent>
  machiner: Machiner | undefined
  unsubscribe: () => void
  /** STATUS-TRUTH TESTING ONLY (see `start`). */
  presence: PresenceAgent | undefined
}

export class SimMachineAgent implements SimMachineAgentApi {
  readonly machineId: string
  readonly peerId: string
  readonly storage = new SimStorage()
  readonly #o: SimMachineAgentOptions
  readonly #clock: AgentClock
  readonly #hooks: SimUnitHooks
  readonly #store
  #run: Run | undefined
  /** The lease holders of the last view read (believedLeaders), by view identity. */
  #leaseHoldersOf: { model: unknown, run: Run, units: number, holders: ReadonlyArray<{ unit: string, lease: LeaseRecord }> } | undefined
  /** Held work while paused (SIGSTOP); undefined while running. */
  #held: Array<() => void> | undefined
  #runs = 0
  #machiners = 0
  /** Unit agents started over the agent's life: their request ids never repeat. */
  #unitStarts = 0
  #finished = false
  readonly #errors: string[] = []
  #pastCounters = { notices: 0, fetches: 0, submitRequests: 0, commandsSubmitted: 0 }

  constructor (options: SimMachineAgentOptions) {
    this.#o = options
    this.machineId = options.machineId
    this.peerId = `machine-${options.machineId}`
    this.#clock = new AgentClock(options.sim.clock, { drift: options.drift ?? 0 })
    this.#store = createUnitStateStore(this.storage)
    this.#hooks = new SimUnitHooks({
      sim: options.sim,
      machineId: options.machineId,
      charms: options.charms,
      hookFaults: options.hookFaults,
      clock: () => this.#run?.clock ?? this.#clock,
      controller: () => this.#run?.client,
      whenRunning: fn => { this.#whenRunning(fn) },
      ...(options.onHook === undefined ? {} : { onHook: options.onHook })
    })
  }

  get state (): AgentState {
    if (this.#run === undefined) return 'down'
    return this.#held === undefined ? 'up' : 'paused'
  }

  get finished (): boolean {
    return this.#finished
  }

  get maxConcurrentHooks (): number {
    return this.#hooks.maxConcurrent
  }

  async start (): Promise<void> {
    if (this.#run !== undefined) return
    const runNumber = ++this.#runs
    const clock = new RunClock(this.#clock)
    const transport = this.#gated(this.#o.network.transport(this.peerId))
    const client = new ControllerClient({ transport, clock, modelUuid: this.#o.model, machine: this.machineId, controllers: this.#o.controllers })
    const run: Run = { clock, transport, client, lock: new HookLock(`machine-${this.machineId}`), units: new Map(), machiner: undefined, unsubscribe: () => {}, presence: undefined }
    this.#run = run
    // --- STATUS-TRUTH TESTING ONLY: the machine agent's presence heartbeat, which the
    // controllers' presence and the provisioner's machine actors need (sim/invariants/
    // status-truth.ts). The shared machine agent moving to actors/ carries its own; when it
    // lands, these lines go. Each run comes back above any earlier incarnation, as cantripd's
    // clock-based one does.
    run.presence = new PresenceAgent({ transport, clock }, {
      modelUuid: this.#o.model, role: 'machine', incarnation: Math.floor(this.#clock.now()), controllers: () => new Set(this.#o.controllers)
    })
    run.presence.start()
    // --- end STATUS-TRUTH TESTING ONLY
    this.#o.sim.trace(`${this.peerId} starts (run ${runNumber})`)
    client.start()
    run.unsubscribe = client.onChange(() => { this.#reconcile(run) })
    // As the real role does: nothing more until the first view of the model has arrived.
    void client.ready().then(() => {
      if (this.#run !== run) return
      this.#startMachiner(run)
      this.#reconcile(run)
    })
  }

  crash (): void {
    const run = this.#run
    if (run === undefined) return
    this.#o.sim.trace(`${this.peerId} crashed`)
    this.#end(run)
    for (const agent of run.units.values()) agent.kill()
    this.#hooks.reset()
    this.#o.network.crash(this.peerId)
    this.storage.crash()
    this.#dropPause()
    for (const unit of run.units.keys()) this.#o.onUnitRestart?.(unit, this.#durable(unit))
  }

  pause (): void {
    if (this.#run === undefined || this.#held !== undefined) return
    this.#o.sim.trace(`${this.peerId} paused`)
    this.#held = []
    this.#clock.pause()
  }

  resume (): void {
    const held = this.#held
    if (held === undefined) return
    this.#o.sim.trace(`${this.peerId} resumed`)
    this.#held = undefined
    this.#clock.resume()
    for (const release of held) release()
  }

  setDrift (rate: number): void {
    this.#clock.setDrift(rate)
  }

  units (): string[] {
    return [...this.#run?.units.keys() ?? []]
  }

  unitState (unit: string): { running: boolean, state: string, local: LocalState | undefined } | undefined {
    const agent = this.#run?.units.get(unit)
    if (agent === undefined) return undefined
    return { running: agent.running, state: agent.state, local: agent.local }
  }

  believedLeaders (): string[] {
    const run = this.#run
    if (run === undefined) return []
    const now = run.clock.now()
    const out: string[] = []
    for (const { unit, lease } of this.#leaseHolders(run)) {
      if (run.units.get(unit)?.running === true && believesLeader(lease, unit, now)) out.push(unit)
    }
    return out
  }

  /**
   * The alive units of this machine that its view names as lease holders, with their
   * leases: recomputed only when the view or the units change, since the invariants ask
   * every few simulated milliseconds and mostly only the clock has moved in between.
   */
  #leaseHolders (run: Run): ReadonlyArray<{ unit: string, lease: LeaseRecord }> {
    const model = run.client.model()
    const cached = this.#leaseHoldersOf
    if (cached?.model === model && cached.run === run && cached.units === run.units.size) return cached.holders
    const reader = readerOf(model)
    const holders: Array<{ unit: string, lease: LeaseRecord }> = []
    for (const unit of run.units.keys()) {
      const record = reader.unit(unit)
      const lease = record === undefined ? undefined : reader.lease(record.application)
      if (record?.life === 'alive' && lease?.holder === unit) holders.push({ unit, lease })
    }
    this.#leaseHoldersOf = { model, run, units: run.units.size, holders }
    return holders
  }

  /** Controller link counters over every run (notices, view fetches, submit requests, commands). */
  get controllerCounters (): { notices: number, fetches: number, submitRequests: number, commandsSubmitted: number } {
    const now = this.#run?.client.counters
    const c = this.#pastCounters
    return now === undefined ? { ...c } : { notices: c.notices + now.notices, fetches: c.fetches + now.fetches, submitRequests: c.submitRequests + now.submitRequests, commandsSubmitted: c.commandsSubmitted + now.commandsSubmitted }
  }

  errors (): string[] {
    return [...this.#errors]
  }

  /** Orderly stop: every unit agent is told to stop (its hook is killed and re-queued). */
  async stop (): Promise<void> {
    const run = this.#run
    if (run === undefined) return
    this.resume()
    this.#o.sim.trace(`${this.peerId} stops`)
    for (const agent of run.units.values()) agent.stop()
    this.#end(run)
    await run.transport.stop()
  }

  // -------------------------------------------------------------------------------

  #end (run: Run): void {
    this.#pastCounters = this.controllerCounters
    this.#run = undefined
    run.clock.alive = false
    run.unsubscribe()
    run.presence?.stop()
    run.client.stop()
    void run.machiner?.stop()
  }

  /** A crash ends a pause too: what was held died with the process. */
  #dropPause (): void {
    if (this.#held === undefined) return
    this.#held = undefined
    this.#clock.resume()
  }

  /** What the disk kept of the unit's uniter state (a unit's saves are synced, so it is all of them). */
  #durable (unit: string): LocalState | undefined {
    const bytes = this.storage.durableGet(unitStateKey(unit))
    return bytes === undefined ? undefined : checkLocalState(unit, decode(bytes, `unit state "${unit}"`))
  }

  #whenRunning (fn: () => void): void {
    if (this.#held !== undefined) this.#held.push(fn)
    else fn()
  }

  /** The machiner reports the agent started and marks the machine dead when its work is over. */
  #startMachiner (run: Run): void {
    const machiner = Machiner.start({ machineId: this.machineId, controller: run.client, incarnation: ++this.#machiners })
    run.machiner = machiner
    machiner.done.then(() => {
      if (this.#run !== run || machiner.outcome === undefined) return
      this.#finished = true
      this.#o.sim.trace(`${this.peerId} finished: machine ${machiner.outcome}`)
      this.#end(run)
    }, () => {
      // A refused or lost command: start it again after a back-off, as the supervisor would.
      if (this.#run === run) run.clock.setTimeout(() => { if (this.#run === run) this.#startMachiner(run) }, simAgentRestartDelayMs)
    })
  }

  /** The deployer: start agents for the machine's units, tell the others of the change, forget units gone. */
  #reconcile (run: Run): void {
    if (this.#run !== run || run.machiner === undefined) return
    const model = run.client.model()
    const reader = readerOf(model)
    const assigned = reader.machine(this.machineId)?.units ?? []
    for (const unit of assigned) {
      const agent = run.units.get(unit)
      if (agent !== undefined) agent.refresh(false)
      else this.#startUnit(run, unit)
    }
    for (const [unit, agent] of run.units) {
      if (!agent.running && reader.unit(unit) === undefined) run.units.delete(unit)
    }
  }

  #startUnit (run: Run, unit: string): void {
    const agent = SimUnitAgent.start({
      unit,
      seed: this.#o.sim.seed,
      controller: run.client,
      clock: run.clock,
      store: this.#store,
      hookLock: run.lock,
      hooks: this.#hooks,
      leaseDurationMs: this.#o.leaseDurationMs ?? limits.leadershipLeaseDurationMsDefault,
      requestPrefix: `${unit}/${++this.#unitStarts}`,
      onEmitted: event => { this.#onUnitEvent(run, unit, event) },
      onError: error => {
        if (this.#errors.length < errorsKeptMax) this.#errors.push(`${unit}: ${error instanceof Error ? error.message : String(error)}`)
      },
      onDone: failed => {
        if (!failed || this.#run !== run) return
        // Its state could not be saved (a disk fault): start it again after a back-off.
        this.#o.sim.trace(`${this.peerId} ${unit} agent failed; restarting`)
        this.#o.onUnitRestart?.(unit, this.#durable(unit))
        run.clock.setTimeout(() => {
          if (this.#run !== run || run.units.get(unit) !== agent) return
          run.units.delete(unit)
          this.#reconcile(run)
        }, simAgentRestartDelayMs)
      }
    })
    if (agent !== undefined) run.units.set(unit, agent)
  }

  #onUnitEvent (run: Run, unit: string, event: UnitEmitted): void {
    if (this.#run !== run) return
    this.#o.onUnitEvent?.(unit, event)
  }

  /** The transport as the paused process sees it: notices and replies wait for `resume`. */
  #gated (inner: Transport): Transport {
    const gate = async (): Promise<void> => {
      const held = this.#held
      if (held !== undefined) await new Promise<void>(resolve => { held.push(resolve) })
    }
    return {
      peerId: inner.peerId,
      subscribe: (topic, onMessage) => inner.subscribe(topic, message => { this.#whenRunning(() => { onMessage(message) }) }),
      setTopicValidator: (topic, validator) => { inner.setTopicValidator(topic, validator) },
      publish: async (topic, data) => { await inner.publish(topic, data) },
      handle: (protocol, handler) => {
        inner.handle(protocol, async request => {
          await gate()
          return await handler(request)
        })
      },
      unhandle: protocol => { inner.unhandle(protocol) },
      request: async (peer, protocol, data, options) => {
        try {
          return await inner.request(peer, protocol, data, options)
        } finally {
          await gate()
        }
      },
      connectedPeers: () => inner.connectedPeers(),
      counters: () => inner.counters(),
      stop: async () => { await inner.stop() }
    }
  }
}
