/**
 * One message of the inspection stream as the viewer keeps it: an `@statelyai/inspect`
 * 0.7.2 inspection event (`@xstate.actor`, `@xstate.event`, `@xstate.snapshot`) with
 * cantrip's fields (`agent`, `actorKind`, `name`), or `@cantrip.dropped` when an agent
 * dropped messages for a slow client, plus when it arrived (`at`, ms) and its place in
 * the merged log (`seq`). Browser-safe: no node:* here.
 */

export type ActorKind = 'machine' | 'unit' | 'relation' | 'raft' | 'provisioner' | 'deployer' | string

export interface InspectSnapshot {
  value?: unknown
  context?: unknown
  status?: string
  output?: unknown
}

export interface InspectEventObject { type: string, [key: string]: unknown }

interface Common {
  /** The agent the message came from (`controller-0`, `machine-3`). */
  agent: string
  /** Ms epoch (live) or simulated ms (a sim run) when it happened or arrived. */
  at: number
  /** Index in the merged log, set when it is appended. */
  seq: number
}

export interface ActorMessage extends Common {
  type: '@xstate.actor'
  sessionId: string
  parentId: string | undefined
  actorKind: ActorKind
  name: string
  /** The machine's definition (`machine.toJSON()` or its config), parsed when it came as a string. */
  definition: unknown
  snapshot: InspectSnapshot
}

export interface EventMessage extends Common {
  type: '@xstate.event'
  /** The target actor's session id. */
  sessionId: string
  sourceId: string | undefined
  actorKind: ActorKind
  name: string
  event: InspectEventObject
}

export interface SnapshotMessage extends Common {
  type: '@xstate.snapshot'
  sessionId: string
  actorKind: ActorKind
  name: string
  snapshot: InspectSnapshot
  event: InspectEventObject | undefined
}

export interface DroppedMessage extends Common {
  type: '@cantrip.dropped'
  count: number
}

export type InspectMessage = ActorMessage | EventMessage | SnapshotMessage | DroppedMessage

/** A message before the log gave it its place (`seq`). */
export type UnsequencedMessage = InspectMessage extends infer M ? M extends InspectMessage ? Omit<M, 'seq'> : never : never

/** Session ids are per agent (XState numbers them `x:0`, `x:1`… in each system), so actors are keyed by both. */
export function actorKey (agent: string, sessionId: string): string {
  return `${agent} ${sessionId}`
}

function isRecord (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function text (value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

function parseDefinition (value: unknown): unknown {
  if (typeof value !== 'string') return value
  try { return JSON.parse(value) } catch { return undefined }
}

function snapshotOf (value: unknown): InspectSnapshot {
  return isRecord(value) ? value as InspectSnapshot : {}
}

function eventOf (value: unknown): InspectEventObject | undefined {
  if (typeof value === 'string') return { type: value }
  if (isRecord(value) && typeof value.type === 'string') return value as InspectEventObject
  return undefined
}

/** When the message says it happened: `at`, else Stately's `createdAt` (ms as a string), else the fallback. */
function timeOf (raw: Record<string, unknown>, fallbackAt: number): number {
  if (typeof raw.at === 'number' && Number.isFinite(raw.at)) return raw.at
  const created = Number(raw.createdAt)
  return Number.isFinite(created) && created > 0 ? created : fallbackAt
}

/**
 * Reads one wire message (already JSON-parsed). `agent` defaults to the endpoint's name;
 * returns an error line for anything that is not one of the four types, so a bad line in
 * a log is reported, not silently skipped.
 */
export function parseInspectMessage (raw: unknown, defaults: { agent: string, at: number }): UnsequencedMessage | string {
  if (!isRecord(raw)) return `expected an inspection message object, got ${JSON.stringify(raw)?.slice(0, 80)}`
  const agent = text(raw.agent) ?? defaults.agent
  const at = timeOf(raw, defaults.at)
  const type = raw.type
  if (type === '@cantrip.dropped') return { type, agent, at, count: typeof raw.count === 'number' ? raw.count : 0 }
  const sessionId = text(raw.sessionId) ?? text(raw.targetRef)
  if (sessionId === undefined) return `expected a sessionId in ${String(type)}, got none`
  const actorKind = text(raw.actorKind) ?? 'other'
  const name = text(raw.name) ?? sessionId
  switch (type) {
    case '@xstate.actor':
      return { type, agent, at, sessionId, parentId: text(raw.parentId), actorKind, name, definition: parseDefinition(raw.definition), snapshot: snapshotOf(raw.snapshot) }
    case '@xstate.event': {
      const event = eventOf(raw.event)
      if (event === undefined) return `expected an event with a type in @xstate.event, got ${JSON.stringify(raw.event)?.slice(0, 80)}`
      return { type, agent, at, sessionId, sourceId: text(raw.sourceId) ?? text(raw.sourceRef), actorKind, name, event }
    }
    case '@xstate.snapshot':
      return { type, agent, at, sessionId, actorKind, name, snapshot: snapshotOf(raw.snapshot), event: eventOf(raw.event) }
    default:
      return `expected @xstate.actor, @xstate.event, @xstate.snapshot or @cantrip.dropped, got ${JSON.stringify(type)}`
  }
}
