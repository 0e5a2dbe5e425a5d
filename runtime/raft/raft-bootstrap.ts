import { assert } from '../assert.ts'
import type { HardState, NodeId, RaftSnapshot } from './raft-types.ts'

/** The index and term of the RaftSnapshot every founding member starts from. */
export const bootstrapIndex = 1
export const bootstrapTerm = 1

/**
 * How a founding member of a new group starts: a RaftSnapshot at index 1, term 1 holding
 * the initial voters and an empty state machine, and a hard state that has seen term 1.
 *
 * The snapshot sits at index 1 rather than 0 on purpose: a server that joins later
 * starts with an empty log (last index 0), so the leader cannot find entry 0's successor
 * in its log and sends it this RaftSnapshot, which is how the newcomer learns the
 * founding membership. Every founding member must bootstrap with the same voters.
 * The host's state machine treats empty RaftSnapshot data as the empty model.
 */
export function bootstrapRaftState (voters: readonly NodeId[]): { snapshot: RaftSnapshot, hardState: HardState } {
  assert(voters.length > 0, 'raft bootstrap: at least one voter is needed')
  assert(new Set(voters).size === voters.length, `raft bootstrap: duplicate voters in ${JSON.stringify(voters)}`)
  for (const voter of voters) assert(voter.length > 0, 'raft bootstrap: voter ids must not be empty')
  return {
    snapshot: {
      metadata: { index: bootstrapIndex, term: bootstrapTerm, config: { voters: [...voters].sort() } },
      data: new Uint8Array(0)
    },
    hardState: { term: bootstrapTerm, vote: '', commit: bootstrapIndex }
  }
}
