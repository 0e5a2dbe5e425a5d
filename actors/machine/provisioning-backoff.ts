import { assert } from '../../runtime/assert.ts'
import { nextUnit } from '../../runtime/random.ts'
import type { MachinePolicy } from './machine-types.ts'

/** Each failure doubles the nominal delay, as Juju's retry strategies do. */
const retryFactor = 2

export interface Backoff {
  readonly delayMs: number
  /** The PRNG state after the one draw this back-off used. */
  readonly rngState: number
}

/**
 * The wait before the next start (or stop) attempt after `failures` consecutive
 * failures: `min · 2^(failures-1)`, capped at `max`, scaled by a jitter factor in
 * [1 - f, 1 + f] drawn from `rngState`, rounded, and kept within [min, max] so no retry
 * comes sooner than the minimum or later than the maximum. Pure: same inputs, same wait.
 */
export function provisioningBackoff (policy: MachinePolicy, failures: number, rngState: number): Backoff {
  assert(Number.isSafeInteger(failures) && failures >= 1, `provisioning back-off: failures must be a positive integer, got ${failures}`)
  const { retryDelayMsMin: min, retryDelayMsMax: max, retryJitterFraction: jitter } = policy
  // Capping the exponent keeps the power finite; any cap past log2(max/min) gives `max` anyway.
  const nominal = Math.min(max, min * retryFactor ** Math.min(failures - 1, 52))
  const [unit, nextState] = nextUnit(rngState)
  const jittered = Math.round(nominal * (1 + jitter * (2 * unit - 1)))
  return { delayMs: Math.min(max, Math.max(min, jittered)), rngState: nextState }
}
