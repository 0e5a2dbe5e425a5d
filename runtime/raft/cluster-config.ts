import { assertNever } from '../assert.ts'
import type { ClusterConfig, ConfigChange, NodeId } from './raft-types.ts'

export function isVoter (config: ClusterConfig, id: NodeId): boolean {
  return config.voters.includes(id)
}

/** Why a leader must refuse `change` against `config`, or undefined if it may propose it. */
export function configChangeProblem (config: ClusterConfig, change: ConfigChange): string | undefined {
  if (change.node.length === 0) return 'node id must not be empty'
  switch (change.type) {
    case 'add-voter':
      return isVoter(config, change.node) ? `"${change.node}" is already a voter` : undefined
    case 'remove-voter':
      if (!isVoter(config, change.node)) return `"${change.node}" is not a voter`
      return config.voters.length === 1 ? `"${change.node}" is the last voter` : undefined
    default:
      return assertNever(change, 'raft config change')
  }
}

/**
 * The membership after `change`. Applying is idempotent (adding a voter twice, or
 * removing an absent one, changes nothing), so replaying a log never fails; leaders
 * refuse such changes up front with `configChangeProblem`. Voters stay sorted so every
 * node iterates them in the same order.
 */
export function applyConfigChange (config: ClusterConfig, change: ConfigChange): ClusterConfig {
  switch (change.type) {
    case 'add-voter':
      return isVoter(config, change.node) ? config : { voters: [...config.voters, change.node].sort() }
    case 'remove-voter':
      return { voters: config.voters.filter(voter => voter !== change.node) }
    default:
      return assertNever(change, 'raft config change')
  }
}
