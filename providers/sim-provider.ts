/**
 * A seeded MAAS-like cloud behind the `Provider` contract. A finite pool of nodes moves
 * through MAAS's states (READY → ALLOCATED → DEPLOYING → DEPLOYED, FAILED_DEPLOYMENT,
 * RELEASING → READY) on the injected clock; every latency and failure is drawn from the
 * injected `Random`, so one seed replays one history.
 *
 * The cloud is not the controller: a start or release that has reached it plays out on
 * its own timers whatever happens to the caller, so a controller crash in the simulator
 * leaves in-flight starts finishing (or failing) exactly as a real cloud would, and a new
 * leader asking again with the same token finds them.
 *
 * The node table stays inspectable (`nodes()`, `instancesFor()`, `deployedCount()`,
 * `violations()`) so the simulator can check "never two instances for one machine".
 */
import { assert } from '../runtime/assert.ts'
import type { Clock, TimerHandle } from '../runtime/clock.ts'
import {
  ProviderError,
  type InstanceInfo,
  type InstanceSpec,
  type InstanceStatus,
  type Provider,
  type ProviderFailure,
  type StartedInstance,
  type StartProgress
} from './provider-contract.ts'
import type { Random } from '../runtime/random.ts'

export type SimNodeState = 'READY' | 'ALLOCATED' | 'DEPLOYING' | 'DEPLOYED' | 'FAILED_DEPLOYMENT' | 'RELEASING'

/** One value per cloud step: the allocate call, the deployment, the release call. */
export interface SimProviderSteps<T> {
  readonly allocate: T
  readonly deploy: T
  readonly release: T
}

export interface SimProviderOptions {
  readonly clock: Clock
  readonly random: Random
  /** Nodes in the pool, `node-1` to `node-<nodes>`. */
  readonly nodes: number
  /** Nodes this controller may hold at once (allocated, deploying, deployed or failed); more rejects `quota`. */
  readonly quota?: number
  /** Mean delay of each step; each draw is uniform in [mean / 2, 3 mean / 2). */
  readonly latencyMs?: Partial<SimProviderSteps<number>>
  /**
   * Probability of each step failing: `allocate` is a transient API error, `deploy` a
   * FAILED_DEPLOYMENT (the node is released back to READY after a release delay),
   * `release` a transient API error on `stopInstances` that changes nothing.
   */
  readonly failureRates?: Partial<SimProviderSteps<number>>
  /** Every node state change, in order, for traces and for booting simulated machine agents. */
  readonly onTransition?: (transition: SimNodeTransition) => void
}

export interface SimNodeView {
  /** 1-based. */
  readonly index: number
  readonly instanceId: string
  readonly address: string
  readonly state: SimNodeState
  /** Set while the node is held (not READY). */
  readonly machineId?: string
  readonly token?: string
  readonly bootstrap?: Uint8Array
}

export interface SimNodeTransition {
  readonly atMs: number
  readonly from: SimNodeState
  readonly node: SimNodeView
}

export const simProviderDefaultLatencyMs: SimProviderSteps<number> = { allocate: 200, deploy: 3_000, release: 500 }

const noFailures: SimProviderSteps<number> = { allocate: 0, deploy: 0, release: 0 }

/** States in which a node counts as this machine's instance for the one-instance invariant. */
const liveStates: ReadonlySet<SimNodeState> = new Set(['ALLOCATED', 'DEPLOYING', 'DEPLOYED'])

const statusOf: Readonly<Record<Exclude<SimNodeState, 'READY'>, InstanceStatus>> = {
  ALLOCATED: 'allocated',
  DEPLOYING: 'deploying',
  DEPLOYED: 'running',
  FAILED_DEPLOYMENT: 'failed',
  RELEASING: 'stopping'
}

const messageOf: Readonly<Record<Exclude<SimNodeState, 'READY'>, string>> = {
  ALLOCATED: 'allocated',
  DEPLOYING: 'deploying: curtin installing',
  DEPLOYED: 'deployed',
  FAILED_DEPLOYMENT: 'failed deployment: curtin failed',
  RELEASING: 'releasing'
}

interface Start {
  readonly spec: InstanceSpec
  readonly promise: Promise<StartedInstance>
  readonly resolve: (started: StartedInstance) => void
  readonly reject: (error: ProviderError) => void
  readonly listeners: Array<(progress: StartProgress) => void>
  /** Pending allocate call. */
  timer?: TimerHandle
  node?: SimNode
  result?: StartedInstance
  settled: boolean
}

