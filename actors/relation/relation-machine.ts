import { assign, setup, type ActorRefFrom, type SnapshotFrom } from 'xstate'
import type { UnitName } from '../../runtime/ids.ts'
import type { HookInfo } from '../unit/hook-info.ts'
import type { LocalRelation } from '../unit/local-state.ts'
import type { RemoteRelation } from '../unit/remote-state.ts'
import { commitRelationHook, nextRelationHook, relationBroken, relationHookRefusal, type RelationView } from './relation-state.ts'

/**
 * One relation as seen by one unit, as its own actor: members with the settings versions
 * committed hooks saw, the pending `-changed`, and what hook is due next. The unit actor
 * spawns one per relation it has created and tells it every committed relation hook and
 * every remote change; the actor checks each commit against the rules of
 * juju-semantics §3 and refuses (state `violated`) anything they forbid, so a broken
 * ordering shows up in the inspector and in tests instead of being silently absorbed.
 */
export interface RelationInput {
  unit: UnitName
  local: LocalRelation
  remote: RemoteRelation | undefined
  unitDying: boolean
  leader: boolean
}

export interface RelationContext {
  unit: UnitName
  local: LocalRelation
  remote: RemoteRelation | undefined
  view: RelationView
  /** The hook the resolver will pick for this relation next, if any. */
  nextHook: HookInfo | undefined
  violation: string | undefined
}

export type RelationEvent =
  | { type: 'relation.remoteChanged', remote: RemoteRelation | undefined, unitDying: boolean, leader: boolean }
  | { type: 'relation.hookCommitted', hook: HookInfo }

function due (local: LocalRelation, remote: RemoteRelation | undefined, view: RelationView): HookInfo | undefined {
  return nextRelationHook(local, remote, view)
}

export const relationMachine = setup({
  types: {
    context: {} as RelationContext,
    input: {} as RelationInput,
    events: {} as RelationEvent
  },
  guards: {
    commitRefused: ({ context, event }) =>
      event.type === 'relation.hookCommitted' && relationHookRefusal(context.local, event.hook) !== undefined,
    brokenCommitted: ({ event }) => event.type === 'relation.hookCommitted' && event.hook.kind === 'relation-broken',
    changedPending: ({ context }) => context.local.changedPending !== undefined,
    goingAway: ({ context }) => relationBroken(context.remote, context.view),
    hasMembers: ({ context }) => Object.keys(context.local.members).length > 0
  },
  actions: {
    recordRemote: assign(({ context, event }) => {
      if (event.type !== 'relation.remoteChanged') return {}
      const view = { ...context.view, unitDying: event.unitDying, leader: event.leader }
      return { remote: event.remote, view, nextHook: due(context.local, event.remote, view) }
    }),
    recordCommit: assign(({ context, event }) => {
      if (event.type !== 'relation.hookCommitted') return {}
      const local = commitRelationHook(context.local, event.hook) ?? context.local
      return { local, nextHook: due(local, context.remote, context.view) }
    }),
    recordViolation: assign(({ context, event }) => ({
      violation: event.type === 'relation.hookCommitted' ? relationHookRefusal(context.local, event.hook) : undefined
    }))
  }
}).createMachine({
  id: 'relation',
  context: ({ input }) => {
    const view = { unit: input.unit, unitDying: input.unitDying, leader: input.leader }
    return { unit: input.unit, local: input.local, remote: input.remote, view, nextHook: due(input.local, input.remote, view), violation: undefined }
  },
  initial: 'classifying',
  on: {
    'relation.remoteChanged': { target: '.classifying', actions: 'recordRemote' },
    'relation.hookCommitted': [
      { guard: 'commitRefused', target: '.violated', actions: 'recordViolation' },
      { guard: 'brokenCommitted', target: '.broken', actions: 'recordCommit' },
      { target: '.classifying', actions: 'recordCommit' }
    ]
  },
  states: {
    classifying: {
      always: [
        { guard: 'changedPending', target: 'changedPending' },
        { guard: 'goingAway', target: 'departing' },
        { guard: 'hasMembers', target: 'joined' },
        { target: 'created' }
      ]
    },
    /** Created, no remote unit joined (yet, or any more). */
    created: {},
    /** At least one remote unit joined. */
    joined: {},
    /** `-joined U` committed: `-changed U` must be this relation's next hook. */
    changedPending: {},
    /** The relation, or this unit, is going away: departs, then broken (not for peers). */
    departing: {},
    broken: { type: 'final' },
    violated: { type: 'final' }
  }
})

export type RelationActorRef = ActorRefFrom<typeof relationMachine>
export type RelationSnapshot = SnapshotFrom<typeof relationMachine>
