/**
 * A machine agent on the simulator: the shared machine agent that ships
 * (actors/machine/machine-agent.ts: ControllerClient, presence heartbeat, Machiner and the
 * deployer's unit hosts) with the simulated world's effects (sim-unit-effects.ts: scripted
 * hooks, charms that deploy at once) on a SimTransport, a drifting AgentClock and a
 * SimStorage disk. What is left here is the simulated process around it.
 *
 * kill -9 (`crash`) stops every actor where it is, loses the disk's unsynced writes and
 * drops the transport; `start` after it resumes from what the disk kept. SIGSTOP
 * (`pause`) holds the agent's timers, the change notices and replies that reach it and
 * the ends of its hooks until `resume`.
 */
import type { LocalState } from '../../actors/unit/local-state.ts'
import { checkLocalState, unitStateKey } from '../../actors/unit/unit-state-store.ts'
import { decode } from '../../runtime/codec.ts'
import { MachineAgent } from '../../actors/machine/machine-agent.ts'
import type { IdentifyPeer } from '../../actors/controller/controller-api.ts'
import type { Clock, TimerHandle } from '../../runtime/clock.ts'
import { silentLogger } from '../../runtime/logger.ts'
import { believesLeader } from '../../runtime/model/leases.ts'
import type { LeaseRecord } from '../../runtime/model/model-types.ts'
import { readerOf } from '../../runtime/model/model-draft.ts'
import type { Transport } from '../../runtime/transport.ts'
import { AgentClock } from '../agent-clock.ts'
import { simInspectOption } from '../inspect/sim-inspect-log.ts'
import { SimStorage } from '../sim-storage.ts'
import type { AgentState, SimMachineAgentApi, SimMachineAgentOptions } from './machine-agent-types.ts'
import { SimUnitEffects } from './sim-unit-effects.ts'
import { SimUnitHooks } from './sim-unit-hooks.ts'

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
  readonly agent: MachineAgent
}


/** The machine agent's controller link counters (actors/machine/controller-client.ts). */
type ControllerCounters = { notices: number, fetches: number, watchAnswers: number, submitRequests: number, commandsSubmitted: number }

export class SimMachineAgent implements SimMachineAgentApi {
  readonly machineId: string
  readonly peerId: string
  readonly storage = new SimStorage()
  readonly #o: SimMachineAgentOptions
  readonly #clock: AgentClock
  readonly #hooks: SimUnitHooks
  #run: Run | undefined
  /** The lease holders of the last view read (believedLeaders), by view identity. */
  #leaseHoldersOf: { model: unknown, run: Run, units: number, holders: ReadonlyArray<{ unit: string, lease: LeaseRecord }> } | undefined
  /** Held work while paused (SIGSTOP); undefined while running. */
  #held: Array<() => void> | undefined
  #runs = 0
  /** Boots of the simulated machine: a `juju-reboot` counts one more (the units' boot id). */
  #boots = 0
  /** The last incarnation used (presence, machiner): each new one is above it. */
  #incarnation = 0
  /** Over the agent's life: unit starts and state ids never repeat. */
  readonly #counters = { unitStarts: 0, stateIds: 0 }
  #finished = false
  readonly #errors: string[] = []
  #pastCounters: ControllerCounters = { notices: 0, fetches: 0, watchAnswers: 0, submitRequests: 0, commandsSubmitted: 0 }