interface SimNode {
  readonly index: number
  readonly instanceId: string
  readonly address: string
  state: SimNodeState
  machineId?: string | undefined
  token?: string | undefined
  bootstrap?: Uint8Array | undefined
  /** The start this node is deploying for, until it settles. */
  start?: Start | undefined
  /** Pending deploy or release. */
  timer?: TimerHandle
}

export class SimProvider implements Provider {
  readonly name = 'sim'
  readonly #clock: Clock
  readonly #latencyRandom: Random
  readonly #failureRandom: Random
  readonly #placementRandom: Random
  #quota: number
  readonly #onTransition: ((transition: SimNodeTransition) => void) | undefined
  #latencyMs: SimProviderSteps<number>
  #failureRates: SimProviderSteps<number>
  readonly #nodes: SimNode[] = []
  readonly #byId = new Map<string, SimNode>()
  /** Starts by token: in flight, or settled with a running instance. Failed and stopped ones are dropped. */
  readonly #starts = new Map<string, Start>()
  readonly #deployed = new Map<string, number>()
  readonly #violations: string[] = []
  /** Failed starts by kind, for scenario summaries. */
  readonly counters: { failures: Partial<Record<ProviderFailure, number>> } = { failures: {} }

  constructor (options: SimProviderOptions) {
    assert(Number.isSafeInteger(options.nodes) && options.nodes >= 0, `sim-provider: nodes must be an integer >= 0, got ${String(options.nodes)}`)
    assert(options.quota === undefined || (Number.isSafeInteger(options.quota) && options.quota >= 0),
      `sim-provider: quota must be an integer >= 0, got ${String(options.quota)}`)
    this.#clock = options.clock
    this.#latencyRandom = options.random.stream('sim-provider/latency')
    this.#failureRandom = options.random.stream('sim-provider/failure')
    this.#placementRandom = options.random.stream('sim-provider/placement')
    this.#quota = options.quota ?? Number.POSITIVE_INFINITY
    this.#onTransition = options.onTransition
    this.#latencyMs = { ...simProviderDefaultLatencyMs }
    this.#failureRates = { ...noFailures }
    this.setLatency(options.latencyMs ?? {})
    this.setFailureRates(options.failureRates ?? {})
    for (let index = 1; index <= options.nodes; index++) {
      const node: SimNode = { index, instanceId: `node-${index}`, address: `10.0.${Math.floor(index / 250)}.${(index % 250) + 1}`, state: 'READY' }
      this.#nodes.push(node)
      this.#byId.set(node.instanceId, node)
    }
  }

  /** Changes the failure rates from now on (an injected fault); steps left out keep theirs. */
  /** A quota raised (or lowered) from now on, as an operator's support ticket would. */
  setQuota (quota: number | undefined): void {
    assert(quota === undefined || (Number.isSafeInteger(quota) && quota >= 0), `sim-provider: quota must be an integer >= 0, got ${String(quota)}`)
    this.#quota = quota ?? Number.POSITIVE_INFINITY
  }

  setFailureRates (rates: Partial<SimProviderSteps<number>>): void {
    for (const [step, rate] of Object.entries(rates)) {
      assert(typeof rate === 'number' && rate >= 0 && rate <= 1, `sim-provider: failure rate for "${step}" must be in [0, 1], got ${String(rate)}`)
    }
    this.#failureRates = { ...this.#failureRates, ...rates }
  }

  /** Changes the mean step latencies from now on; steps left out keep theirs. */
  setLatency (latencyMs: Partial<SimProviderSteps<number>>): void {
    for (const [step, ms] of Object.entries(latencyMs)) {
      assert(typeof ms === 'number' && Number.isFinite(ms) && ms >= 0, `sim-provider: latency for "${step}" must be a finite ms >= 0, got ${String(ms)}`)
    }
    this.#latencyMs = { ...this.#latencyMs, ...latencyMs }
  }

