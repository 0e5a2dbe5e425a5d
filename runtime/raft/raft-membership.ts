import { isVoter } from './cluster-config.ts'
import { Progress } from './progress.ts'
import type { Raft } from './raft.ts'
import type { Entry } from './raft-types.ts'

/**
 * Membership, one voter at a time: the configuration takes effect when its entry is
 * appended, a leader tracks newcomers and forgets removed servers once the change
 * commits, and a leader that removed itself hands over and steps down.
 */

/**
 * The configuration changed when its entry was appended: track newcomers. A removed
 * voter keeps being replicated to (though it no longer counts towards any quorum)
 * until the change commits, so it normally receives the entry that removes it and,
 * no longer finding itself in the configuration, stops campaigning.
 */
export function syncProgressWithConfig (r: Raft): void {
  const config = r.configs.current()
  for (const voter of config.voters) {
    // A newcomer counts as recently active, or CheckQuorum could depose us before it
    // has had a chance to answer.
    if (!r.progress.has(voter)) r.progress.set(voter, new Progress(r.log.lastIndex() + 1, r.settings.maxInflight, true))
  }
  if (r.leadTransferee !== '' && !isVoter(config, r.leadTransferee)) r.leadTransferee = ''
}

/** Once the configuration is committed, stop replicating to servers it removed. */
export function forgetRemovedServers (r: Raft): void {
  if (r.configs.latestIndex() > r.log.committed) return
  const config = r.configs.current()
  for (const id of [...r.progress.keys()]) {
    if (id !== r.id && !isVoter(config, id)) r.progress.delete(id)
  }
}

/** Track the configuration the log now establishes; true if it changed. */
export function onAppended (r: Raft, entries: readonly Entry[]): boolean {
  if (!r.configs.onAppend(entries)) return false
  r.trace(`now uses configuration ${JSON.stringify(r.configs.current().voters)} (entry ${r.configs.latestIndex()})`)
  return true
}

/**
 * A leader that removed itself keeps leading until that change commits (it still has
 * to replicate it), then steps down and asks the most up-to-date voter to campaign.
 */
export function maybeStepDownAfterRemoval (r: Raft): void {
  if (isVoter(r.configs.current(), r.id) || r.configs.latestIndex() > r.log.committed) return
  const last = r.log.lastIndex()
  const successor = r.configs.current().voters.find(id => r.progress.get(id)?.match === last)
  r.trace(`stepping down at term ${r.term}: our removal at ${r.configs.latestIndex()} is committed`)
  if (successor !== undefined) r.send({ type: 'timeout-now', to: successor })
  r.becomeFollower(r.term, '')
}
