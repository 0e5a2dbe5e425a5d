/**
 * Turns XState's `inspect` callback into inspection messages in the `@statelyai/inspect`
 * wire format (0.7.2: `@xstate.actor` with the machine's definition, `@xstate.event`,
 * `@xstate.snapshot`), each with cantrip's own fields beside it, which Stately's receiver
 * ignores: `agent` (who runs the actor), `actorKind` and a human `name`.
 *
 * An actor is announced at its first snapshot rather than at its creation, because XState
 * reports the creation before the actor has a state (and a relation's name comes from its
 * context): the `@xstate.actor` message then carries that snapshot, and a `@xstate.snapshot`
 * follows. Microsteps and actions are not streamed (their snapshots repeat the macrostep's).
 * Pure: the clock and the sink are given.
 */
import type { ActorRefLike, InspectionEvent } from 'xstate'
import type { ActorInspect, ActorKind, InspectObserver } from '../../runtime/inspect-hook.ts'
import { sanitise, type SanitiseOptions } from './sanitise-snapshot.ts'

/** The `_version` field Stately's inspector expects of the wire format this follows. */
export const inspectWireVersion = '0.7.2'

interface CantripFields {
  agent: string
  actorKind: ActorKind
  name: string
}

interface BaseMessage extends CantripFields {
  sessionId: string
  rootId: string | undefined
  /** Milliseconds since the epoch, as a string (Stately's format). */
  createdAt: string
  id: string | null
  _version: string
}

export interface WireSnapshot {
  status: string
  value?: unknown
  context?: unknown
  output?: unknown
  error?: unknown
}

export interface ActorMessage extends BaseMessage {
  type: '@xstate.actor'
  parentId: string | undefined
  /** `JSON.stringify(logic.toJSON())` for machines (Stately's field is a string); undefined for other logic. */
  definition: string | undefined
  snapshot: WireSnapshot
}

export interface EventMessage extends BaseMessage {
  type: '@xstate.event'
  event: Record<string, unknown>
  sourceId: string | undefined
  /** The session ids of sender and receiver (XState's `sourceRef` / `actorRef`). */
  sourceRef: string | undefined
  targetRef: string
}

export interface SnapshotMessage extends BaseMessage {
  type: '@xstate.snapshot'
  event: Record<string, unknown>
  snapshot: WireSnapshot
  status: string
}

export type InspectMessage = ActorMessage | EventMessage | SnapshotMessage

export interface ActorInspectionOptions {
  /** The agent's name on the stream (`controller-<id>`, `machine-<N>`). */
  agent: string
  now: () => number
  sanitise: SanitiseOptions
  emit: (message: InspectMessage) => void
}

/** What inspection events carry: an actor ref, with the parts of XState's Actor read here. */
type AnyActorRef = ActorRefLike & { id?: string, _parent?: { sessionId: string }, logic?: { id?: string, config?: object, toJSON?: () => unknown } }

interface Known extends CantripFields {
  parentId: string | undefined
  announced: boolean
}

/** The kinds of child actors, by their machine's id (the root's kind is given by whoever creates it). */
const childKinds: Record<string, ActorKind> = { relation: 'relation', machine: 'machine', unit: 'unit', controller: 'raft', provisioner: 'provisioner', deployer: 'deployer' }

/** Definitions are computed once per machine config (every `provide` shares its config). */
const definitions = new WeakMap<object, string>()

export function definitionOf (actor: AnyActorRef): string | undefined {
  const logic = actor.logic
  if (logic?.config === undefined || typeof logic.toJSON !== 'function') return undefined
  let definition = definitions.get(logic.config)
  if (definition === undefined) {
    definition = JSON.stringify(logic.toJSON())
    definitions.set(logic.config, definition)
  }
  return definition
}

/** An `inspect` factory for this agent: each root actor gets an observer that also names its children. */
export function createActorInspection (options: ActorInspectionOptions): ActorInspect {
  return (kind, name) => observerFor(options, kind, name)
}

