import { assert } from '../../runtime/assert.ts'
import type { UnitName } from '../../runtime/ids.ts'
import { commitRelationHook, localRelationFromHook, newLocalRelation, relationHookRefusal } from '../relation/relation-state.ts'
import { hookName, isRelationHook, type HookInfo } from './hook-info.ts'
import { inHookError, type LocalState, type PersistedOperation, type UniterMemory } from './local-state.ts'
import type { ExecuteOutcome, Operation } from './operation.ts'
import type { RemoteRelation } from './remote-state.ts'
import type { RemoteSnapshot } from './resolver-types.ts'
import type { UnitEmitted } from './unit-effects.ts'
import { plainEqual } from '../../runtime/plain-equal.ts'

/**
 * The three steps of an operation (prepare → execute → commit) as pure functions from
 * state to state. The unit actor persists the local state each returns before it goes
 * on, so a crash resumes at a known step (juju-semantics §1.1).
 */

/** Remote values captured when the operation is created and recorded when it commits. */
export interface Captured {
  configHash: string
  trustHash: string
  addressesHash: string
  leaderSettingsVersion: number
  updateStatusVersion: number
  retryHookVersion: number
  relation?: RemoteRelation
}

export interface CurrentOperation {
  op: Operation
  captured: Captured
}

export interface StepState {
  unit: UnitName
  local: LocalState
  memory: UniterMemory
}

export interface StepResult {
  local: LocalState
  memory: UniterMemory
  emitted: UnitEmitted[]
}

export type ExecuteResult = StepResult & {
  /** commit: go on; error: the hook failed (state stays pending); requeued: stop, run it again later; conflict: wait. */
  next: 'commit' | 'error' | 'requeued' | 'conflict' | 'loop-error'
}

/** Completed action and command ids remembered in memory, to not run them twice. */
const completedIdsMax = 1024

export function captureRemote (op: Operation, remote: RemoteSnapshot): CurrentOperation {
  const relationId = op.kind === 'run-hook' || op.kind === 'skip-hook' ? op.hook.relationId : undefined
  const relation = relationId === undefined ? undefined : remote.relations[String(relationId)]
  const captured: Captured = {
    configHash: remote.configHash,
    trustHash: remote.trustHash,
    addressesHash: remote.addressesHash,
    leaderSettingsVersion: remote.leaderSettingsVersion,
    updateStatusVersion: remote.updateStatusVersion,
    retryHookVersion: remote.retryHookVersion
  }
  return { op, captured: relation === undefined ? captured : { ...captured, relation } }
}

/**
 * The key a pending hook run's commit carries (`commit-hook-changes`' hookRun): the
 * controller applies one commit per key, so a hook run again after kill -9 between its
 * commit and the save of `done` commits nothing twice. Undefined outside a hook run.
 */
export function hookCommitKey (local: LocalState): string | undefined {
  const run = local.operation.kind === 'run-hook' ? local.operation.run : undefined
  return run === undefined ? undefined : `${local.stateId ?? '-'}:${run}`
}

function withOperation (local: LocalState, operation: PersistedOperation): LocalState {
  return { ...local, operation }
}

function hookOf (op: Operation): HookInfo | undefined {
  return op.kind === 'run-hook' || op.kind === 'skip-hook' ? op.hook : undefined
}

function refuseInvalidRelationHook (local: LocalState, hook: HookInfo): void {
  if (!isRelationHook(hook.kind) || hook.kind === 'relation-created') return
  const rel = local.relations[String(hook.relationId)]
  assert(rel !== undefined, `relation ${String(hook.relationId)}: "${hook.kind}" for a relation this unit never created`)
  const refusal = relationHookRefusal(rel, hook)
  assert(refusal === undefined, refusal ?? '')
}

