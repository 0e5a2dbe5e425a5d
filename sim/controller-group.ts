/**
 * N controllers, each a RaftHost on its own SimStorage and SimTransport, on one
 * Simulation. Crashes lose unsynced writes (SimStorage.crash) and drop the host and its
 * transport; a restart loads the host again from what survived. `runFor` drives the
 * SimClock one timer at a time and lets promise callbacks settle between timers, as
 * SimNetworkWorld.wait does, so an awaited storage write finishes at the simulated time
 * it was made.
 */
import { assert } from '../runtime/assert.ts'
import type { Clock } from '../runtime/clock.ts'
import { limits } from '../runtime/limits.ts'
import { RaftHost, type RaftHostOptions } from '../runtime/raft/raft-host.ts'
import type { NodeId } from '../runtime/raft/raft-types.ts'
import { AgentClock } from './agent-clock.ts'
import { SimNetwork, type LatencyDistribution } from './sim-network.ts'
import { SimStorage } from './sim-storage.ts'
import type { Simulation } from './simulation.ts'

export interface ControllerGroupOptions {
  /** How many controllers, named `c0`, `c1`, ... */
  size: number
  tickMs?: number
  electionTicks?: number
  heartbeatTicks?: number
  latency?: LatencyDistribution
  /** Give each controller an AgentClock with this drift (±), drawn from the "clock" stream. */
  clockDriftMax?: number
  /** Keep network events in the simulation trace. */
  traceNetwork?: boolean
  /** Extra host options (timeouts, onApplied) per controller. */
  hostOptions?: (id: NodeId) => Partial<RaftHostOptions>
}

/** Lets promise callbacks, and whatever they queue, run before time moves again. */
const settleMicrotasks = (): Promise<void> => new Promise(resolve => setImmediate(resolve))

export class ControllerGroup {
  readonly sim: Simulation
  readonly network: SimNetwork
  readonly ids: NodeId[]
  readonly storages: SimStorage[]
  readonly #hosts: Array<RaftHost | undefined>
  readonly #clocks: Clock[]
  readonly #options: ControllerGroupOptions

  private constructor (sim: Simulation, options: ControllerGroupOptions) {
    this.sim = sim
    this.#options = options
    this.ids = Array.from({ length: options.size }, (_, i) => `c${i}`)
    this.network = new SimNetwork({
      clock: sim.clock,
      random: sim.random('network'),
      ...(options.latency === undefined ? {} : { latency: options.latency }),
      ...(options.traceNetwork === true ? { onEvent: (text: string) => { sim.trace(`net ${text}`) } } : {})
    })
    this.storages = this.ids.map(() => new SimStorage())
    this.#hosts = this.ids.map(() => undefined)
    const clockRandom = sim.random('clock')
    this.#clocks = this.ids.map(() => {
      const drift = options.clockDriftMax
      if (drift === undefined || drift === 0) return sim.clock
      return new AgentClock(sim.clock, { drift: (clockRandom.next() * 2 - 1) * drift })
    })
  }

  static async create (sim: Simulation, options: ControllerGroupOptions): Promise<ControllerGroup> {
    assert(Number.isSafeInteger(options.size) && options.size > 0, `controller group: size must be a positive integer, got ${String(options.size)}`)
    const group = new ControllerGroup(sim, options)
    for (let i = 0; i < options.size; i++) await group.restart(i)
    return group
  }

  /** The running host of controller `i`, or undefined while it is down. */
  host (i: number): RaftHost | undefined {
    const host = this.#hosts[i]
    return host === undefined || host.stopped ? undefined : host
  }

  hosts (): RaftHost[] {
    return this.#hosts.filter((host): host is RaftHost => host !== undefined && !host.stopped)
  }

  isUp (i: number): boolean {
    return this.host(i) !== undefined
  }

  /** Power cut on controller `i`: the host stops at once and unsynced writes are lost. */
  crash (i: number): void {
    const host = this.#hosts[i]
    if (host === undefined) return
    host.crash()
    this.network.crash(this.ids[i]!)
    this.storages[i]!.crash()
    this.#hosts[i] = undefined
    this.sim.trace(`controller ${this.ids[i]!} crashed`)
  }

  /** Starts controller `i` (again) from what its storage holds; a no-op if it is up. */
  async restart (i: number): Promise<RaftHost> {
    const running = this.host(i)
    if (running !== undefined) return running
    const id = this.ids[i]!
    const options = this.#options
    const host = await RaftHost.start({
      id,
      peers: this.ids,
      storage: this.storages[i]!,
      transport: this.network.transport(id),
      clock: this.#clocks[i]!,
      random: this.sim.random(`raft/${id}`),
      tickMs: options.tickMs ?? 10,
      electionTicks: options.electionTicks ?? 10,
      heartbeatTicks: options.heartbeatTicks ?? 2,
      ...(options.hostOptions?.(id) ?? {})
    })
    this.#hosts[i] = host
    this.sim.trace(`controller ${id} started at term ${host.status().term}`)
    return host
  }

  partition (groups: NodeId[][]): void { this.network.partition(groups) }
  isolate (i: number): void { this.network.isolate(this.ids[i]!) }
  heal (): void { this.network.heal() }

  /**
   * The unique running leader of the highest term, if any. Running nodes that believe
   * they lead in older terms (cut off, not yet stepped down) are ignored.
   */
  leader (): RaftHost | undefined {
    let best: RaftHost | undefined
    for (const host of this.hosts()) {
      const status = host.status()
      if (status.role !== 'leader') continue
      if (best === undefined || status.term > best.status().term) best = host
    }
    return best
  }

  /** Lets `ms` of simulated time pass, one timer at a time, settling promises after each. */
  async runFor (ms: number): Promise<void> {
    const clock = this.sim.clock
    const until = clock.now() + ms
    await settleMicrotasks()
    for (let fired = 0; ; fired++) {
      const due = clock.nextDueAt()
      if (due === undefined || due > until) break
      assert(fired < limits.simClockTimersPerAdvanceMax,
        `controller group: more than ${limits.simClockTimersPerAdvanceMax} timers in one runFor at ${clock.now()} ms`)
      clock.runNext()
      await settleMicrotasks()
    }
    clock.advanceTo(until)
    await settleMicrotasks()
  }

  /** Runs until `condition` holds, checking every `stepMs`; false if `ms` pass first. */
  async runUntil (condition: () => boolean, ms: number, stepMs = 10): Promise<boolean> {
    const until = this.sim.clock.now() + ms
    while (!condition()) {
      if (this.sim.clock.now() >= until) return false
      await this.runFor(stepMs)
    }
    return true
  }

  /** Stops every running host gracefully. */
  async stop (): Promise<void> {
    for (let i = 0; i < this.ids.length; i++) {
      const host = this.#hosts[i]
      if (host === undefined) continue
      await host.stop()
      this.network.crash(this.ids[i]!)
      this.#hosts[i] = undefined
    }
  }
}
