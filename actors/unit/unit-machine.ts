import { assign, createActor, emit, enqueueActions, fromPromise, raise, setup, type ActorOptions, type ActorRefFrom, type SnapshotFrom } from 'xstate'
import { assert } from '../../runtime/assert.ts'
import type { UnitName } from '../../runtime/ids.ts'
import { limits } from '../../runtime/limits.ts'
import { plainEqual } from '../../runtime/plain-equal.ts'
import { relationMachine, type RelationActorRef } from '../relation/relation-machine.ts'
import { isRelationHook, type HookInfo } from './hook-info.ts'
import { initialLocalState, initialMemory, type DeployedCharm, type LocalState, type UniterMemory } from './local-state.ts'
import { needsHookLock, type ActionOutcome, type CommandOutcome, type DeployOutcome, type ExecuteOutcome, type HookOutcome } from './operation.ts'
import { afterExecute, captureRemote, commit, prepare, type CurrentOperation, type StepResult } from './operation-steps.ts'
import type { RemoteAction, RemoteCommand, RemoteState } from './remote-state.ts'
import { loopErrorMessage, nextOp } from './resolver.ts'
import type { Decision, RemoteSnapshot } from './resolver-types.ts'
import { advanceRng, hookRetryDelayMs, loopRestartDelayMs } from './retry-backoff.ts'
import type { UnitEmitted, UnitStatus, WorkloadStatus } from './unit-effects.ts'
import { bindUnitPorts, holdHookLock, releaseHookLock, unitPortsOf, type UnitPorts } from './unit-ports.ts'
import { initialUnitStatus, statusOnCommit, statusOnHookError, statusOnIdle, statusOnLoopError, statusOnOperationStart, statusOnUpgradeConflict, statusOnWaitingForInstall, uniterSetWorkload } from './unit-status.ts'

/**
 * The uniter of one unit as a statechart (juju-semantics §1): load local state, then loop
 * resolve → execute one operation in persisted steps (prepare → execute → commit) → resolve,
 * resting in `idle`, `waiting` or `hookError` until the remote state or a timer changes.
 * A parallel `timers` region keeps the update-status ticker and the hook-retry back-off,
 * as Juju's remote-state watcher does. Every side effect calls the unit's ports
 * (unit-ports.ts), bound by its host with `createUnitActor`; without them an effect fails
 * "not provided". The world's effects (load, hook, deploy, action, command) are
 * invoked actors; a persisted step is a state whose entry saves the local state
 * (`persistStep`) and which waits for the save's outcome; the machine's hook lock is
 * asked for on entering `locked` and given back on leaving it.
 */

export interface UnitInput {
  unit: UnitName
  /** The remote state known when the actor starts. */
  remote: RemoteState
  /** The machine rebooted since the agent last ran: a started unit runs `start` once. */
  rebooted?: boolean
  /** Seeds the hook-retry jitter; the host draws it from its `Random`. */
  seed: number
  updateStatusIntervalMs?: number
  automaticallyRetryHooks?: boolean
}

/** The model configuration a unit obeys (runtime/model/model-config.ts). */
export interface UnitConfig { updateStatusIntervalMs: number, automaticallyRetryHooks: boolean }

export interface UnitContext {
  unit: UnitName
  local: LocalState
  memory: UniterMemory
  remote: RemoteSnapshot
  decision: Decision
  current: CurrentOperation | undefined
  outcome: ExecuteOutcome | undefined
  /** Where the operation goes after its execute step was recorded. */
  afterExecute: 'commit' | 'error' | 'requeued' | 'conflict' | 'loop-error' | undefined
  status: UnitStatus
  retry: { armed: boolean, attempt: number, rng: number }
  /** Loop restarts after failed deploys in a row: the delay grows with them (restart-backoff.ts). */
  loopRestarts: number
  config: UnitConfig
  stopRequested: boolean
  destroyRequested: boolean
  operationsWithoutIdle: number
  failure: string | undefined
  /** One relation actor per relation this unit has created (by relation id). */
  relationActors: Record<string, RelationActorRef>
}