export function prepare (state: StepState, current: CurrentOperation): StepResult {
  const { local, memory } = state
  const op = current.op
  const emitted: UnitEmitted[] = []
  switch (op.kind) {
    case 'deploy': {
      // A forced upgrade that interrupts a hook error keeps the failed hook, to restore it on commit.
      const interrupted = local.operation.hook !== undefined && (inHookError(local) || local.operation.kind === 'upgrade')
      const operation: PersistedOperation = { kind: op.mode, step: 'pending', charm: op.charm }
      if (interrupted) operation.hook = local.operation.hook!
      return { local: withOperation(local, operation), memory: { ...memory, conflicted: false }, emitted }
    }
    case 'run-hook': {
      refuseInvalidRelationHook(local, op.hook)
      if (op.hook.kind === 'relation-created') emitted.push({ type: 'relation.enterScope', relationId: op.hook.relationId! })
      const nextMemory = op.source === 'retry-timer' ? { ...memory, retryHookVersion: current.captured.retryHookVersion } : memory
      // The same hook still pending (a crash or a failure interrupted it) keeps its run, so
      // its commit keeps its key (hookCommitKey); anything else is a new run.
      const pending = local.operation
      const resumed = pending.kind === 'run-hook' && pending.step === 'pending' && pending.run !== undefined && plainEqual(pending.hook, op.hook)
      const run = resumed ? pending.run! : (local.hookRuns ?? 0) + 1
      return { local: { ...withOperation(local, { kind: 'run-hook', step: 'pending', hook: op.hook, run }), hookRuns: Math.max(local.hookRuns ?? 0, run) }, memory: nextMemory, emitted }
    }
    case 'skip-hook':
      refuseInvalidRelationHook(local, op.hook)
      if (op.hook.kind === 'relation-created') emitted.push({ type: 'relation.enterScope', relationId: op.hook.relationId! })
      return { local: withOperation(local, { kind: 'run-hook', step: 'done', hook: op.hook }), memory, emitted }
    case 'run-action': {
      const operation: PersistedOperation = { kind: 'run-action', step: 'pending', actionId: op.action.id }
      if (inHookError(local)) operation.hook = local.operation.hook!
      emitted.push({ type: 'task.started', taskId: op.action.id })
      return { local: withOperation(local, operation), memory, emitted }
    }
    case 'run-command':
      emitted.push({ type: 'task.started', taskId: op.command.id })
      return { local, memory, emitted }
    case 'accept-leadership':
    case 'resign-leadership':
    case 'fail-action':
    case 'commit-action':
      return { local, memory, emitted }
  }
}

export function afterExecute (state: StepState, current: CurrentOperation, result: ExecuteOutcome): ExecuteResult {
  const { local, memory } = state
  const op = current.op
  const emitted: UnitEmitted[] = []
  const done = (operation: PersistedOperation): ExecuteResult => ({ local: withOperation(local, operation), memory, emitted, next: 'commit' })
  switch (result.type) {
    case 'hook': {
      const hook = hookOf(op)
      assert(hook !== undefined, `unit "${state.unit}": hook outcome for ${op.kind}`)
      const outcome = result.outcome
      if (outcome.kind === 'succeeded' || outcome.kind === 'missing') {
        // Juju keeps StatusSet once any hook has set the unit's status (operation/state.go).
        const statusSet = local.statusSet || (outcome.kind === 'succeeded' && outcome.statusSet === true)
        return { local: { ...withOperation(local, { kind: 'run-hook', step: 'done', hook }), statusSet }, memory, emitted, next: 'commit' }
      }
      if (outcome.kind === 'terminated' || outcome.kind === 'reboot-now') {
        emitted.push({ type: 'hook.requeued', hook })
        if (outcome.kind === 'reboot-now') emitted.push({ type: 'machine.reboot', hook, now: true })
        return { local: withOperation(local, { kind: 'run-hook', step: 'queued', hook }), memory, emitted, next: 'requeued' }
      }
      emitted.push({ type: 'hook.failed', hook, reason: outcome.reason })
      return { local, memory, emitted, next: 'error' }
    }
    case 'deploy': {
      assert(op.kind === 'deploy', `unit "${state.unit}": deploy outcome for ${op.kind}`)
      if (result.outcome.kind === 'conflicted') return { local, memory: { ...memory, conflicted: true }, emitted, next: 'conflict' }
      if (result.outcome.kind === 'failed') {
        emitted.push({ type: 'uniter.loopError', reason: result.outcome.reason })
        return { local, memory: { ...memory, loopFailed: true }, emitted, next: 'loop-error' }
      }
      return done({ ...local.operation, step: 'done' })
    }
    case 'action': {
      assert(op.kind === 'run-action', `unit "${state.unit}": action outcome for ${op.kind}`)
      emitted.push({ type: 'action.completed', actionId: op.action.id, outcome: result.outcome })
      return done({ ...local.operation, step: 'done' })
    }
    case 'command': {
      assert(op.kind === 'run-command', `unit "${state.unit}": command outcome for ${op.kind}`)
      emitted.push({ type: 'command.completed', commandId: op.command.id, outcome: result.outcome })
      return { local, memory, emitted, next: 'commit' }
    }
  }
}

