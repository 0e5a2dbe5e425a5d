import { assign, fromCallback, fromPromise, setup, type ActorRefFrom, type SnapshotFrom } from 'xstate'
import type { NodeId, RaftRole } from '../../runtime/raft/raft-types.ts'

/**
 * One controller as the inspector shows it, in two parallel regions:
 *
 * - `raft`: the role of this server in the Raft group (follower, pre-candidate,
 *   candidate, leader), with the term and the known leader, driven by the host's
 *   `raft.role` events (sent after the role change was persisted and acted on);
 * - `singular`: the singular workers (provisioner, cleanup), which run only on the Raft
 *   leader and only while it holds the controller lease granted through Raft. The lease
 *   is what keeps a deposed leader that has not yet noticed (cut off, before CheckQuorum
 *   steps it down) from running them beside the new one: the new leader's claim is
 *   refused until the old lease expires, and the old holder stops believing a clock-drift
 *   margin before that.
 *
 * Time enters only as data: the injected `claimLease` actor reads the clock and answers
 * how long the belief lasts from now; the delays here are computed from that.
 */
export interface ControllerInput {
  id: NodeId
  /** Role, term and leader at start (from the host's persisted state). */
  role: RaftRole
  term: number
  leader: NodeId | ''
  /** How long a refused or failed claim waits before the next try. */
  claimRetryMs: number
}

/** What a claim of the controller lease came to. */
export type ClaimOutcome =
  /** Granted or extended: this controller may believe it holds the lease for `validForMs` from now. */
  | { granted: true, validForMs: number }
  /** Refused (another holder) or not applied; `why` is for the inspector. */
  | { granted: false, why: string }

export interface ControllerContext {
  id: NodeId
  role: RaftRole
  term: number
  leader: NodeId | ''
  claimRetryMs: number
  /** Belief left when the current hold (or its last renewal) began. */
  validForMs: number
  /** When, within a hold, to renew: half of the belief. */
  renewAfterMs: number
  /** Why the last claim was not granted, for the inspector. */
  lastRefusal: string | undefined
  /** Holds so far (a grant after not holding), for tests and status. */
  holds: number
}

export type ControllerEvent =
  | { type: 'raft.role', role: RaftRole, term: number, leader: NodeId | '' }

function notProvided (what: string): never {
  throw new Error(`controller machine: "${what}" not provided`)
}

/** The claim's done (or error) event, which setup's event type does not name. */
interface ClaimSettled { output?: ClaimOutcome, error?: unknown }

function claimOf (event: unknown): ClaimSettled {
  return event as ClaimSettled
}

