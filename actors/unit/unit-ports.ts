import { NotProvidedError } from '../../runtime/errors.ts'
import type { UnitName } from '../../runtime/ids.ts'
import type { LocalState } from './local-state.ts'
import type { ActionOutcome, CommandOutcome, DeployOutcome, HookOutcome } from './operation.ts'
import type { DeployCharmInput, PersistInput, RunActionInput, RunCommandInput, RunHookInput } from './unit-machine.ts'

/**
 * The side effects one unit actor needs, supplied by its host (agent/ or sim/). They are
 * bound to the actor's system rather than provided with `unitMachine.provide()`: XState
 * builds a whole new machine definition (its state-node tree, ~58 KB) for every
 * `provide()`, so a provide per unit cost more than the rest of the actor. One machine
 * serves every unit; its invoked actors find their unit's ports here.
 */
export interface UnitPorts {
  loadLocalState: (unit: UnitName) => Promise<LocalState | undefined>
  persistLocalState: (input: PersistInput) => Promise<void>
  /** Calls `acquired` once the machine-wide hook lock is the unit's; returns the release function. */
  acquireHookLock: (unit: UnitName, acquired: () => void) => () => void
  runHook: (input: RunHookInput, signal: AbortSignal) => Promise<HookOutcome>
  deployCharm: (input: DeployCharmInput, signal: AbortSignal) => Promise<DeployOutcome>
  runAction: (input: RunActionInput, signal: AbortSignal) => Promise<ActionOutcome>
  runCommand: (input: RunCommandInput, signal: AbortSignal) => Promise<CommandOutcome>
}

/**
 * Keyed by the actor system: each root unit actor has its own (its invoked and spawned
 * children share it). Weak, so a stopped actor's ports go with it.
 */
const portsBySystem = new WeakMap<object, UnitPorts>()

export function bindUnitPorts (system: object, ports: UnitPorts): void {
  portsBySystem.set(system, ports)
}

/** The ports of the unit actor running in `system`; a unit actor started without ports fails its first effect. */
export function unitPortsOf (system: object, what: keyof UnitPorts): UnitPorts {
  const ports = portsBySystem.get(system)
  if (ports === undefined) throw new NotProvidedError(`unit actor "${what}"`)
  return ports
}
