import { limits } from '../../runtime/limits.ts'
import { nextUnit } from '../../runtime/random.ts'

/**
 * Hook retry back-off (juju-semantics §6): 5 s, doubling, capped at 5 min, with jitter.
 * The jitter draw comes from a PRNG state kept in the actor's context, so the delay is
 * a pure function of data and the same seed gives the same schedule.
 */
export function hookRetryDelayMs (attempt: number, rngState: number): number {
  const base = Math.min(limits.hookRetryDelayMsMax, limits.hookRetryDelayMsMin * limits.hookRetryFactor ** Math.min(attempt, 32))
  const [draw] = nextUnit(rngState)
  const jitter = 1 + limits.hookRetryJitterFraction * (2 * draw - 1)
  return Math.round(base * jitter)
}

/**
 * The delay before a uniter whose loop failed (a charm it could not fetch) runs again:
 * Juju's agent restarts a failed worker after 3 s, 1.2 times longer after each failure in
 * a row, at most 2 min (its dependency engine's ErrorDelay, BackoffFactor, MaxDelay).
 */
export function loopRestartDelayMs (restarts: number): number {
  return Math.round(Math.min(limits.uniterRestartDelayMsMax, limits.uniterRestartDelayMs * limits.uniterRestartBackoffFactor ** Math.min(restarts, 64)))
}

export function advanceRng (rngState: number): number {
  return nextUnit(rngState)[1]
}
