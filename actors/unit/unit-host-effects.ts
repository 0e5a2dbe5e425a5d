/**
 * What a unit host (unit-host.ts) needs of the world it runs in: the effects, and only
 * the effects. The real agent (agent/uniter/) runs hooks, actions and `juju exec`
 * commands as processes with the hook tools served on the unit's socket and unpacks
 * charm archives; the simulator (sim/system/) runs scripted hooks and deploys charms at
 * once. Everything above the effects — leadership, remote state, the outbox, the
 * deployer's reconcile and supervision — is the same code in both worlds.
 */
import type { UnitName } from '../../runtime/ids.ts'
import type { UnitPorts } from './unit-ports.ts'

/** One unit's effects, open while its agent runs (a real unit's hook-tool socket, say). */
export interface UnitWorkspace extends Pick<UnitPorts, 'deployCharm' | 'runHook' | 'runAction' | 'runCommand'> {
  /** Stops serving the unit; called once its agent is gone for good or the deployer stops. */
  close (): Promise<void>
}

export interface UnitEffects {
  /**
   * Opens the unit's workspace before its agent starts. A throw means the unit cannot
   * start now (its socket will not bind, say); the deployer logs it and tries again on
   * the next change of the model.
   */
  openUnit (unit: UnitName): Promise<UnitWorkspace>
  /** A fresh id for a unit's new local state: hook commit keys are unique by it. */
  newStateId (): string
  /**
   * The request-id prefix of one start of a unit's agent: unique across its restarts and
   * across restarts of the machine agent, so the model never mistakes a new command for
   * a retried one.
   */
  requestPrefix (unit: UnitName): string
  /** The seed of the unit actor's own PRNG (its retry jitter). */
  unitSeed (unit: UnitName): number
  /**
   * Ships the log records so far (the unit's stop and remove hooks' output) to the
   * controllers and waits, bounded, for one to keep them: the host calls it before it
   * marks its unit dead, after which the controllers no longer take the machine's word
   * for that unit. Resolves either way. The simulator's logs go nowhere: it has none.
   */
  flushLogs?: (unit: UnitName) => Promise<unknown>
}