  startInstance (spec: InstanceSpec, onProgress?: (progress: StartProgress) => void): Promise<StartedInstance> {
    const known = this.#starts.get(spec.token)
    if (known !== undefined) {
      if (known.spec.machineId !== spec.machineId) {
        return Promise.reject(this.#error('invalid', spec, `token "${spec.token}" belongs to machine "${known.spec.machineId}"`))
      }
      if (onProgress !== undefined && !known.settled) {
        // A caller that joins late (a new leader retrying) still learns what already happened.
        const node = known.node
        if (node !== undefined) {
          callListener(onProgress, { type: 'allocated', instanceId: node.instanceId })
          if (node.state === 'DEPLOYING') callListener(onProgress, { type: 'deploying', message: messageOf.DEPLOYING })
        }
        known.listeners.push(onProgress)
      }
      return known.promise
    }
    const invalid = this.#invalidReason(spec)
    if (invalid !== undefined) return Promise.reject(this.#error('invalid', spec, invalid))

    let resolve!: (started: StartedInstance) => void
    let reject!: (error: ProviderError) => void
    const promise = new Promise<StartedInstance>((res, rej) => { resolve = res; reject = rej })
    const start: Start = { spec, promise, resolve, reject, listeners: onProgress === undefined ? [] : [onProgress], settled: false }
    this.#starts.set(spec.token, start)
    start.timer = this.#clock.setTimeout(() => { this.#allocate(start) }, this.#delay('allocate'))
    return promise
  }

  async stopInstances (instanceIds: readonly string[]): Promise<void> {
    if (instanceIds.length > 0 && this.#fails('release')) {
      throw new ProviderError(this.name, 'transient', `cannot stop instances ${instanceIds.map(id => `"${id}"`).join(', ')}: release API error`)
    }
    for (const instanceId of instanceIds) {
      const node = this.#byId.get(instanceId)
      if (node === undefined) continue
      switch (node.state) {
        case 'READY':
        case 'RELEASING':
          break
        case 'ALLOCATED':
        case 'DEPLOYING': {
          const start = node.start
          if (start !== undefined) this.#fail(start, 'deployment-failed', `instance "${instanceId}" was stopped while deploying`)
          this.#release(node)
          break
        }
        case 'DEPLOYED':
        case 'FAILED_DEPLOYMENT':
          this.#release(node)
          break
      }
    }
  }

  async allInstances (): Promise<InstanceInfo[]> {
    const instances: InstanceInfo[] = []
    for (const node of this.#nodes) {
      if (node.state === 'READY') continue
      instances.push({
        instanceId: node.instanceId,
        machineId: node.machineId ?? '',
        token: node.token ?? '',
        status: statusOf[node.state],
        addresses: [node.address],
        message: messageOf[node.state]
      })
    }
    return instances
  }

  /** Every node in the pool, in index order. */
  nodes (): SimNodeView[] {
    return this.#nodes.map(viewOf)
  }

  /** The nodes that count as `machineId`'s instance now (allocated, deploying or deployed). */
  instancesFor (machineId: string): SimNodeView[] {
    return this.#nodes.filter(node => node.machineId === machineId && liveStates.has(node.state)).map(viewOf)
  }

  /** How many instances were ever deployed for `machineId`. */
  deployedCount (machineId: string): number {
    return this.#deployed.get(machineId) ?? 0
  }

  /** Each time a machine got a second live instance, a message saying so; empty when the invariant held. */
  violations (): readonly string[] {
    return [...this.#violations]
  }

  #invalidReason (spec: InstanceSpec): string | undefined {
    if (spec.machineId === '') return 'no machine id'
    if (spec.token === '') return 'no idempotency token'
    if (spec.bootstrap.length === 0) return 'no bootstrap data'
    const arch = spec.constraints.arch
    if (arch !== undefined && arch !== 'amd64') return `no node has arch "${arch}"`
    if (spec.placement !== undefined && !this.#byId.has(spec.placement)) return `placement "${spec.placement}" names no node`
    return undefined
  }

  #allocate (start: Start): void {
    start.timer = undefined
    if (this.#fails('allocate')) {
      this.#fail(start, 'transient', 'allocate API error')
      return
    }
    const held = this.#nodes.filter(node => node.state !== 'READY' && node.state !== 'RELEASING').length
    if (held >= this.#quota) {
      this.#fail(start, 'quota', `quota of ${this.#quota} nodes exceeded`)
      return
    }
    const ready = this.#nodes.filter(node => node.state === 'READY' && (start.spec.placement === undefined || node.instanceId === start.spec.placement))
    if (ready.length === 0) {
      const where = start.spec.placement === undefined ? `pool of ${this.#nodes.length}` : `placement "${start.spec.placement}"`
      this.#fail(start, 'no-capacity', `no ready node (${where})`)
      return
    }
    const node = ready[this.#placementRandom.int(0, ready.length - 1)]!
    const { machineId, token, bootstrap } = start.spec
    const others = this.#nodes.filter(other => other.machineId === machineId && liveStates.has(other.state))
    if (others.length > 0) {
      this.#violations.push(`sim-provider: machine "${machineId}" got instance "${node.instanceId}" (token "${token}") while it has ` +
        others.map(other => `"${other.instanceId}" (${other.state}, token "${other.token ?? ''}")`).join(', ') + ` at ${this.#clock.now()} ms`)
    }
    node.machineId = machineId
    node.token = token
    node.bootstrap = bootstrap
    node.start = start
    start.node = node
    this.#transition(node, 'ALLOCATED')
    this.#progress(start, { type: 'allocated', instanceId: node.instanceId })
    this.#transition(node, 'DEPLOYING')
    this.#progress(start, { type: 'deploying', message: messageOf.DEPLOYING })
    node.timer = this.#clock.setTimeout(() => { this.#finishDeploy(node, start) }, this.#delay('deploy'))
  }

  #finishDeploy (node: SimNode, start: Start): void {
    node.timer = undefined
    node.start = undefined
    if (this.#fails('deploy')) {
      this.#transition(node, 'FAILED_DEPLOYMENT')
      this.#fail(start, 'deployment-failed', `node "${node.instanceId}" failed deployment`)
      // MAAS leaves a failed node until someone releases it; this cloud does so itself so the pool does not drain.
      node.timer = this.#clock.setTimeout(() => { this.#release(node) }, this.#delay('release'))
      return
    }
    this.#transition(node, 'DEPLOYED')
    this.#deployed.set(start.spec.machineId, this.deployedCount(start.spec.machineId) + 1)
    const result: StartedInstance = { instanceId: node.instanceId, addresses: [node.address] }
    start.settled = true
    start.result = result
    start.listeners.length = 0
    start.resolve(result)
  }

  #release (node: SimNode): void {
    if (node.timer !== undefined) this.#clock.clearTimeout(node.timer)
    node.start = undefined
    if (node.token !== undefined && this.#starts.get(node.token)?.node === node) this.#starts.delete(node.token)
    this.#transition(node, 'RELEASING')
    node.timer = this.#clock.setTimeout(() => {
      node.timer = undefined
      this.#transition(node, 'READY')
    }, this.#delay('release'))
  }

