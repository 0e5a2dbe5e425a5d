/**
 * The bounded wait of the real-process tests, apart from the cluster (cantripd-cluster.ts)
 * that signals it: a test that only waits (on CLI output, a file, a process) imports this
 * and not the cluster, whose libp2p client and charm packing cost ~1.3 CPU-s to load in
 * every uvu process that imports it.
 */

/**
 * A wait's bound: generous, so that a verdict never depends on the machine being idle
 * (with seven other jobs on its two cores a 3+3 cluster took over 120 s to settle its
 * elections and hooks); a passing wait ends on its event, so this costs only failures.
 */
export const waitMsMax = 240_000

/** A wait looks again this soon at first, then half as often each time, down to once per the max. */
const waitPollMsMin = 25
const waitPollMsMax = 500

/**
 * Waits that timed out and submits that gave up, in this process: a cluster that saw one
 * keeps its agents' logs at close (cantripd-cluster.ts).
 */
let waitsFailed = 0
export function waitsFailedSoFar (): number {
  return waitsFailed
}
export function countFailedWait (): void {
  waitsFailed++
}

/** Resolved (and replaced) whenever an agent prints an event: a wait looks again at once. */
let agentEvent = Promise.withResolvers<void>()
export function signalAgentEvent (): void {
  agentEvent.resolve()
  agentEvent = Promise.withResolvers<void>()
}

/**
 * Waits (bounded) until `condition` holds. It is looked at again when any agent prints an
 * event (a role, a new view) and otherwise ever less often: a condition that asks the
 * controllers over the mesh is not asked 40 times a second for the whole wait.
 */
export async function waitFor (what: string, condition: () => boolean | Promise<boolean>, describe: () => string = () => ''): Promise<void> {
  const until = performance.now() + waitMsMax
  let pauseMs = waitPollMsMin
  while (!await condition()) {
    if (performance.now() > until) {
      waitsFailed++
      throw new Error(`cantripd cluster: timed out waiting for ${what} ${describe()}`)
    }
    let timer: ReturnType<typeof setTimeout> | undefined
    await Promise.race([agentEvent.promise, new Promise(resolve => { timer = setTimeout(resolve, pauseMs) })])
    clearTimeout(timer)
    pauseMs = Math.min(waitPollMsMax, pauseMs * 2)
  }
}
