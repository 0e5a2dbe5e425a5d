/**
 * What the status-truth check (sim/invariants/status-truth.ts) needs of the system world
 * at one moment: the controller a `cantrip status` would be answered by (the leader, while
 * it runs unpaused), its applied model and presence, and the truth of every booted machine
 * agent relative to it — up, paused or crashed, and whether the network lets the two hear
 * each other.
 */
import type { AgentFact, StatusTruthInput } from '../invariants/status-truth.ts'
import { simMachinePeer } from './controller-presence.ts'
import type { SystemWorld } from './system-world.ts'

export function statusTruthInput (world: SystemWorld): StatusTruthInput {
  const now = world.sim.clock.now()
  const group = world.group
  const leader = group.leaderNode()
  const index = leader === undefined ? -1 : group.indexOf(leader.id)
  const startedAt = leader === undefined ? undefined : world.presence.startedAt(leader.id)
  if (leader === undefined || group.isPaused(index) || startedAt === undefined) {
    return { now, observer: undefined, model: undefined, presenceOf: undefined, agents: facts(world, undefined) }
  }
  return {
    now,
    observer: { id: leader.id, term: leader.host.term, startedAt },
    model: leader.host.state(),
    presenceOf: world.presence.liveness(leader.id).presenceOf,
    agents: facts(world, leader.id)
  }
}

function facts (world: SystemWorld, observer: string | undefined): AgentFact[] {
  const network = world.group.network
  const out: AgentFact[] = []
  for (const agent of world.agents.values()) {
    if (agent.finished) continue
    const machine = agent.machineId
    if (agent.state === 'down') { out.push({ machine, truth: 'cut-off', why: 'its agent crashed' }); continue }
    if (agent.state === 'paused') { out.push({ machine, truth: 'cut-off', why: 'its agent paused' }); continue }
    if (observer === undefined) { out.push({ machine, truth: 'unjudged', why: 'no observer' }); continue }
    const peer = simMachinePeer(machine)
    if (!network.canReach(peer, observer)) out.push({ machine, truth: 'cut-off', why: `its agent up but cut off from ${observer}` })
    else if (!network.canReach(observer, peer)) out.push({ machine, truth: 'unjudged', why: `its agent up, ${observer} cannot reach it` })
    else out.push({ machine, truth: 'healthy', why: `its agent up and connected to ${observer}` })
  }
  return out
}
