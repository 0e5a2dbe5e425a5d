/**
 * The whole system of one `cantrip sim` run on one Simulation: a SimControllerGroup of the
 * scenario's controllers (Raft + model + controller actor), the Provisioner as their
 * singular worker against a SimProvider, and a machine agent booted on every instance
 * that reaches DEPLOYED (through an injected factory: the simulated machine agents live
 * in sim-machine-agent.ts), plus the admin client and every fault of the scenario
 * vocabulary with its undo.
 *
 * Faults resolve their targets when they fire (`leader` is whoever leads then) and are
 * skipped, and recorded as skipped, when there is nothing to hit. Faults with `forMs`
 * undo themselves on a timer; `heal()` undoes everything still in force. Overlapping
 * faults of one kind compose: undoing one re-applies the others still active.
 */
import type { IdentifyPeer } from '../../actors/controller/controller-api.ts'
import { StorageFailedError } from '../../runtime/errors.ts'
import { defaultModelName } from '../../runtime/ids.ts'
import type { CommandResult, Entity, ModelCommand, ModelContext } from '../../runtime/model/model-types.ts'
import { tableValues } from '../../runtime/model/table.ts'
import type { Entry, Message, NodeId } from '../../runtime/raft/raft-types.ts'
import type { Random } from '../../runtime/random.ts'
import { AgentClock } from '../agent-clock.ts'
import { SimControllerGroup } from '../sim-controller-group.ts'
import { SimProvider, type SimNodeTransition } from '../../providers/sim-provider.ts'
import type { SimStorage } from '../sim-storage.ts'
import type { Simulation } from '../simulation.ts'
import type { FaultEvent, FaultTarget, Scenario, ScenarioCharm } from '../scenario/scenario-types.ts'
import type { HookFaultBook, HookRunRecord, SimMachineAgentApi, SimMachineAgentOptions } from './machine-agent-types.ts'
import type { ConvergenceMemo } from './system-convergence.ts'
import type { RunRecorder } from './run-recorder.ts'
import { SimControllerPresence } from './controller-presence.ts'
import { startSimProvisioner } from './sim-provisioner.ts'
import { describe, describePartition, forText } from './fault-text.ts'

/** The parts of the system other files provide; the runner fills the defaults. */
export interface SystemParts {
  /** Boots the machine agent of a deployed instance (sim-machine-agent.ts). */
  startMachineAgent?: (options: SimMachineAgentOptions) => SimMachineAgentApi
  /** A fresh book of the schedule's hook faults for one run, shared by its agents (hook-fault-book.ts). */
  newHookFaults?: () => HookFaultBook
  /** What still keeps the agents from matching the model (system-convergence.ts); empty when converged. */
  convergence?: (model: ModelContext, agents: readonly SimMachineAgentApi[], charms: Readonly<Record<string, ScenarioCharm>>, max?: number, memo?: ConvergenceMemo) => string[]
}

/** Where the invariant checkers plug in; set before the clock first runs. */
export interface WorldObservers {
  onStep?: () => void
  onApplied?: (id: NodeId, entry: Entry) => void
  onRaftSend?: (from: NodeId, messages: readonly Message[]) => void
  onHook?: (run: HookRunRecord) => void
  onUnitEvent?: SimMachineAgentOptions['onUnitEvent']
  /** A unit's actor ended out of order (its agent killed, or it failed), with what its disk kept. */
  onUnitRestart?: SimMachineAgentOptions['onUnitRestart']
}

export interface SystemWorldOptions extends SystemParts {
  scenario: Scenario
  sim: Simulation
  recorder: RunRecorder
}

/** Raft timing of the real agent (agent/roles/hosted-model.ts), used when the scenario gives none. */
export const agentRaftTiming = { tickMs: 100, electionTicks: 6, heartbeatTicks: 1 } as const

export function raftTiming (scenario: Scenario): { tickMs: number, electionTicks: number, heartbeatTicks: number } {
  const raft = scenario.raft
  return raft === undefined ? agentRaftTiming : { tickMs: raft.tickMs, electionTicks: raft.electionTicks, heartbeatTicks: raft.heartbeatTicks }
}

/**
 * The Raft append size when the scenario sets one (RaftHostOptions.maxSizePerMessage).
 * Small appends make a catch-up after a leader change span several messages, as the
 * real 512 KiB limit does under real load; that is when a leader may count replicas of
 * an entry of an earlier term alone (the Figure 8 bug). Spread in, so the option passes
 * through to the Raft core whichever RaftHostOptions this tree declares.
 */
function raftMessageSize (scenario: Scenario): object {
  const bytes = scenario.raft?.maxMessageBytes
  return bytes === undefined ? {} : { maxSizePerMessage: bytes }
}

