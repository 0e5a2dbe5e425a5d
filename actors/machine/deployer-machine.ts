import { assign, setup, type ActorRefFrom } from 'xstate'

/**
 * The deployer worker of a machine agent (deployer.ts) as a statechart, for
 * the inspector and the diagrams: it reconciles the units the model assigns to its
 * machine with the unit agents it runs — starting each new one, forgetting each gone —
 * on every change of the model. Reconciliations may overlap (each change starts one);
 * `inFlight` counts them, and the deployer is `watching` when none runs.
 */
export interface DeployerContext {
  machineId: string
  /** The units whose agents run here. */
  units: string[]
  inFlight: number
  /** The last unit that could not start, and why (the next change tries again). */
  lastFailure: string | undefined
}

export type DeployerEvent =
  | { type: 'reconcile.begin' }
  | { type: 'reconcile.end' }
  | { type: 'unit.started', unit: string }
  | { type: 'unit.failed', unit: string, reason: string }
  | { type: 'unit.forgotten', unit: string }
  | { type: 'deployer.stop' }

export const deployerMachine = setup({
  types: {
    context: {} as DeployerContext,
    input: {} as { machineId: string },
    events: {} as DeployerEvent
  },
  guards: {
    lastOne: ({ context }) => context.inFlight <= 1
  },
  actions: {
    begin: assign(({ context }) => ({ inFlight: context.inFlight + 1 })),
    end: assign(({ context }) => ({ inFlight: Math.max(0, context.inFlight - 1) })),
    started: assign(({ context, event }) => event.type === 'unit.started' && !context.units.includes(event.unit) ? { units: [...context.units, event.unit].sort() } : {}),
    failed: assign(({ event }) => event.type === 'unit.failed' ? { lastFailure: `${event.unit}: ${event.reason}` } : {}),
    forgotten: assign(({ context, event }) => event.type === 'unit.forgotten' ? { units: context.units.filter(u => u !== event.unit) } : {})
  }
}).createMachine({
  id: 'deployer',
  context: ({ input }) => ({ machineId: input.machineId, units: [], inFlight: 0, lastFailure: undefined }),
  initial: 'watching',
  on: {
    'unit.started': { actions: 'started' },
    'unit.failed': { actions: 'failed' },
    'unit.forgotten': { actions: 'forgotten' },
    'deployer.stop': '.stopped'
  },
  states: {
    /** Waiting for the next change of the model. */
    watching: { on: { 'reconcile.begin': { target: 'reconciling', actions: 'begin' } } },
    /** Starting the agents of new units, forgetting those of units gone. */
    reconciling: {
      on: {
        'reconcile.begin': { actions: 'begin' },
        'reconcile.end': [{ guard: 'lastOne', target: 'watching', actions: 'end' }, { actions: 'end' }]
      }
    },
    /** Every unit agent stopped (running hooks killed and re-queued): the machine agent is stopping. */
    stopped: { type: 'final' }
  }
})

export type DeployerActorRef = ActorRefFrom<typeof deployerMachine>
