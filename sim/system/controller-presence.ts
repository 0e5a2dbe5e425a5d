/**
 * The simulated controllers' presence: each runs the real PresenceAgent (runtime/
 * presence/) on its own SimTransport and clock, started with the controller and stopped
 * with it (a crash says no goodbye), as cantripd runs one beside its controller role. Its
 * table feeds both what the API shows of a machine's agent and the provisioner's machine
 * actors, through the same actors/controller/machine-liveness.ts as the agent's.
 */
import { machineLiveness, type MachineLiveness } from '../../actors/controller/machine-liveness.ts'
import type { Clock } from '../../runtime/clock.ts'
import { PresenceAgent } from '../../runtime/presence/presence-agent.ts'
import type { NodeId } from '../../runtime/raft/raft-types.ts'
import type { Transport } from '../../runtime/transport.ts'

/** The peer id of machine `<id>`'s agent on the simulated network (the agents do not register). */
export function simMachinePeer (machine: string): string {
  return `machine-${machine}`
}

export class SimControllerPresence {
  readonly #model: string
  readonly #agents = new Map<NodeId, { agent: PresenceAgent, clock: Clock, startedAt: number }>()
  readonly #simNow: () => number
  readonly #liveness = new Map<NodeId, MachineLiveness>()
  /** Each start comes back above any incarnation before it, as cantripd's clock-based one does. */
  readonly #incarnations = new Map<NodeId, number>()

  /** `simNow`: the simulation's own time, at which each start is recorded. */
  constructor (model: string, simNow: () => number) {
    this.#model = model
    this.#simNow = simNow
  }

  /** SimControllerGroupOptions.companion: the presence agent of controller `id` for one run of it. */
  start (id: NodeId, transport: Transport, clock: Clock): { stop: () => void } {
    const incarnation = Math.max(Math.floor(clock.now()), (this.#incarnations.get(id) ?? -1) + 1)
    this.#incarnations.set(id, incarnation)
    const agent = new PresenceAgent({ transport, clock }, { modelUuid: this.#model, role: 'controller', incarnation })
    agent.start()
    this.#agents.set(id, { agent, clock, startedAt: this.#simNow() })
    return {
      stop: () => {
        agent.stop()
        if (this.#agents.get(id)?.agent === agent) this.#agents.delete(id)
      }
    }
  }

  /** Controller `id`'s running presence agent. */
  agent (id: NodeId): PresenceAgent | undefined {
    return this.#agents.get(id)?.agent
  }

  /** When controller `id`'s presence last started (its table begins empty), in simulated time. */
  startedAt (id: NodeId): number | undefined {
    return this.#agents.get(id)?.startedAt
  }

  /** What controller `id` shows of, and feeds about, the machine agents (its table while it runs). */
  liveness (id: NodeId): MachineLiveness {
    let liveness = this.#liveness.get(id)
    if (liveness === undefined) {
      liveness = machineLiveness({
        self: id,
        peerOf: simMachinePeer,
        member: peer => this.#agents.get(id)?.agent.member(peer),
        now: () => this.#agents.get(id)?.clock.now() ?? Number.NEGATIVE_INFINITY
      })
      this.#liveness.set(id, liveness)
    }
    return liveness
  }
}
