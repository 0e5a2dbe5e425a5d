/** What a commit rule may read of the leader's log. */
export interface CommitRuleLog {
  /** The term of the entry at `index`, undefined when compacted away or beyond the log. */
  term: (index: number) => number | undefined
}

/**
 * Which entry a leader may mark committed once a quorum holds it: the core asks its rule
 * for the term that entry must have. A collaborator given to the core (RaftOptions.
 * commitRule) rather than a constant, so that the simulator can build the same core with
 * a broken rule and prove its safety checks find it (sim/raft-planted-bugs.ts) without a
 * test switch in shipped code; every host that ships uses `raftCommitRule`.
 */
export interface CommitRule {
  /** The term the entry at `index` (above the commit index) must be of for a leader of `leaderTerm` to commit it. */
  requiredTerm: (index: number, leaderTerm: number, log: CommitRuleLog) => number
}

/**
 * Raft's rule (§5.4.2, Figure 8): a leader commits by counting replicas only an entry of
 * its own term; entries of earlier terms commit with it, never alone, since a later
 * leader could still overwrite them.
 */
export const raftCommitRule: CommitRule = {
  requiredTerm: (_index, leaderTerm) => leaderTerm
}
