import { assign, setup, type ActorRefFrom } from 'xstate'

/**
 * The provisioner worker's own statechart, for the inspector and the diagrams: whether a
 * pass is running (provisioner.ts serialises them), how many it made and what the last
 * one saw. The machines themselves are machine actors of their own; this one is the
 * worker that drives them, so a stuck pass shows up as a provisioner in `passing`.
 */
export interface ProvisionerContext {
  controllerId: string
  passes: number
  /** Machines the last pass looked at. */
  machines: number
  failures: number
  lastFailure: string | undefined
}

export type ProvisionerEvent =
  | { type: 'pass.begin' }
  | { type: 'pass.end', machines: number }
  | { type: 'pass.failed', reason: string }
  | { type: 'provisioner.stop' }

export const provisionerMachine = setup({
  types: {
    context: {} as ProvisionerContext,
    input: {} as { controllerId: string },
    events: {} as ProvisionerEvent
  },
  actions: {
    countPass: assign(({ context, event }) => event.type === 'pass.end' ? { passes: context.passes + 1, machines: event.machines } : {}),
    countFailure: assign(({ context, event }) => event.type === 'pass.failed' ? { passes: context.passes + 1, failures: context.failures + 1, lastFailure: event.reason } : {})
  }
}).createMachine({
  id: 'provisioner',
  context: ({ input }) => ({ controllerId: input.controllerId, passes: 0, machines: 0, failures: 0, lastFailure: undefined }),
  initial: 'waiting',
  on: { 'provisioner.stop': '.stopped' },
  states: {
    /** Until a change of the machines or the periodic tick. */
    waiting: { on: { 'pass.begin': 'passing' } },
    /** Listing instances, stopping unknown ones, feeding each machine actor. */
    passing: {
      on: {
        'pass.end': { target: 'waiting', actions: 'countPass' },
        'pass.failed': { target: 'waiting', actions: 'countFailure' }
      }
    },
    /** Leadership lost or the controller stopping: starts in flight finish in the cloud. */
    stopped: { type: 'final' }
  }
})

export type ProvisionerActorRef = ActorRefFrom<typeof provisionerMachine>
