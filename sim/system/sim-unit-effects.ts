/**
 * The simulator's unit effects (actors/unit/unit-host-effects.ts) for one machine agent:
 * hooks of the unit's scripted charm (SimUnitHooks, which also decides the hook faults),
 * charms that deploy at once (a charm URL names the scenario's script: there is nothing
 * to fetch), actions and commands that complete at once; state ids and request-id
 * prefixes that are unique and the same for every run of a seed.
 */
import type { DeployOutcome } from '../../actors/unit/operation.ts'
import type { UnitEffects, UnitWorkspace } from '../../actors/unit/unit-host-effects.ts'
import { hashString32 } from '../../runtime/random.ts'
import type { SimUnitHooks } from './sim-unit-hooks.ts'

export interface SimUnitEffectsOptions {
  /** The machine's peer id (`machine-3`): state ids are unique by it. */
  peerId: string
  seed: number
  hooks: SimUnitHooks
}

export class SimUnitEffects implements UnitEffects {
  readonly #o: SimUnitEffectsOptions
  /** Over the agent's whole life (every run): ids and prefixes never repeat. */
  readonly #counters: { unitStarts: number, stateIds: number }

  constructor (options: SimUnitEffectsOptions, counters: { unitStarts: number, stateIds: number }) {
    this.#o = options
    this.#counters = counters
  }

  async openUnit (unit: string): Promise<UnitWorkspace> {
    const hooks = this.#o.hooks
    return {
      deployCharm: async (): Promise<DeployOutcome> => ({ kind: 'deployed' }),
      runHook: async ({ hook, local }, signal) => await hooks.run(unit, hook, local, signal),
      runAction: async () => ({ status: 'completed', results: {} }),
      runCommand: async () => ({ exitCode: 0, stdout: '', stderr: '' }),
      close: async () => {}
    }
  }

  newStateId (): string {
    return `${this.#o.peerId}-state-${++this.#counters.stateIds}`
  }

  requestPrefix (unit: string): string {
    return `${unit}/${++this.#counters.unitStarts}`
  }

  unitSeed (unit: string): number {
    return hashString32(unit, this.#o.seed)
  }
}
