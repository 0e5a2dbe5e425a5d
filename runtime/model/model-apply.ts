import { assert, assertSafeInteger } from '../assert.ts'
import { describeValue } from '../errors.ts'
import { isMachineId, isUnitName } from '../ids.ts'
import { isPlainRecord } from './charm-summary.ts'
import { ModelDraft, recallRequest, rememberRequest } from './model-draft.ts'
import type { ApplyMeta, ApplyOutcome, CommandResult, Delta, Entity, ModelCommand, ModelCommandType, ModelContext } from './model-types.ts'
import { applicationCommands } from './apply/application-commands.ts'
import { applyBatchCommands, batchCommands, batchProblem } from './apply/batch-commands.ts'
import { charmCommands } from './apply/charm-commands.ts'
import { describeCommand, entityTag } from './apply/describe-command.ts'
import { hookChangeCommands } from './apply/hook-change-commands.ts'
import { leadershipCommands } from './apply/leadership-commands.ts'
import { machineCommands } from './apply/machine-commands.ts'
import { modelCommands } from './apply/model-commands.ts'
import { modelConfigCommands } from './apply/model-config-commands.ts'
import { agentVersionCommands } from './apply/agent-version-commands.ts'
import { Refusal, textFieldLengthMax, type Handler, type HandlerTable } from './apply/refusal.ts'
import { relationCommands } from './apply/relation-commands.ts'
import { presenceCommands } from './apply/presence-commands.ts'
import { resourceCommands } from './apply/resource-commands.ts'
import { secretCommands } from './apply/secret-commands.ts'
import { statusCommands } from './apply/status-commands.ts'
import { taskCommands } from './apply/task-commands.ts'
import { operationCommands } from './apply/operation-commands.ts'
import { storageCommands } from './apply/storage-commands.ts'
import { unitCommands } from './apply/unit-commands.ts'

export { describeCommand, entityTag }

/**
 * Applying one committed command to the model: pure and deterministic, so every
 * controller, and every replay of the log, reaches the same context. Invalid commands
 * are refused with one line naming the component, the action and the reason; the
 * context is then unchanged except that the revision (= applied Raft index) advances,
 * because the entry was committed all the same.
 *
 * The handlers live by concern in ./apply/; this file holds the envelope checks, the
 * request-id memory and the one table of them all.
 */

const q = describeValue
const requestIdLengthMax = 256

/**
 * Every command type's handler. Its type makes the compiler prove each command is
 * handled: a type missing from every concern's table fails to type-check here.
 */
const handlers: HandlerTable<ModelCommandType> = {
  ...charmCommands,
  ...applicationCommands,
  ...unitCommands,
  ...storageCommands,
  ...taskCommands,
  ...operationCommands,
  ...relationCommands,
  ...leadershipCommands,
  ...machineCommands,
  ...modelCommands,
  ...modelConfigCommands,
  ...agentVersionCommands,
  ...hookChangeCommands,
  ...statusCommands,
  ...presenceCommands,
  ...resourceCommands,
  ...secretCommands,
  ...batchCommands
}
// A spread lets a later table silently replace an earlier one's handler: no type may be in two.
assert(
  [charmCommands, applicationCommands, unitCommands, storageCommands, taskCommands, operationCommands, relationCommands, leadershipCommands, machineCommands, modelCommands, modelConfigCommands, agentVersionCommands, hookChangeCommands, statusCommands, presenceCommands, resourceCommands, secretCommands, batchCommands]
    .reduce((n, table) => n + Object.keys(table).length, 0) === Object.keys(handlers).length,
  'model: a command type has handlers in two concerns'
)

function isEntity (value: unknown): value is Entity {
  if (!isPlainRecord(value)) return false
  switch (value.kind) {
    case 'user': return typeof value.name === 'string' && value.name !== '' && value.name.length <= textFieldLengthMax
    case 'controller': return typeof value.id === 'string' && value.id !== '' && value.id.length <= textFieldLengthMax
    case 'machine': return typeof value.id === 'string' && isMachineId(value.id)
    case 'unit': return typeof value.name === 'string' && isUnitName(value.name)
    default: return false
  }
}

