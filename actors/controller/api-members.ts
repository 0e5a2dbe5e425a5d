/**
 * `members` (admins and controllers): the gossip membership as this controller's presence
 * agent sees it (runtime/presence): every peer with the entity it is (a controller, a
 * machine's agent, or unknown), its state, incarnation, when and by whom it was last
 * heard, and the version it reports. This controller itself is the first row.
 */
import { apiPermits, apiRefusal } from './api-policy.ts'
import type { IncomingRequest } from '../../runtime/transport.ts'
import type { IdentifyPeer } from './controller-api.ts'
import type { ModelReplica } from './model-replica.ts'

const component = 'controller api'

/** One row of the presence table, as the controller's agent hands it over. */
export interface PresenceRow {
  id: string
  role: 'controller' | 'machine'
  state: 'alive' | 'suspect' | 'failed' | 'left'
  incarnation: number
  lastHeardAt: number
  heardBy: string
  since: number
  version?: string
}

/** The presence table of the serving agent, itself included. */
export type PresenceTable = () => PresenceRow[]

export interface MemberRow extends Omit<PresenceRow, 'version'> {
  /** `controller`, `machine-N`, or `unknown` for a peer the model does not know. */
  entity: string
  version: string | null
}

export type MembersReply =
  | { ok: true, observer: string, members: MemberRow[] }
  | { ok: false, error: string }

export function members (node: ModelReplica, identify: IdentifyPeer, request: IncomingRequest, table: PresenceTable | undefined): MembersReply {
  const caller = identify(request.from)
  if (!apiPermits('members', caller)) return { ok: false, error: apiRefusal(component, 'members', request.from) }
  if (table === undefined) return { ok: false, error: `${component}: controller "${node.id}" keeps no presence table` }
  const rows = table().map(({ version, ...row }) => {
    const who = identify(row.id)
    const entity = who?.kind === 'machine' ? `machine-${who.id}` : who?.kind === 'controller' ? 'controller' : row.role === 'controller' ? 'controller' : 'unknown'
    return { ...row, entity, version: version ?? null }
  })
  return { ok: true, observer: node.id, members: rows }
}
