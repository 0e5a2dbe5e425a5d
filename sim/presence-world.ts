/**
 * A world for presence on its own: a SimClock, a SimNetwork on a seeded "network"
 * stream and one PresenceAgent per peer, every change recorded with the time it was
 * seen. Nothing in presence awaits, so the clock is advanced directly.
 */
import { SeededRandom } from '../runtime/random.ts'
import { PresenceAgent, type PresenceAgentInit, type PresenceChange } from '../runtime/presence/presence-agent.ts'
import type { PeerId } from '../runtime/transport.ts'
import { SimClock } from './sim-clock.ts'
import { SimNetwork, type LatencyDistribution } from './sim-network.ts'

export interface PresenceWorldOptions {
  seed: number
  /** Peer ids, or how many as `peer-0`, `peer-1`, ...; the first `controllers` are controllers, the rest machines. */
  peers: PeerId[] | number
  /** How many of the peers are controllers (1 by default). */
  controllers?: number
  latency?: LatencyDistribution
  /** Timings and the like for every agent. */
  agent?: Omit<PresenceAgentInit, 'modelUuid' | 'role' | 'onChange'>
  modelUuid?: string
}

export class PresenceWorld {
  readonly clock = new SimClock()
  readonly network: SimNetwork
  readonly agents = new Map<PeerId, PresenceAgent>()
  readonly changes: PresenceChange[] = []
  /** The controllers' peer ids: what machine agents accept on the controllers' topic. */
  readonly controllers = new Set<PeerId>()
  readonly #options: PresenceWorldOptions

  constructor (options: PresenceWorldOptions) {
    this.#options = options
    this.network = new SimNetwork({
      clock: this.clock,
      random: new SeededRandom(options.seed).stream('network'),
      ...(options.latency === undefined ? {} : { latency: options.latency })
    })
    const ids = typeof options.peers === 'number'
      ? Array.from({ length: options.peers }, (_, i) => `peer-${i}`)
      : options.peers
    const controllers = options.controllers ?? 1
    ids.forEach((id, i) => { this.start(id, i < controllers ? 'controller' : 'machine') })
  }

  /** Starts (or restarts, on a fresh transport) the agent of `id`. */
  start (id: PeerId, role: PresenceAgentInit['role'] = 'machine', incarnation?: number): PresenceAgent {
    this.agents.get(id)?.stop()
    if (role === 'controller') this.controllers.add(id)
    else this.controllers.delete(id)
    const agent = new PresenceAgent(
      { transport: this.network.transport(id), clock: this.clock },
      {
        ...this.#options.agent,
        ...(incarnation === undefined ? {} : { incarnation }),
        modelUuid: this.#options.modelUuid ?? 'model-1',
        role,
        controllers: () => this.controllers,
        onChange: change => { this.changes.push(change) }
      })
    this.agents.set(id, agent)
    agent.start()
    return agent
  }

  agent (id: PeerId): PresenceAgent {
    const agent = this.agents.get(id)
    if (agent === undefined) throw new Error(`presence-world: no agent "${id}"`)
    return agent
  }

  /** The state `observer` holds for `member`, or undefined when it has none. */
  stateOf (observer: PeerId, member: PeerId): string | undefined {
    return this.agent(observer).member(member)?.state
  }

  /** Whether `observer` hears `member` at all: controllers hear everyone, machine agents the controllers. */
  hears (observer: PeerId, member: PeerId): boolean {
    return observer !== member && (this.controllers.has(observer) || this.controllers.has(member))
  }

  /** Whether every agent in `among` sees each other one it hears in `state`. */
  allSee (state: string, among: PeerId[] = [...this.agents.keys()]): boolean {
    return among.every(o => among.every(m => !this.hears(o, m) || this.stateOf(o, m) === state))
  }

  advance (ms: number): void {
    this.clock.advance(ms)
  }

  /** The change log as lines, for comparing runs. */
  trace (): string[] {
    return this.changes.map(c => `${c.at} ${c.observer} ${c.id} ${c.from ?? '-'}->${c.to} i${c.incarnation}`)
  }
}
