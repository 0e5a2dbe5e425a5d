import { createStore, fromStore, type StandardSchemaV1 } from '@xstate/store'
import { applyCommand } from './model-apply.ts'
import { emptyModel } from './model-draft.ts'
import {
  modelCommandTypes,
  type CommandResult, type Delta, type ModelCommand, type ModelCommandType, type ModelContext
} from './model-types.ts'

export { applyCommand, describeCommand, entityTag } from './model-apply.ts'
export { emptyModel } from './model-draft.ts'

/**
 * The model store (DESIGN.md §4): an @xstate/store whose events are the committed
 * commands, one event type per command type, each carrying the command and its Raft
 * index. Handlers call the pure `applyCommand`, so the live store and a replay through
 * `store.transition` (or `applyCommand` directly) reach identical contexts. Every applied
 * entry emits `applied` with the result and the deltas, for the API layer (answers to
 * proposers) and the watchers (change notices).
 *
 * A handler refuses (returns undefined) only an entry at or below the applied revision:
 * the host replaying what a RaftSnapshot already contains. Refused *commands* are still
 * applied: their entry advances the revision and their result carries the error.
 */

/** A committed command, as the store's event. */
export type ModelStoreEvent = {
  [T in ModelCommandType]: { type: T, command: Extract<ModelCommand, { type: T }>, index: number, term?: number }
}[ModelCommandType] | RaftEntrySkipped

/** A committed entry that is not a model command (the leader's no-op, a membership change). */
export interface RaftEntrySkipped {
  type: 'raft.entrySkipped'
  index: number
  term?: number
}

export interface AppliedEvent {
  type: 'applied'
  index: number
  result: CommandResult
  deltas: readonly Delta[]
  duplicate: boolean
}

function emittedSchema<T> (): StandardSchemaV1<T> {
  return { '~standard': { version: 1, vendor: 'cantrip', validate: value => ({ value: value as T }) } }
}

/** The event that applies `command` committed at `index`. */
export function commandEvent (command: ModelCommand, index: number, term?: number): ModelStoreEvent {
  const event = { type: command.type, command, index } as ModelStoreEvent
  return term === undefined ? event : { ...event, term }
}

type Handler = (context: ModelContext, event: ModelStoreEvent, enqueue: { emit: { applied: (event: Omit<AppliedEvent, 'type'>) => void } }) => ModelContext | undefined

const applyHandler: Handler = (context, event, enqueue) => {
  if (event.index <= context.revision) return undefined
  if (event.type === 'raft.entrySkipped') {
    return { ...context, revision: event.index, term: event.term ?? context.term }
  }
  const outcome = applyCommand(context, event.command, event.term === undefined ? { index: event.index } : { index: event.index, term: event.term })
  enqueue.emit.applied({ index: event.index, result: outcome.result, deltas: outcome.deltas, duplicate: outcome.duplicate })
  return outcome.context
}

function modelStoreConfig (context: ModelContext) {
  const on: Record<string, Handler> = { 'raft.entrySkipped': applyHandler }
  for (const type of modelCommandTypes) on[type] = applyHandler
  return {
    context,
    schemas: { emitted: { applied: emittedSchema<Omit<AppliedEvent, 'type'>>() } },
    on: on as { [E in ModelStoreEvent as E['type']]: (context: ModelContext, event: E, enqueue: Parameters<Handler>[2]) => ModelContext | undefined }
  }
}

export function createModelStore (initial: ModelContext = emptyModel()) {
  return createStore(modelStoreConfig(initial))
}

export type ModelStore = ReturnType<typeof createModelStore>

/** The store as XState actor logic, for inspection (@statelyai/inspect does not understand store-4 events). */
export function modelStoreLogic (initial: ModelContext = emptyModel()) {
  return fromStore(modelStoreConfig(initial))
}

/**
 * Applies one committed command through the store and returns what it emitted. The
 * result is undefined only when the store refused the entry as already applied.
 */
export function applyToStore (store: ModelStore, command: ModelCommand, index: number, term?: number): AppliedEvent | undefined {
  let applied: AppliedEvent | undefined
  const subscription = store.on('applied', event => { if (event.index === index) applied = event as AppliedEvent })
  try {
    store.send(commandEvent(command, index, term))
  } finally {
    subscription.unsubscribe()
  }
  return applied
}

// Every command type has an event: a new command that is not listed fails to typecheck here.
type MissingCommandTypes = Exclude<ModelCommandType, (typeof modelCommandTypes)[number]>
const everyCommandHasAnEvent: MissingCommandTypes extends never ? true : MissingCommandTypes = true
void everyCommandHasAnEvent