function remember (ids: readonly string[], id: string): string[] {
  const next = ids.includes(id) ? [...ids] : [...ids, id]
  return next.length > completedIdsMax ? next.slice(next.length - completedIdsMax) : next
}

/** Where the loop goes after an action or hook-error interruption: back to the error, or idle. */
function continuation (local: LocalState): PersistedOperation {
  return local.operation.hook !== undefined ? { kind: 'run-hook', step: 'pending', hook: local.operation.hook } : { kind: 'continue', step: 'pending' }
}

export function commit (state: StepState, current: CurrentOperation): StepResult {
  const { local, memory } = state
  const op = current.op
  switch (op.kind) {
    case 'deploy': return commitDeploy(state, op)
    case 'run-hook':
    case 'skip-hook':
      return commitHook(state, current, op.hook, op.kind === 'run-hook')
    case 'accept-leadership':
      assert(local.operation.kind === 'continue', `unit "${state.unit}": accepting leadership while ${local.operation.kind}`)
      return {
        local: { ...local, leader: true, operation: { kind: 'run-hook', step: 'queued', hook: { kind: 'leader-elected' } } },
        memory,
        emitted: [{ type: 'leadership.changed', leader: true }]
      }
    case 'resign-leadership':
      return { local: { ...local, leader: false }, memory, emitted: [{ type: 'leadership.changed', leader: false }] }
    case 'run-action':
      return { local: withOperation(local, continuation(local)), memory: { ...memory, completedActions: remember(memory.completedActions, op.action.id) }, emitted: [] }
    case 'fail-action':
      return {
        local: withOperation(local, continuation(local)),
        memory: { ...memory, completedActions: remember(memory.completedActions, op.actionId) },
        emitted: [{ type: 'action.completed', actionId: op.actionId, outcome: { status: 'failed', message: op.message, results: {} } }]
      }
    case 'commit-action':
      return { local: withOperation(local, continuation(local)), memory: { ...memory, completedActions: remember(memory.completedActions, op.actionId) }, emitted: [] }
    case 'run-command':
      return { local, memory: { ...memory, completedCommands: remember(memory.completedCommands, op.command.id) }, emitted: [] }
  }
}

function commitDeploy (state: StepState, op: Extract<Operation, { kind: 'deploy' }>): StepResult {
  const { local, memory } = state
  const emitted: UnitEmitted[] = [{ type: 'charm.deployed', url: op.charm.url, modifiedVersion: op.charm.modifiedVersion }]
  if (op.mode === 'install') {
    return { local: { ...local, charm: op.charm, operation: { kind: 'run-hook', step: 'queued', hook: { kind: 'install' } } }, memory, emitted }
  }
  // An upgrade that interrupted a hook error puts the failed hook back and queues no upgrade-charm.
  const interrupted = local.operation.hook
  const operation: PersistedOperation = interrupted !== undefined
    ? { kind: 'run-hook', step: 'pending', hook: interrupted }
    : { kind: 'run-hook', step: 'queued', hook: { kind: 'upgrade-charm' } }
  return { local: { ...local, charm: op.charm, operation }, memory: { ...memory, restart: true, conflicted: false }, emitted }
}