/**
 * Log entries between two Raft snapshots in the simulator (the agent: 10,000). Shorter
 * logs keep the safety checker's per-step walk over every persisted log cheap, and
 * lagging controllers are sent RaftSnapshots more often, which is coverage too.
 */
export const simSnapshotEveryEntries = 256

const admin: Entity = { kind: 'user', name: 'admin' }
/** Admin attempts at one command (each already retried inside ModelReplica.submit). */
export const adminAttemptsMax = 20
/** One admin attempt may take this long (a paused controller never answers). */
const adminAttemptTimeoutMs = 8_000
const adminRetryDelayMs = 500

export type Resolved = { kind: 'controller', index: number, peer: string } | { kind: 'machine', id: string, peer: string, agent: SimMachineAgentApi | undefined }

/** Outcome of applying one fault: what it did, or why it did nothing. */
export interface FaultOutcome { text: string, skipped?: string }

interface Active<T> { id: number, value: T }
type NetworkSettingKind = 'loss' | 'duplicate' | 'delay' | 'reorder'

export class SystemWorld {
  readonly scenario: Scenario
  readonly sim: Simulation
  readonly group: SimControllerGroup
  readonly cloud: SimProvider
  readonly parts: SystemParts
  /** This run's hook faults; undefined when the run has none (hook faults are then skipped). */
  readonly hookFaults: HookFaultBook | undefined
  readonly observers: WorldObservers = {}
  readonly recorder: RunRecorder
  /** Every controller's presence agent (controller-presence.ts). */
  readonly presence: SimControllerPresence
  /** Machine agents by machine id, in boot order. */
  readonly agents = new Map<string, SimMachineAgentApi>()
  /** Errors outside any invariant (an agent failing to start): the run crashes on them. */
  readonly errors: string[] = []
  readonly #faultsRandom: Random
  readonly #listeners = new Map<NodeId, Set<() => void>>()
  readonly #drift = new Map<string, number>()
  #faultIds = 0
  #partitions: Array<Active<() => void>> = []
  readonly #network: Record<NetworkSettingKind, Array<Active<() => void>>> = { loss: [], duplicate: [], delay: [], reorder: [] }
  readonly #providerFailures: Array<Active<{ step: 'allocate' | 'deploy' | 'release' | 'all', rate: number }>> = []
  readonly #diskFull = new Map<SimStorage, Set<number>>()
  #healed = false

  private constructor (options: SystemWorldOptions, group: SimControllerGroup, cloud: SimProvider, presence: SimControllerPresence) {
    this.presence = presence
    this.scenario = options.scenario
    this.sim = options.sim
    this.recorder = options.recorder
    this.group = group
    this.cloud = cloud
    this.parts = {
      ...(options.startMachineAgent === undefined ? {} : { startMachineAgent: options.startMachineAgent }),
      ...(options.newHookFaults === undefined ? {} : { newHookFaults: options.newHookFaults }),
      ...(options.convergence === undefined ? {} : { convergence: options.convergence })
    }
    this.#faultsRandom = options.sim.random('faults')
    this.hookFaults = options.newHookFaults?.()
  }

