import { actorKey, type ActorKind, type InspectMessage, type InspectSnapshot } from './inspect-message.ts'

/**
 * The mesh as the inspection log says it is after some message: every actor seen, with
 * its definition and latest snapshot. Built by folding messages in log order; actor views
 * are replaced, never mutated, so a copy of the map is a cheap checkpoint for time travel.
 */

export interface ActorView {
  key: string
  agent: string
  sessionId: string
  parentKey: string | undefined
  kind: ActorKind
  name: string
  definition: unknown
  snapshot: InspectSnapshot
  /** The last event the actor received, and when (log time). */
  lastEvent: string | undefined
  updatedAt: number
  /** The log index of the message that last changed it (to flash what just changed). */
  updatedSeq: number
}

export interface ViewState {
  actors: Map<string, ActorView>
  /** Messages each agent said it dropped. */
  dropped: Map<string, number>
  /** The log index folded last; -1 before any. */
  seq: number
  at: number
}

export function emptyViewState (): ViewState {
  return { actors: new Map(), dropped: new Map(), seq: -1, at: 0 }
}

export function copyViewState (state: ViewState): ViewState {
  return { actors: new Map(state.actors), dropped: new Map(state.dropped), seq: state.seq, at: state.at }
}

/** An actor first seen by an event or snapshot (its @xstate.actor was lost or dropped). */
function placeholder (message: Extract<InspectMessage, { sessionId: string }>): ActorView {
  return {
    key: actorKey(message.agent, message.sessionId),
    agent: message.agent,
    sessionId: message.sessionId,
    parentKey: undefined,
    kind: message.actorKind,
    name: message.name,
    definition: undefined,
    snapshot: {},
    lastEvent: undefined,
    updatedAt: message.at,
    updatedSeq: message.seq
  }
}

/** Folds one message into the state (in place; callers copy first to keep a checkpoint). */
export function applyMessage (state: ViewState, message: InspectMessage): void {
  state.seq = message.seq
  state.at = message.at
  if (message.type === '@cantrip.dropped') {
    state.dropped.set(message.agent, (state.dropped.get(message.agent) ?? 0) + message.count)
    return
  }
  const key = actorKey(message.agent, message.sessionId)
  const known = state.actors.get(key) ?? placeholder(message)
  const touched = { updatedAt: message.at, updatedSeq: message.seq }
  switch (message.type) {
    case '@xstate.actor':
      state.actors.set(key, {
        ...known,
        ...touched,
        parentKey: message.parentId === undefined ? undefined : actorKey(message.agent, message.parentId),
        kind: message.actorKind,
        name: message.name,
        definition: message.definition ?? known.definition,
        snapshot: message.snapshot
      })
      break
    case '@xstate.snapshot':
      state.actors.set(key, { ...known, ...touched, snapshot: message.snapshot, lastEvent: message.event?.type ?? known.lastEvent })
      break
    case '@xstate.event':
      // An event changes nothing by itself (its snapshot follows); it is remembered as the last one received.
      state.actors.set(key, { ...known, ...touched, lastEvent: message.event.type })
      break
  }
}

/** Whether the actor has stopped (done, error or stopped status): shown greyed. */
export function actorStopped (actor: ActorView): boolean {
  return actor.snapshot.status !== undefined && actor.snapshot.status !== 'active'
}
