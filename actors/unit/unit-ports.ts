import { assert } from '../../runtime/assert.ts'
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

/**
 * The release of the hook lock the unit actor in `system` holds or waits for, while it is
 * in its `locked` state. The lock is taken by that state's entry action and given back by
 * its exit action, not by an invoked actor: an actor per locked operation (created,
 * started, its init event, stopped) cost more than the lock, five times per unit in a deploy.
 */
const heldLocks = new WeakMap<object, () => void>()

/** Asks for the machine's hook lock for the unit actor in `system`; `acquired` is called once it is the unit's. */
export function holdHookLock (system: object, unit: UnitName, acquired: () => void): void {
  assert(!heldLocks.has(system), `unit "${unit}": asked for the hook lock while holding it`)
  heldLocks.set(system, unitPortsOf(system, 'acquireHookLock').acquireHookLock(unit, acquired))
}

/** Gives back (or stops waiting for) the hook lock of the unit actor in `system`, if it has asked for it. */
export function releaseHookLock (system: object): void {
  const release = heldLocks.get(system)
  if (release === undefined) return
  heldLocks.delete(system)
  release()
}

/** The ports of the unit actor running in `system`; a unit actor started without ports fails its first effect. */
export function unitPortsOf (system: object, what: keyof UnitPorts): UnitPorts {
  const ports = portsBySystem.get(system)
  if (ports === undefined) throw new NotProvidedError(`unit actor "${what}"`)
  return ports
}
