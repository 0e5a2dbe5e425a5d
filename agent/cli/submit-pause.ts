/**
 * How long the CLI waits before sending a refused or failed command again
 * (connection.ts #submit). A refusal that names another member as the leader is followed
 * at once, as etcd's clients follow a redirect: the group has a leader, and a fixed pause
 * there only added to every failover a user saw (one leader change cost a command one
 * pause on the dead leader's connection error and another on the follower's redirect).
 * Anything else (no leader known yet, no answer, the named leader is the one just asked)
 * waits `submitRetryPauseMs`, which gives an election time to finish. Hints can be stale
 * during an election, and two members could name each other, so at most
 * `submitRedirectsAtOnceMax` redirects in a row go without a pause.
 */
export const submitRetryPauseMs = 200
export const submitRedirectsAtOnceMax = 3

export interface SubmitRefusal {
  /** The member the command was sent to. */
  target: string
  /** The leader its refusal named; '' when none (no leader known, or no answer at all). */
  leader: string
  /** Redirects followed without a pause just before this one. */
  redirectsInARow: number
}

/** The pause before the next attempt: 0 to follow a redirect now, else submitRetryPauseMs. */
export function submitPauseMs (refusal: SubmitRefusal): number {
  const redirect = refusal.leader !== '' && refusal.leader !== refusal.target
  return redirect && refusal.redirectsInARow < submitRedirectsAtOnceMax ? 0 : submitRetryPauseMs
}