export type UnitEvent =
  | { type: 'remote.changed', remote: RemoteState }
  /** From the hook tools: `status-set`, immediate. */
  | { type: 'workload.statusSet', status: Exclude<WorkloadStatus, 'error' | 'unknown' | 'terminated'>, message: string }
  /** Graceful stop (SIGTERM to the agent): a running hook is killed and re-queued. */
  | { type: 'agent.stop' }
  | { type: 'lock.acquired' }
  | { type: 'timers.fired' }
  | { type: 'retryTimer.start' }
  | { type: 'restartTimer.start' }
  | { type: 'retryTimer.stop' }
  /** The model's configuration changed (model-config): applied at once, no restart. */
  | { type: 'config.changed', config: UnitConfig }
  | { type: 'updateStatus.rearm' }
  /** The step's local state is saved (persistStep): the operation goes on. */
  | { type: 'step.persisted' }
  /** The save failed: the actor stops in `failed`, as the agent cannot vouch for its disk. */
  | { type: 'step.persistFailed', reason: string }

export interface PersistInput { unit: UnitName, local: LocalState }
/** `local` is the uniter's state as the operation starts: what the hook tools' relation views are built from. */
export interface RunHookInput { unit: UnitName, hook: HookInfo, charm: DeployedCharm | undefined, local: LocalState }
export interface DeployCharmInput { unit: UnitName, charm: DeployedCharm, mode: 'install' | 'upgrade' }
export interface RunActionInput { unit: UnitName, action: RemoteAction, local: LocalState }
export interface RunCommandInput { unit: UnitName, command: RemoteCommand, local: LocalState }

