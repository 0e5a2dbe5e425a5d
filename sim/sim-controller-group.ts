/**
 * N controllers, each a ModelReplica (Raft host + controller actor) on its own
 * SimStorage, AgentClock and SimTransport, on one Simulation. Crashes lose unsynced
 * writes (SimStorage.crash) and drop the node and its transport; a restart loads the node
 * again from what survived. A pause stops the controller's timers and holds every request
 * that reaches it until it resumes (SIGSTOP). Servers can be added (they join empty and
 * learn the group from the leader's RaftSnapshot) for membership changes.
 *
 * `runFor` drives the SimClock one timer at a time and lets promise callbacks settle
 * between timers, as SimNetworkWorld.wait does, so an awaited storage write finishes at
 * the simulated time it was made; `onStep` runs after every one of those steps, which is
 * where the safety checkers look.
 *
 * Each controller is given cantripd's deferrals (the Raft host's follower apply and leader
 * write, the held-watch check: setImmediate there) as a zero-delay step of the simulated
 * clock, deterministic per seed; a crash between the step's scheduling and its turn drops
 * it, as a process dying drops its pending setImmediate callbacks.
 */
import { ModelReplica, type ModelReplicaOptions, type SingularWorkers } from '../actors/controller/model-replica.ts'
import { assert } from '../runtime/assert.ts'
import type { Clock, TimerHandle } from '../runtime/clock.ts'
import type { Deferral } from '../runtime/deferral.ts'
import { limits } from '../runtime/limits.ts'
import type { ModelRaftHost } from '../runtime/model/model-state-machine.ts'
import type { Message, NodeId } from '../runtime/raft/raft-types.ts'
import type { IncomingRequest, RequestHandler, RequestOptions, Transport } from '../runtime/transport.ts'
import { AgentClock } from './agent-clock.ts'
import { plantedCommitRule } from './raft-planted-bugs.ts'
import type { PlantedBug } from './scenario/scenario-types.ts'
import { SimNetwork, type LatencyDistribution } from './sim-network.ts'
import { SimStorage } from './sim-storage.ts'
import type { Simulation } from './simulation.ts'

export interface SimControllerGroupOptions {
  /** How many founding controllers, named `c0`, `c1`, ... */
  size: number
  tickMs?: number
  electionTicks?: number
  heartbeatTicks?: number
  latency?: LatencyDistribution
  /** Give each controller a clock drift (a rate error, ±) drawn from the "clock" stream. */
  clockDriftMax?: number
  /** Keep network events in the simulation trace. */
  traceNetwork?: boolean
  snapshotEveryEntries?: number
  leaseDurationMs?: number
  singularWorkers?: SingularWorkers
  /** Extra node options (timeouts, onApplied) per controller. */
  hostOptions?: (id: NodeId) => Partial<ModelReplicaOptions>
  /** Raft messages a controller hands to its transport, before the network sees them. */
  onRaftSend?: (from: NodeId, messages: readonly Message[]) => void
  /** After every step of `runFor` (one timer and the promise callbacks it caused). */
  onStep?: () => void
  /** A bug planted in every controller's Raft core, for the simulator to find (never in the agent). */
  plantedBug?: PlantedBug
  /**
   * What else runs in the controller's process beside its node (its presence agent), on
   * the same transport and clock: started before the node at each (re)start, stopped
   * with it by a crash or stop.
   */
  companion?: (id: NodeId, transport: Transport, clock: Clock) => { stop: () => void }
}

/** Lets promise callbacks, and whatever they queue, run before time moves again. */
const settleMicrotasks = (): Promise<void> => new Promise(resolve => setImmediate(resolve))

interface Seat {
  id: NodeId
  storage: SimStorage
  clock: AgentClock
  /** Requests held while the controller is paused. */
  held: Array<() => void> | undefined
  node: ModelReplica | undefined
  /** The companion of the running node (SimControllerGroupOptions.companion). */
  companion: { stop: () => void } | undefined
  /** Started empty, to be added to a running group. */
  joiner: boolean
  /** The running node's deferred steps not yet run (a crash drops them). */
  deferred: Map<TimerHandle, () => void>
}