function observerFor (options: ActorInspectionOptions, rootKind: ActorKind, rootName: string): InspectObserver {
  const known = new Map<string, Known>()
  let rootSession: string | undefined
  const base = (actor: AnyActorRef, info: Known, rootId: string | undefined): BaseMessage => ({
    sessionId: actor.sessionId,
    rootId,
    createdAt: String(options.now()),
    id: null,
    _version: inspectWireVersion,
    agent: options.agent,
    actorKind: info.actorKind,
    name: info.name
  })
  const infoOf = (actor: AnyActorRef): Known => {
    let info = known.get(actor.sessionId)
    if (info === undefined) {
      // First sight of the root, or a child created before this observer saw it.
      const isRoot = rootSession === undefined || rootSession === actor.sessionId
      if (isRoot) rootSession = actor.sessionId
      const machineId = actor.logic?.id
      info = {
        agent: options.agent,
        actorKind: isRoot ? rootKind : childKinds[machineId ?? ''] ?? 'other',
        name: isRoot ? rootName : `${rootName}/${actor.id ?? actor.sessionId}`,
        parentId: actor._parent?.sessionId,
        announced: false
      }
      known.set(actor.sessionId, info)
    }
    return info
  }
  return {
    next: (inspection: InspectionEvent) => {
      switch (inspection.type) {
        case '@xstate.actor':
          infoOf(inspection.actorRef)
          return
        case '@xstate.event': {
          const target = inspection.actorRef
          const info = infoOf(target)
          const source = inspection.sourceRef?.sessionId
          options.emit({
            ...base(target, info, inspection.rootId),
            type: '@xstate.event',
            event: eventOf(inspection.event, options),
            sourceId: source,
            sourceRef: source,
            targetRef: target.sessionId
          })
          return
        }
        case '@xstate.snapshot': {
          const actor = inspection.actorRef
          const info = infoOf(actor)
          const snapshot = wireSnapshot(inspection.snapshot, options)
          if (!info.announced) {
            info.announced = true
            if (info.actorKind === 'relation') info.name = relationName(inspection.snapshot) ?? info.name
            options.emit({ ...base(actor, info, inspection.rootId), type: '@xstate.actor', parentId: info.parentId, definition: definitionOf(actor), snapshot })
          }
          options.emit({ ...base(actor, info, inspection.rootId), type: '@xstate.snapshot', event: eventOf(inspection.event, options), snapshot, status: snapshot.status })
          // A finished actor is forgotten; XState never reuses its session id.
          if (snapshot.status !== 'active') known.delete(actor.sessionId)
          return
        }
        default:
      }
    }
  }
}

function eventOf (event: unknown, options: ActorInspectionOptions): Record<string, unknown> {
  const safe = sanitise(event, options.sanitise)
  return typeof safe === 'object' && safe !== null && !Array.isArray(safe) ? safe as Record<string, unknown> : { type: String(safe) }
}

export function wireSnapshot (snapshot: unknown, options: Pick<ActorInspectionOptions, 'sanitise'>): WireSnapshot {
  const s = snapshot as { status?: string, value?: unknown, context?: unknown, output?: unknown, error?: unknown }
  const out: WireSnapshot = { status: s.status ?? 'active' }
  if (s.value !== undefined) out.value = sanitise(s.value, options.sanitise)
  if (s.context !== undefined) out.context = sanitise(s.context, options.sanitise)
  if (s.output !== undefined) out.output = sanitise(s.output, options.sanitise)
  if (s.error !== undefined) out.error = sanitise(s.error, options.sanitise)
  return out
}

/** `kv:db wiki (kv/0)`: this unit's application and endpoint, the remote application, the unit. */
function relationName (snapshot: unknown): string | undefined {
  const context = (snapshot as { context?: { unit?: string, local?: { endpoint?: string, remoteApplication?: string } } }).context
  const unit = context?.unit
  const local = context?.local
  if (unit === undefined || local?.endpoint === undefined) return undefined
  return `${unit.split('/')[0]}:${local.endpoint} ${local.remoteApplication ?? '?'} (${unit})`
}