  static async create (options: SystemWorldOptions): Promise<SystemWorld> {
    const { scenario, sim } = options
    let world: SystemWorld | undefined
    const cloud = new SimProvider({
      clock: sim.clock,
      random: sim.random('cloud'),
      nodes: scenario.provider.nodes,
      latencyMs: scenario.provider.latencyMs,
      failureRates: scenario.provider.failureRates,
      onTransition: t => { if (world !== undefined) world.#onCloudTransition(t) }
    })
    const tokens = sim.random('tokens')
    const hex = (digits: number): string => Array.from({ length: digits }, () => tokens.int(0, 15).toString(16)).join('')
    const raft = raftTiming(scenario)
    const electionMs = raft.tickMs * raft.electionTicks
    const presence = new SimControllerPresence(defaultModelName, () => sim.clock.now())
    const group = await SimControllerGroup.create(sim, {
      size: scenario.controllers,
      ...raft,
      snapshotEveryEntries: scenario.raft?.snapshotEveryEntries ?? simSnapshotEveryEntries,
      latency: { kind: 'uniform', minMs: scenario.network.latencyMs[0], maxMs: scenario.network.latencyMs[1] },
      ...(scenario.bugs.includes('raft-commit-previous-term') ? { plantedBug: 'raft-commit-previous-term' as const } : {}),
      hostOptions: id => ({
        // The controller API for the machine agents, which are known by their peer ids.
        agents: { modelUuid: defaultModelName, identify: identifySimPeer, presenceOf: presence.liveness(id).presenceOf },
        // A few election timeouts: a client gives up on a cut-off leader and tries another.
        proposeTimeoutMs: 6 * electionMs,
        readTimeoutMs: 4 * electionMs,
        ...raftMessageSize(scenario),
        onApplied: entry => {
          world?.observers.onApplied?.(id, entry)
          if (world !== undefined) for (const listener of [...world.#listeners.get(id) ?? []]) listener()
        }
      }),
      onRaftSend: (from, messages) => { world?.observers.onRaftSend?.(from, messages) },
      singularWorkers: controller => world === undefined ? { stop: () => {} } : world.#startProvisioner(controller, hex),
      onStep: () => { world?.observers.onStep?.() },
      companion: (id, transport, clock) => presence.start(id, transport, clock)
    })
    world = new SystemWorld(options, group, cloud, presence)
    return world
  }

  // -------------------------------------------------------------------------------
  // The cluster as it is now

  /** The freshest model: the leader's, else the most advanced running controller's. */
  model (): ModelContext | undefined {
    const leader = this.group.leaderNode()
    if (leader !== undefined) return leader.host.state()
    let best: ModelContext | undefined
    for (const node of this.group.nodes()) {
      const model = node.host.state()
      if (best === undefined || model.revision > best.revision) best = model
    }
    return best
  }

  agentList (): SimMachineAgentApi[] {
    return [...this.agents.values()]
  }

  // -------------------------------------------------------------------------------
  // Admin client

  /**
   * Commits `command` through the leader (any running controller forwards), retrying
   * with the same request id (it applies at most once) until it is answered. Does not
   * move the clock: the caller runs the world meanwhile.
   */
  async submit (command: ModelCommand): Promise<CommandResult> {
    let last = 'no controller running'
    for (let attempt = 1; attempt <= adminAttemptsMax; attempt++) {
      const node = this.group.leaderNode() ?? this.group.nodes()[0]
      if (node !== undefined) {
        try {
          return await this.#withTimeout(node.submit(command), adminAttemptTimeoutMs)
        } catch (error) {
          last = error instanceof Error ? error.message : String(error)
        }
      }
      await this.sleep(adminRetryDelayMs)
    }
    throw new Error(`sim: admin command ${command.type} (${command.requestId}): no answer after ${adminAttemptsMax} attempts: ${last}`)
  }

  /** The command as the admin proposes it. */
  command (requestId: string, body: DistributiveOmit<ModelCommand, 'requestId' | 'proposer'>): ModelCommand {
    return { ...body, requestId, proposer: admin } as ModelCommand
  }

  /** Runs the world until `promise` settles or `ms` pass; undefined if it did not resolve. */
  async drive<T> (promise: Promise<T>, ms: number): Promise<{ value: T } | { error: unknown } | undefined> {
    let outcome: { value: T } | { error: unknown } | undefined
    promise.then(value => { outcome = { value } }, (error: unknown) => { outcome = { error } })
    await this.group.runUntil(() => outcome !== undefined, ms, 5)
    return outcome
  }

  async sleep (ms: number): Promise<void> {
    await new Promise<void>(resolve => { this.sim.clock.setTimeout(resolve, ms) })
  }

  async #withTimeout<T> (promise: Promise<T>, ms: number): Promise<T> {
    let timer: ReturnType<typeof this.sim.clock.setTimeout> | undefined
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = this.sim.clock.setTimeout(() => { reject(new Error(`no answer within ${ms} ms`)) }, ms)
    })
    try {
      return await Promise.race([promise, timeout])
    } finally {
      if (timer !== undefined) this.sim.clock.clearTimeout(timer)
    }
  }

  // -------------------------------------------------------------------------------
  // Provisioner and machine agents

