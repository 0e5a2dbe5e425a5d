/**
 * A deployer (actors/machine/deployer.ts) with the real unit effects, for the processes
 * and tests that run unit agents against a controller in the same process (the machine
 * role builds its own through the shared machine agent). All units share the given store
 * and one hook lock.
 */
import { Deployer } from '../../actors/machine/deployer.ts'
import type { UnitHostController } from '../../actors/unit/unit-host.ts'
import { createUnitStateStore } from '../../actors/unit/unit-state-store.ts'
import type { Clock } from '../../runtime/clock.ts'
import { HookLock } from '../../runtime/hook-lock.ts'
import type { ActorInspect } from '../../runtime/inspect-hook.ts'
import type { Storage } from '../../runtime/storage.ts'
import { ProcessUnitEffects, type ProcessUnitEffectsOptions } from './process-unit-effects.ts'
import type { UnitControllerApi } from './unit-hook-context.ts'

export interface ProcessDeployerOptions extends Omit<ProcessUnitEffectsOptions, 'controller'> {
  controller: UnitControllerApi & UnitHostController
  storage: Storage
  clock: Clock
  leaseDurationMs?: number
  inspect?: ActorInspect
}

export function startProcessDeployer (options: ProcessDeployerOptions): Deployer {
  const { storage, clock, leaseDurationMs, inspect, ...effects } = options
  return new Deployer({ clock, logger: options.logger }, {
    machineId: options.machineId,
    controller: options.controller,
    effects: new ProcessUnitEffects(effects),
    store: createUnitStateStore(storage),
    hookLock: new HookLock(`machine-${options.machineId}`),
    ...(leaseDurationMs === undefined ? {} : { leaseDurationMs }),
    ...(inspect === undefined ? {} : { inspect })
  })
}
