/**
 * `controllers` (any known agent): every Raft voter's peer id with the multiaddrs this
 * controller knows for it. Machine agents ask it now and then, so an agent started before
 * `enable-ha` (whose bootstrap data named fewer controllers) learns the new ones and can
 * reach the group after the controllers it knew are gone.
 */
import { apiPermits, apiRefusal } from './api-policy.ts'
import type { BootstrapController } from '../../runtime/bootstrap-data.ts'
import type { IncomingRequest } from '../../runtime/transport.ts'
import type { IdentifyPeer } from './controller-api.ts'
import type { ModelReplica } from './model-replica.ts'

const component = 'controller api'

/** Where each voter listens, as this controller's agent knows it (no addresses for one it has not met). */
export type ControllerAddresses = (voters: readonly string[]) => BootstrapController[]

export type ControllersReply =
  | { ok: true, controllers: BootstrapController[] }
  | { ok: false, error: string }

export function controllers (node: ModelReplica, identify: IdentifyPeer, request: IncomingRequest, addresses: ControllerAddresses | undefined): ControllersReply {
  if (!apiPermits('controllers', identify(request.from))) return { ok: false, error: apiRefusal(component, 'controllers', request.from) }
  const voters = node.host.voters
  const known = new Map((addresses?.(voters) ?? []).map(c => [c.peerId, c.addresses]))
  return { ok: true, controllers: voters.map(peerId => ({ peerId, addresses: known.get(peerId) ?? [] })) }
}
