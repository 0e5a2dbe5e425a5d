/**
 * A controller's presence table read two ways, from one place for the agent and the
 * simulator: what the API shows of a machine's agent (`presenceOf`: a unit's agent is
 * `lost` while its machine agent is not heard from, DESIGN.md §5) and what the
 * provisioner's machine actors are fed (`heard`: when it was last heard, see
 * actors/provisioner/liveness-feed.ts). Both agree by construction: a member that is
 * failed or left, or unknown, is lost to the API and not fed.
 */
import { unitAgentPresence, type Member } from '../../runtime/presence/membership.ts'
import type { AgentLiveness } from '../provisioner/liveness-feed.ts'
import type { MachinePresence } from './controller-api.ts'

export interface MachineLivenessSources {
  /** This controller's peer id: a machine agent in this very process (role both) is heard whenever it runs. */
  self: string
  /** The peer id of a machine's agent (by registration, or named by hand); undefined when none is known. */
  peerOf: (machine: string) => string | undefined
  /** This controller's presence table. */
  member: (peer: string) => Member | undefined
  /** This controller's clock (the time its own machine agent is heard at). */
  now: () => number
}

export interface MachineLiveness {
  presenceOf: MachinePresence
  heard: AgentLiveness
}

export function machineLiveness (sources: MachineLivenessSources): MachineLiveness {
  const { self, peerOf, member, now } = sources
  const presenceOf: MachinePresence = machine => {
    const peer = peerOf(machine)
    if (peer === self) return { status: 'alive', since: undefined, heardBy: self }
    const seen = unitAgentPresence(peer === undefined ? undefined : member(peer))
    return { status: seen.status, since: seen.since, heardBy: seen.heardBy }
  }
  const heard: AgentLiveness = machine => {
    const peer = peerOf(machine)
    if (peer === undefined) return undefined
    if (peer === self) return { lastHeardAt: now(), alive: true }
    const seen = member(peer)
    if (seen === undefined) return undefined
    return { lastHeardAt: seen.lastHeardAt, alive: seen.state === 'alive' || seen.state === 'suspect' }
  }
  return { presenceOf, heard }
}