// ---------------------------------------------------------------------------------
// The entry point

/**
 * Applies `command`, committed at `meta.index`, to `context`. Returns the next context,
 * the deltas (empty when refused or a duplicate) and the result the proposer gets.
 * `meta.index` must be above the context's revision: re-applying an entry is the host's bug.
 */
export function applyCommand (context: ModelContext, command: ModelCommand, meta: ApplyMeta): ApplyOutcome {
  assertSafeInteger(meta.index, 'model: applied index')
  assert(meta.index > context.revision, `model: entry ${meta.index} applied at revision ${context.revision}`)
  const term = meta.term ?? context.term
  assertSafeInteger(term, 'model: applied term')
  const at = { index: meta.index, term }
  // A batch's commands share its entry (and so its index): each applies as if alone.
  if (isPlainRecord(command) && command.type === 'apply-batch' && envelopeProblem(command) === undefined) {
    const problem = batchProblem(command)
    if (problem !== undefined) return { context: { ...context, revision: at.index, term }, deltas: [], result: { ok: false, index: at.index, error: problem }, duplicate: false }
    return applyBatchCommands(context, command, at, applyOne)
  }
  return applyOne(context, command, at)
}

/** One command at `at`, which may equal the context's revision when it is not the first of its entry. */
function applyOne (context: ModelContext, command: ModelCommand, at: Required<ApplyMeta>): ApplyOutcome {
  const { index, term } = at
  const envelopeError = envelopeProblem(command)
  if (envelopeError !== undefined) {
    // Without a valid request id and proposer there is nothing to remember the result by.
    return { context: advanced(context, at), deltas: [], result: { ok: false, index, error: envelopeError }, duplicate: false }
  }
  const requestKey = `${entityTag(command.proposer)} ${command.requestId}`
  const seen = recallRequest(context.requests, requestKey)
  if (seen !== undefined) {
    if (seen.type !== command.type) {
      const error = `controller: cannot ${describeCommand(command)}: request id ${q(command.requestId)} was already used for ${q(seen.type)}`
      return { context: advanced(context, at), deltas: [], result: { ok: false, index, error }, duplicate: false }
    }
    return { context: advanced(context, at), deltas: [], result: seen.result, duplicate: true }
  }

  const draft = new ModelDraft(context, index)
  let result: CommandResult
  try {
    const handler = handlers[command.type] as Handler<ModelCommandType>
    const value = handler(draft, command)
    result = { ok: true, index, ...value }
  } catch (error) {
    if (!(error instanceof Refusal)) throw error
    result = { ok: false, index, error: error.message }
    const requests = rememberRequest(context.requests, requestKey, { type: command.type, result })
    return { context: { ...context, revision: index, term, requests }, deltas: [], result, duplicate: false }
  }
  // The request's result goes into the same new context: a second copy of it per command
  // was a tenth of a command's apply (issue 28).
  const { context: next, deltas } = draft.finish(term, { key: requestKey, record: { type: command.type, result } })
  return { context: next, deltas, result, duplicate: false }
}

/**
 * The context at a command's index with nothing else changed. A function of its own, not a
 * closure made in applyOne: the bundler names every closure it makes (keepNames), which
 * is a property definition per command.
 */
function advanced (context: ModelContext, at: Required<ApplyMeta>): ModelContext {
  return { ...context, revision: at.index, term: at.term }
}

function envelopeProblem (command: unknown): string | undefined {
  if (!isPlainRecord(command)) return `controller: cannot apply command: expected a command map, got ${q(command)}`
  if (typeof command.type !== 'string' || !Object.hasOwn(handlers, command.type)) {
    return `controller: cannot apply command: unknown command type ${q(command.type)}`
  }
  if (typeof command.requestId !== 'string' || command.requestId === '' || command.requestId.length > requestIdLengthMax) {
    return `controller: cannot apply ${q(command.type)}: request id must be 1 to ${requestIdLengthMax} characters, got ${q(command.requestId)}`
  }
  if (!isEntity(command.proposer)) return `controller: cannot apply ${q(command.type)}: proposer is not a user, controller, machine or unit`
  return undefined
}
