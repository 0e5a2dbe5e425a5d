import { and, assign, fromPromise, setup, stateIn } from 'xstate'
import { assert } from '../../runtime/assert.ts'
import { NotProvidedError } from '../../runtime/errors.ts'
import { failureReason, isPermanentFailure } from './failure-reason.ts'
import { machineContext } from './machine-context.ts'
import { provisioningBackoff } from './provisioning-backoff.ts'
import type {
  MachineContext, MachineEvent, MachineInput, StartedInstance, StartInstanceInput, StartInstanceOutput,
  StopInstanceInput
} from './machine-types.ts'

/*
 * The life of one Juju machine, as two orthogonal regions:
 *
 * lifecycle   pending → provisioning{allocating, deploying} ⇄ provisioningBackoff → provisioningError
 *             → provisioned → started → dying{waitingForUnits, stopping ⇄ stopBackoff, stopFailed}
 *             → dead → removed (final)
 * agent       agentUnknown / agentAlive / agentDown / agentStopped → agentGone (final, once dead)
 *
 * Provisioning. `machine.provision` invokes `startInstance` for one attempt; the
 * invocation lives on `provisioning`, so moving between its substates never cancels it.
 * `allocating` means the provider has not reported progress; the provider's facts
 * `instance.allocated` (with the instance id, if it has one yet) and
 * `instance.deploying` move it to `deploying`. A provider that reports no progress
 * simply resolves, and the machine goes from `allocating` straight to `provisioned`.
 * The promise resolving means the instance runs; the machine then waits in
 * `provisioned` for its agent (`agent.started`), as Juju shows agent `pending` with
 * instance `running`. An agent that reports before the promise resolves is remembered
 * and the machine passes through `provisioned` to `started` at once.
 *
 * A failed attempt waits in `provisioningBackoff` (doubling delay with jitter drawn from
 * the PRNG state in context) and tries again, up to `provisioningAttemptsMax`
 * attempts; then it stays in `provisioningError` until `machine.retryProvisioning`
 * starts a new round. Failures no retry can fix (`NotProvidedError`,
 * `InvalidInputError`) go to `provisioningError` at once.
 *
 * Destruction. A machine with units waits in `dying.waitingForUnits` until
 * `machine.unitsChanged` reports none (or `machine.forceDestroy`). A machine with a
 * running instance then stops it (`stopInstance`, retried like starts); one without an
 * instance goes straight to `dead`. A destroy that arrives while a start is in flight is
 * recorded and applied when the start settles, as Juju's provisioner defers the stop of
 * a machine that died while starting: cancelling the start could leak an instance the
 * provider was about to create. Stops that run out of attempts wait in `stopFailed` for
 * `machine.retryStop`; a forced destroy gives up instead and records the instance as
 * `abandoned`.
 *
 * Time. The machine never reads a clock: the host stamps events with its clock reading
 * (`at`) and creates the actor with the same clock, on which the `after` delays run.
 * The agent's down deadline is absolute (`agentDownAt`), so after a restore the host
 * sends `machine.resumed { at }` and the `agentAlive` timer re-arms for what remains.
 * Back-off waits start when an invoked actor fails, a moment the machine cannot
 * timestamp, so `machine.resumed` restarts them in full: a restored machine never
 * retries early, at worst one delay late.
 */

const startInstanceNotProvided = fromPromise<StartInstanceOutput, StartInstanceInput>(async () => {
  throw new NotProvidedError('machine: actor "startInstance"')
})

const stopInstanceNotProvided = fromPromise<void, StopInstanceInput>(async () => {
  throw new NotProvidedError('machine: actor "stopInstance"')
})

/** The host's clock reading on an event, if it carries one. */
function eventTime (event: { type: string }): number | null {
  const at = (event as { at?: unknown }).at
  if (at === undefined) return null
  assert(typeof at === 'number' && Number.isFinite(at), `machine: event "${event.type}" has a bad time ${String(at)}`)
  return at
}

