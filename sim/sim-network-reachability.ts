/**
 * Who can send to whom in the simulated network: the partition shapes of DESIGN.md §8.
 *
 * One model covers them all. A partition is a list of groups, and two peers can talk
 * when they share a group; a peer in no group is cut off from everyone. Groups may
 * overlap, which is exactly a bridge: the bridge peer belongs to both sides. On top of
 * the groups come one-way cuts and isolated peers, which only ever take links away.
 * Reachability is by peer id, so a peer that restarts, or is created after the
 * partition, lands on the side its id was put on.
 */
import { InvalidInputError } from '../runtime/errors.ts'
import type { PeerId } from '../runtime/transport.ts'

const component = 'sim-network'

export class SimNetworkReachability {
  /** undefined: no partition, everyone shares one implicit group. */
  #groups: Array<ReadonlySet<PeerId>> | undefined
  readonly #cuts = new Map<PeerId, Set<PeerId>>()
  readonly #isolated = new Set<PeerId>()

  /** Whether a message from `from` can reach `to` right now (links to oneself are never up). */
  canSend (from: PeerId, to: PeerId): boolean {
    if (from === to || this.#isolated.has(from) || this.#isolated.has(to)) return false
    if (this.#cuts.get(from)?.has(to) === true) return false
    return this.#groups === undefined || this.#groups.some(group => group.has(from) && group.has(to))
  }

  /** Replaces the partition groups (cuts and isolations stay). */
  setGroups (groups: ReadonlyArray<readonly PeerId[]>): void {
    this.#groups = groups.map(group => new Set(group))
  }

  cutOneWay (from: PeerId, to: PeerId): void {
    let cut = this.#cuts.get(from)
    if (cut === undefined) this.#cuts.set(from, cut = new Set())
    cut.add(to)
  }

  isolate (peer: PeerId): void {
    this.#isolated.add(peer)
  }

  /** Removes every partition, cut and isolation. */
  heal (): void {
    this.#groups = undefined
    this.#cuts.clear()
    this.#isolated.clear()
  }
}

export function checkPeerId (peer: unknown, what = 'a non-empty peer id'): PeerId {
  if (typeof peer !== 'string' || peer.length === 0) throw new InvalidInputError(component, what, peer)
  return peer
}

/** Symmetric partition groups: each peer in at most one group. */
export function checkPartitionGroups (groups: unknown): PeerId[][] {
  if (!Array.isArray(groups) || !groups.every(group => Array.isArray(group))) {
    throw new InvalidInputError(component, 'partition groups as an array of peer id arrays', groups)
  }
  const seen = new Set<PeerId>()
  for (const group of groups as unknown[][]) {
    for (const peer of group) {
      checkPeerId(peer, 'partition groups of non-empty peer ids')
      if (seen.has(peer as PeerId)) throw new InvalidInputError(component, 'each peer in at most one partition group', peer)
      seen.add(peer as PeerId)
    }
  }
  return (groups as PeerId[][]).map(group => [...group])
}

/**
 * The first `minoritySize` peers form the minority and the rest the majority, so a
 * caller decides who is cut off by the order (`[leader, ...others]` isolates a leader
 * with the minority). The minority must be a strict minority and not empty.
 */
export function majorityMinorityGroups (peers: readonly PeerId[], minoritySize: number): PeerId[][] {
  const [all] = checkPartitionGroups([peers])
  if (!Number.isSafeInteger(minoritySize) || minoritySize < 1 || minoritySize * 2 >= all!.length) {
    throw new InvalidInputError(component, `a minority size from 1 to less than half of ${all!.length} peers`, minoritySize)
  }
  return [all!.slice(minoritySize), all!.slice(0, minoritySize)]
}

/** Two sides that cannot reach each other, and one peer that is on both. */
export function bridgeGroups (groupA: readonly PeerId[], groupB: readonly PeerId[], bridgePeer: PeerId): PeerId[][] {
  checkPeerId(bridgePeer, 'a non-empty bridge peer id')
  if (!Array.isArray(groupA) || !Array.isArray(groupB)) throw new InvalidInputError(component, 'two bridge sides as peer id arrays', [groupA, groupB])
  const [a, b] = checkPartitionGroups([groupA.filter(p => p !== bridgePeer), groupB.filter(p => p !== bridgePeer)])
  return [[...a!, bridgePeer], [...b!, bridgePeer]]
}
