/**
 * What `cantrip enable-ha` will do, decided before anything changes, as Juju's
 * EnableHA decides its intentions (juju/juju state/enableha.go, enableHAIntentions and
 * EnableHA): members that answer are **maintained**; voting members that are down are
 * **removed** (Juju demotes them and its peergrouper takes their vote, then removes them;
 * here the leader takes the vote in one Raft configuration change); new members are
 * **added** until the group has the size asked for. Without -n the size is the group's
 * own (at least 3), so a plain `enable-ha` restores a group that lost members. A smaller
 * size is refused: enable-ha never removes a working member.
 */
import { InvalidInputError } from '../../runtime/errors.ts'
import { quorumSize } from '../../runtime/raft/quorum.ts'
import { controllerGroupSizeMax, validGroupSize } from './controller-process.ts'

const component = 'cantrip enable-ha'

export interface PlannedMember {
  name: string
  peer: string
  /** Answered the client's `controller-status`. */
  up: boolean
}

export interface HaPlan {
  wanted: number
  maintain: PlannedMember[]
  remove: PlannedMember[]
  /** New members to start, after the removals they replace. */
  add: number
}

/** `-n` as given (undefined: the group's own size, at least 3). */
export function planHa (controller: string, members: readonly PlannedMember[], n: string | undefined): HaPlan {
  const have = members.length
  const wanted = n === undefined ? Math.max(3, have + ((have + 1) % 2)) : Number(n)
  if (!validGroupSize(wanted)) throw new InvalidInputError(component, `-n as an odd number from 1 to ${controllerGroupSizeMax}`, n)
  if (wanted < have) throw new InvalidInputError(component, `-n of at least the ${have} member${have === 1 ? '' : 's'} controller "${controller}" has (enable-ha never removes a working member)`, n)
  const maintain = members.filter(m => m.up)
  const remove = members.filter(m => !m.up)
  const needed = quorumSize(have)
  if (maintain.length < needed) {
    throw new Error(`${component}: cannot replace members of controller "${controller}": ${maintain.length} of ${have} controllers reachable, ${needed} needed to commit; bring one back with "cantrip start-agent ${remove[0]?.name ?? 'c0'}"`)
  }
  return { wanted, maintain, remove, add: wanted - maintain.length }
}

/** Juju's `enable-ha` output (cmd/juju/commands/enableha.go formatSimple): one line per non-empty list. */
export function haPlanLines (maintained: readonly string[], added: readonly string[], removed: readonly string[]): string {
  const lists: Array<[string, readonly string[]]> = [['maintaining', maintained], ['adding', added], ['removing', removed]]
  return lists.filter(([, list]) => list.length > 0).map(([verb, list]) => `${verb} controllers: ${list.join(', ')}`).join('\n')
}
