import { assert } from '../../runtime/assert.ts'
import { limits } from '../../runtime/limits.ts'
import type { MachinePolicy } from './machine-types.ts'

// TODO(limits): move to runtime/limits.ts as `provisioningRetryJitterFraction`; until then it
// mirrors `hookRetryJitterFraction`.
const provisioningRetryJitterFraction = 0.2

/**
 * The machine's timeouts and retry bounds: the defaults from runtime/limits.ts with any
 * overrides from the input. Overrides may shorten the bounds, never raise the attempt
 * counts above the named maxima.
 */
export function machinePolicy (overrides: Partial<MachinePolicy> = {}): MachinePolicy {
  const policy: MachinePolicy = {
    agentDownAfterMs: overrides.agentDownAfterMs ?? limits.machineAgentDownAfterMs,
    provisioningAttemptsMax: overrides.provisioningAttemptsMax ?? limits.provisioningAttemptsMax,
    // TODO(limits): a separate `instanceStopAttemptsMax`; stops share the provisioning bound for now.
    stopAttemptsMax: overrides.stopAttemptsMax ?? limits.provisioningAttemptsMax,
    retryDelayMsMin: overrides.retryDelayMsMin ?? limits.provisioningRetryDelayMsMin,
    retryDelayMsMax: overrides.retryDelayMsMax ?? limits.provisioningRetryDelayMsMax,
    retryJitterFraction: overrides.retryJitterFraction ?? provisioningRetryJitterFraction
  }
  assert(Number.isSafeInteger(policy.agentDownAfterMs) && policy.agentDownAfterMs > 0,
    `machine policy: agentDownAfterMs must be a positive integer, got ${policy.agentDownAfterMs}`)
  assert(Number.isSafeInteger(policy.provisioningAttemptsMax) && policy.provisioningAttemptsMax >= 1 &&
    policy.provisioningAttemptsMax <= limits.provisioningAttemptsMax,
  `machine policy: provisioningAttemptsMax must be in [1, ${limits.provisioningAttemptsMax}], got ${policy.provisioningAttemptsMax}`)
  assert(Number.isSafeInteger(policy.stopAttemptsMax) && policy.stopAttemptsMax >= 1 &&
    policy.stopAttemptsMax <= limits.provisioningAttemptsMax,
  `machine policy: stopAttemptsMax must be in [1, ${limits.provisioningAttemptsMax}], got ${policy.stopAttemptsMax}`)
  assert(Number.isSafeInteger(policy.retryDelayMsMin) && policy.retryDelayMsMin > 0 &&
    Number.isSafeInteger(policy.retryDelayMsMax) && policy.retryDelayMsMax >= policy.retryDelayMsMin,
  `machine policy: retry delays must be integers with 0 < min <= max, got [${policy.retryDelayMsMin}, ${policy.retryDelayMsMax}]`)
  assert(policy.retryJitterFraction >= 0 && policy.retryJitterFraction < 1,
    `machine policy: retryJitterFraction must be in [0, 1), got ${policy.retryJitterFraction}`)
  return policy
}