function commitHook (state: StepState, current: CurrentOperation, hook: HookInfo, ran: boolean): StepResult {
  const { captured } = current
  let local = state.local
  let memory: UniterMemory = { ...state.memory, updateStatusVersion: captured.updateStatusVersion }
  const emitted: UnitEmitted[] = []
  let queued: HookInfo | undefined
  switch (hook.kind) {
    case 'install': local = { ...local, installed: true }; break
    case 'start': local = { ...local, started: true, stopped: false }; memory = { ...memory, rebootPending: false }; break
    case 'stop': local = { ...local, stopped: true }; break
    case 'remove': local = { ...local, removed: true }; break
    case 'config-changed':
      local = { ...local, configHash: captured.configHash, trustHash: captured.trustHash, addressesHash: captured.addressesHash }
      if (!local.started) queued = { kind: 'start' }
      break
    case 'upgrade-charm': queued = { kind: 'config-changed' }; break
    case 'leader-settings-changed': memory = { ...memory, leaderSettingsVersion: captured.leaderSettingsVersion }; break
    case 'leader-elected':
    case 'update-status':
      break
    case 'storage-attached':
      local = { ...local, storageAttached: { ...local.storageAttached, [hook.storageId!]: { name: hook.storageName! } } }
      break
    case 'secret-changed':
      if (hook.secretId !== undefined && hook.secretRevision !== undefined) {
        local = { ...local, secretRevisions: { ...local.secretRevisions, [hook.secretId]: hook.secretRevision } }
      }
      break
    case 'secret-rotate':
    case 'secret-expired':
    case 'secret-remove':
      local = commitSecretTrigger(local, hook, emitted)
      break
    case 'storage-detaching': {
      const storageAttached = { ...local.storageAttached }
      delete storageAttached[hook.storageId!]
      local = { ...local, storageAttached }
      emitted.push({ type: 'storage.detached', storageId: hook.storageId! })
      break
    }
    default:
      ({ local } = commitRelation(state.unit, local, current, hook, emitted))
  }
  const operation: PersistedOperation = queued === undefined ? { kind: 'continue', step: 'pending' } : { kind: 'run-hook', step: 'queued', hook: queued }
  emitted.push({ type: 'hook.committed', hook, ran })
  return { local: { ...local, operation }, memory, emitted }
}

function commitRelation (unit: UnitName, local: LocalState, current: CurrentOperation, hook: HookInfo, emitted: UnitEmitted[]): { local: LocalState } {
  const key = String(hook.relationId)
  const relations = { ...local.relations }
  if (hook.kind === 'relation-created') {
    // Idempotent: committing created again after a crash keeps what was recorded. The
    // relation may be gone by now (the hook was retried later): the unit still knows it
    // from the hook, and tears it down with -broken like any other.
    const remote = current.captured.relation
    relations[key] ??= remote !== undefined ? newLocalRelation(remote) : localRelationFromHook(hook)
    return { local: { ...local, relations } }
  }
  const rel = relations[key]
  // A crash after a broken commit was saved leaves nothing to do on the second commit.
  if (rel === undefined) return { local }
  const next = commitRelationHook(rel, hook)
  if (next === undefined) {
    delete relations[key]
    emitted.push({ type: 'relation.leaveScope', relationId: rel.id })
  } else {
    relations[key] = next
    const dyingPeerEmptied = hook.kind === 'relation-departed' && hook.departee === unit && next.peer && Object.keys(next.members).length === 0
    if (dyingPeerEmptied) emitted.push({ type: 'relation.leaveScope', relationId: rel.id })
  }
  return { local: { ...local, relations } }
}

/**
 * A committed secret-rotate, secret-expired or secret-remove: recorded so it does not
 * run again for the same trigger or revision; a rotation is also reported to the
 * controllers, which schedule the next one (Juju's secretCompleter callbacks).
 */
function commitSecretTrigger (local: LocalState, hook: HookInfo, emitted: UnitEmitted[]): LocalState {
  const id = hook.secretId
  if (id === undefined) return local
  if (hook.kind === 'secret-rotate' && hook.secretDue !== undefined) {
    emitted.push({ type: 'secret.rotated', id, originalRevision: hook.secretOriginalRevision ?? 0 })
    return { ...local, secretRotated: { ...local.secretRotated, [id]: hook.secretDue } }
  }
  if (hook.kind === 'secret-expired' && hook.secretDue !== undefined && hook.secretRevision !== undefined) {
    return { ...local, secretExpired: { ...local.secretExpired, [`${id}/${hook.secretRevision}`]: hook.secretDue } }
  }
  if (hook.kind === 'secret-remove' && hook.secretRevision !== undefined) {
    const done = local.secretRemoved?.[id] ?? []
    return done.includes(hook.secretRevision) ? local : { ...local, secretRemoved: { ...local.secretRemoved, [id]: [...done, hook.secretRevision] } }
  }
  return local
}

/** The hook name shown in status and logs for the running operation, if it runs a hook. */
export function runningHookName (op: Operation): string | undefined {
  const hook = hookOf(op)
  return hook === undefined ? undefined : hookName(hook)
}