/** Like eventTime, for events that must carry one. */
function requiredTime (event: { type: string }): number {
  const at = eventTime(event)
  assert(at !== null, `machine: event "${event.type}" must carry "at", the host's clock reading`)
  return at
}

export const machineMachine = setup({
  types: {
    context: {} as MachineContext,
    events: {} as MachineEvent,
    input: {} as MachineInput
  },
  actors: {
    startInstance: startInstanceNotProvided,
    stopInstance: stopInstanceNotProvided
  },
  delays: {
    /** What remains until the absolute deadline, so a re-armed timer keeps the original one. */
    agentDownDelay: ({ context }) => Math.max(0, (context.agentDownAt ?? context.observedAt) - context.observedAt),
    retryDelay: ({ context }) => context.retryDelayMs
  },
  guards: {
    instanceRunning: ({ context }) => context.instanceState === 'running',
    agentReported: ({ context }) => context.agentReportedAt !== null,
    isDying: ({ context }) => context.life !== 'alive',
    isForced: ({ context }) => context.force,
    unitsGoneOrForced: ({ context }) => context.unitCount === 0 || context.force,
    canRetryStart: ({ context }, params: { error: unknown }) =>
      !isPermanentFailure(params.error) && context.startAttempt < context.policy.provisioningAttemptsMax,
    canRetryStop: ({ context }, params: { error: unknown }) =>
      !isPermanentFailure(params.error) && context.stopAttempt < context.policy.stopAttemptsMax
  },
  actions: {
    observe: assign({
      observedAt: ({ context, event }) => Math.max(context.observedAt, requiredTime(event))
    }),
    /**
     * The displayed lifecycle changed. Creation keeps the input's time, and a restore
     * (`machine.resumed`) re-enters states without changing what they show.
     */
    touchLifecycleSince: assign({
      lifecycleSince: ({ context, event }) =>
        event.type === 'machine.resumed' || (event as { type: string }).type === 'xstate.init' ? context.lifecycleSince : eventTime(event)
    }),
    takeBootstrapData: assign({
      bootstrapData: ({ context, event }) =>
        (event.type === 'machine.provision' || event.type === 'machine.retryProvisioning') && event.bootstrapData !== undefined
          ? event.bootstrapData
          : context.bootstrapData
    }),
    beginProvisioningRound: assign({ startAttempt: 0 }),
    countStartAttempt: assign({
      startAttempt: ({ context }) => {
        const attempt = context.startAttempt + 1
        assert(attempt <= context.policy.provisioningAttemptsMax,
          `machine "${context.machineId}" started its instance more than ${context.policy.provisioningAttemptsMax} times in one round`)
        return attempt
      },
      instanceState: 'none',
      instanceId: null,
      progressMessage: null
    }),
    recordAllocation: assign({
      instanceState: 'allocated',
      instanceId: ({ context, event }) =>
        event.type === 'instance.allocated' && event.instanceId !== undefined ? event.instanceId : context.instanceId
    }),
    recordProgress: assign({
      progressMessage: ({ context, event }) =>
        event.type === 'instance.deploying' && event.message !== undefined ? event.message : context.progressMessage
    }),
    recordInstance: assign(({ context }, params: StartedInstance) => {
      assert(typeof params.instanceId === 'string' && params.instanceId !== '',
        `machine "${context.machineId}": startInstance returned no instance id`)
      assert(Array.isArray(params.addresses) && params.addresses.every(address => typeof address === 'string'),
        `machine "${context.machineId}": startInstance returned addresses that are not a list of strings`)
      return {
        instanceState: 'running' as const,
        instanceId: params.instanceId,
        addresses: [...params.addresses],
        progressMessage: null
      }
    }),
    recordStartFailure: assign(({ context }, params: { error: unknown }) => ({
      lastFailure: { operation: 'startInstance' as const, reason: failureReason(params.error), attempt: context.startAttempt },
      // The provider contract: a failed start leaves nothing behind to stop.
      instanceState: 'none' as const,
      instanceId: null,
      progressMessage: null
    })),
    scheduleStartRetry: assign(({ context }) => {
      const { delayMs, rngState } = provisioningBackoff(context.policy, context.startAttempt, context.rngState)
      return { retryDelayMs: delayMs, rngState }
    }),
    markDying: assign({ life: ({ context }) => context.life === 'dead' ? 'dead' : 'dying' }),
    markForceDying: assign({ life: ({ context }) => context.life === 'dead' ? 'dead' : 'dying', force: true }),
    markDead: assign({ life: 'dead' }),
    recordUnitCount: assign({
      unitCount: ({ context, event }) => {
        assert(event.type === 'machine.unitsChanged', `machine "${context.machineId}": recordUnitCount on "${event.type}"`)
        assert(Number.isSafeInteger(event.count) && event.count >= 0,
          `machine "${context.machineId}": unit count must be an integer >= 0, got ${String(event.count)}`)
        return event.count
      }
    }),
    beginStopRound: assign({ stopAttempt: 0 }),
    countStopAttempt: assign({
      stopAttempt: ({ context }) => {
        const attempt = context.stopAttempt + 1
        assert(attempt <= context.policy.stopAttemptsMax,
          `machine "${context.machineId}" stopped its instance more than ${context.policy.stopAttemptsMax} times in one round`)
        return attempt
      }
    }),
    recordStopped: assign({ instanceState: 'stopped' }),
    recordStopFailure: assign(({ context }, params: { error: unknown }) => ({
      lastFailure: { operation: 'stopInstance' as const, reason: failureReason(params.error), attempt: context.stopAttempt }
    })),
    scheduleStopRetry: assign(({ context }) => {
      const { delayMs, rngState } = provisioningBackoff(context.policy, context.stopAttempt, context.rngState)
      return { retryDelayMs: delayMs, rngState }
    }),
    abandonInstance: assign({
      instanceState: ({ context }) => context.instanceState === 'running' ? 'abandoned' : context.instanceState
    }),
    recordReported: assign({
      agentReportedAt: ({ context, event }) => context.agentReportedAt ?? requiredTime(event)
    }),
    /** Heartbeats re-arm the down deadline; the latest time heard wins if events arrive out of order. */
    recordHeard: assign(({ context, event }) => {
      const at = requiredTime(event)
      const lastHeardAt = Math.max(context.agentLastHeardAt ?? at, at)
      return {
        observedAt: Math.max(context.observedAt, at),
        agentLastHeardAt: lastHeardAt,
        agentDownAt: lastHeardAt + context.policy.agentDownAfterMs
      }
    }),
    touchAgentSince: assign({ agentSince: ({ event }) => requiredTime(event) }),
    /** The down timer fires exactly at the deadline, which is therefore the time now. */
    markDown: assign({
      observedAt: ({ context }) => Math.max(context.observedAt, context.agentDownAt ?? context.observedAt),
      agentSince: ({ context }) => context.agentDownAt
    })
  }
}).createMachine({
  id: 'machine',
  type: 'parallel',
  context: ({ input }) => machineContext(input),
  states: {
    lifecycle: {
      initial: 'pending',
      on: {
        'machine.unitsChanged': { actions: 'recordUnitCount' },
        'machine.resumed': { actions: 'observe' }
      },
      states: {
        pending: {
          entry: 'touchLifecycleSince',
          // The bootstrap machine and manually added hosts arrive with their instance.
          always: { guard: 'instanceRunning', target: 'provisioned' },
          on: {
            'machine.provision': { target: 'provisioning', actions: ['takeBootstrapData', 'beginProvisioningRound'] },
            'machine.destroy': { target: 'dying', actions: 'markDying' },
            'machine.forceDestroy': { target: 'dying', actions: 'markForceDying' }
          }
        },
        provisioning: {
          entry: ['touchLifecycleSince', 'countStartAttempt'],
          invoke: {
            id: 'startInstance',
            src: 'startInstance',
            input: ({ context }) => ({
              machineId: context.machineId,
              constraints: context.constraints,
              bootstrapData: context.bootstrapData,
              attempt: context.startAttempt
            }),
            onDone: [
              { guard: 'isDying', target: 'dying', actions: { type: 'recordInstance', params: ({ event }) => event.output } },
              { target: 'provisioned', actions: { type: 'recordInstance', params: ({ event }) => event.output } }
            ],
            onError: [
              { guard: 'isDying', target: 'dying', actions: { type: 'recordStartFailure', params: ({ event }) => ({ error: event.error }) } },
              {
                guard: { type: 'canRetryStart', params: ({ event }) => ({ error: event.error }) },
                target: 'provisioningBackoff',
                actions: [{ type: 'recordStartFailure', params: ({ event }) => ({ error: event.error }) }, 'scheduleStartRetry']
              },
              { target: 'provisioningError', actions: { type: 'recordStartFailure', params: ({ event }) => ({ error: event.error }) } }
            ]
          },
          initial: 'allocating',
          states: {
            allocating: {
              on: {
                'instance.allocated': { target: 'deploying', actions: 'recordAllocation' },
                'instance.deploying': { target: 'deploying', actions: 'recordProgress' }
              }
            },
            deploying: {
              entry: 'touchLifecycleSince',
              on: {
                'instance.allocated': { actions: 'recordAllocation' },
                'instance.deploying': { actions: 'recordProgress' }
              }
            }
          },
          on: {
            // Deferred until the start settles (see the comment at the top).
            'machine.destroy': { actions: ['markDying', 'touchLifecycleSince'] },
            'machine.forceDestroy': { actions: ['markForceDying', 'touchLifecycleSince'] }
          }
        },
        provisioningBackoff: {
          entry: 'touchLifecycleSince',
          after: { retryDelay: 'provisioning' },
          on: {
            'machine.resumed': { target: 'provisioningBackoff', reenter: true, actions: 'observe' },
            // Juju's retry-provisioning: a new round of attempts, now.
            'machine.retryProvisioning': { target: 'provisioning', actions: ['takeBootstrapData', 'beginProvisioningRound'] },
            'machine.destroy': { target: 'dying', actions: 'markDying' },
            'machine.forceDestroy': { target: 'dying', actions: 'markForceDying' }
          }
        },
        provisioningError: {
          entry: 'touchLifecycleSince',
          on: {
            'machine.retryProvisioning': { target: 'provisioning', actions: ['takeBootstrapData', 'beginProvisioningRound'] },
            'machine.destroy': { target: 'dying', actions: 'markDying' },
            'machine.forceDestroy': { target: 'dying', actions: 'markForceDying' }
          }
        },
        provisioned: {
          entry: 'touchLifecycleSince',
          always: { guard: 'agentReported', target: 'started' },
          on: {
            'agent.started': { target: 'started' },
            'machine.destroy': { target: 'dying', actions: 'markDying' },
            'machine.forceDestroy': { target: 'dying', actions: 'markForceDying' }
          }
        },
        started: {
          entry: 'touchLifecycleSince',
          on: {
            'machine.destroy': { target: 'dying', actions: 'markDying' },
            'machine.forceDestroy': { target: 'dying', actions: 'markForceDying' }
          }
        },
        dying: {
          entry: 'touchLifecycleSince',
          initial: 'waitingForUnits',
          on: {
            'machine.forceDestroy': { actions: 'markForceDying' }
          },
          states: {
            waitingForUnits: {
              always: [
                { guard: and(['unitsGoneOrForced', 'instanceRunning']), target: 'stopping', actions: 'beginStopRound' },
                { guard: 'unitsGoneOrForced', target: '#machine.lifecycle.dead' }
              ]
            },
            stopping: {
              entry: ['touchLifecycleSince', 'countStopAttempt'],
              invoke: {
                id: 'stopInstance',
                src: 'stopInstance',
                input: ({ context }) => {
                  assert(context.instanceId !== null, `machine "${context.machineId}": stopping without an instance id`)
                  return { machineId: context.machineId, instanceId: context.instanceId, attempt: context.stopAttempt }
                },
                onDone: { target: '#machine.lifecycle.dead', actions: 'recordStopped' },
                onError: [
                  {
                    guard: { type: 'canRetryStop', params: ({ event }) => ({ error: event.error }) },
                    target: 'stopBackoff',
                    actions: [{ type: 'recordStopFailure', params: ({ event }) => ({ error: event.error }) }, 'scheduleStopRetry']
                  },
                  {
                    guard: 'isForced',
                    target: '#machine.lifecycle.dead',
                    actions: [{ type: 'recordStopFailure', params: ({ event }) => ({ error: event.error }) }, 'abandonInstance']
                  },
                  { target: 'stopFailed', actions: { type: 'recordStopFailure', params: ({ event }) => ({ error: event.error }) } }
                ]
              }
            },
            stopBackoff: {
              entry: 'touchLifecycleSince',
              after: { retryDelay: 'stopping' },
              on: {
                'machine.resumed': { target: 'stopBackoff', reenter: true, actions: 'observe' }
              }
            },
            stopFailed: {
              entry: 'touchLifecycleSince',
              on: {
                'machine.retryStop': { target: 'stopping', actions: 'beginStopRound' },
                'machine.forceDestroy': { target: '#machine.lifecycle.dead', actions: ['markForceDying', 'abandonInstance'] }
              }
            }
          }
        },
        dead: {
          entry: ['markDead', 'touchLifecycleSince'],
          on: {
            'machine.removed': { target: 'removed' }
          }
        },
        removed: {
          entry: 'touchLifecycleSince',
          type: 'final'
        }
      }
    },
    agent: {
      initial: 'agentUnknown',
      on: {
        'machine.resumed': { actions: 'observe' }
      },
      states: {
        agentUnknown: {
          always: { guard: stateIn('#machine.lifecycle.dead'), target: 'agentGone' },
          on: {
            'agent.started': { target: 'agentAlive', actions: ['recordReported', 'recordHeard', 'touchAgentSince'] },
            'agent.heartbeat': { target: 'agentAlive', actions: ['recordHeard', 'touchAgentSince'] },
            'agent.stopped': { target: 'agentStopped', actions: ['observe', 'touchAgentSince'] }
          }
        },
        agentAlive: {
          always: { guard: stateIn('#machine.lifecycle.dead'), target: 'agentGone' },
          after: { agentDownDelay: { target: 'agentDown' } },
          on: {
            // Re-entering re-arms the down timer from the new deadline.
            'agent.started': { target: 'agentAlive', reenter: true, actions: ['recordReported', 'recordHeard'] },
            'agent.heartbeat': { target: 'agentAlive', reenter: true, actions: 'recordHeard' },
            'agent.stopped': { target: 'agentStopped', actions: ['observe', 'touchAgentSince'] },
            'machine.resumed': { target: 'agentAlive', reenter: true, actions: 'observe' }
          }
        },
        agentDown: {
          entry: 'markDown',
          always: { guard: stateIn('#machine.lifecycle.dead'), target: 'agentGone' },
          on: {
            'agent.started': { target: 'agentAlive', actions: ['recordReported', 'recordHeard', 'touchAgentSince'] },
            'agent.heartbeat': { target: 'agentAlive', actions: ['recordHeard', 'touchAgentSince'] },
            'agent.stopped': { target: 'agentStopped', actions: ['observe', 'touchAgentSince'] }
          }
        },
        agentStopped: {
          always: { guard: stateIn('#machine.lifecycle.dead'), target: 'agentGone' },
          on: {
            'agent.started': { target: 'agentAlive', actions: ['recordReported', 'recordHeard', 'touchAgentSince'] },
            'agent.heartbeat': { target: 'agentAlive', actions: ['recordHeard', 'touchAgentSince'] }
          }
        },
        // The agent of a dead machine has nothing left to report; with `removed` this
        // makes the whole actor done, so the host can let it go.
        agentGone: {
          type: 'final'
        }
      }
    }
  }
})

export type MachineMachine = typeof machineMachine
