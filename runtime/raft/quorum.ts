import type { NodeId } from './raft-types.ts'

export type VoteResult = 'won' | 'lost' | 'pending'

/** A majority of `voterCount` voters. */
export function quorumSize (voterCount: number): number {
  return Math.floor(voterCount / 2) + 1
}

/** The largest index a majority of voters hold (0 for no voters). */
export function quorumMatchIndex (voters: readonly NodeId[], matchOf: (id: NodeId) => number): number {
  if (voters.length === 0) return 0
  const matches = voters.map(matchOf).sort((a, b) => b - a)
  return matches[quorumSize(voters.length) - 1]!
}

/** Tally an election: votes from non-voters do not count. */
export function voteResult (voters: readonly NodeId[], votes: ReadonlyMap<NodeId, boolean>): VoteResult {
  if (voters.length === 0) return 'lost'
  let granted = 0
  let missing = 0
  for (const voter of voters) {
    const vote = votes.get(voter)
    if (vote === undefined) missing++
    else if (vote) granted++
  }
  const needed = quorumSize(voters.length)
  if (granted >= needed) return 'won'
  if (granted + missing < needed) return 'lost'
  return 'pending'
}

export function hasQuorum (voters: readonly NodeId[], has: (id: NodeId) => boolean): boolean {
  if (voters.length === 0) return false
  let count = 0
  for (const voter of voters) if (has(voter)) count++
  return count >= quorumSize(voters.length)
}