  #startProvisioner (controller: NodeId, hex: (digits: number) => string): { stop: () => void } {
    const node = this.group.nodes().find(n => n.id === controller)
    if (node === undefined) return { stop: () => {} }
    const listeners = this.#listeners
    const provisioner = startSimProvisioner({
      node,
      cloud: this.cloud,
      controllers: this.group.ids,
      hex,
      onModelChange: listener => {
        const set = listeners.get(controller) ?? new Set()
        listeners.set(controller, set)
        set.add(listener)
        return () => { set.delete(listener) }
      },
      liveness: this.presence.liveness(controller).heard,
      startsInFlightMax: this.scenario.provider.startsInFlight
    })
    this.sim.trace(`provisioner starts on ${controller}`)
    return {
      stop: () => {
        this.sim.trace(`provisioner stops on ${controller}`)
        provisioner.stop()
      }
    }
  }

  #onCloudTransition (t: SimNodeTransition): void {
    const node = t.node
    this.sim.trace(`cloud ${node.instanceId} ${t.from}→${node.state} ${node.machineId ?? ''}`)
    const machineId = node.machineId
    if (machineId === undefined) return
    if (node.state === 'DEPLOYED' && !this.agents.has(machineId)) this.#bootAgent(machineId, node.bootstrap)
    // The instance is gone (released): its agent loses power with it.
    if (node.state === 'RELEASING' && t.from === 'DEPLOYED') {
      const agent = this.agents.get(machineId)
      if (agent !== undefined && agent.state !== 'down') this.#crashAgent(agent, 'instance released')
    }
  }

  #bootAgent (machineId: string, bootstrap: Uint8Array | undefined): void {
    const start = this.parts.startMachineAgent
    if (start === undefined) return
    const agent = start({
      sim: this.sim,
      network: this.group.network,
      machineId,
      model: defaultModelName,
      controllers: this.group.ids,
      charms: this.scenario.charms,
      hookFaults: this.hookFaults ?? noHookFaults,
      ...(bootstrap === undefined ? {} : { bootstrap }),
      drift: this.#drift.get(`machine/${machineId}`) ?? 0,
      onHook: run => { this.observers.onHook?.(run) },
      onUnitEvent: (unit, event) => { this.observers.onUnitEvent?.(unit, event) },
      onUnitRestart: (unit, durable) => { this.observers.onUnitRestart?.(unit, durable) }
    })
    this.agents.set(machineId, agent)
    this.#startAgent(agent, 'booted')
  }

  #startAgent (agent: SimMachineAgentApi, why: string): void {
    this.recorder.record({ kind: 'agent', agent: agent.peerId, state: 'up' }, `agent ${agent.peerId} up (${why})`)
    agent.start().catch((error: unknown) => {
      this.errors.push(`machine agent ${agent.machineId} failed to start: ${error instanceof Error ? error.stack ?? error.message : String(error)}`)
    })
  }

  #crashAgent (agent: SimMachineAgentApi, why: string): void {
    agent.crash()
    this.recorder.record({ kind: 'agent', agent: agent.peerId, state: 'down' }, `agent ${agent.peerId} down (${why})`)
  }

  // -------------------------------------------------------------------------------
  // Faults

  /** Applies `fault` now (its time has come), scheduling its undo when it has `forMs`. */
  async applyFault (fault: FaultEvent): Promise<FaultOutcome> {
    const outcome = await this.#apply(fault)
    this.recorder.record(
      { kind: 'fault', fault, text: outcome.text, ...(outcome.skipped === undefined ? {} : { skipped: outcome.skipped }) },
      `fault ${outcome.text}${outcome.skipped === undefined ? '' : ` skipped: ${outcome.skipped}`}`)
    return outcome
  }

  async #apply (fault: FaultEvent): Promise<FaultOutcome> {
    switch (fault.kind) {
      case 'crash': return this.#onTarget(fault.kind, fault.target, target => {
        if (target.kind === 'controller') {
          if (!this.group.isUp(target.index)) return 'already down'
          this.group.crash(target.index)
          this.recorder.record({ kind: 'agent', agent: target.peer, state: 'down' }, `controller ${target.peer} down`)
          return undefined
        }
        if (target.agent === undefined || target.agent.state === 'down') return 'already down'
        this.#crashAgent(target.agent, 'crash')
        return undefined
      })
      case 'restart': {
        const target = this.#resolve(fault.target)
        if (typeof target === 'string') return { text: `restart ${fault.target}`, skipped: target }
        const text = `restart ${describe(target)}`
        if (target.kind === 'controller') {
          if (this.group.isUp(target.index)) return { text, skipped: 'already up' }
          await this.group.restart(target.index)
          this.recorder.record({ kind: 'agent', agent: target.peer, state: 'up' }, `controller ${target.peer} up`)
          return { text }
        }
        if (target.agent === undefined || target.agent.state !== 'down' || target.agent.finished) return { text, skipped: 'not down' }
        if (!this.#hasLiveInstance(target.id)) return { text, skipped: 'its instance is gone' }
        this.#startAgent(target.agent, 'restart')
        return { text }
      }
      case 'pause': return this.#onTarget(fault.kind, fault.target, target => {
        if (!this.#pause(target)) return 'not running'
        if (fault.forMs !== undefined) this.#after(fault.forMs, () => { this.#resume(target) })
        return undefined
      }, fault.forMs)
      case 'resume': return this.#onTarget(fault.kind, fault.target, target => this.#resume(target) ? undefined : 'not paused')
      case 'partition': return this.#partition(fault)
      case 'heal': {
        this.#partitions = []
        this.group.network.heal()
        return { text: 'heal' }
      }
      case 'reset-connection': {
        const [from, to] = [this.#peerOf(fault.from), this.#peerOf(fault.to)]
        const text = `reset-connection ${fault.from}<->${fault.to}`
        if (from === undefined || to === undefined) return { text, skipped: `no ${from === undefined ? fault.from : fault.to}` }
        if (from === to) return { text, skipped: 'the same peer' }
        this.group.network.resetConnection(from, to)
        return { text }
      }
      case 'loss': return this.#networkSetting('loss', `loss ${fault.probability}`, fault.forMs,
        () => { this.group.network.setLoss(fault.probability) }, () => { this.group.network.setLoss(0) })
      case 'duplicate': return this.#networkSetting('duplicate', `duplicate ${fault.probability}`, fault.forMs,
        () => { this.group.network.setDuplication(fault.probability) }, () => { this.group.network.setDuplication(0) })
      case 'delay': return this.#networkSetting('delay', `delay ${fault.minMs}..${fault.maxMs} ms`, fault.forMs,
        () => { this.group.network.setLatency({ kind: 'uniform', minMs: fault.minMs, maxMs: fault.maxMs }) },
        () => { this.group.network.setLatency({ kind: 'uniform', minMs: this.scenario.network.latencyMs[0], maxMs: this.scenario.network.latencyMs[1] }) })
      case 'reorder': return this.#networkSetting('reorder', `reorder ${fault.probability} extra ${fault.extraMaxMs} ms`, fault.forMs,
        () => { this.group.network.setReorder(fault.probability, fault.extraMaxMs) }, () => { this.group.network.setReorder(0, 0) })
      case 'clock-drift': return this.#onTarget(fault.kind, fault.target, target => {
        this.#setDrift(target, fault.rate)
        return undefined
      }, undefined, ` ${fault.rate}`)
      case 'disk-error': return this.#onTarget(fault.kind, fault.target, target => {
        const storage = this.#storageOf(target)
        if (storage === undefined) return 'no disk yet'
        storage.failNextWrites(fault.writes)
        return undefined
      }, undefined, ` ${fault.writes} writes`)
      case 'disk-full': return this.#onTarget(fault.kind, fault.target, target => {
        const storage = this.#storageOf(target)
        if (storage === undefined) return 'no disk yet'
        const id = ++this.#faultIds
        this.#setDiskFull(storage, id, true)
        if (fault.forMs !== undefined) this.#after(fault.forMs, () => { this.#setDiskFull(storage, id, false) })
        return undefined
      }, fault.forMs)
      case 'provider-failure': {
        const text = `provider-failure ${fault.step} ${fault.rate}${forText(fault.forMs)}`
        const active = { id: ++this.#faultIds, value: { step: fault.step, rate: fault.rate } }
        this.#providerFailures.push(active)
        this.#applyProviderFailures()
        if (fault.forMs !== undefined) {
          this.#after(fault.forMs, () => {
            const i = this.#providerFailures.indexOf(active)
            if (i >= 0) this.#providerFailures.splice(i, 1)
            this.#applyProviderFailures()
          })
        }
        return { text }
      }
      case 'hook-fail': {
        const text = `hook-fail ${fault.unit} ${fault.hook} x${fault.times}`
        const book = this.hookFaults
        if (book === undefined) return { text, skipped: 'no hook fault book in this run' }
        book.fail(fault.unit, fault.hook, fault.times)
        return { text }
      }
      case 'hook-hang': {
        const text = `hook-hang ${fault.unit} ${fault.hook}${forText(fault.forMs)}`
        const book = this.hookFaults
        if (book === undefined) return { text, skipped: 'no hook fault book in this run' }
        book.hang(fault.unit, fault.hook, fault.forMs === undefined ? undefined : this.sim.clock.now() + fault.forMs)
        return { text }
      }
    }
  }

  /** Resolves the target and runs `act` on it; `act` returns why it did nothing, if it did nothing. */
  #onTarget (kind: string, target: FaultTarget, act: (target: Resolved) => string | undefined, forMs?: number, extra = ''): FaultOutcome {
    const resolved = this.#resolve(target)
    if (typeof resolved === 'string') return { text: `${kind} ${target}${extra}${forText(forMs)}`, skipped: resolved }
    const text = `${kind} ${describe(resolved)}${extra}${forText(forMs)}`
    const skipped = act(resolved)
    return skipped === undefined ? { text } : { text, skipped }
  }

  /** The controller or machine a target names now, or why there is none. */
  #resolve (target: FaultTarget): Resolved | string {
    const group = this.group
    if (target === 'leader') {
      const leader = group.leader()
      if (leader === undefined) return 'no leader'
      const index = group.indexOf(leader.id)
      return { kind: 'controller', index, peer: leader.id }
    }
    if (target === 'follower') {
      const leader = group.leader()
      const followers = group.ids.map((_, i) => i).filter(i => group.isUp(i) && group.ids[i] !== leader?.id)
      if (followers.length === 0) return 'no running follower'
      const index = followers[this.#faultsRandom.int(0, followers.length - 1)]!
      return { kind: 'controller', index, peer: group.ids[index]! }
    }
    const [kind, n] = target.split('/') as [string, string]
    if (kind === 'controller') {
      const index = Number(n)
      if (!Number.isSafeInteger(index) || index < 0 || index >= group.ids.length) return `no controller ${n} (there are ${group.ids.length})`
      return { kind: 'controller', index, peer: group.ids[index]! }
    }
    const agent = this.agents.get(n)
    if (agent === undefined) return `no agent on machine ${n}`
    return { kind: 'machine', id: n, peer: agent.peerId, agent }
  }

  /** The peer id of a target for network faults; machines without an agent yet keep their future id. */
  #peerOf (target: FaultTarget | string): string | undefined {
    const resolved = this.#resolve(target as FaultTarget)
    if (typeof resolved !== 'string') return resolved.peer
    if (target.startsWith('machine/')) return `machine-${target.slice('machine/'.length)}`
    return undefined
  }

  #pause (target: Resolved): boolean {
    if (target.kind === 'controller') {
      if (!this.group.isUp(target.index) || this.group.isPaused(target.index)) return false
      this.group.pause(target.index)
    } else {
      if (target.agent === undefined || target.agent.state !== 'up') return false
      target.agent.pause()
    }
    this.recorder.record({ kind: 'agent', agent: target.peer, state: 'paused' }, `${target.peer} paused`)
    return true
  }

  #resume (target: Resolved): boolean {
    if (target.kind === 'controller') {
      if (!this.group.isPaused(target.index)) return false
      this.group.resume(target.index)
    } else {
      if (target.agent === undefined || target.agent.state !== 'paused') return false
      target.agent.resume()
    }
    this.recorder.record({ kind: 'agent', agent: target.peer, state: 'up' }, `${target.peer} resumed`)
    return true
  }

  #setDrift (target: Resolved, rate: number): void {
    if (target.kind === 'controller') {
      this.#drift.set(`controller/${target.index}`, rate)
      const clock = this.group.node(target.index)?.clock
      if (clock instanceof AgentClock) clock.setDrift(rate)
      return
    }
    this.#drift.set(`machine/${target.id}`, rate)
    target.agent?.setDrift(rate)
  }

  #storageOf (target: Resolved): SimStorage | undefined {
    return target.kind === 'controller' ? this.group.storages[target.index] : target.agent?.storage
  }

  #setDiskFull (storage: SimStorage, id: number, on: boolean): void {
    const set = this.#diskFull.get(storage) ?? new Set()
    this.#diskFull.set(storage, set)
    if (on) set.add(id)
    else set.delete(id)
    storage.setFaultHook(set.size === 0 ? undefined : event =>
      event.operation === 'get' || event.operation === 'range' ? undefined : new StorageFailedError('sim-storage', event.operation, 'no space left on device'))
  }

  #applyProviderFailures (): void {
    const base = this.scenario.provider.failureRates
    const rates = { ...base }
    for (const { value } of this.#providerFailures) {
      for (const step of ['allocate', 'deploy', 'release'] as const) {
        if (value.step === step || value.step === 'all') rates[step] = Math.max(rates[step], value.rate)
      }
    }
    this.cloud.setFailureRates(rates)
  }

  /** A network setting that later ones override; undoing one re-applies the latest still active. */
  #networkSetting (kind: NetworkSettingKind, text: string, forMs: number | undefined, apply: () => void, reset: () => void): FaultOutcome {
    const list = this.#network[kind]
    const active = { id: ++this.#faultIds, value: apply }
    list.push(active)
    apply()
    if (forMs !== undefined) {
      this.#after(forMs, () => {
        const i = list.indexOf(active)
        if (i < 0) return
        list.splice(i, 1)
        const latest = list[list.length - 1]
        if (latest === undefined) reset()
        else latest.value()
      })
    }
    return { text: `${text}${forText(forMs)}` }
  }

  #partition (fault: Extract<FaultEvent, { kind: 'partition' }>): FaultOutcome {
    const text = `partition ${describePartition(fault)}${forText(fault.forMs)}`
    const apply = this.#partitionAction(fault)
    if (typeof apply === 'string') return { text, skipped: apply }
    const active = { id: ++this.#faultIds, value: apply }
    this.#partitions.push(active)
    apply()
    if (fault.forMs !== undefined) {
      this.#after(fault.forMs, () => {
        const i = this.#partitions.indexOf(active)
        if (i < 0) return
        this.#partitions.splice(i, 1)
        this.group.network.heal()
        for (const other of this.#partitions) other.value()
      })
    }
    return { text }
  }

  /** What a partition does, with its targets resolved now; a string when it cannot apply. */
  #partitionAction (fault: Extract<FaultEvent, { kind: 'partition' }>): (() => void) | string {
    const network = this.group.network
    const controllers = this.group.ids
    const machines = this.agentList().map(agent => agent.peerId)
    switch (fault.shape) {
      case 'isolate': {
        const peer = this.#peerOf(fault.target)
        if (peer === undefined) return `no ${fault.target}`
        return () => { network.isolate(peer) }
      }
      case 'majority-minority': {
        if (fault.minority < 1 || fault.minority * 2 >= controllers.length) return `a minority of ${fault.minority} among ${controllers.length} controllers is not a minority`
        // The leader goes with the minority: the partition then costs it its seat.
        const leader = this.group.leader()?.id
        const ordered = leader === undefined ? [...controllers] : [leader, ...controllers.filter(id => id !== leader)]
        const minority = ordered.slice(0, fault.minority)
        const majority = [...ordered.slice(fault.minority), ...machines]
        return () => { network.partition([majority, minority]) }
      }
      case 'split': {
        const groups: string[][] = []
        for (const group of fault.groups) {
          const peers: string[] = []
          for (const member of group) {
            const peer = this.#peerOf(member)
            if (peer === undefined) return `no ${member}`
            if (!peers.includes(peer) && !groups.some(g => g.includes(peer))) peers.push(peer)
          }
          if (peers.length > 0) groups.push(peers)
        }
        if (groups.length === 0) return 'no group'
        return () => { network.partition(groups) }
      }
      case 'bridge': {
        const bridge = this.#peerOf(fault.bridge)
        if (bridge === undefined) return `no ${fault.bridge}`
        const others = controllers.filter(id => id !== bridge)
        const sideA = [...others.filter((_, i) => i % 2 === 0), ...machines.filter(id => id !== bridge)]
        const sideB = others.filter((_, i) => i % 2 === 1)
        if (sideB.length === 0) return 'fewer than two controllers beside the bridge'
        return () => { network.bridge(sideA, sideB, bridge) }
      }
      case 'one-way': {
        const from = this.#peerOf(fault.from)
        const to = this.#peerOf(fault.to)
        if (from === undefined || to === undefined) return `no ${from === undefined ? fault.from : fault.to}`
        if (from === to) return `${fault.from} and ${fault.to} are the same peer`
        return () => { network.cutOneWay(from, to) }
      }
      case 'machines-from-controllers': {
        const cut = fault.machines === 'all' ? machines : fault.machines.map(target => `machine-${target.replace(/^machine\//, '')}`)
        if (cut.length === 0) return 'no machine agent yet'
        return () => {
          for (const machine of cut) {
            for (const controller of controllers) {
              network.cutOneWay(machine, controller)
              network.cutOneWay(controller, machine)
            }
          }
        }
      }
    }
  }

  /** Runs `undo` `ms` from now, unless the heal phase came first. */
  #after (ms: number, undo: () => void): void {
    this.sim.clock.setTimeout(() => {
      if (this.#healed) return
      undo()
      this.sim.trace('fault undone')
    }, ms)
  }

  /**
   * The heal phase: everything still in force is undone. Downed controllers and agents
   * restart, paused ones resume, the network is clean, clocks run true, disks work, the
   * cloud fails only as the scenario says, and held hooks finish.
   */
  async heal (): Promise<void> {
    this.#healed = true
    const group = this.group
    for (let i = 0; i < group.ids.length; i++) {
      if (group.isPaused(i)) {
        group.resume(i)
        this.recorder.record({ kind: 'agent', agent: group.ids[i]!, state: 'up' }, `controller ${group.ids[i]!} resumed (heal)`)
      }
      const clock = group.node(i)?.clock
      if (clock instanceof AgentClock) clock.setDrift(0)
      group.storages[i]!.failNextWrites(0)
      group.storages[i]!.setFaultHook(undefined)
    }
    for (let i = 0; i < group.ids.length; i++) {
      if (group.isUp(i)) continue
      await group.restart(i)
      const clock = group.node(i)?.clock
      if (clock instanceof AgentClock) clock.setDrift(0)
      this.recorder.record({ kind: 'agent', agent: group.ids[i]!, state: 'up' }, `controller ${group.ids[i]!} up (heal)`)
    }
    this.#drift.clear()
    this.#partitions = []
    for (const list of Object.values(this.#network)) list.length = 0
    this.#providerFailures.length = 0
    this.#diskFull.clear()
    group.network.resetFaults()
    this.cloud.setFailureRates(this.scenario.provider.failureRates)
    for (const agent of this.agents.values()) {
      agent.setDrift(0)
      agent.storage.failNextWrites(0)
      agent.storage.setFaultHook(undefined)
      if (agent.state === 'paused') {
        agent.resume()
        this.recorder.record({ kind: 'agent', agent: agent.peerId, state: 'up' }, `agent ${agent.peerId} resumed (heal)`)
      } else if (agent.state === 'down' && !agent.finished && this.#hasLiveInstance(agent.machineId)) {
        this.#startAgent(agent, 'heal')
      }
    }
    this.hookFaults?.releaseAll()
    this.sim.trace('healed')
  }

  #hasLiveInstance (machineId: string): boolean {
    return this.cloud.instancesFor(machineId).some(node => node.state === 'DEPLOYED')
  }

  /** Orderly stop at the end of a run. */
  async stop (): Promise<void> {
    for (const agent of this.agents.values()) {
      if (agent.state === 'paused') agent.resume()
      if (agent.state === 'up') await agent.stop()
    }
    await this.group.stop()
  }

  // -------------------------------------------------------------------------------
  // Convergence

  /**
   * What keeps the provisioning from converged, or undefined: every alive machine that
   * hosts units has exactly one instance, DEPLOYED and recorded in the model, and the
   * cloud holds no instance that no machine of the model owns.
   */
  provisioningProblem (model: ModelContext): string | undefined {
    // Indexed once per check: at 1,000 machines and 5,000 units, scanning the cloud per
    // machine and the machines per unit made every liveness check quadratic.
    const live = this.cloud.nodes().filter(node => node.state === 'DEPLOYED' || node.state === 'ALLOCATED' || node.state === 'DEPLOYING')
    const liveByMachine = new Map<string, typeof live>()
    for (const node of live) {
      if (node.machineId === undefined) continue
      const list = liveByMachine.get(node.machineId) ?? []
      list.push(node)
      liveByMachine.set(node.machineId, list)
    }
    const machines = tableValues(model.machines)
    for (const machine of machines) {
      if (machine.life !== 'alive' || machine.units.length === 0) continue
      const instances = liveByMachine.get(machine.id) ?? []
      if (instances.length !== 1 || instances[0]!.state !== 'DEPLOYED') return `machine ${machine.id} has ${instances.map(n => `${n.instanceId}:${n.state}`).join(',') || 'no instance'}`
      if (machine.instanceId !== instances[0]!.instanceId) return `machine ${machine.id} records ${machine.instanceId ?? 'no instance'}, the cloud has ${instances[0]!.instanceId}`
    }
    const owned = new Set(machines.map(m => m.provisioning?.token))
    const stray = live.filter(node => !owned.has(node.token))
    if (stray.length > 0) return `stray instances ${stray.map(n => `${n.instanceId}(machine ${n.machineId ?? '?'})`).join(', ')}`
    const machineIds = new Set(machines.map(m => m.id))
    for (const unit of tableValues(model.units)) {
      if (!machineIds.has(unit.machine)) return `unit ${unit.name} has no machine`
    }
    return undefined
  }

  /** Controllers: a leader that serves a linearizable read (it committed in its term), every voter up and caught up. */
  async controllersProblem (): Promise<string | undefined> {
    const leader = this.group.leaderNode()
    if (leader === undefined) return 'no controller leads'
    const voters = leader.host.appliedConfig().voters
    const down = voters.filter(id => !this.group.isUp(this.group.indexOf(id)))
    if (down.length > 0) return `controllers down: ${down.join(', ')}`
    const read = await this.drive(leader.host.read(), 2_000)
    if (read === undefined || !('value' in read)) return `the leader ${leader.id} serves no read`
    const commit = leader.host.status().commit
    const behind = voters.filter(id => (this.group.host(this.group.indexOf(id))?.state().revision ?? 0) < commit)
    if (behind.length > 0) return `controllers behind the leader's commit ${commit}: ${behind.join(', ')}`
    const singular = this.group.nodes().filter(node => node.runsSingularWorkers()).map(node => node.id)
    if (singular.length !== 1 || singular[0] !== leader.id) return `singular workers run on ${singular.join(', ') || 'no controller'}, the leader is ${leader.id}`
    return undefined
  }
}

/** Who a peer of the simulated network is: `c<N>` a controller, `machine-<id>` the agent of machine `<id>`. */
export const identifySimPeer: IdentifyPeer = peer => {
  if (/^c\d+$/.test(peer)) return { kind: 'controller', id: peer }
  if (peer.startsWith('machine-') && peer.length > 'machine-'.length) return { kind: 'machine', id: peer.slice('machine-'.length) }
  return undefined
}

/** Hook faults when the run has no book: nothing injected (hook faults are then skipped). */
const noHookFaults: HookFaultBook = {
  fail: () => {},
  hang: () => {},
  releaseAll: () => {},
  take: () => undefined,
  onRelease: () => () => {}
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never
