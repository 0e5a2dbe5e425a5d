/**
 * The controller group as the CLI sees it: every known member's own `controller-status`
 * (asked in parallel), and the leader's answer among them, which carries each voter's
 * commit lag. Used by `show-controller`, `enable-ha` and `version`.
 */
import type { ControllerEntry } from './cli-home.ts'
import type { Connection, ControllerStatus } from './connection.ts'

export interface MemberStatus {
  peer: string
  status: ControllerStatus | undefined
  /** Why the member did not answer, when it did not. */
  error: string | undefined
}

export interface GroupStatus {
  members: MemberStatus[]
  /** The answer of the member that says it leads, if one answered. */
  leader: ControllerStatus | undefined
}

export async function groupStatus (connection: Connection, entry: ControllerEntry, timeoutMs?: number): Promise<GroupStatus> {
  const answers = await connection.controllerStatuses(entry.controllers.map(m => ({ peer: m['peer-id'], ...(m.addresses[0] === undefined ? {} : { address: m.addresses[0] }) })), timeoutMs)
  const members = entry.controllers.map(m => {
    const reply = answers.get(m['peer-id'])
    return reply?.ok === true
      ? { peer: m['peer-id'], status: reply, error: undefined }
      : { peer: m['peer-id'], status: undefined, error: reply?.error ?? 'not asked' }
  })
  // The newest term wins should two answer as leader (one deposed, not knowing it yet).
  const leader = members.map(m => m.status).filter((s): s is ControllerStatus => s?.role === 'leader').sort((a, b) => b.term - a.term)[0]
  return { members, leader }
}
