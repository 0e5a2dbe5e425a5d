/**
 * `remove-controller` (admins only): the leader removes one voter it cannot reach from the
 * Raft configuration, so `cantrip enable-ha` can replace a member that is down, as Juju's
 * enable-ha demotes unavailable controllers and the peergrouper then takes their vote away
 * (juju/juju state/enableha.go enableHAIntentions; worker/peergrouper/desired.go). It is
 * one configuration change, like every other: refused while another is pending.
 *
 * Only a member that is down may go: a voter the leader heard from within the election
 * timeout is refused (enable-ha never removes a working member, and a member removed while
 * it runs would only campaign in vain). Removing a peer that is no longer a voter answers
 * ok (a retried request changes nothing). Any other controller refuses with the leader's id.
 */
import { NotLeaderError } from '../../runtime/raft/raft-host.ts'
import { quorumSize } from '../../runtime/raft/quorum.ts'
import { parsePeerRequest } from './api-add-controller.ts'
import type { Invalid, WireBody } from './api-operations.ts'
import type { ApiRequests } from './api-requests.ts'
import type { ModelReplica } from './model-replica.ts'

const component = 'controller api'

export type RemoveControllerReply =
  | { ok: true, voters: string[] }
  | { ok: false, error: string, leader?: string }

export function parseRemoveController (body: WireBody): ApiRequests['remove-controller'] | Invalid {
  const peer = parsePeerRequest('remove-controller', body)
  return typeof peer === 'string' ? { op: 'remove-controller', peer } : peer
}

/** The caller was admitted by the policy table (admins only). */
export async function removeController (node: ModelReplica, { peer }: ApiRequests['remove-controller']): Promise<RemoveControllerReply> {
  const refuse = (why: string): { ok: false, error: string } => ({ ok: false, error: `${component}: controller "${node.id}" cannot remove "${peer}": ${why}` })
  if (node.host.role !== 'leader') return { ...refuse('not the leader'), leader: node.host.leader }
  const voters = node.host.voters
  if (!voters.includes(peer)) return { ok: true, voters: [...voters] }
  if (peer === node.id) return refuse('it is the leader, and it answers')
  const reachable = node.host.reachableVoters
  if (reachable.includes(peer)) return refuse('it is reachable (heard from within the election timeout); only a member that is down is replaced')
  // The group without it must still have a quorum among the voters this leader hears.
  const remaining = voters.length - 1
  if (reachable.length < quorumSize(remaining)) {
    return refuse(`${reachable.length} of ${voters.length} voters are reachable, and ${remaining} voters need ${quorumSize(remaining)} for a quorum`)
  }
  try {
    await node.host.changeMembership({ type: 'remove-voter', node: peer })
    return { ok: true, voters: [...node.host.voters] }
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error), ...(error instanceof NotLeaderError ? { leader: error.leader } : {}) }
  }
}
