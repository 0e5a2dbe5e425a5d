import { fromPromise } from 'xstate'
import { decode, encode } from '../../runtime/codec.ts'
import { InvalidInputError } from '../../runtime/errors.ts'
import type { UnitName } from '../../runtime/ids.ts'
import type { Storage } from '../../runtime/storage.ts'
import type { LocalState, OperationStep, PersistedOperationKind } from './local-state.ts'

/**
 * The unit's local state on durable storage: one msgpack value per unit under
 * `unit/<name>/uniter`, written with sync so a step the actor went past survives kill -9.
 * What comes back from disk is checked before the actor trusts it.
 */
export interface UnitStateStore {
  load (unit: UnitName): Promise<LocalState | undefined>
  save (unit: UnitName, local: LocalState): Promise<void>
  /**
   * Records that the unit's agent runs in boot `bootId` and says whether the machine
   * rebooted since it last ran: an earlier, different boot id is on record (Juju compares
   * the machine's boot time with the one its agent saw last). False on a first start.
   */
  recordBoot (unit: UnitName, bootId: string): Promise<boolean>
}

export function unitStateKey (unit: UnitName): string {
  return `unit/${unit}/uniter`
}

export function unitBootKey (unit: UnitName): string {
  return `unit/${unit}/boot`
}

const operationKinds: readonly PersistedOperationKind[] = ['install', 'upgrade', 'run-hook', 'run-action', 'continue']
const operationSteps: readonly OperationStep[] = ['queued', 'pending', 'done']
const flags = ['installed', 'started', 'stopped', 'removed', 'leader', 'statusSet'] as const
const records = ['relations', 'storageAttached', 'charmState'] as const
/** A UUID is 36 characters. */
const stateIdLengthMax = 64

function isRecord (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Checks the shape of a decoded uniter state; throws one InvalidInputError naming the unit. */
export function checkLocalState (unit: UnitName, value: unknown): LocalState {
  const component = `unit state "${unit}"`
  if (!isRecord(value)) throw new InvalidInputError(component, 'a persisted uniter state object', value)
  for (const flag of flags) {
    if (typeof value[flag] !== 'boolean') throw new InvalidInputError(component, `boolean field "${flag}"`, value[flag])
  }
  for (const field of records) {
    if (!isRecord(value[field])) throw new InvalidInputError(component, `object field "${field}"`, value[field])
  }
  const operation = value['operation']
  if (!isRecord(operation) || !operationKinds.includes(operation['kind'] as PersistedOperationKind)) {
    throw new InvalidInputError(component, `operation.kind one of ${operationKinds.join('|')}`, isRecord(operation) ? operation['kind'] : operation)
  }
  if (!operationSteps.includes(operation['step'] as OperationStep)) {
    throw new InvalidInputError(component, `operation.step one of ${operationSteps.join('|')}`, operation['step'])
  }
  if (operation['kind'] === 'run-hook' && !isRecord(operation['hook'])) {
    throw new InvalidInputError(component, 'operation.hook for a run-hook operation', operation['hook'])
  }
  const isCount = (n: unknown, min: number): boolean => typeof n === 'number' && Number.isSafeInteger(n) && n >= min
  if (operation['run'] !== undefined && !isCount(operation['run'], 1)) throw new InvalidInputError(component, 'operation.run a positive integer', operation['run'])
  if (value['hookRuns'] !== undefined && !isCount(value['hookRuns'], 0)) throw new InvalidInputError(component, 'hookRuns a non-negative integer', value['hookRuns'])
  if (value['stateId'] !== undefined && (typeof value['stateId'] !== 'string' || value['stateId'].length === 0 || value['stateId'].length > stateIdLengthMax)) {
    throw new InvalidInputError(component, `stateId a string of 1 to ${stateIdLengthMax} characters`, value['stateId'])
  }
  return value as unknown as LocalState
}

export function createUnitStateStore (storage: Storage): UnitStateStore {
  return {
    async load (unit) {
      const bytes = await storage.get(unitStateKey(unit))
      if (bytes === undefined) return undefined
      return checkLocalState(unit, decode(bytes, `unit state "${unit}"`))
    },
    async save (unit, local) {
      await storage.put(unitStateKey(unit), encode(local, `unit state "${unit}"`), { sync: true })
    },
    async recordBoot (unit, bootId) {
      const bytes = await storage.get(unitBootKey(unit))
      const last = bytes === undefined ? undefined : new TextDecoder().decode(bytes)
      if (last === bootId) return false
      await storage.put(unitBootKey(unit), new TextEncoder().encode(bootId), { sync: true })
      return last !== undefined
    }
  }
}

/**
 * The load actor backed by a store, for tests that provide() the unit machine themselves
 * (hosts bind UnitPorts instead; the persisted steps' saves always go to the ports).
 */
export function unitStateActors (store: UnitStateStore) {
  return {
    loadLocalState: fromPromise<LocalState | undefined, { unit: UnitName }>(async ({ input }) => store.load(input.unit))
  }
}
