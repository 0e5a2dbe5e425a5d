/**
 * `controller-status` (admins and controllers): this controller's own Raft state — role,
 * term, leader, commit and applied index, the voters — and its version. On the leader it
 * adds each voter's replication from the progress tracker, with its **commit lag**: the
 * leader's commit index minus the voter's match index (0 when caught up). The CLI asks
 * every member for its own answer and takes the lag from the leader's.
 */
import { apiPermits, apiRefusal } from './api-policy.ts'
import type { IncomingRequest } from '../../runtime/transport.ts'
import type { IdentifyPeer } from './controller-api.ts'
import type { ModelReplica } from './model-replica.ts'

const component = 'controller api'

export interface VoterProgress {
  match: number
  /** The leader's commit index minus `match`; never negative. */
  lag: number
  state: string
  recentActive: boolean
}

export type ControllerStatusReply =
  | {
    ok: true
    id: string
    version: string | null
    role: string
    term: number
    leader: string
    commit: number
    applied: number
    snapshotIndex: number
    voters: string[]
    /** Per voter, only on the leader. */
    progress: Record<string, VoterProgress>
    /** Machine agents' view watches held here now (machine-watches.ts); absent from older controllers. */
    watches?: number
  }
  | { ok: false, error: string }

export function controllerStatus (node: ModelReplica, identify: IdentifyPeer, request: IncomingRequest, version: string | undefined): ControllerStatusReply {
  const caller = identify(request.from)
  if (!apiPermits('controller-status', caller)) return { ok: false, error: apiRefusal(component, 'controller-status', request.from) }
  const status = node.host.status()
  const progress: Record<string, VoterProgress> = {}
  for (const [voter, p] of Object.entries(status.progress)) {
    progress[voter] = { match: p.match, lag: Math.max(0, status.commit - p.match), state: p.state, recentActive: p.recentActive }
  }
  return {
    ok: true,
    id: node.id,
    version: version ?? null,
    role: node.host.role,
    term: node.host.term,
    leader: node.host.leader,
    commit: status.commit,
    applied: node.host.state().revision,
    snapshotIndex: node.host.snapshotIndex,
    voters: [...status.config.voters],
    progress,
    watches: node.watches.held
  }
}