/** Deferred steps (cantripd's setImmediate) the controllers scheduled, ran, and lost to a crash. */
export interface DeferralCounts {
  scheduled: number
  ran: number
  dropped: number
}

export class SimControllerGroup {
  readonly sim: Simulation
  readonly network: SimNetwork
  readonly #seats: Seat[] = []
  readonly #options: SimControllerGroupOptions
  readonly #clockRandom
  readonly #deferrals: DeferralCounts = { scheduled: 0, ran: 0, dropped: 0 }
  /**
   * The seats' ids and storages, rebuilt only when a seat is added: the safety checkers
   * read both after every simulated step, and building them from the seats each time
   * was garbage made at every step.
   */
  #ids: readonly NodeId[] = []
  #storages: readonly SimStorage[] = []

  private constructor (sim: Simulation, options: SimControllerGroupOptions) {
    this.sim = sim
    this.#options = options
    this.network = new SimNetwork({
      clock: sim.clock,
      random: sim.random('network'),
      ...(options.latency === undefined ? {} : { latency: options.latency }),
      ...(options.traceNetwork === true ? { onEvent: (text: string) => { sim.trace(`net ${text}`) } } : {})
    })
    this.#clockRandom = sim.random('clock')
  }

  static async create (sim: Simulation, options: SimControllerGroupOptions): Promise<SimControllerGroup> {
    assert(Number.isSafeInteger(options.size) && options.size > 0, `controller group: size must be a positive integer, got ${String(options.size)}`)
    const group = new SimControllerGroup(sim, options)
    for (let i = 0; i < options.size; i++) group.#addSeat(false)
    for (let i = 0; i < options.size; i++) await group.restart(i)
    return group
  }

  get ids (): readonly NodeId[] {
    return this.#ids
  }

  get storages (): readonly SimStorage[] {
    return this.#storages
  }

  /** The founding voters (a joiner becomes one only through a membership change). */
  get founders (): NodeId[] {
    return this.#seats.filter(seat => !seat.joiner).map(seat => seat.id)
  }

  /** The running node of controller `i`, or undefined while it is down. */
  node (i: number): ModelReplica | undefined {
    const node = this.#seats[i]?.node
    return node === undefined || node.stopped ? undefined : node
  }

  nodes (): ModelReplica[] {
    return this.#seats.map((_, i) => this.node(i)).filter((node): node is ModelReplica => node !== undefined)
  }

  /** The running Raft host of controller `i`, or undefined while it is down. */
  host (i: number): ModelRaftHost | undefined {
    return this.node(i)?.host
  }

  hosts (): ModelRaftHost[] {
    return this.nodes().map(node => node.host)
  }

  isUp (i: number): boolean {
    return this.node(i) !== undefined
  }

