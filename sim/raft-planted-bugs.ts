import { assert } from '../runtime/assert.ts'
import type { CommitRule } from '../runtime/raft/commit-rule.ts'
import type { PlantedBug } from './scenario/scenario-types.ts'

/**
 * The Figure 8 bug of the Raft paper (§5.4.2), planted on purpose: a leader commits an
 * entry of an earlier term as soon as a majority holds it, though a later leader may
 * still overwrite it. It exists only so the simulator (`cantrip sim`, bugs:
 * [raft-commit-previous-term]) can prove it finds this class of bug. The core takes it
 * as its ordinary commit rule (runtime/raft/commit-rule.ts), so no test switch is
 * threaded through the code that ships.
 */
export const commitPreviousTermRule: CommitRule = {
  requiredTerm: (index, leaderTerm, log) => log.term(index) ?? leaderTerm
}

const commitRules: Readonly<Record<PlantedBug, CommitRule>> = {
  'raft-commit-previous-term': commitPreviousTermRule
}

/** The commit rule that carries `bug`; only the known names are accepted. */
export function plantedCommitRule (bug: PlantedBug): CommitRule {
  assert(Object.hasOwn(commitRules, bug), `planted bug must be one of ${JSON.stringify(Object.keys(commitRules))}, got ${JSON.stringify(bug)}`)
  return commitRules[bug]
}
