/**
 * `add-controller` (admins only): the leader adds one peer as a Raft voter (`cantrip
 * enable-ha`). The peer must already run `cantripd --join`, so it waits for the leader's
 * log or RaftSnapshot. Adding a peer that is already a voter answers ok (a retried request
 * changes nothing). Any other controller refuses with the leader's id, so the client asks
 * the leader next. A peer whose addition would leave fewer reachable voters than the
 * grown group's quorum is refused (etcd's strict reconfiguration check).
 */
import { describeValue } from '../../runtime/errors.ts'
import { NotLeaderError } from '../../runtime/raft/raft-host.ts'
import { quorumSize } from '../../runtime/raft/quorum.ts'
import type { Invalid, WireBody } from './api-operations.ts'
import type { ApiRequests } from './api-requests.ts'
import type { ModelReplica } from './model-replica.ts'

const component = 'controller api'
/** libp2p peer ids are base58btc, about 52 characters; anything far longer is not one. */
const peerIdLengthMax = 128

export type AddControllerReply =
  | { ok: true, voters: string[] }
  | { ok: false, error: string, leader?: string }

/** The wire body as an `add-controller` request: a peer id. */
export function parseAddController (body: WireBody): ApiRequests['add-controller'] | Invalid {
  const peer = parsePeerRequest('add-controller', body)
  return typeof peer === 'string' ? { op: 'add-controller', peer } : peer
}

/** The peer id of an `add-controller` or `remove-controller` body (base58btc, bounded). */
export function parsePeerRequest (op: 'add-controller' | 'remove-controller', body: WireBody): string | Invalid {
  const peer = body.peer
  if (typeof peer !== 'string' || peer.length === 0 || peer.length > peerIdLengthMax || !/^[1-9A-HJ-NP-Za-km-z]+$/.test(peer)) {
    return { invalid: `${component}: expected {op: "${op}", peer} with a peer id, got ${describeValue(peer)}` }
  }
  return peer
}

/** The caller was admitted by the policy table (admins only). */
export async function addController (node: ModelReplica, { peer }: ApiRequests['add-controller']): Promise<AddControllerReply> {
  if (node.host.role !== 'leader') return { ok: false, error: `${component}: controller "${node.id}" cannot add "${peer}": not the leader`, leader: node.host.leader }
  if (node.host.voters.includes(peer)) return { ok: true, voters: [...node.host.voters] }
  // etcd's strict reconfiguration check: never add a voter that, if it does not come up,
  // leaves the group without a quorum of the voters it can reach. Fake or mistyped peers
  // added one after another would otherwise stop the group for good.
  // Growing a group of one is the exception, as in etcd: its second voter is always needed.
  const reachable = node.host.reachableVoters.length
  const quorum = quorumSize(node.host.voters.length + 1)
  if (reachable < quorum && node.host.voters.length > 1) {
    return { ok: false, error: `${component}: controller "${node.id}" cannot add "${peer}": ${reachable} of ${node.host.voters.length} voters are reachable, and ${node.host.voters.length + 1} voters need ${quorum} for a quorum` }
  }
  try {
    await node.host.changeMembership({ type: 'add-voter', node: peer })
    return { ok: true, voters: [...node.host.voters] }
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error), ...(error instanceof NotLeaderError ? { leader: error.leader } : {}) }
  }
}