export const controllerMachine = setup({
  types: {
    context: {} as ControllerContext,
    input: {} as ControllerInput,
    events: {} as ControllerEvent
  },
  actors: {
    /** Proposes a claim (or extension) of the controller lease through Raft. */
    claimLease: fromPromise<ClaimOutcome, { controller: NodeId }>(async () => notProvided('claimLease')),
    /** The singular workers: started on entry to `holding`, stopped on exit. */
    singularWorkers: fromCallback<ControllerEvent, { controller: NodeId }>(() => notProvided('singularWorkers'))
  },
  guards: {
    isLeader: ({ event }) => event.type === 'raft.role' && event.role === 'leader',
    toFollower: ({ event }) => event.role === 'follower',
    toPreCandidate: ({ event }) => event.role === 'pre-candidate',
    toCandidate: ({ event }) => event.role === 'candidate',
    /** The role recorded in context (the input's at start) is leader. */
    startsAsLeader: ({ context }) => context.role === 'leader',
    startsAsCandidate: ({ context }) => context.role === 'candidate',
    startsAsPreCandidate: ({ context }) => context.role === 'pre-candidate',
    notLeader: ({ event }) => event.type === 'raft.role' && event.role !== 'leader',
    claimGranted: ({ event }) => claimOf(event).output?.granted === true
  },
  actions: {
    recordRole: assign(({ event }) => ({ role: event.role, term: event.term, leader: event.leader })),
    recordGrant: assign(({ event }) => {
      const outcome = claimOf(event).output
      if (outcome === undefined || !outcome.granted) return {}
      return { validForMs: outcome.validForMs, renewAfterMs: Math.floor(outcome.validForMs / 2), lastRefusal: undefined }
    }),
    recordRefusal: assign(({ event }) => {
      const { output, error } = claimOf(event)
      if (output !== undefined && !output.granted) return { lastRefusal: output.why }
      return { lastRefusal: error instanceof Error ? error.message : String(error) }
    }),
    countHold: assign(({ context }) => ({ holds: context.holds + 1 }))
  },
  delays: {
    claimRetry: ({ context }) => context.claimRetryMs,
    renewAfter: ({ context }) => context.renewAfterMs,
    /** From the start of renewing to the end of the belief it renews. */
    beliefLeft: ({ context }) => Math.max(0, context.validForMs - context.renewAfterMs)
  }
}).createMachine({
  id: 'controller',
  type: 'parallel',
  context: ({ input }) => ({
    id: input.id,
    role: input.role,
    term: input.term,
    leader: input.leader,
    claimRetryMs: input.claimRetryMs,
    validForMs: 0,
    renewAfterMs: 0,
    lastRefusal: undefined,
    holds: 0
  }),
  states: {
    raft: {
      initial: 'starting',
      on: {
        'raft.role': [
          { guard: 'toFollower', target: '#controller.raft.follower', actions: 'recordRole' },
          { guard: 'toPreCandidate', target: '#controller.raft.preCandidate', actions: 'recordRole' },
          { guard: 'toCandidate', target: '#controller.raft.candidate', actions: 'recordRole' },
          { target: '#controller.raft.leader', actions: 'recordRole' }
        ]
      },
      states: {
        /** Until the first role is known; left at once for the input's role. */
        starting: {
          always: [
            { guard: 'startsAsLeader', target: 'leader' },
            { guard: 'startsAsCandidate', target: 'candidate' },
            { guard: 'startsAsPreCandidate', target: 'preCandidate' },
            { target: 'follower' }
          ]
        },
        follower: {},
        preCandidate: {},
        candidate: {},
        leader: {}
      }
    },
    singular: {
      initial: 'standby',
      states: {
        /** Not the Raft leader: no singular worker runs here. */
        standby: {
          always: { guard: 'startsAsLeader', target: 'claiming' },
          on: { 'raft.role': { guard: 'isLeader', target: 'claiming' } }
        },
        claiming: {
          on: { 'raft.role': { guard: 'notLeader', target: 'standby' } },
          invoke: {
            src: 'claimLease',
            input: ({ context }) => ({ controller: context.id }),
            onDone: [
              { guard: 'claimGranted', target: 'holding', actions: ['recordGrant', 'countHold'] },
              { target: 'waiting', actions: 'recordRefusal' }
            ],
            onError: { target: 'waiting', actions: 'recordRefusal' }
          }
        },
        /** The lease is held elsewhere (or the claim failed): try again shortly. */
        waiting: {
          on: { 'raft.role': { guard: 'notLeader', target: 'standby' } },
          after: { claimRetry: 'claiming' }
        },
        /** Leader and lease holder: the singular workers run. */
        holding: {
          on: { 'raft.role': { guard: 'notLeader', target: 'standby' } },
          invoke: { src: 'singularWorkers', input: ({ context }) => ({ controller: context.id }) },
          initial: 'valid',
          states: {
            valid: {
              after: { renewAfter: 'expiring' }
            },
            /** Half the belief is gone; renewing, and stopping when the belief runs out. */
            expiring: {
              after: { beliefLeft: '#controller.singular.claiming' },
              initial: 'renewing',
              states: {
                renewing: {
                  invoke: {
                    src: 'claimLease',
                    input: ({ context }) => ({ controller: context.id }),
                    onDone: [
                      { guard: 'claimGranted', target: '#controller.singular.holding.valid', actions: 'recordGrant' },
                      { target: 'retrying', actions: 'recordRefusal' }
                    ],
                    onError: { target: 'retrying', actions: 'recordRefusal' }
                  }
                },
                retrying: {
                  after: { claimRetry: 'renewing' }
                }
              }
            }
          }
        }
      }
    }
  }
})

export type ControllerActor = ActorRefFrom<typeof controllerMachine>
export type ControllerSnapshot = SnapshotFrom<typeof controllerMachine>

/** Whether the singular workers run in this snapshot. */
export function runsSingularWorkers (snapshot: ControllerSnapshot): boolean {
  return snapshot.matches({ singular: 'holding' })
}