  /** Deferred steps so far, for tests. */
  get deferrals (): Readonly<DeferralCounts> {
    return { ...this.#deferrals }
  }

  /** Deferred steps controller `i` has scheduled that have not run yet. */
  deferredPending (i: number): number {
    return this.#seats[i]?.deferred.size ?? 0
  }

  isPaused (i: number): boolean {
    return this.#seats[i]?.held !== undefined
  }

  indexOf (id: NodeId): number {
    return this.#seats.findIndex(seat => seat.id === id)
  }

  /** Power cut on controller `i`: the node stops at once and unsynced writes are lost. */
  crash (i: number): void {
    const seat = this.#seats[i]!
    if (seat.node === undefined) return
    seat.node.crash()
    seat.companion?.stop()
    seat.companion = undefined
    this.network.crash(seat.id)
    seat.storage.crash()
    seat.node = undefined
    this.#dropDeferred(seat)
    // A power cut also ends a pause; what was held is lost with the process.
    if (seat.held !== undefined) {
      seat.held = undefined
      seat.clock.resume()
    }
    this.sim.trace(`controller ${seat.id} crashed`)
  }

  /** Starts controller `i` (again) from what its storage holds; a no-op if it is up. */
  async restart (i: number): Promise<ModelReplica> {
    const running = this.node(i)
    if (running !== undefined) return running
    const seat = this.#seats[i]!
    const options = this.#options
    const transport = this.#transportFor(seat)
    seat.companion = options.companion?.(seat.id, transport, seat.clock)
    const defer = this.#deferral(seat)
    const node = await ModelReplica.start({
      id: seat.id,
      peers: this.founders,
      join: seat.joiner,
      storage: seat.storage,
      transport,
      clock: seat.clock,
      random: this.sim.random(`raft/${seat.id}`),
      tickMs: options.tickMs ?? 10,
      electionTicks: options.electionTicks ?? 10,
      heartbeatTicks: options.heartbeatTicks ?? 2,
      ...(options.snapshotEveryEntries === undefined ? {} : { snapshotEveryEntries: options.snapshotEveryEntries }),
      ...(options.leaseDurationMs === undefined ? {} : { leaseDurationMs: options.leaseDurationMs }),
      ...(options.singularWorkers === undefined ? {} : { singularWorkers: options.singularWorkers }),
      ...(options.plantedBug === undefined ? {} : { commitRule: plantedCommitRule(options.plantedBug) }),
      ...(options.onRaftSend === undefined ? {} : { onSend: (_to: NodeId, messages: readonly Message[]) => { options.onRaftSend!(seat.id, messages) } }),
      // cantripd's scheduling (agent/roles/hosted-model.ts), not an ordering it never runs.
      deferApply: defer,
      deferLeaderWrite: defer,
      ...(options.hostOptions?.(seat.id) ?? {})
    })
    seat.node = node
    this.sim.trace(`controller ${seat.id} started at term ${node.host.status().term}`)
    return node
  }

  /** Adds an empty server (`cN`) and starts it; it joins once the leader adds it as a voter. */
  async addController (): Promise<number> {
    const i = this.#addSeat(true)
    await this.restart(i)
    return i
  }

  /** SIGSTOP: timers stop and requests reaching it wait until `resume`. */
  pause (i: number): void {
    const seat = this.#seats[i]!
    if (seat.node === undefined || seat.held !== undefined) return
    seat.held = []
    seat.clock.pause()
    this.sim.trace(`controller ${seat.id} paused`)
  }

  resume (i: number): void {
    const seat = this.#seats[i]!
    const held = seat.held
    if (held === undefined) return
    seat.held = undefined
    seat.clock.resume()
    for (const release of held) release()
    this.sim.trace(`controller ${seat.id} resumed`)
  }

  partition (groups: NodeId[][]): void { this.network.partition(groups) }
  isolate (i: number): void { this.network.isolate(this.#seats[i]!.id) }
  heal (): void { this.network.heal() }

  /**
   * The unique running leader of the highest term, if any. Running nodes that believe
   * they lead in older terms (cut off, not yet stepped down) are ignored.
   */
  leader (): ModelRaftHost | undefined {
    // Asked after every simulated step: basicStatus, not status(), which copies progress,
    // and the seats walked in place rather than through nodes() and hosts(), two new
    // arrays a step.
    let best: ModelRaftHost | undefined
    let bestTerm = -1
    for (let i = 0; i < this.#seats.length; i++) {
      const host = this.node(i)?.host
      if (host === undefined) continue
      const status = host.basicStatus()
      if (status.role !== 'leader') continue
      if (best === undefined || status.term > bestTerm) {
        best = host
        bestTerm = status.term
      }
    }
    return best
  }

  leaderNode (): ModelReplica | undefined {
    const leader = this.leader()
    return leader === undefined ? undefined : this.nodes().find(node => node.host === leader)
  }

  /** Lets `ms` of simulated time pass, one timer at a time, settling promises after each. */
  async runFor (ms: number): Promise<void> {
    const clock = this.sim.clock
    const until = clock.now() + ms
    await settleMicrotasks()
    this.#options.onStep?.()
    for (let fired = 0; ; fired++) {
      const due = clock.nextDueAt()
      if (due === undefined || due > until) break
      assert(fired < limits.simClockTimersPerAdvanceMax,
        `controller group: more than ${limits.simClockTimersPerAdvanceMax} timers in one runFor at ${clock.now()} ms`)
      clock.runNext()
      await settleMicrotasks()
      this.#options.onStep?.()
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

  /** Stops every running node gracefully. */
  async stop (): Promise<void> {
    for (let i = 0; i < this.#seats.length; i++) {
      const seat = this.#seats[i]!
      this.resume(i)
      if (seat.node === undefined) continue
      await this.#stopNode(seat, seat.node)
      seat.companion?.stop()
      seat.companion = undefined
      this.network.crash(seat.id)
      seat.node = undefined
    }
  }

  /**
   * A zero-delay step of the simulated clock for `seat`'s running process, forgotten
   * (never run) if that process crashes before its turn; paused with the process, as
   * AgentClock holds its timers.
   */
  #deferral (seat: Seat): Deferral {
    return run => {
      assert(seat.deferred.size < limits.simDeferredStepsPerControllerMax,
        `controller group: more than ${limits.simDeferredStepsPerControllerMax} deferred steps pending on ${seat.id}`)
      this.#deferrals.scheduled++
      const handle = seat.clock.setTimeout(() => {
        // Dropped by a crash (a paused clock may still hold the timer: AgentClock.resume).
        if (!seat.deferred.delete(handle)) return
        this.#deferrals.ran++
        run()
      }, 0)
      seat.deferred.set(handle, run)
    }
  }

  #dropDeferred (seat: Seat): void {
    for (const handle of seat.deferred.keys()) seat.clock.clearTimeout(handle)
    this.#deferrals.dropped += seat.deferred.size
    seat.deferred.clear()
  }

  /**
   * A graceful stop awaits the Ready in hand, which may wait on a deferred step; time does
   * not move here, so the steps run as setImmediate would while the process winds down.
   */
  async #stopNode (seat: Seat, node: ModelReplica): Promise<void> {
    let stopped = false
    const stopping = node.stop().finally(() => { stopped = true })
    for (let round = 0; !stopped && round < limits.simDeferredStepsPerControllerMax; round++) {
      for (const [handle, run] of [...seat.deferred]) {
        seat.clock.clearTimeout(handle)
        seat.deferred.delete(handle)
        this.#deferrals.ran++
        run()
      }
      await settleMicrotasks()
    }
    await stopping
    this.#dropDeferred(seat)
  }

  #addSeat (joiner: boolean): number {
    const i = this.#seats.length
    const drift = this.#options.clockDriftMax ?? 0
    const clock = new AgentClock(this.sim.clock, { drift: drift === 0 ? 0 : (this.#clockRandom.next() * 2 - 1) * drift })
    this.#seats.push({ id: `c${i}`, storage: new SimStorage(), clock, held: undefined, node: undefined, companion: undefined, joiner, deferred: new Map() })
    this.#ids = this.#seats.map(seat => seat.id)
    this.#storages = this.#seats.map(seat => seat.storage)
    return i
  }

  /** The seat's SimTransport, with pauses holding requests (Raft sends are reported by the host: onSend). */
  #transportFor (seat: Seat): Transport {
    const inner = this.network.transport(seat.id)
    const gate = async (): Promise<void> => {
      const held = seat.held
      if (held !== undefined) await new Promise<void>(resolve => { held.push(resolve) })
    }
    return {
      peerId: inner.peerId,
      subscribe: (topic, onMessage) => inner.subscribe(topic, onMessage),
      setTopicValidator: (topic, validator) => { inner.setTopicValidator(topic, validator) },
      publish: async (topic, data) => { await inner.publish(topic, data) },
      handle: (protocol: string, handler: RequestHandler) => {
        inner.handle(protocol, async (request: IncomingRequest) => {
          await gate()
          return await handler(request)
        })
      },
      unhandle: protocol => { inner.unhandle(protocol) },
      request: async (peer: NodeId, protocol: string, data: Uint8Array, options: RequestOptions) => {
        return await inner.request(peer, protocol, data, options)
      },
      connectedPeers: () => inner.connectedPeers(),
      counters: () => inner.counters(),
      // A paused process reads the close its kernel saw only once it runs again.
      onPeerDisconnected: listener => inner.onPeerDisconnected(peer => {
        if (seat.held === undefined) listener(peer)
        else seat.held.push(() => { listener(peer) })
      }),
      stop: async () => { await inner.stop() }
    }
  }
}
