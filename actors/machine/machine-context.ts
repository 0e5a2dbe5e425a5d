import { InvalidInputError } from '../../runtime/errors.ts'
import { isMachineId } from '../../runtime/ids.ts'
import { hashString32 } from '../../runtime/random.ts'
import { machinePolicy } from './machine-policy.ts'
import type { MachineContext, MachineInput } from './machine-types.ts'

/** The initial context of a machine actor, from validated input. */
export function machineContext (input: MachineInput): MachineContext {
  if (typeof input.machineId !== 'string' || !isMachineId(input.machineId)) {
    throw new InvalidInputError('machine', 'a machine id like "3" or "0/lxd/1"', input.machineId)
  }
  if (!Number.isFinite(input.now)) {
    throw new InvalidInputError(`machine "${input.machineId}"`, 'a clock reading in "now"', input.now)
  }
  if (input.seed !== undefined && !Number.isInteger(input.seed)) {
    throw new InvalidInputError(`machine "${input.machineId}"`, 'an integer seed', input.seed)
  }
  const unitCount = input.unitCount ?? 0
  if (!Number.isSafeInteger(unitCount) || unitCount < 0) {
    throw new InvalidInputError(`machine "${input.machineId}"`, 'a unit count >= 0', unitCount)
  }
  if (input.instance !== undefined && (typeof input.instance.instanceId !== 'string' || input.instance.instanceId === '')) {
    throw new InvalidInputError(`machine "${input.machineId}"`, 'an instance id', input.instance.instanceId)
  }
  return {
    machineId: input.machineId,
    constraints: input.constraints ?? {},
    bootstrapData: input.bootstrapData ?? null,
    policy: machinePolicy(input.policy),
    life: 'alive',
    force: false,
    unitCount,
    instanceState: input.instance === undefined ? 'none' : 'running',
    instanceId: input.instance?.instanceId ?? null,
    addresses: input.instance?.addresses ?? [],
    progressMessage: null,
    startAttempt: 0,
    stopAttempt: 0,
    retryDelayMs: 0,
    rngState: (input.seed ?? hashString32(`machine:${input.machineId}`)) >>> 0,
    lastFailure: null,
    agentReportedAt: null,
    agentLastHeardAt: null,
    agentDownAt: null,
    observedAt: input.now,
    lifecycleSince: input.now,
    agentSince: null
  }
}
