/**
 * When the CLI gives up on a controller group that does not answer. A member that refused
 * or dropped the connection (a stopped process) is gone: one check says so. A member that
 * only timed out may be slow, not gone (a host with 20–30 runnable processes on 2 cores):
 * its checks are asked again, and the call ends only after they have timed out for
 * `timedOutMs` in a row. The bound is time, not a count of checks, because on a starved
 * host each check itself takes longer; Juju's CLI likewise waits on its API connection
 * for a time (api.DefaultDialOpts: 10 minutes, retrying every 2 s) rather than deciding
 * from a number of tries that the controller is gone.
 */

/** One look at the group: undefined while a majority answers, else its line and whether every missing member only timed out. */
export type GroupCheck = () => Promise<{ message: string, onlyTimedOut: boolean } | undefined>

export interface VerdictTiming {
  /** Pause between checks. */
  afterMs: number
  /** How long checks that only timed out may go on before they are believed. */
  timedOutMs: number
  now: () => number
  sleep: (ms: number) => Promise<void>
}

/** The quorum-lost line once the group has said so for certain; undefined when a majority answers or the call settled first. */
export async function quorumVerdict (check: GroupCheck, settled: () => boolean, timing: VerdictTiming): Promise<string | undefined> {
  let timingOutSince: number | undefined
  while (!settled()) {
    const answer = await check()
    if (answer === undefined) return undefined
    if (!answer.onlyTimedOut) return answer.message
    timingOutSince ??= timing.now()
    if (timing.now() - timingOutSince >= timing.timedOutMs) return answer.message
    await timing.sleep(timing.afterMs)
  }
  return undefined
}