  constructor (options: SimMachineAgentOptions) {
    this.#o = options
    this.machineId = options.machineId
    this.peerId = `machine-${options.machineId}`
    this.#clock = new AgentClock(options.sim.clock, { drift: options.drift ?? 0 })
    this.#hooks = new SimUnitHooks({
      sim: options.sim,
      machineId: options.machineId,
      charms: options.charms,
      hookFaults: options.hookFaults,
      clock: () => this.#run?.clock ?? this.#clock,
      controller: () => this.#run?.agent.client,
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
    this.#o.sim.trace(`${this.peerId} starts (run ${runNumber})`)
    const agent = MachineAgent.start({ transport, clock, logger: silentLogger, storage: this.storage }, {
      machineId: this.machineId,
      model: this.#o.model,
      controllers: this.#o.controllers,
      // As the real agent's (the wall clock's milliseconds), above every earlier one.
      incarnation: () => { this.#incarnation = Math.max(Math.floor(clock.now()), this.#incarnation + 1); return this.#incarnation },
      presence: {},
      bootId: `${this.peerId}/boot-${this.#boots}`,
      unitEffects: () => new SimUnitEffects({ peerId: this.peerId, seed: this.#o.sim.seed, hooks: this.#hooks }, this.#counters),
      ...(this.#o.leaseDurationMs === undefined ? {} : { leaseDurationMs: this.#o.leaseDurationMs }),
      ...(this.#o.hostsController === true ? { hostsController: true } : {}),
      inspect: (kind, name) => simInspectOption(this.peerId, kind, name, () => clock.now()).inspect,
      onUnitEvent: (unit, event) => { if (this.#run === run) this.#o.onUnitEvent?.(unit, event) },
      onUnitFailed: (unit, reason, kind) => { this.#onUnitFailed(run, unit, reason, kind) }
    })
    const run: Run = { clock, transport, agent }
    this.#run = run
    agent.done.then(() => { this.#onDone(run) }, (error: unknown) => { this.#onDone(run, error) })
  }

  crash (): void {
    const run = this.#run
    if (run === undefined) return
    this.#o.sim.trace(`${this.peerId} crashed`)
    const units = this.units()
    this.#end(run)
    run.agent.kill()
    this.#hooks.reset()
    this.#o.network.crash(this.peerId)
    this.storage.crash()
    this.#dropPause()
    for (const unit of units) this.#o.onUnitRestart?.(unit, this.#durable(unit))
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
    return this.#run?.agent.deployer?.units() ?? []
  }

  unitState (unit: string): { running: boolean, state: string, local: LocalState | undefined, leadershipClaims: number } | undefined {
    const host = this.#run?.agent.deployer?.agent(unit)
    if (host === undefined) return undefined
    return { running: host.running, state: host.state, local: host.local, leadershipClaims: host.leadershipClaims }
  }

  believedLeaders (): string[] {
    const run = this.#run
    const deployer = run?.agent.deployer
    if (run === undefined || deployer === undefined) return []
    const holders = this.#leaseHolders(run, deployer)
    // Most agents host no leader: the invariants ask every agent every few milliseconds.
    if (holders.length === 0) return []
    const now = run.clock.now()
    const out: string[] = []
    for (const { unit, lease } of holders) {
      if (deployer.agent(unit)?.running === true && believesLeader(lease, unit, now)) out.push(unit)
    }
    return out
  }

  /**
   * The alive units of this machine that its view names as lease holders, with their
   * leases: recomputed only when the view or the units change, since the invariants ask
   * every few simulated milliseconds and mostly only the clock has moved in between.
   */
  #leaseHolders (run: Run, deployer: { unitCount: number, units: () => string[] }): ReadonlyArray<{ unit: string, lease: LeaseRecord }> {
    const model = run.agent.client.model()
    const cached = this.#leaseHoldersOf
    // Checked without copying the unit list: at 1,000 agents a copy per agent per check was most of the check.
    if (cached?.model === model && cached.run === run && cached.units === deployer.unitCount) return cached.holders
    const units = deployer.units()
    const reader = readerOf(model)
    const holders: Array<{ unit: string, lease: LeaseRecord }> = []
    for (const unit of units) {
      const record = reader.unit(unit)
      const lease = record === undefined ? undefined : reader.lease(record.application)
      if (record?.life === 'alive' && lease?.holder === unit) holders.push({ unit, lease })
    }
    this.#leaseHoldersOf = { model, run, units: units.length, holders }
    return holders
  }

  /** Controller link counters over every run (notices, view fetches, watch answers, submit requests, commands). */
  get controllerCounters (): ControllerCounters {
    const now = this.#run?.agent.client.counters
    const c = this.#pastCounters
    if (now === undefined) return { ...c }
    const sum = { ...c }
    for (const key of Object.keys(sum) as Array<keyof ControllerCounters>) sum[key] += now[key]
    return sum
  }

  errors (): string[] {
    return [...this.#errors]
  }

  /**
   * Orderly stop at the end of a run: every unit agent is told to stop (its hook is
   * killed and re-queued). Nothing waits on simulated time, which no longer moves.
   */
  async stop (): Promise<void> {
    const run = this.#run
    if (run === undefined) return
    this.resume()
    this.#o.sim.trace(`${this.peerId} stops`)
    void run.agent.stop()
    this.#end(run)
    await run.transport.stop()
  }

  /**
   * SIGTERM in the middle of a run: the agent stops in order — running hooks are killed
   * and re-queued, their commands reach the controller — and then the process exits.
   * The deployer stops forwarding unit events once it is stopping, so the observers
   * learn what the units left behind from the disk, as after kill -9 (`onUnitRestart`).
   * Unlike `stop`, it takes simulated time: the caller runs the clock until it resolves.
   */
  async terminate (): Promise<void> {
    const run = this.#run
    if (run === undefined) return
    this.resume()
    this.#o.sim.trace(`${this.peerId} terminated`)
    const units = this.units()
    await run.agent.stop()
    if (this.#run !== run) return
    this.#end(run)
    // The process exits: a hook it no longer waited for (one busy with its hook tools'
    // calls when the stop came) dies with it, as after kill -9.
    this.#hooks.reset()
    await run.transport.stop()
    for (const unit of units) this.#o.onUnitRestart?.(unit, this.#durable(unit))
  }

  // -------------------------------------------------------------------------------

  /** The process is gone: its clock stops, its counters are kept. */
  #end (run: Run): void {
    this.#pastCounters = this.controllerCounters
    this.#run = undefined
    run.clock.alive = false
  }

  /** The machine agent ended by itself: its machine is dead or gone, or it gave up (the process exits). */
  #onDone (run: Run, error?: unknown): void {
    if (this.#run !== run) return
    const outcome = run.agent.outcome
    if (error === undefined && run.agent.rebootRequested) {
      this.#reboot(run)
      return
    }
    if (error === undefined && outcome === undefined) return
    if (error === undefined) {
      this.#finished = true
      this.#o.sim.trace(`${this.peerId} finished: machine ${outcome}`)
    } else {
      this.#o.sim.trace(`${this.peerId} exited: ${error instanceof Error ? error.message : String(error)}`)
    }
    void run.agent.stop()
    this.#end(run)
  }

  /**
   * `juju-reboot`: the agent has stopped its units; as the local provider's machine, the
   * process ends, its hooks and workloads die with it, and the agent starts again in a
   * new boot (its units that had started run `start` once).
   */
  #reboot (run: Run): void {
    this.#o.sim.trace(`${this.peerId} reboots`)
    const units = this.units()
    this.#end(run)
    this.#hooks.reset()
    this.#boots++
    for (const unit of units) this.#o.onUnitRestart?.(unit, this.#durable(unit))
    void this.start()
  }

  #onUnitFailed (run: Run, unit: string, reason: string, kind: 'failed' | 'error'): void {
    if (this.#run !== run) return
    if (kind === 'error') {
      if (this.#errors.length < errorsKeptMax) this.#errors.push(`${unit}: ${reason}`)
      return
    }
    // Its state could not be saved (a disk fault): its supervisor starts it again after a back-off.
    this.#o.sim.trace(`${this.peerId} ${unit} agent failed; restarting`)
    this.#o.onUnitRestart?.(unit, this.#durable(unit))
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
        // A paused process reads what was pushed to it only once it runs again, in order, ahead of the answer.
        const onPush = options.onPush
        const held = onPush === undefined ? options : { ...options, onPush: (pushed: Uint8Array) => { this.#whenRunning(() => { onPush(pushed) }) } }
        try {
          return await inner.request(peer, protocol, data, held)
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