function errorText (error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

function snapshotRemote (remote: RemoteState, previous?: RemoteSnapshot): RemoteSnapshot {
  return { ...remote, updateStatusVersion: previous?.updateStatusVersion ?? 0, retryHookVersion: previous?.retryHookVersion ?? 0 }
}

interface StepEnqueue {
  emit: (e: UnitEmitted) => void
  sendTo: (ref: RelationActorRef, e: { type: 'relation.hookCommitted', hook: HookInfo }) => void
}

/**
 * Emits a step's effects and returns the context it changes, for the caller to assign
 * together with its own changes: each `assign` makes XState clone the snapshot and
 * recompute its state value, so an action assigns once.
 */
function applyStep (context: UnitContext, step: StepResult, enqueue: StepEnqueue): Partial<UnitContext> {
  for (const event of step.emitted) {
    enqueue.emit(event)
    // The relation actor checks and mirrors every committed hook of its relation.
    if (event.type === 'hook.committed' && isRelationHook(event.hook.kind)) {
      const ref = context.relationActors[String(event.hook.relationId)]
      if (ref !== undefined) enqueue.sendTo(ref, { type: 'relation.hookCommitted', hook: event.hook })
    }
  }
  return { local: step.local, memory: step.memory }
}

/**
 * Resting, idle or waiting, shown by `resolve` with the decision that rests (its `always`
 * goes on to `idle` or `waiting` unless a stop was requested): one snapshot clone fewer on
 * every return to idle than an entry action's own assign. Waiting before install for
 * storage (the one wait that is not shown as idle): Juju's loop leaves the agent as it
 * was, not idle, and the workload at `agent initialising` (unit-status.ts
 * statusOnWaitingForInstall); the reason is logged.
 */
function showIdle (context: UnitContext, decision: Decision, memory: UniterMemory, changes: Partial<UnitContext>, enqueue: { emit: (e: UnitEmitted) => void }): void {
  const storageWait = decision.kind === 'waiting' && !context.local.installed && decision.reason.startsWith('waiting for storage')
  let status = memory.conflicted ? statusOnUpgradeConflict(context.status) : statusOnIdle(context.status)
  if (memory.loopFailed) status = statusOnLoopError(context.status, loopErrorMessage)
  if (storageWait) status = statusOnWaitingForInstall(context.status)
  if (context.operationsWithoutIdle !== 0) changes.operationsWithoutIdle = 0
  if (status === context.status) return
  changes.status = status
  // Sent even when the actor already holds it: the model still says `waiting for machine`.
  if (storageWait) enqueue.emit({ type: 'unit.workloadStatus', workload: status.workload })
  enqueue.emit({ type: 'unit.status', status })
  if (storageWait && decision.kind === 'waiting') enqueue.emit({ type: 'uniter.waiting', reason: decision.reason })
}

/** Where `resolving` goes on a decision, when no stop was requested: the decisions that rest show idle. */
function rests (decision: Decision): boolean {
  return decision.kind !== 'terminate' && decision.kind !== 'run' && decision.kind !== 'hook-error' && decision.kind !== 'restart'
}

/**
 * The outcome of the operation's execute step and the step it leads to, assigned together
 * by the invocation's done (or error) transition into `recording`: one snapshot clone for
 * both, where an assign of the outcome and the step's own assign on entry made two.
 */
function recordExecuted (context: UnitContext, outcome: ExecuteOutcome, enqueue: StepEnqueue & { assign: (changes: Partial<UnitContext>) => void }): void {
  const step = afterExecute(context, context.current!, outcome)
  enqueue.assign({ ...applyStep(context, step, enqueue), outcome, afterExecute: step.next })
}

/** The context an operation starts with (`resolve` assigns it with the decision to run it). */
function beginOperation (context: UnitContext, op: Extract<Decision, { kind: 'run' }>['op']): Partial<UnitContext> {
  return {
    current: captureRemote(op, context.remote),
    outcome: undefined,
    afterExecute: undefined,
    operationsWithoutIdle: context.operationsWithoutIdle + 1
  }
}

export const unitMachine = setup({
  types: {
    context: {} as UnitContext,
    input: {} as UnitInput,
    events: {} as UnitEvent,
    emitted: {} as UnitEmitted
  },
  actors: {
    relation: relationMachine,
    // Each effect goes to the ports the host bound to this actor (unit-ports.ts); a test
    // may still replace them with provide().
    loadLocalState: fromPromise<LocalState | undefined, { unit: UnitName }>(async ({ input, system }) =>
      await unitPortsOf(system, 'loadLocalState').loadLocalState(input.unit)),
    runHook: fromPromise<HookOutcome, RunHookInput>(async ({ input, system, signal }) => await unitPortsOf(system, 'runHook').runHook(input, signal)),
    deployCharm: fromPromise<DeployOutcome, DeployCharmInput>(async ({ input, system, signal }) => await unitPortsOf(system, 'deployCharm').deployCharm(input, signal)),
    runAction: fromPromise<ActionOutcome, RunActionInput>(async ({ input, system, signal }) => await unitPortsOf(system, 'runAction').runAction(input, signal)),
    runCommand: fromPromise<CommandOutcome, RunCommandInput>(async ({ input, system, signal }) => await unitPortsOf(system, 'runCommand').runCommand(input, signal))
  },
  delays: {
    updateStatusInterval: ({ context }) => context.config.updateStatusIntervalMs,
    hookRetryDelay: ({ context }) => hookRetryDelayMs(context.retry.attempt, context.retry.rng),
    loopRestartDelay: ({ context }) => loopRestartDelayMs(context.loopRestarts)
  },
  guards: {
    stopRequested: ({ context }) => context.stopRequested,
    decidedTerminate: ({ context }) => context.decision.kind === 'terminate',
    decidedRun: ({ context }) => context.decision.kind === 'run',
    decidedRunLocked: ({ context }) => context.decision.kind === 'run' && needsHookLock(context.decision.op),
    decidedHookError: ({ context }) => context.decision.kind === 'hook-error',
    decidedWaiting: ({ context }) => context.decision.kind === 'waiting',
    decidedRestart: ({ context }) => context.decision.kind === 'restart',
    runsHook: ({ context }) => context.current?.op.kind === 'run-hook',
    runsDeploy: ({ context }) => context.current?.op.kind === 'deploy',
    runsAction: ({ context }) => context.current?.op.kind === 'run-action',
    nextCommit: ({ context }) => context.afterExecute === 'commit',
    nextError: ({ context }) => context.afterExecute === 'error',
    nextRequeued: ({ context }) => context.afterExecute === 'requeued'
  },
  actions: {
    recordRemote: assign(({ context, event }) => {
      assert(event.type === 'remote.changed', `unit "${context.unit}": recordRemote on ${event.type}`)
      const remote = snapshotRemote(event.remote, context.remote)
      // Once the controller shows the resolved flag cleared, the next one is a new request.
      const memory = event.remote.resolvedMode === 'none' && context.memory.resolvedConsumed
        ? { ...context.memory, resolvedConsumed: false }
        : context.memory
      return { remote, memory }
    }),
    recordWorkloadStatus: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'workload.statusSet') return
      const status: UnitStatus = { ...context.status, workload: { status: event.status, message: event.message } }
      enqueue.assign({ status, local: { ...context.local, statusSet: true } })
      enqueue.emit({ type: 'unit.status', status })
    }),
    resolve: enqueueActions(({ context, enqueue }) => {
      assert(context.operationsWithoutIdle < limits.operationsWithoutIdleMax,
        `unit "${context.unit}": ${limits.operationsWithoutIdleMax} operations without becoming idle`)
      const { decision, effects } = nextOp({
        unit: context.unit,
        local: context.local,
        memory: context.memory,
        remote: context.remote,
        retryTimer: { armed: context.retry.armed, attempt: context.retry.attempt },
        automaticallyRetryHooks: context.config.automaticallyRetryHooks
      })
      // One assign for the whole decision (see applyStep).
      const changes: Partial<UnitContext> = { decision }
      for (const effect of effects) {
        switch (effect.type) {
          case 'clear-resolved':
            changes.memory = { ...context.memory, resolvedConsumed: true }
            enqueue.emit({ type: 'controller.clearResolved' })
            break
          case 'start-retry-timer': enqueue.raise({ type: 'retryTimer.start' }); break
          case 'stop-retry-timer': enqueue.raise({ type: 'retryTimer.stop' }); break
          case 'start-restart-timer': enqueue.raise({ type: 'restartTimer.start' }); break
          case 'storage-detached': enqueue.emit({ type: 'storage.detached', storageId: effect.storageId }); break
          case 'destroy-unit':
            if (!context.destroyRequested) {
              changes.destroyRequested = true
              enqueue.emit({ type: 'unit.destroy' })
            }
            break
        }
      }
      // The operation begins in the same assign when `resolving` will go on to run it (its
      // `always` stops first on a requested stop): one snapshot clone fewer per operation.
      if (decision.kind === 'run' && !context.stopRequested) Object.assign(changes, beginOperation(context, decision.op))
      if (rests(decision) && !context.stopRequested) showIdle(context, decision, changes.memory ?? context.memory, changes, enqueue)
      enqueue.assign(changes)
    }),
    restartLoop: assign(({ context }) => ({
      // Juju rebuilds the loop: in-memory state starts again, counters aligned with the new watcher.
      memory: {
        ...initialMemory(false),
        updateStatusVersion: context.remote.updateStatusVersion,
        retryHookVersion: context.remote.retryHookVersion,
        completedActions: context.memory.completedActions,
        completedCommands: context.memory.completedCommands
      }
    })),
    applyPrepare: enqueueActions(({ context, enqueue }) => {
      const current = context.current!
      const step = prepare(context, current)
      const changes = applyStep(context, step, enqueue)
      const status = statusOnOperationStart(context.status, current.op, step.local)
      if (status !== context.status) {
        changes.status = status
        // Juju's beforeHook sets the workload before the agent shows the hook executing.
        const workload = uniterSetWorkload(context.status, status)
        if (workload !== undefined) enqueue.emit({ type: 'unit.workloadStatus', workload })
        enqueue.emit({ type: 'unit.status', status })
      }
      if (current.op.kind === 'run-hook') enqueue.emit({ type: 'hook.started', hook: current.op.hook })
      enqueue.assign(changes)
    }),
    applyCommit: enqueueActions(({ context, enqueue }) => {
      const current = context.current!
      const step = commit(context, current)
      const changes: Partial<UnitContext> = { ...applyStep(context, step, enqueue), status: statusOnCommit(context.status, current.op, step.local), current: undefined, outcome: undefined, afterExecute: undefined }
      // A charm deployed: the next loop error waits the shortest delay again.
      if (current.op.kind === 'deploy' && context.loopRestarts !== 0) changes.loopRestarts = 0
      const status = changes.status!
      const workload = uniterSetWorkload(context.status, status)
      if (workload !== undefined) enqueue.emit({ type: 'unit.workloadStatus', workload })
      // The agent's status is the one the operation started with: `showIdle` sets it idle when nothing is left to do.
      if (status.agent !== context.status.agent) enqueue.emit({ type: 'unit.status', status })
      // `juju-reboot` without --now: the hook is committed; the uniter stops and the machine reboots.
      const outcome = context.outcome
      if (outcome?.type === 'hook' && outcome.outcome.kind === 'succeeded' && outcome.outcome.reboot === true && current.op.kind === 'run-hook') {
        changes.stopRequested = true
        enqueue.emit({ type: 'machine.reboot', hook: current.op.hook, now: false })
      }
      enqueue.assign(changes)
    }),
    /**
     * A new model configuration: kept as data; a new update-status interval re-arms the
     * ticker, and a changed retry setting wakes a unit in error so the resolver arms or
     * leaves the back-off (Juju's uniter restarts on a new retry strategy, to the same end).
     */
    recordConfig: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'config.changed') return
      const before = context.config
      const after = event.config
      if (before.updateStatusIntervalMs === after.updateStatusIntervalMs && before.automaticallyRetryHooks === after.automaticallyRetryHooks) return
      enqueue.assign({ config: { ...after } })
      if (before.updateStatusIntervalMs !== after.updateStatusIntervalMs) enqueue.raise({ type: 'updateStatus.rearm' })
      if (before.automaticallyRetryHooks !== after.automaticallyRetryHooks) {
        if (!after.automaticallyRetryHooks) enqueue.raise({ type: 'retryTimer.stop' })
        enqueue.raise({ type: 'timers.fired' })
      }
    }),
    applyPrepareAndCommit: enqueueActions(({ context, enqueue }) => {
      const current = context.current!
      const prepared = prepare(context, current)
      const committed = commit({ ...context, local: prepared.local, memory: prepared.memory }, current)
      enqueue.assign({ ...applyStep(context, { ...committed, emitted: [...prepared.emitted, ...committed.emitted] }, enqueue), current: undefined })
    }),
    applyRequeueOnStop: enqueueActions(({ context, enqueue }) => {
      const current = context.current
      if (current?.op.kind !== 'run-hook') return
      enqueue.assign({ local: { ...context.local, operation: { kind: 'run-hook', step: 'queued', hook: current.op.hook } } })
      enqueue.emit({ type: 'hook.requeued', hook: current.op.hook })
    }),
    showHookError: enqueueActions(({ context, enqueue }) => {
      assert(context.decision.kind === 'hook-error', `unit "${context.unit}": showHookError without a hook error`)
      const status = statusOnHookError(context.status, context.decision.hook)
      if (status.agent.message === context.status.agent.message && context.status.agent.status === 'error') return
      enqueue.assign({ status })
      enqueue.emit({ type: 'unit.status', status })
    }),
    syncRelationActors: enqueueActions(({ context, enqueue }) => {
      const wanted = context.local.relations
      const unitDying = context.remote.life !== 'alive'
      const actors = { ...context.relationActors }
      let changed = false
      for (const [id, ref] of Object.entries(actors)) {
        if (id in wanted) continue
        enqueue.stopChild(ref)
        delete actors[id]
        changed = true
      }
      const missing = Object.keys(wanted).filter(id => !(id in actors))
      if (missing.length > 0 || changed) {
        enqueue.assign({
          relationActors: ({ spawn }) => {
            const next = { ...actors }
            for (const id of missing) {
              next[id] = spawn('relation', {
                id: `relation-${id}`,
                input: { unit: context.unit, local: wanted[id]!, remote: context.remote.relations[id], unitDying, leader: context.local.leader }
              })
            }
            return next
          }
        })
      }
    }),
    /**
     * Juju's uniter enters a relation's scope (an API call) before it records the relation;
     * here the request goes out as an effect, and a kill -9 before it committed loses it.
     * So a unit that knows a live relation the controllers do not have it in the scope of
     * asks again (enter-scope is idempotent), on every change of the remote state until
     * they do — never while the unit or the relation is going away, when leaving is right.
     */
    reassertScope: enqueueActions(({ context, enqueue }) => {
      if (context.remote.life !== 'alive') return
      for (const [id, local] of Object.entries(context.local.relations)) {
        const remote = context.remote.relations[id]
        if (remote === undefined || remote.life !== 'alive' || remote.suspended || remote.selfInScope !== false) continue
        enqueue.emit({ type: 'relation.enterScope', relationId: local.id })
      }
    }),
    forwardRemoteToRelations: enqueueActions(({ context, enqueue }) => {
      const unitDying = context.remote.life !== 'alive'
      const leader = context.local.leader
      for (const [id, ref] of Object.entries(context.relationActors)) {
        const remote = context.remote.relations[id]
        // Its next hook is a function of these and its local state: the same again tells it nothing.
        const held = ref.getSnapshot().context
        if (held.view.unitDying === unitDying && held.view.leader === leader && plainEqual(held.remote, remote)) continue
        enqueue.sendTo(ref, { type: 'relation.remoteChanged', remote, unitDying, leader })
      }
    }),
    bumpUpdateStatus: assign(({ context }) => ({
      remote: { ...context.remote, updateStatusVersion: context.remote.updateStatusVersion + 1 }
    })),
    restartAfterLoopError: assign(({ context }) => ({ memory: { ...context.memory, loopFailed: false }, loopRestarts: context.loopRestarts + 1 })),
    armRetry: assign(({ context }) => ({ retry: { ...context.retry, armed: true } })),
    fireRetry: assign(({ context }) => ({
      remote: { ...context.remote, retryHookVersion: context.remote.retryHookVersion + 1 },
      retry: { armed: false, attempt: context.retry.attempt + 1, rng: advanceRng(context.retry.rng) }
    })),
    resetRetry: assign(({ context }) => ({ retry: { ...context.retry, armed: false, attempt: 0 } })),
    wake: raise({ type: 'timers.fired' }),
    requestStop: assign({ stopRequested: true }),
    /**
     * Saves the local state the step's entry action just computed; the outcome comes back
     * as `step.persisted` or `step.persistFailed`. A persisted step is a state of this
     * chart, not an invoked child: a unit goes through three or four per hook, and an actor
     * per step (created, started, stopped, its done event relayed) cost more than the step.
     * A persisting state is left only on that outcome (a stop waits for it), so an outcome
     * always belongs to the state that started the save. The save is wrapped as an invoked
     * promise's was, so it settles on the same turn of the event loop as before.
     */
    persistStep: ({ context, self, system }) => {
      const input: PersistInput = { unit: context.unit, local: context.local }
      const saving = (async () => { await unitPortsOf(system, 'persistLocalState').persistLocalState(input) })()
      saving.then(() => { self.send({ type: 'step.persisted' }) }, (error: unknown) => { self.send({ type: 'step.persistFailed', reason: errorText(error) }) })
    },
    /**
     * The machine's hook lock, asked for on entering `locked` and given back on leaving it
     * (unit-ports.ts holdHookLock); an actor stopped from outside (kill -9 of the unit
     * agent) gives it back too (createUnitActor).
     */
    acquireHookLock: ({ context, self, system }) => {
      holdHookLock(system, context.unit, () => { self.send({ type: 'lock.acquired' }) })
    },
    releaseHookLock: ({ system }) => { releaseHookLock(system) },
    recordPersistFailure: assign(({ event }) => ({
      failure: `cannot persist local state: ${event.type === 'step.persistFailed' ? event.reason : event.type}`
    })),
    emitTerminated: emit({ type: 'unit.terminated' })
  }
}).createMachine({
  id: 'unit',
  context: ({ input }) => ({
    unit: input.unit,
    local: initialLocalState(),
    memory: initialMemory(input.rebooted ?? false),
    remote: snapshotRemote(input.remote),
    decision: { kind: 'none' },
    current: undefined,
    outcome: undefined,
    afterExecute: undefined,
    status: initialUnitStatus,
    retry: { armed: false, attempt: 0, rng: input.seed >>> 0 },
    loopRestarts: 0,
    config: {
      updateStatusIntervalMs: input.updateStatusIntervalMs ?? limits.updateStatusIntervalMs,
      automaticallyRetryHooks: input.automaticallyRetryHooks ?? true
    },
    stopRequested: false,
    destroyRequested: false,
    operationsWithoutIdle: 0,
    failure: undefined,
    relationActors: {}
  }),
  initial: 'running',
  states: {
    running: {
      type: 'parallel',
      on: {
        'remote.changed': { actions: ['recordRemote', 'reassertScope', 'forwardRemoteToRelations'] },
        'workload.statusSet': { actions: 'recordWorkloadStatus' },
        'config.changed': { actions: 'recordConfig' },
        'agent.stop': { actions: 'requestStop' }
      },
      states: {
        uniter: {
          initial: 'loading',
          states: {
            loading: {
              invoke: {
                src: 'loadLocalState',
                input: ({ context }) => ({ unit: context.unit }),
                onDone: {
                  target: 'resolving',
                  actions: [assign({ local: ({ event }) => event.output ?? initialLocalState() }), 'syncRelationActors']
                },
                onError: {
                  target: '#unit.failed',
                  actions: assign({ failure: ({ event }) => `cannot load local state: ${errorText(event.error)}` })
                }
              }
            },
            resolving: {
              entry: ['syncRelationActors', 'resolve'],
              always: [
                { guard: 'stopRequested', target: '#unit.stopped' },
                { guard: 'decidedTerminate', target: '#unit.terminated' },
                // Straight into the operation's state: a choosing state in between would be
                // one more microstep (a snapshot clone) for every operation.
                { guard: 'decidedRunLocked', target: 'executing.locked' },
                { guard: 'decidedRun', target: 'executing.unlocked' },
                { guard: 'decidedHookError', target: 'hookError' },
                { guard: 'decidedWaiting', target: 'waiting' },
                { guard: 'decidedRestart', target: 'resolving', reenter: true, actions: 'restartLoop' },
                { target: 'idle' }
              ]
            },
            idle: {
              on: {
                'remote.changed': { target: 'resolving', actions: ['recordRemote', 'reassertScope', 'forwardRemoteToRelations'] },
                'timers.fired': 'resolving',
                'agent.stop': '#unit.stopped'
              }
            },
            waiting: {
              on: {
                'remote.changed': { target: 'resolving', actions: ['recordRemote', 'reassertScope', 'forwardRemoteToRelations'] },
                'timers.fired': 'resolving',
                'agent.stop': '#unit.stopped'
              }
            },
            hookError: {
              entry: 'showHookError',
              on: {
                'remote.changed': { target: 'resolving', actions: ['recordRemote', 'reassertScope', 'forwardRemoteToRelations'] },
                'timers.fired': 'resolving',
                'agent.stop': '#unit.stopped'
              }
            },
            executing: {
              // Entered only through `resolving`, which names the child (XState wants an initial all the same).
              initial: 'locked',
              states: {
                unlocked: {
                  // Hookless operations (leadership, skipped hooks, failed actions) change
                  // local state only: one persisted step.
                  entry: ['applyPrepareAndCommit', 'persistStep'],
                  on: {
                    'step.persisted': { target: '#unit.running.uniter.resolving' },
                    'step.persistFailed': { target: '#unit.failed', actions: 'recordPersistFailure' }
                  }
                },
                locked: {
                  entry: 'acquireHookLock',
                  exit: 'releaseHookLock',
                  initial: 'acquiring',
                  states: {
                    acquiring: {
                      // Nothing of the operation is persisted yet: a stop need not wait for the lock.
                      on: { 'lock.acquired': 'preparing', 'agent.stop': '#unit.stopped' }
                    },
                    preparing: {
                      entry: ['applyPrepare', 'persistStep'],
                      on: {
                        // A stop that came while the step was saved: do not start the hook.
                        'step.persisted': [
                          { guard: 'stopRequested', target: 'abandoning' },
                          { guard: 'runsHook', target: 'executing.hook' },
                          { guard: 'runsDeploy', target: 'executing.deploy' },
                          { guard: 'runsAction', target: 'executing.action' },
                          { target: 'executing.command' }
                        ],
                        'step.persistFailed': { target: '#unit.failed', actions: 'recordPersistFailure' }
                      }
                    },
                    executing: {
                      on: { 'agent.stop': 'abandoning' },
                      // Entered only from `preparing`, which names the child (XState wants an initial all the same).
                      initial: 'hook',
                      states: {
                        hook: {
                          invoke: {
                            src: 'runHook',
                            input: ({ context }) => {
                              const op = context.current!.op
                              assert(op.kind === 'run-hook', `unit "${context.unit}": runHook for ${op.kind}`)
                              return { unit: context.unit, hook: op.hook, charm: context.local.charm, local: context.local }
                            },
                            onDone: { target: '#unit.running.uniter.executing.locked.recording', actions: enqueueActions(({ context, event, enqueue }) => { recordExecuted(context, { type: 'hook' as const, outcome: event.output }, enqueue) }) },
                            onError: { target: '#unit.running.uniter.executing.locked.recording', actions: enqueueActions(({ context, event, enqueue }) => { recordExecuted(context, { type: 'hook' as const, outcome: { kind: 'failed' as const, exitCode: null, reason: `cannot run hook: ${errorText(event.error)}` } }, enqueue) }) }
                          }
                        },
                        deploy: {
                          invoke: {
                            src: 'deployCharm',
                            input: ({ context }) => {
                              const op = context.current!.op
                              assert(op.kind === 'deploy', `unit "${context.unit}": deployCharm for ${op.kind}`)
                              return { unit: context.unit, charm: op.charm, mode: op.mode }
                            },
                            onDone: { target: '#unit.running.uniter.executing.locked.recording', actions: enqueueActions(({ context, event, enqueue }) => { recordExecuted(context, { type: 'deploy' as const, outcome: event.output }, enqueue) }) },
                            // A deployer that throws could not fetch or unpack the charm: not a conflict of files.
                            onError: { target: '#unit.running.uniter.executing.locked.recording', actions: enqueueActions(({ context, event, enqueue }) => { recordExecuted(context, { type: 'deploy' as const, outcome: { kind: 'failed' as const, reason: errorText(event.error) } }, enqueue) }) }
                          }
                        },
                        action: {
                          invoke: {
                            src: 'runAction',
                            input: ({ context }) => {
                              const op = context.current!.op
                              assert(op.kind === 'run-action', `unit "${context.unit}": runAction for ${op.kind}`)
                              return { unit: context.unit, action: op.action, local: context.local }
                            },
                            onDone: { target: '#unit.running.uniter.executing.locked.recording', actions: enqueueActions(({ context, event, enqueue }) => { recordExecuted(context, { type: 'action' as const, outcome: event.output }, enqueue) }) },
                            onError: { target: '#unit.running.uniter.executing.locked.recording', actions: enqueueActions(({ context, event, enqueue }) => { recordExecuted(context, { type: 'action' as const, outcome: { status: 'failed' as const, message: errorText(event.error), results: {} } }, enqueue) }) }
                          }
                        },
                        command: {
                          invoke: {
                            src: 'runCommand',
                            input: ({ context }) => {
                              const op = context.current!.op
                              assert(op.kind === 'run-command', `unit "${context.unit}": runCommand for ${op.kind}`)
                              return { unit: context.unit, command: op.command, local: context.local }
                            },
                            onDone: { target: '#unit.running.uniter.executing.locked.recording', actions: enqueueActions(({ context, event, enqueue }) => { recordExecuted(context, { type: 'command' as const, outcome: event.output }, enqueue) }) },
                            onError: { target: '#unit.running.uniter.executing.locked.recording', actions: enqueueActions(({ context, event, enqueue }) => { recordExecuted(context, { type: 'command' as const, outcome: { exitCode: 1, stdout: '', stderr: errorText(event.error) } }, enqueue) }) }
                          }
                        }
                      }
                    },
                    abandoning: {
                      // The agent is stopping: the invoked runner was stopped (its process
                      // group killed); a hook goes back to queued so it runs again on restart.
                      entry: ['applyRequeueOnStop', 'persistStep'],
                      on: {
                        'step.persisted': '#unit.stopped',
                        'step.persistFailed': { target: '#unit.failed', actions: 'recordPersistFailure' }
                      }
                    },
                    recording: {
                      // The invocation's outcome and the step after it were assigned on the way in (recordExecuted).
                      entry: 'persistStep',
                      on: {
                        'step.persisted': [
                          { guard: 'nextCommit', target: 'committing' },
                          { guard: 'nextRequeued', target: '#unit.stopped' },
                          { target: '#unit.running.uniter.resolving' }
                        ],
                        'step.persistFailed': { target: '#unit.failed', actions: 'recordPersistFailure' }
                      }
                    },
                    committing: {
                      entry: ['applyCommit', 'persistStep'],
                      on: {
                        'step.persisted': '#unit.running.uniter.resolving',
                        'step.persistFailed': { target: '#unit.failed', actions: 'recordPersistFailure' }
                      }
                    }
                  }
                }
              }
            }
          }
        },
        timers: {
          type: 'parallel',
          states: {
            updateStatus: {
              initial: 'ticking',
              states: {
                ticking: {
                  after: {
                    updateStatusInterval: { target: 'ticking', reenter: true, actions: ['bumpUpdateStatus', 'wake'] }
                  },
                  on: { 'updateStatus.rearm': { target: 'ticking', reenter: true } }
                }
              }
            },
            hookRetry: {
              initial: 'disarmed',
              states: {
                disarmed: {
                  on: {
                    'retryTimer.start': { target: 'armed', actions: 'armRetry' },
                    'retryTimer.stop': { actions: 'resetRetry' }
                  }
                },
                armed: {
                  after: {
                    hookRetryDelay: { target: 'disarmed', actions: ['fireRetry', 'wake'] }
                  },
                  on: { 'retryTimer.stop': { target: 'disarmed', actions: 'resetRetry' } }
                }
              }
            },
            /** Juju's agent restarting a uniter whose loop failed, after its error delay (restart-backoff.ts). */
            loopRestart: {
              initial: 'disarmed',
              states: {
                disarmed: { on: { 'restartTimer.start': 'armed' } },
                armed: {
                  after: {
                    loopRestartDelay: { target: 'disarmed', actions: ['restartAfterLoopError', 'wake'] }
                  }
                }
              }
            }
          }
        }
      }
    },
    stopped: { type: 'final' },
    terminated: { type: 'final', entry: 'emitTerminated' },
    failed: { type: 'final' }
  }
})

export type UnitActorRef = ActorRefFrom<typeof unitMachine>
export type UnitSnapshot = SnapshotFrom<typeof unitMachine>

/**
 * A unit actor (not started) whose effects go to `ports`. Every unit shares `unitMachine`:
 * what differs per unit is its input and its ports, never the machine definition.
 */
export function createUnitActor (ports: UnitPorts, options: ActorOptions<typeof unitMachine> & { input: UnitInput }): UnitActorRef {
  const actor = createActor(unitMachine, options)
  bindUnitPorts(actor.system, ports)
  // Stopped from outside, the actor runs no exit action: its hook lock goes back here.
  const release = (): void => { releaseHookLock(actor.system) }
  actor.subscribe({ complete: release, error: release })
  return actor
}