  #fail (start: Start, failure: ProviderFailure, detail: string): void {
    assert(!start.settled, `sim-provider: start of machine "${start.spec.machineId}" settled twice`)
    this.counters.failures[failure] = (this.counters.failures[failure] ?? 0) + 1
    if (start.timer !== undefined) this.#clock.clearTimeout(start.timer)
    start.timer = undefined
    start.settled = true
    start.listeners.length = 0
    if (start.node?.start === start) start.node.start = undefined
    // A failed attempt leaves nothing a later start with the same token would trip over.
    if (this.#starts.get(start.spec.token) === start) this.#starts.delete(start.spec.token)
    start.reject(this.#error(failure, start.spec, detail))
  }

  #progress (start: Start, progress: StartProgress): void {
    for (const listener of [...start.listeners]) callListener(listener, progress)
  }

  #transition (node: SimNode, to: SimNodeState): void {
    const from = node.state
    node.state = to
    if (to === 'READY') {
      node.machineId = undefined
      node.token = undefined
      node.bootstrap = undefined
    }
    this.#onTransition?.({ atMs: this.#clock.now(), from, node: viewOf(node) })
  }

  #error (failure: ProviderFailure, spec: InstanceSpec, detail: string): ProviderError {
    return new ProviderError(this.name, failure, `cannot start instance for machine "${spec.machineId}": ${detail}`)
  }

  #delay (step: keyof SimProviderSteps<number>): number {
    const mean = this.#latencyMs[step]
    return Math.round(mean * (0.5 + this.#latencyRandom.next()))
  }

  #fails (step: keyof SimProviderSteps<number>): boolean {
    const rate = this.#failureRates[step]
    // Draw even at rate 0 so that changing one rate does not shift every later draw.
    const draw = this.#failureRandom.next()
    return draw < rate
  }
}

function viewOf (node: SimNode): SimNodeView {
  return {
    index: node.index,
    instanceId: node.instanceId,
    address: node.address,
    state: node.state,
    ...(node.machineId === undefined ? {} : { machineId: node.machineId }),
    ...(node.token === undefined ? {} : { token: node.token }),
    ...(node.bootstrap === undefined ? {} : { bootstrap: node.bootstrap })
  }
}

/** A caller's progress callback may belong to a controller the simulator has crashed; its throw is not the cloud's concern. */
function callListener (listener: (progress: StartProgress) => void, progress: StartProgress): void {
  try {
    listener(progress)
  } catch {
    // Ignored on purpose: see above.
  }
}
