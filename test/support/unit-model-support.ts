import { createEmptyActor, fromPromise, initialTransition, type ActorLogic, type AnyActorScope } from 'xstate'
import { getAdjacencyMap, getStateNodes, type AnyStateNode, type AdjacencyMap } from 'xstate/graph'
import { describeHook, type HookInfo, type HookKind } from '../../actors/unit/hook-info.ts'
import { initialLocalState, type LocalState } from '../../actors/unit/local-state.ts'
import type { ActionOutcome, CommandOutcome, DeployOutcome, HookOutcome } from '../../actors/unit/operation.ts'
import type { Life, RemoteRelation, RemoteState } from '../../actors/unit/remote-state.ts'
import type { UnitEmitted } from '../../actors/unit/unit-effects.ts'
import { unitMachine, type UnitContext, type UnitEvent, type UnitInput, type UnitSnapshot } from '../../actors/unit/unit-machine.ts'
import { tableValues } from '../../runtime/model/table.ts'
import { SeededRandom, type Random } from '../../runtime/random.ts'
import { UnitWorld, type HookRun } from '../../sim/unit-world.ts'

/**
 * Support for test/unit-model.test.ts: the five ordering properties of the uniter
 * (juju-semantics §1.5, §2.1, §2.2, §2.5, §6) as one checker over the unit's emitted
 * hook events; an abstract model of the unit statechart for `xstate/graph`; and a
 * seeded random walker over real actor runs in `UnitWorld`.
 */

// ---------------------------------------------------------------------------------------
// 1. The property checker
// ---------------------------------------------------------------------------------------

// The checker lives in sim/invariants so the simulator scenarios use the same one.
export { HookOrderChecker as HookChecker, errorHookOf, formatViolations, hookKey } from '../../sim/invariants/hook-order-checker.ts'
export type { PropertyName, Violation } from '../../sim/invariants/hook-order-checker.ts'
import { HookOrderChecker as HookChecker, errorHookOf, formatViolations, type Violation } from '../../sim/invariants/hook-order-checker.ts'

// ---------------------------------------------------------------------------------------
// 2. The statechart, explored with xstate/graph
// ---------------------------------------------------------------------------------------

/** Stub side effects: pure traversal never starts invoked actors, but they must exist. */
export const stubbedUnitMachine = unitMachine.provide({
  actors: {
    loadLocalState: fromPromise(async (): Promise<LocalState | undefined> => undefined),
    runHook: fromPromise(async (): Promise<HookOutcome> => ({ kind: 'succeeded' })),
    deployCharm: fromPromise(async (): Promise<DeployOutcome> => ({ kind: 'deployed' })),
    runAction: fromPromise(async (): Promise<ActionOutcome> => ({ status: 'completed', results: {} })),
    runCommand: fromPromise(async (): Promise<CommandOutcome> => ({ exitCode: 0, stdout: '', stderr: '' }))
  }
})

export const modelUnit = 'web/0'

export const modelInput: UnitInput = {
  unit: modelUnit,
  seed: 7,
  updateStatusIntervalMs: 60_000,
  automaticallyRetryHooks: true,
  remote: {
    life: 'alive',
    resolvedMode: 'none',
    charm: { url: 'local:web-0', modifiedVersion: 0, forceUpgrade: false },
    configHash: 'c0',
    trustHash: '',
    addressesHash: 'addr-0',
    leader: false,
    leaderSettingsVersion: 1,
    relations: {},
    // Deployed with storage that is not provisioned yet: the unit waits before install (§2.13).
    storage: { 'data/0': { id: 'data/0', name: 'data', kind: 'filesystem', life: 'alive', attached: false, location: '/srv/data/0' } },
    storageRequiredForInstall: ['data/0'],
    actions: [],
    commands: [],
    subordinates: []
  }
}

type TransitionDef = AnyStateNode['always'] extends Array<infer T> | undefined ? T : never

/** A transition definition of the statechart, named `source --event[index]--> targets`. */
function transitionKey (t: TransitionDef): string {
  const source = t.source
  const list = t.eventType === '' || t.eventType === undefined
    ? source.always ?? []
    : source.transitions.get(t.eventType) ?? []
  const index = list.indexOf(t)
  const targets = (t.target ?? []).map(target => target.id).join(',') || '(self)'
  return `${source.id} --${t.eventType === '' ? 'always' : t.eventType}[${index}]--> ${targets}`
}

/** Every state node id of the machine, root excluded. */
export function allStateNodeIds (): string[] {
  return getStateNodes(unitMachine.root).map(node => node.id)
}

/** Every transition definition: `on`, `after`, invoke `onDone`/`onError` (all in `transitions`) and `always`. */
export function allTransitions (): string[] {
  const keys: string[] = []
  for (const node of [unitMachine.root, ...getStateNodes(unitMachine.root)]) {
    for (const list of node.transitions.values()) for (const t of list) keys.push(transitionKey(t))
    for (const t of node.always ?? []) keys.push(transitionKey(t))
  }
  return keys
}

/** Ids of the active state nodes for a state value (`{ running: { uniter: 'idle', … } }`). */
export function activeStateIds (value: unknown, prefix = 'unit'): string[] {
  if (typeof value === 'string') return [`${prefix}.${value}`]
  const ids: string[] = []
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    ids.push(`${prefix}.${key}`, ...activeStateIds(child, `${prefix}.${key}`))
  }
  return ids
}

/** The uniter region's path: `idle`, `executing.locked.executing.hook`, … or the final state name. */
export function uniterPath (snapshot: UnitSnapshot): string {
  const value = snapshot.value as unknown
  if (typeof value === 'string') return value
  let node = (value as { running: { uniter: unknown } }).running.uniter
  const parts: string[] = []
  while (typeof node !== 'string') {
    const [key, child] = Object.entries(node as Record<string, unknown>)[0]!
    parts.push(key)
    node = child
  }
  parts.push(node)
  return parts.join('.')
}

/** The loop-restart timer (a deploy that could not fetch its charm) is running. */
function loopRestartArmed (snapshot: UnitSnapshot): boolean {
  const value = snapshot.value as unknown
  return typeof value === 'object' && (value as { running: { timers: { loopRestart: string } } }).running.timers.loopRestart === 'armed'
}

function hookRetryArmed (snapshot: UnitSnapshot): boolean {
  const value = snapshot.value as unknown
  return typeof value === 'object' && (value as { running: { timers: { hookRetry: string } } }).running.timers.hookRetry === 'armed'
}

/** Invoke ids, read from the machine definition (never hard-coded). */
function invokeIdOf (stateId: string): string {
  const node = unitMachine.getStateNodeById(stateId)
  const invoke = node.invoke[0]
  if (invoke === undefined) throw new Error(`no invoke on ${stateId}`)
  return invoke.id
}

function afterEventOf (stateId: string): string {
  const node = unitMachine.getStateNodeById(stateId)
  const after = node.after[0]
  if (after === undefined) throw new Error(`no after transition on ${stateId}`)
  return after.eventType
}

const ids = {
  load: invokeIdOf('unit.running.uniter.loading'),
  hook: invokeIdOf('unit.running.uniter.executing.locked.executing.hook'),
  deploy: invokeIdOf('unit.running.uniter.executing.locked.executing.deploy'),
  action: invokeIdOf('unit.running.uniter.executing.locked.executing.action'),
  command: invokeIdOf('unit.running.uniter.executing.locked.executing.command'),
  updateStatusTick: afterEventOf('unit.running.timers.updateStatus.ticking'),
  retryTick: afterEventOf('unit.running.timers.hookRetry.armed'),
  loopRestartTick: afterEventOf('unit.running.timers.loopRestart.armed')
}

/** Events carry a label for `serializeEvent`; kept beside the event, not in it. */
const labels = new WeakMap<object, string>()

function labelled (label: string, event: Record<string, unknown> & { type: string }): UnitEvent {
  labels.set(event, label)
  return event as unknown as UnitEvent
}

function done (id: string, label: string, output?: unknown): UnitEvent {
  return labelled(label, { type: `xstate.done.actor.${id}`, output, actorId: id })
}

function failure (id: string, label = 'error'): UnitEvent {
  return labelled(label, { type: `xstate.error.actor.${id}`, error: new Error('injected'), actorId: id })
}

/** A persisted step's save (the machine's `persistStep` action) succeeds or fails. */
function persistOutcomes (): UnitEvent[] {
  return [labelled('persisted', { type: 'step.persisted' }), labelled('error', { type: 'step.persistFailed', reason: 'injected' })]
}

function remoteOf (context: UnitContext): RemoteState {
  const { updateStatusVersion: _u, retryHookVersion: _r, ...remote } = context.remote
  return remote
}

function withRelation (remote: RemoteState, id: string, relation: RemoteRelation | undefined): RemoteState {
  const relations = { ...remote.relations }
  if (relation === undefined) delete relations[id]
  else relations[id] = relation
  return { ...remote, relations }
}

function relation (id: number, endpoint: string, remoteApplication: string, extra: Partial<RemoteRelation> = {}): RemoteRelation {
  return { id, endpoint, remoteApplication, life: 'alive', suspended: false, peer: false, implicit: false, containerScoped: false, members: {}, applicationVersion: 0, ...extra }
}

type Mutation = (context: UnitContext) => RemoteState | undefined

function needsResolving (c: UnitContext): boolean {
  return errorHookOf(c.local) !== undefined || c.memory.conflicted
}

function inScope (c: UnitContext, id: number): boolean {
  const hook = c.local.operation.hook
  return String(id) in c.local.relations || (hook?.kind === 'relation-created' && hook.relationId === id)
}

/** Relation templates of the model: a regular one, a peer one, an implicit juju-info one. */
const modelRelations: Array<{ key: string, make: () => RemoteRelation, member: string }> = [
  { key: '1', make: () => relation(1, 'db', 'db'), member: 'db/0' },
  { key: '0', make: () => relation(0, 'cluster', 'web', { peer: true }), member: 'web/1' },
  { key: '2', make: () => relation(2, 'juju-info', 'ntp', { implicit: true }), member: 'ntp/0' }
]

function relationMutations (key: string, make: () => RemoteRelation, member: string): Array<[string, Mutation]> {
  const get = (c: UnitContext): RemoteRelation | undefined => c.remote.relations[key]
  const set = (c: UnitContext, rel: RemoteRelation | undefined): RemoteState => withRelation(remoteOf(c), key, rel)
  return [
    [`rel${key}.add`, c => get(c) === undefined && c.local.installed ? set(c, make()) : undefined],
    [`rel${key}.join`, c => { const r = get(c); return r?.life === 'alive' && !(member in r.members) ? set(c, { ...r, members: { [member]: 1 } }) : undefined }],
    [`rel${key}.settings`, c => { const r = get(c); return r !== undefined && member in r.members ? set(c, { ...r, members: { [member]: r.members[member]! + 1 } }) : undefined }],
    [`rel${key}.appbag`, c => { const r = get(c); return r?.life === 'alive' && !r.peer ? set(c, { ...r, applicationVersion: r.applicationVersion + 1 }) : undefined }],
    [`rel${key}.leave`, c => { const r = get(c); return r !== undefined && member in r.members ? set(c, { ...r, members: {} }) : undefined }],
    [`rel${key}.dying`, c => { const r = get(c); return r?.life === 'alive' && !r.peer ? set(c, { ...r, life: 'dying' }) : undefined }],
    // The controller removes a dying relation only once this unit left its scope (it entered
    // when its -relation-created started, it leaves when -broken commits).
    [`rel${key}.gone`, c => { const r = get(c); return r !== undefined && r.life !== 'alive' && !inScope(c, r.id) ? set(c, undefined) : undefined }]
  ]
}

/** The menu of controller-side changes offered while the unit rests (idle, waiting, hook error). */
const restMutations: Array<[string, Mutation]> = [
  ['config', c => c.remote.configHash === c.local.configHash ? { ...remoteOf(c), configHash: c.local.configHash === 'c1' ? 'c2' : 'c1' } : undefined],
  ['leader.on', c => c.remote.leader ? undefined : { ...remoteOf(c), leader: true }],
  ['leader.off', c => c.remote.leader ? { ...remoteOf(c), leader: false } : undefined],
  ['leaderSettings', c => c.remote.leaderSettingsVersion === c.memory.leaderSettingsVersion ? { ...remoteOf(c), leaderSettingsVersion: c.memory.leaderSettingsVersion + 1 } : undefined],
  ['storage.attach', c => {
    const s = c.remote.storage['data/0']
    return s !== undefined && !s.attached ? { ...remoteOf(c), storage: { ...c.remote.storage, 'data/0': { ...s, attached: true } } } : undefined
  }],
  ['storage.detach', c => {
    const s = c.remote.storage['data/0']
    return s?.attached === true && s.life === 'alive' ? { ...remoteOf(c), storage: { ...c.remote.storage, 'data/0': { ...s, life: 'dying' } } } : undefined
  }],
  ...modelRelations.flatMap(r => relationMutations(r.key, r.make, r.member)),
  ['dying', c => c.remote.life === 'alive' ? { ...remoteOf(c), life: 'dying' } : undefined],
  ['dead', c => c.remote.life !== 'dead' && c.remote.life !== 'alive' ? { ...remoteOf(c), life: 'dead' } : undefined],
  // `juju resolved` is refused unless the unit is in error (or its upgrade conflicted).
  ['resolved.retry', c => c.remote.resolvedMode === 'none' && needsResolving(c) ? { ...remoteOf(c), resolvedMode: 'retry-hooks' } : undefined],
  ['resolved.noHooks', c => c.remote.resolvedMode === 'none' && needsResolving(c) ? { ...remoteOf(c), resolvedMode: 'no-hooks' } : undefined],
  // The controller clears the flag once the unit asked (controller.clearResolved).
  ['resolved.cleared', c => c.remote.resolvedMode !== 'none' && c.memory.resolvedConsumed ? { ...remoteOf(c), resolvedMode: 'none' } : undefined],
  // One action or command at a time: they interleave with everything the same way.
  ['action', c => c.remote.actions.length === 0 && c.remote.commands.length === 0 ? { ...remoteOf(c), actions: [{ id: `a${c.memory.completedActions.length + 1}`, name: 'backup', parameters: {} }] } : undefined],
  ['action.gone', c => c.remote.actions.some(a => c.memory.completedActions.includes(a.id)) ? { ...remoteOf(c), actions: [] } : undefined],
  ['command', c => c.remote.commands.length === 0 && c.remote.actions.length === 0 ? { ...remoteOf(c), commands: [{ id: `x${c.memory.completedCommands.length + 1}`, commands: 'hostname' }] } : undefined],
  ['command.gone', c => c.remote.commands.some(x => c.memory.completedCommands.includes(x.id)) ? { ...remoteOf(c), commands: [] } : undefined],
  // A refresh of a started, alive unit not in error (forced ones below); others add nothing new.
  ['refresh', c => c.local.started && c.remote.life === 'alive' && errorHookOf(c.local) === undefined &&
    c.local.charm !== undefined && c.remote.charm.modifiedVersion === c.local.charm.modifiedVersion
    ? { ...remoteOf(c), charm: { ...c.remote.charm, modifiedVersion: c.remote.charm.modifiedVersion + 1, forceUpgrade: false } }
    : undefined],
  ['refresh.force', c => c.remote.life === 'alive' && c.local.charm !== undefined && c.remote.charm.modifiedVersion === c.local.charm.modifiedVersion &&
    (errorHookOf(c.local) !== undefined || c.memory.conflicted)
    ? { ...remoteOf(c), charm: { ...c.remote.charm, modifiedVersion: c.remote.charm.modifiedVersion + 1, forceUpgrade: true } }
    : undefined],
  ['subordinate.add', c => c.remote.subordinates.length === 0 && c.remote.life !== 'alive' ? { ...remoteOf(c), subordinates: ['ntp/0'] } : undefined],
  ['subordinate.gone', c => c.remote.subordinates.length > 0 ? { ...remoteOf(c), subordinates: [] } : undefined]
]

/** Local states a restarted agent may load (§2.11): every persisted operation kind and step. */
function restoredStates (): Array<[string, LocalState]> {
  const started: LocalState = {
    ...initialLocalState(),
    installed: true,
    started: true,
    charm: { url: 'local:web-0', modifiedVersion: 0 },
    configHash: 'c0',
    addressesHash: 'addr-0',
    storageAttached: { 'data/0': { name: 'data' } }
  }
  return [
    ['idle', started],
    ['crashed-mid-hook', { ...started, operation: { kind: 'run-hook', step: 'pending', hook: { kind: 'config-changed' } } }],
    ['hook-queued', { ...started, leader: true, operation: { kind: 'run-hook', step: 'queued', hook: { kind: 'leader-elected' } } }],
    ['hook-done', { ...started, operation: { kind: 'run-hook', step: 'done', hook: { kind: 'update-status' } } }],
    ['crashed-mid-action', { ...started, operation: { kind: 'run-action', step: 'pending', actionId: 'a0' } }],
    ['crashed-mid-upgrade', { ...started, operation: { kind: 'upgrade', step: 'pending', charm: { url: 'local:web-0', modifiedVersion: 0 } } }]
  ]
}

export interface ModelOptions {
  /** Which relations the controller may add: the regular one only, or also a peer and an implicit one. */
  relations: 'db' | 'all'
  /** Offer controller changes and `agent.stop` in every busy state, not just in a few. */
  busyEverywhere: boolean
  /** How much of the context tells states apart (see `serializeModelState`). */
  detail: 'coarse' | 'fine'
  /** Abstract states expanded at most (breadth first); the rest are reached but not expanded. */
  maxStates: number
  /**
   * While blocked (waiting, hook error) offer only the changes that unblock or that §6 lets
   * through (resolved, actions, commands, death, forced refresh, resigning, storage), not
   * the whole menu, whose changes would otherwise pile up in every combination.
   */
  narrowWhileBlocked: boolean
}

export const smallModel: ModelOptions = { relations: 'db', busyEverywhere: false, detail: 'coarse', maxStates: Infinity, narrowWhileBlocked: true }
export const fullModel: ModelOptions = { relations: 'all', busyEverywhere: true, detail: 'fine', maxStates: 25_000, narrowWhileBlocked: false }

const whileBlocked: Record<string, ReadonlySet<string>> = {
  waiting: new Set(['resolved.retry', 'resolved.noHooks', 'resolved.cleared', 'refresh.force', 'dying', 'dead', 'storage.attach', 'subordinate.gone']),
  hookError: new Set(['resolved.retry', 'resolved.noHooks', 'resolved.cleared', 'action', 'action.gone', 'command', 'command.gone',
    'dying', 'dead', 'refresh.force', 'leader.off'])
}

function mutationsFor (options: ModelOptions): Array<[string, Mutation]> {
  return restMutations.filter(([label]) => options.relations === 'all' || !/^rel[02]\./.test(label))
}

/** Event types handled by the active state nodes of the uniter region themselves (not by `running`). */
function ownEventTypes (snapshot: UnitSnapshot): Set<string> {
  const types = new Set<string>()
  for (const id of activeStateIds(snapshot.value)) {
    if (!id.startsWith('unit.running.uniter')) continue
    for (const type of unitMachine.getStateNodeById(id).transitions.keys()) types.add(type)
  }
  return types
}

/** The events that make sense in a snapshot: the model's alphabet, by state. */
export function modelEvents (snapshot: UnitSnapshot, options: ModelOptions = smallModel, menu = mutationsFor(options)): UnitEvent[] {
  if (snapshot.status !== 'active') return []
  const c = snapshot.context
  const path = uniterPath(snapshot)
  const events: UnitEvent[] = []
  const remoteChanged = (label: string, remote: RemoteState): UnitEvent => labelled(`remote:${label}`, { type: 'remote.changed', remote })
  const stop = (): void => { events.push(labelled('agent.stop', { type: 'agent.stop' })) }
  // While busy, the watcher may deliver a change at any time: it is only recorded.
  const remoteWhileBusy = (): void => { events.push(remoteChanged('config', { ...remoteOf(c), configHash: c.remote.configHash === 'c1' ? 'c2' : 'c1' })) }
  /**
   * Events of the whole `running` state (remote change, stop request) in a busy state:
   * always where a node of the uniter region handles them itself (read from the machine,
   * e.g. `agent.stop` while acquiring the lock or executing), elsewhere only when asked
   * to (the small model takes the running-level handlers in `loading` and `unlocked`).
   */
  const busy = (always: boolean): void => {
    const own = ownEventTypes(snapshot)
    if (always || options.busyEverywhere || own.has('agent.stop')) stop()
    if (always || options.busyEverywhere || own.has('remote.changed')) remoteWhileBusy()
  }
  switch (path) {
    case 'loading':
      events.push(done(ids.load, 'fresh', undefined), failure(ids.load))
      for (const [label, local] of restoredStates()) events.push(done(ids.load, label, local))
      busy(true)
      break
    case 'idle':
    case 'waiting':
    case 'hookError':
      for (const [label, mutate] of menu) {
        if (options.narrowWhileBlocked && whileBlocked[path]?.has(label) === false) continue
        const remote = mutate(c)
        if (remote !== undefined) events.push(remoteChanged(label, remote))
      }
      stop()
      events.push(labelled('tick', { type: ids.updateStatusTick }))
      if (hookRetryArmed(snapshot)) events.push(labelled('retry', { type: ids.retryTick }))
      if (loopRestartArmed(snapshot)) events.push(labelled('loop-restart', { type: ids.loopRestartTick }))
      // model-config in hook error: retries toggled and a new update-status interval (re-armed).
      if (path === 'hookError') {
        const config = { automaticallyRetryHooks: !c.config.automaticallyRetryHooks, updateStatusIntervalMs: c.config.updateStatusIntervalMs === 10_000 ? 300_000 : 10_000 }
        events.push(labelled('model-config', { type: 'config.changed', config }))
      }
      break
    case 'executing.unlocked':
      events.push(...persistOutcomes())
      busy(true)
      break
    case 'executing.locked.acquiring':
      events.push(labelled('lock', { type: 'lock.acquired' }))
      busy(false)
      break
    case 'executing.locked.preparing':
      events.push(...persistOutcomes())
      // A stop while the prepared step is saved must keep the hook from starting.
      stop()
      busy(false)
      break
    case 'executing.locked.executing.hook':
      for (const outcome of [
        { kind: 'succeeded' }, { kind: 'missing' }, { kind: 'failed', exitCode: 1, reason: 'exit status 1' }, { kind: 'terminated', signal: 'SIGTERM' }
      ] as HookOutcome[]) events.push(done(ids.hook, outcome.kind, outcome))
      events.push(failure(ids.hook), labelled('statusSet', { type: 'workload.statusSet', status: 'active', message: 'ready' }))
      busy(true)
      break
    case 'executing.locked.executing.deploy':
      events.push(done(ids.deploy, 'deployed', { kind: 'deployed' }), done(ids.deploy, 'conflicted', { kind: 'conflicted', reason: 'merge failed' }),
        done(ids.deploy, 'fetch-failed', { kind: 'failed', reason: 'archive not in the controller\'s store' }), failure(ids.deploy))
      busy(false)
      break
    case 'executing.locked.executing.action':
      events.push(done(ids.action, 'completed', { status: 'completed', results: {} }), done(ids.action, 'failed', { status: 'failed', message: 'no', results: {} }), failure(ids.action))
      busy(false)
      break
    case 'executing.locked.executing.command':
      events.push(done(ids.command, 'ran', { exitCode: 0, stdout: '', stderr: '' }), failure(ids.command))
      busy(false)
      break
    case 'executing.locked.abandoning':
      events.push(...persistOutcomes())
      break
    case 'executing.locked.recording':
      events.push(...persistOutcomes())
      busy(false)
      break
    case 'executing.locked.committing':
      events.push(...persistOutcomes())
      busy(false)
      break
    default: {
      // A state this model does not know yet: finish its invocations either way and send
      // the events its nodes handle, so the coverage check names what is still missing.
      for (const id of activeStateIds(snapshot.value)) {
        for (const invoke of unitMachine.getStateNodeById(id).invoke) events.push(done(invoke.id, `done:${invoke.id}`), failure(invoke.id, `error:${invoke.id}`))
      }
      for (const type of ownEventTypes(snapshot)) if (!type.startsWith('xstate.')) events.push(labelled(type, { type }))
    }
  }
  return events
}

export function serializeModelEvent (event: UnitEvent): string {
  return labels.get(event) ?? event.type
}

function relationSummary (c: UnitContext, key: string): string {
  const local = c.local.relations[key]
  const remote = c.remote.relations[key]
  let text = local === undefined ? '-' : `[${Object.keys(local.members).sort().join(',')}${local.changedPending === undefined ? '' : '*'}]`
  if (remote === undefined) return `${text}/-`
  text += `/${remote.life.charAt(0)}${remote.suspended ? 's' : ''}[${Object.keys(remote.members).sort().join(',')}]`
  if (local !== undefined) {
    const stale = Object.entries(remote.members).some(([unit, version]) => unit in local.members && local.members[unit] !== version)
    const appStale = remote.applicationVersion !== 0 && remote.applicationVersion !== (local.applicationMembers[remote.remoteApplication] ?? 0)
    text += `${stale ? 'v' : ''}${appStale ? 'a' : ''}`
  }
  return text
}

/**
 * Abstracts a snapshot to what decides the unit's behaviour: the state value, the
 * persisted flags and operation, per relation and storage what is known locally and
 * remotely, whether each remote counter differs from the local one (not its value), the
 * operation in flight and the timers. Counters that only grow are reduced to "differs",
 * which keeps the graph finite.
 */
export function serializeModelState (snapshot: UnitSnapshot, detail: ModelOptions['detail'] = 'fine'): string {
  if (snapshot.status !== 'active') return `#${snapshot.status}:${JSON.stringify(snapshot.value)}`
  if (detail === 'coarse') return coarseState(snapshot)
  const c = snapshot.context
  const l = c.local
  const m = c.memory
  const r = c.remote
  const op = l.operation
  const flags = (pairs: Array<[string, boolean]>): string => pairs.filter(([, on]) => on).map(([name]) => name).join('')
  return [
    uniterPath(snapshot) + (hookRetryArmed(snapshot) ? '+retry' : '') + (loopRestartArmed(snapshot) ? '+restart' : ''),
    flags([['I', l.installed], ['S', l.started], ['T', l.stopped], ['R', l.removed], ['L', l.leader], ['C', l.charm !== undefined]]),
    `${op.kind}/${op.step}/${op.hook === undefined ? '' : describeHook(op.hook)}/${op.actionId ?? ''}`,
    flags([['x', m.conflicted], ['F', m.loopFailed], ['r', m.restart], ['b', m.rebootPending], ['c', m.resolvedConsumed],
      ['l', m.leaderSettingsVersion !== r.leaderSettingsVersion], ['u', m.updateStatusVersion !== r.updateStatusVersion],
      ['t', m.retryHookVersion !== r.retryHookVersion], ['a', c.retry.attempt > 0]]),
    `${r.life}/${r.resolvedMode}/${r.leader ? 'leader' : ''}`,
    flags([['k', l.configHash !== r.configHash], ['h', l.charm !== undefined && (l.charm.url !== r.charm.url || l.charm.modifiedVersion !== r.charm.modifiedVersion)],
      ['f', r.charm.forceUpgrade], ['s', r.subordinates.length > 0]]),
    modelRelations.map(rel => relationSummary(c, rel.key)).join(' '),
    Object.values(r.storage).map(s => `${s.id}:${s.life.charAt(0)}${s.attached ? '+' : ''}`).join(',') + `|${Object.keys(l.storageAttached).join(',')}`,
    `act:${r.actions.filter(a => !m.completedActions.includes(a.id)).length}/${r.actions.length}`,
    `cmd:${r.commands.filter(x => !m.completedCommands.includes(x.id)).length}/${r.commands.length}`,
    c.current === undefined ? '' : `${c.current.op.kind}:${'hook' in c.current.op ? describeHook(c.current.op.hook) : ''}`,
    `${c.afterExecute ?? ''}/${c.outcome?.type ?? ''}/${c.stopRequested ? 'stop' : ''}/${c.decision.kind}`
  ].join(' ; ')
}

/**
 * The coarse abstraction: the state value, the persisted flags and operation step (with
 * the queued hook), what the resolver chain looks at next (conflict, storage to wait for,
 * leadership, leader settings and config differences, while alive), the life and the
 * resolved mode still to act on, the regular relation reduced to member counts, and the
 * operation in flight with its hook kind. Small enough to explore in a couple of seconds,
 * fine enough to reach every state node and transition and every kind of hook.
 */
function coarseState (snapshot: UnitSnapshot): string {
  const c = snapshot.context
  const l = c.local
  const r = c.remote
  const op = l.operation
  const rel = l.relations['1']
  const remoteRel = r.relations['1']
  const bit = (on: boolean, name: string): string => on ? name : ''
  return [
    uniterPath(snapshot) + bit(hookRetryArmed(snapshot), '+retry') + bit(loopRestartArmed(snapshot), '+restart'),
    bit(l.installed, 'I') + bit(l.started, 'S') + bit(l.stopped, 'T') + bit(l.removed, 'R') + bit(l.leader, 'L') + bit(l.charm !== undefined, 'C'),
    `${op.kind}/${op.step}${op.step === 'queued' ? `/${op.hook?.kind ?? ''}` : ''}`,
    bit(c.memory.conflicted, 'x') + bit(c.memory.loopFailed, 'F') + bit(!l.installed && r.storage['data/0']?.attached !== true, 'w') +
      // What the resolver's chain looks at next: leadership, leader settings, config.
      // (none of which matters once the unit is dying).
      (r.life === 'alive' ? bit(r.leader !== l.leader, 'l') + bit(!r.leader && c.memory.leaderSettingsVersion !== r.leaderSettingsVersion, 'v') + bit(l.configHash !== r.configHash, 'k') : ''),
    // A resolved request the unit already consumed acts as none until the controller clears it.
    `${r.life}/${c.memory.resolvedConsumed ? 'none' : r.resolvedMode}`,
    `${rel === undefined ? '-' : Object.keys(rel.members).length + (rel.changedPending === undefined ? '' : '*')}/${remoteRel === undefined ? '-' : remoteRel.life.charAt(0) + Object.keys(remoteRel.members).length}`,
    c.current === undefined ? '' : `${c.current.op.kind}:${'hook' in c.current.op ? c.current.op.hook.kind : ''}`,
    `${c.afterExecute ?? ''}/${c.stopRequested ? 'stop' : ''}`
  ].join(';')
}

/** What one pure transition did: the transition definitions taken, the state nodes entered, the events emitted. */
export interface StepTrace {
  transitions: string[]
  states: string[]
  emitted: UnitEmitted[]
}

/**
 * A pure transition function that also records, through an actor scope of our own, the
 * microsteps' transitions (from the `@xstate.microstep` inspection event) and the emitted
 * events (only `emit` actions are executed; spawns, delays and the like stay inert).
 */
function tracingTransition (): { transition: (snapshot: UnitSnapshot, event: UnitEvent) => UnitSnapshot, traces: WeakMap<UnitSnapshot, StepTrace> } {
  const traces = new WeakMap<UnitSnapshot, StepTrace>()
  let current: StepTrace = { transitions: [], states: [], emitted: [] }
  const self = createEmptyActor()
  const system = Object.create(self.system) as typeof self.system & { _sendInspectionEvent: (event: unknown) => void }
  system._sendInspectionEvent = (event: unknown) => {
    const inspection = event as { type: string, snapshot?: { value: unknown }, _transitions?: TransitionDef[] }
    if (inspection.type !== '@xstate.microstep') return
    for (const t of inspection._transitions ?? []) current.transitions.push(transitionKey(t))
    if (inspection.snapshot !== undefined) current.states.push(...activeStateIds(inspection.snapshot.value))
  }
  // Only `emit` runs (it defers the delivery); spawned children are never started.
  let emitting = false
  const scope = {
    self,
    logger: () => undefined,
    id: 'model',
    sessionId: 'model',
    defer: (fn: () => void) => { if (emitting) fn() },
    system,
    stopChild: () => undefined,
    emit: (event: UnitEmitted) => { current.emitted.push(event) },
    actionExecutor: (action: { type: string, exec?: ((...args: unknown[]) => void) | undefined, info: unknown, params: unknown }) => {
      if (action.type !== 'xstate.emit') return
      emitting = true
      try {
        action.exec?.(action.info, action.params)
      } finally {
        emitting = false
      }
    }
  } as unknown as AnyActorScope
  return {
    traces,
    transition: (snapshot, event) => {
      current = { transitions: [], states: [], emitted: [] }
      const next = stubbedUnitMachine.transition(snapshot, event, scope)
      traces.set(next, current)
      return next
    }
  }
}

export interface ModelEdge {
  from: string
  event: UnitEvent
  to: string
  source: UnitSnapshot
  target: UnitSnapshot
  trace: StepTrace
}

export interface ExploredModel {
  adjacency: AdjacencyMap<UnitSnapshot, UnitEvent>
  initial: UnitSnapshot
  initialKey: string
  edges: ModelEdge[]
  /** Per abstract state, the edge that first reached its representative (a shortest-path tree). */
  parent: Map<string, ModelEdge>
  statesReached: Set<string>
  transitionsTaken: Map<string, number>
  ms: number
}

/** Explore the abstract unit model with `getAdjacencyMap` (breadth first, up to `limit` expansions). */
export function exploreModel (options: ModelOptions = smallModel, limit = 2_000_000): ExploredModel {
  const started = performance.now()
  const { transition, traces } = tracingTransition()
  const menu = mutationsFor(options)
  let expanded = 0
  const [initial] = initialTransition(stubbedUnitMachine, modelInput)
  // The machine's own pure API, with a transition that records what it did.
  const logic = Object.create(stubbedUnitMachine, { transition: { value: transition } }) as ActorLogic<UnitSnapshot, UnitEvent, UnitInput>
  const adjacency: AdjacencyMap<UnitSnapshot, UnitEvent> = getAdjacencyMap(logic, {
    input: modelInput,
    fromState: initial,
    events: snapshot => modelEvents(snapshot, options, menu),
    serializeState: snapshot => serializeModelState(snapshot, options.detail),
    stopWhen: () => ++expanded > options.maxStates,
    serializeEvent: event => serializeModelEvent(event),
    limit
  })
  const edges: ModelEdge[] = []
  const parent = new Map<string, ModelEdge>()
  const initialKey = serializeModelState(initial, options.detail)
  const statesReached = new Set<string>(activeStateIds(initial.value))
  const transitionsTaken = new Map<string, number>()
  for (const [from, entry] of Object.entries(adjacency)) {
    for (const { event, state: target } of Object.values(entry.transitions) as Array<{ event: UnitEvent, state: UnitSnapshot }>) {
      // An event nothing handles returns the very same snapshot: an empty step.
      const trace = target === entry.state ? { transitions: [], states: [], emitted: [] } : traces.get(target)
      if (trace === undefined) throw new Error(`model: no trace for ${from} --${serializeModelEvent(event)}`)
      const to = serializeModelState(target, options.detail)
      const edge: ModelEdge = { from, event, to, source: entry.state, target, trace }
      edges.push(edge)
      // The representative of `to` is the snapshot object this edge produced: it is the tree edge.
      if (to !== from && to !== initialKey && adjacency[to as keyof typeof adjacency]?.state === target && !parent.has(to)) parent.set(to, edge)
      for (const key of trace.transitions) transitionsTaken.set(key, (transitionsTaken.get(key) ?? 0) + 1)
      for (const id of trace.states) statesReached.add(id)
    }
  }
  return { adjacency, initial, initialKey, edges, parent, statesReached, transitionsTaken, ms: performance.now() - started }
}

/** Checker state before an edge: restored from the persisted local state of its source (or of what `loading` read). */
export function checkerBefore (edge: ModelEdge): HookChecker {
  const checker = new HookChecker()
  const event = edge.event as unknown as { type: string, output?: LocalState }
  if (event.type === `xstate.done.actor.${ids.load}`) {
    checker.restore(modelUnit, event.output ?? initialLocalState())
    return checker
  }
  const source = edge.source
  const c = source.context
  const path = uniterPath(source)
  const hook = c.current?.op.kind === 'run-hook' ? c.current.op.hook : undefined
  const running = hook !== undefined && (
    path === 'executing.locked.preparing' || path.startsWith('executing.locked.executing') ||
    (path === 'executing.locked.recording' && c.afterExecute === 'commit'))
  checker.restore(modelUnit, c.local, running ? hook : undefined)
  return checker
}

export function applyEdge (checker: HookChecker, edge: ModelEdge): void {
  for (const event of edge.trace.emitted) checker.event(modelUnit, event, edge.target.context.remote.life)
}

const workActors = new Set(['runHook', 'deployCharm', 'runAction', 'runCommand'])

/** Property checks on one edge, from the checker state its source implies; returns what failed. */
export function checkEdge (edge: ModelEdge): Violation[] {
  const checker = checkerBefore(edge)
  applyEdge(checker, edge)
  const violations = [...checker.violations]
  const working = Object.values(edge.target.children as Record<string, { src: unknown }>)
    .filter(child => typeof child.src === 'string' && workActors.has(child.src))
  if (working.length > 1) {
    violations.push({ property: 'a: one operation at a time', unit: modelUnit, message: `${working.length} hook/deploy/action/command actors invoked at once` })
  }
  return violations
}

/**
 * Property checks along the shortest-path tree: each state's checker is its parent's after
 * the tree edge, so every state is checked with the whole history of the path reaching it.
 */
export function checkPaths (model: ExploredModel, onViolation: (state: string, violations: Violation[]) => void): number {
  const checkers = new Map<string, HookChecker>([[model.initialKey, new HookChecker()]])
  let checked = 0
  for (const state of Object.keys(model.adjacency)) {
    if (state === model.initialKey) continue
    const edge = model.parent.get(state)
    if (edge === undefined) throw new Error(`model: state without a tree edge: ${state}`)
    const before = checkers.get(edge.from)
    if (before === undefined) throw new Error(`model: tree edge from an unchecked state: ${edge.from}`)
    const checker = before.clone()
    const event = edge.event as unknown as { type: string, output?: LocalState }
    if (event.type === `xstate.done.actor.${ids.load}`) checker.restore(modelUnit, event.output ?? initialLocalState())
    const known = checker.violations.length
    applyEdge(checker, edge)
    if (checker.violations.length > known) onViolation(state, checker.violations.slice(known))
    checkers.set(state, checker)
    checked++
  }
  return checked
}

/** The events along the tree path to `state`, for messages. */
export function pathTo (model: ExploredModel, state: string): string[] {
  const labelsOnPath: string[] = []
  let at = state
  for (let guard = 0; guard < 10_000; guard++) {
    const edge = model.parent.get(at)
    if (edge === undefined) break
    labelsOnPath.unshift(serializeModelEvent(edge.event))
    at = edge.from
  }
  return labelsOnPath
}

// ---------------------------------------------------------------------------------------
// 3. Random walks over real actor runs
// ---------------------------------------------------------------------------------------

export interface WalkResult {
  seed: number
  steps: string[]
  violations: Violation[]
  hooks: number
  failure: string | undefined
}

interface WalkState {
  world: UnitWorld
  rng: Random
  checker: HookChecker
  steps: string[]
  emittedSeen: number
  /** Units whose agent we believe runs (to notice crashes injected at a persist). */
  live: Set<string>
  /** Units whose agent crashed and was not restarted yet. */
  down: Set<string>
  failNext: Map<string, number>
  holdNext: Set<string>
  crashArmed: string | undefined
  openRuns: Array<{ run: HookRun, machine: string }>
  crashedRuns: WeakSet<HookRun>
  realTime: Violation[]
  deadApps: Set<string>
  subordinateDeployed: boolean
  /** Per unit, the index in `world.emitted` from which it is dying (recorded when the controller makes it so). */
  dyingFrom: Map<string, number>
  counter: number
}

/** Applications still alive (the subordinate `ntp` only once it was deployed). */
function liveApps (s: WalkState): string[] {
  return ['web', 'db', 'ntp'].filter(app => !s.deadApps.has(app) && (app !== 'ntp' || s.subordinateDeployed))
}

function pick<T> (rng: Random, items: readonly T[]): T | undefined {
  return items.length === 0 ? undefined : items[rng.int(0, items.length - 1)]
}

function unitsOf (world: UnitWorld, app?: string): string[] {
  return world.model.units().filter(unit => app === undefined || unit.startsWith(`${app}/`))
}

function aliveUnits (world: UnitWorld): string[] {
  return unitsOf(world).filter(unit => world.model.unitLife(unit) === 'alive')
}

function activeUnits (s: WalkState): string[] {
  return unitsOf(s.world).filter(unit => s.world.running(unit) && s.world.actor(unit).getSnapshot().status === 'active')
}

/** Does the model hold a relation (alive or dying) between applications `a` and `b`? */
function relatedInModel (world: UnitWorld, a: string, b: string): boolean {
  return tableValues(world.model.context.relations).some(rel => rel.endpoints.some(ep => ep.application === a) && rel.endpoints.some(ep => ep.application === b))
}

/** Relation ids with who is in scope, as the units' watchers see it. */
function relationsSeen (world: UnitWorld): Map<number, { peer: boolean, life: Life, members: Set<string>, apps: Set<string> }> {
  const seen = new Map<number, { peer: boolean, life: Life, members: Set<string>, apps: Set<string> }>()
  for (const unit of world.model.units()) {
    for (const rel of Object.values(world.model.remoteState(unit).relations)) {
      const entry = seen.get(rel.id) ?? { peer: rel.peer, life: rel.life, members: new Set<string>(), apps: new Set<string>() }
      for (const member of Object.keys(rel.members)) entry.members.add(member)
      entry.apps.add(unit.split('/')[0]!)
      seen.set(rel.id, entry)
    }
  }
  return seen
}

function noteCrash (s: WalkState, unit: string): void {
  for (const open of s.openRuns) if (open.run.unit === unit && open.run.outcome === undefined) s.crashedRuns.add(open.run)
  s.checker.crash(unit, s.world.durable.get(unit))
  s.live.delete(unit)
  s.down.add(unit)
}

function disarmCrash (s: WalkState): void {
  if (s.crashArmed === undefined) return
  s.world.crashAtPersist(Number.MAX_SAFE_INTEGER, false)
  s.crashArmed = undefined
}

type WalkAction = { name: string, weight: number, run: (s: WalkState) => Promise<string | undefined> | string | undefined }

const walkActions: WalkAction[] = [
  {
    name: 'relate',
    weight: 3,
    run: s => {
      if (s.deadApps.has('db') || s.deadApps.has('web')) return undefined
      // The model refuses a second relation between the same endpoints, even while one is dying.
      if (relatedInModel(s.world, 'web', 'db')) return undefined
      const id = s.world.model.relate('web:db', 'db:server')
      return `relate web:db db:server (relation ${id})`
    }
  },
  {
    name: 'addUnit',
    weight: 3,
    run: s => {
      const app = pick(s.rng, ['web', 'db'].filter(a => !s.deadApps.has(a) && unitsOf(s.world, a).length < 3))
      if (app === undefined) return undefined
      // Sometimes beside an existing unit: the machine lock serialises them.
      const beside = s.rng.next() < 0.3 ? pick(s.rng, unitsOf(s.world)) : undefined
      const machine = beside === undefined ? undefined : s.world.model.machineOf(beside)
      const unit = s.world.model.addUnit(app, machine)
      s.live.add(unit)
      return `addUnit ${app}${machine === undefined ? '' : ` on machine ${machine}`} → ${unit}`
    }
  },
  {
    name: 'removeUnit',
    weight: 2,
    run: s => {
      const unit = pick(s.rng, aliveUnits(s.world))
      if (unit === undefined) return undefined
      s.world.model.removeUnit(unit)
      return `removeUnit ${unit}`
    }
  },
  {
    name: 'config',
    weight: 3,
    run: s => {
      const app = pick(s.rng, liveApps(s))
      if (app === undefined) return undefined
      s.world.model.setConfig(app, { setting: `config-${++s.counter}` })
      return `config ${app}`
    }
  },
  {
    name: 'leader',
    weight: 2,
    run: s => {
      const app = pick(s.rng, liveApps(s))
      if (app === undefined) return undefined
      const unit = s.rng.next() < 0.2 ? undefined : pick(s.rng, unitsOf(s.world, app).filter(u => s.world.model.unitLife(u) === 'alive'))
      s.world.model.setLeader(app, unit)
      return `setLeader ${app} ${unit ?? '(none)'}`
    }
  },
  {
    name: 'leaderSet',
    weight: 2,
    run: s => {
      const app = pick(s.rng, liveApps(s))
      if (app === undefined) return undefined
      return s.world.model.leaderSet(app) ? `leaderSet ${app}` : `leaderSet ${app} (no leader)`
    }
  },
  {
    name: 'relationSet',
    weight: 4,
    run: s => {
      const pairs = [...relationsSeen(s.world)].flatMap(([id, rel]) => [...rel.members].filter(u => s.world.model.units().includes(u)).map(u => [u, id] as const))
      const pair = pick(s.rng, pairs)
      if (pair === undefined) return undefined
      // Only the leader may write its application's bag.
      const application = s.rng.next() < 0.3 && s.world.model.leaderOf(pair[0].slice(0, pair[0].indexOf('/'))) === pair[0]
      s.world.model.relationSet(pair[0], pair[1], { application })
      return `relationSet ${pair[0]} relation ${pair[1]}${application ? ' (app bag)' : ''}`
    }
  },
  {
    name: 'removeRelation',
    weight: 2,
    run: s => {
      const id = pick(s.rng, [...relationsSeen(s.world)].filter(([, rel]) => !rel.peer && rel.life === 'alive').map(([id]) => id))
      if (id === undefined) return undefined
      s.world.model.removeRelation(id)
      return `removeRelation ${id}`
    }
  },
  {
    name: 'failHooks',
    weight: 3,
    run: s => {
      const unit = pick(s.rng, unitsOf(s.world))
      if (unit === undefined) return undefined
      const times = s.rng.int(1, 2)
      s.failNext.set(unit, (s.failNext.get(unit) ?? 0) + times)
      return `fail next ${times} hook(s) of ${unit}`
    }
  },
  {
    name: 'resolved',
    weight: 4,
    run: s => {
      const unit = pick(s.rng, activeUnits(s).filter(u => s.world.stateOf(u) === 'hookError'))
      if (unit === undefined) return undefined
      const mode = s.rng.next() < 0.5 ? 'retry-hooks' : 'no-hooks'
      s.world.model.resolved(unit, mode)
      return `resolved ${unit} ${mode}`
    }
  },
  {
    name: 'action',
    weight: 2,
    run: s => {
      const unit = pick(s.rng, unitsOf(s.world))
      if (unit === undefined) return undefined
      s.world.model.enqueueAction(unit, 'backup')
      return `enqueueAction ${unit}`
    }
  },
  {
    name: 'storage',
    weight: 2,
    run: s => {
      const unit = pick(s.rng, unitsOf(s.world))
      if (unit === undefined) return undefined
      // The model has no add-storage or detach-storage command yet: the walk attaches what
      // the unit was deployed with; detaching is walked by the statechart model above.
      const storage = Object.values(s.world.model.remoteState(unit).storage)
      if (!storage.some(st => !st.attached)) return undefined
      s.world.model.attachStorage(unit)
      return `attachStorage ${unit}`
    }
  },
  {
    name: 'advance',
    weight: 3,
    run: async s => {
      const ms = pick(s.rng, [2_000, 6_000, 20_000, 70_000, 330_000])!
      await s.world.advance(ms, 2_000)
      return `advance ${ms} ms`
    }
  },
  {
    name: 'hold',
    weight: 2,
    run: s => {
      const unit = pick(s.rng, activeUnits(s))
      if (unit === undefined) return undefined
      s.holdNext.add(unit)
      return `hold next hook of ${unit}`
    }
  },
  {
    name: 'release',
    weight: 3,
    run: s => {
      const held = pick(s.rng, s.world.heldHooks())
      if (held === undefined) return undefined
      const outcome: HookOutcome = s.rng.next() < 0.25 ? { kind: 'failed', exitCode: 1, reason: 'exit status 1' } : { kind: 'succeeded' }
      s.world.releaseHook(held.unit, outcome)
      return `release ${held.unit} ${held.hook} (${outcome.kind})`
    }
  },
  {
    name: 'crashRestart',
    weight: 2,
    run: s => {
      const unit = pick(s.rng, unitsOf(s.world).filter(u => s.world.running(u)))
      if (unit === undefined) return undefined
      const rebooted = s.rng.next() < 0.3
      noteCrash(s, unit)
      s.world.restart(unit, { rebooted })
      s.down.delete(unit)
      s.live.add(unit)
      return `kill -9 and restart ${unit}${rebooted ? ' (machine rebooted)' : ''}`
    }
  },
  {
    name: 'crashAtPersist',
    weight: 2,
    run: s => {
      const unit = pick(s.rng, activeUnits(s))
      if (unit === undefined || s.crashArmed !== undefined) return undefined
      const count = s.rng.int(1, 4)
      const write = s.rng.next() < 0.5
      s.world.crashAtPersist(count, write, unit)
      s.crashArmed = unit
      return `crash ${unit} at its persist #${count} from now (${write ? 'after' : 'before'} the write)`
    }
  },
  {
    name: 'startCrashed',
    weight: 3,
    run: s => {
      const unit = pick(s.rng, [...s.down].filter(u => s.world.model.units().includes(u) && !s.world.running(u)))
      if (unit === undefined) return undefined
      const rebooted = s.rng.next() < 0.3
      s.world.start(unit, { rebooted })
      s.down.delete(unit)
      s.live.add(unit)
      return `start crashed ${unit}${rebooted ? ' (machine rebooted)' : ''}`
    }
  },
  {
    name: 'stopStart',
    weight: 2,
    run: async s => {
      const unit = pick(s.rng, activeUnits(s))
      if (unit === undefined) return undefined
      disarmCrash(s)
      s.live.delete(unit)
      await s.world.stop(unit)
      if (!s.world.model.units().includes(unit)) return `graceful stop ${unit} (gone)`
      s.world.start(unit)
      s.live.add(unit)
      return `graceful stop and start ${unit}`
    }
  },
  {
    name: 'refresh',
    weight: 1,
    run: s => {
      const app = pick(s.rng, liveApps(s))
      if (app === undefined) return undefined
      s.world.model.refresh(app, `local:${app}-${++s.counter}`)
      return `refresh ${app}`
    }
  },
  {
    name: 'subordinate',
    weight: 1.5,
    run: s => {
      // A subordinate beside every web unit, through a container-scoped juju-info relation (§2.6).
      if (s.deadApps.has('web') || s.deadApps.has('ntp')) return undefined
      if (!s.subordinateDeployed) {
        s.world.model.deploy({ name: 'ntp', subordinate: true, requires: { 'juju-info': { interface: 'juju-info', scope: 'container' } } }, 0)
        s.subordinateDeployed = true
      }
      if (relatedInModel(s.world, 'web', 'ntp')) return undefined
      const id = s.world.model.relate('web:juju-info', 'ntp:juju-info')
      return `relate web:juju-info ntp:juju-info (subordinate, relation ${id})`
    }
  },
  {
    name: 'removeApplication',
    weight: 0.4,
    run: s => {
      const app = pick(s.rng, liveApps(s).filter(a => a !== 'web'))
      if (app === undefined || s.steps.length < 8) return undefined
      s.world.model.removeApplication(app)
      s.deadApps.add(app)
      return `removeApplication ${app}`
    }
  }
]

/** Feed the checker the unit events emitted since the last call, each with its unit's life when it was emitted. */
function consumeEmitted (s: WalkState): void {
  const emitted = s.world.emitted
  for (; s.emittedSeen < emitted.length; s.emittedSeen++) {
    const { unit, event } = emitted[s.emittedSeen]!
    const dyingFrom = s.dyingFrom.get(unit)
    s.checker.event(unit, event, dyingFrom !== undefined && s.emittedSeen >= dyingFrom ? 'dying' : 'alive')
  }
}

/**
 * Records, for every unit the model makes dying, the position in `world.emitted` at that
 * moment (each command is seen as it is applied, before any unit hears of it), so each
 * hook event is judged with the life its unit had (units die from the walk's actions
 * and, mid-settle, from a subordinate destroying itself).
 */
function trackDeaths (s: WalkState): void {
  s.world.model.onCommandApplied(() => {
    for (const unit of s.world.model.units()) {
      if (s.world.model.unitLife(unit) !== 'alive' && !s.dyingFrom.has(unit)) s.dyingFrom.set(unit, s.world.emitted.length)
    }
  })
}

/** One seeded walk: a small model, then `length` random controller/agent actions, checked after each. */
export async function randomWalk (seed: number, length: number): Promise<WalkResult> {
  const rng = new SeededRandom(seed)
  // Half the walks let hooks take simulated time, so crashes, stops and timers land mid-hook.
  const durations = rng.stream('durations')
  const slowHooks = rng.next() < 0.5
  const world = new UnitWorld({
    seed,
    updateStatusIntervalMs: 60_000,
    automaticallyRetryHooks: rng.next() < 0.5,
    hookDurationMs: () => slowHooks ? durations.int(0, 3) * 1_000 : 0
  })
  const s: WalkState = {
    world,
    rng: rng.stream('walk'),
    checker: new HookChecker(),
    steps: [],
    emittedSeen: 0,
    live: new Set(),
    down: new Set(),
    failNext: new Map(),
    holdNext: new Set(),
    crashArmed: undefined,
    openRuns: [],
    crashedRuns: new WeakSet(),
    realTime: [],
    deadApps: new Set(),
    subordinateDeployed: false,
    dyingFrom: new Map(),
    counter: 0
  }
  const hookRng = rng.stream('hooks')
  trackDeaths(s)
  // One rule decides every hook: it first checks, at the moment the process starts, that no
  // other hook of the unit or of its machine is running (property a, in real time).
  world.rule((unit, hook) => {
    const run = world.runs[world.runs.length - 1]!
    const machine = world.model.units().includes(unit) ? world.model.machineOf(unit) : `(${unit} gone)`
    s.openRuns = s.openRuns.filter(open => open.run.outcome === undefined && !s.crashedRuns.has(open.run))
    for (const open of s.openRuns) {
      if (open.run.unit === unit || open.machine === machine) {
        s.realTime.push({
          property: 'a: one operation at a time',
          unit,
          message: `${unit} started "${describeHook(hook)}" on machine ${machine} while ${open.run.unit}'s "${open.run.hook}" was running`
        })
      }
    }
    s.openRuns.push({ run, machine })
    if (s.holdNext.delete(unit)) return 'hold'
    const planned = s.failNext.get(unit) ?? 0
    if (planned > 0) {
      s.failNext.set(unit, planned - 1)
      return { kind: 'failed', exitCode: 1, reason: 'scripted failure' }
    }
    if (hookRng.next() < 0.04) return { kind: 'failed', exitCode: 1, reason: 'random failure' }
    return undefined
  })

  const setup = rng.stream('setup')
  const withStorage = setup.next() < 0.3
  const webUnits = world.model.deploy({ name: 'web', requires: { db: 'db', cache: 'cache', kv: 'kv' }, peers: ['cluster'], ...(withStorage ? { storage: { data: 'filesystem' as const } } : {}) }, setup.int(1, 2))
  const colocate = setup.next() < 0.3
  const dbUnits = world.model.deploy({ name: 'db', provides: { server: 'db' } }, 1, colocate ? [world.model.machineOf(webUnits[0]!)] : undefined)
  for (const unit of [...webUnits, ...dbUnits]) s.live.add(unit)
  s.steps.push(`deploy web×${webUnits.length}${withStorage ? ' with storage' : ''}, db×1${colocate ? ' beside web/0' : ''}`)
  if (setup.next() < 0.5) {
    world.model.relate('web:db', 'db:server')
    s.steps.push('relate web:db db:server')
  }

  const result = (failure: string | undefined): WalkResult => ({
    seed, steps: s.steps, violations: [...s.realTime, ...s.checker.violations], hooks: world.runs.length, failure
  })

  const check = async (): Promise<string | undefined> => {
    try {
      await world.settle()
    } catch (error) {
      consumeEmitted(s)
      return `settle failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`
    }
    consumeEmitted(s)
    for (const unit of [...s.live]) {
      if (!world.running(unit)) {
        // A crash injected at a persist (crashAtPersist) or a terminated unit leaving the model.
        if (world.model.units().includes(unit)) {
          noteCrash(s, unit)
          if (s.crashArmed === unit) s.crashArmed = undefined
        } else {
          s.live.delete(unit)
          if (s.crashArmed === unit) disarmCrash(s)
        }
      }
    }
    if (world.errors().length > 0) return `actor errors: ${world.errors().map(String).join('; ')}`
    // The unit's relation actors check every committed relation hook as well (§3 validation).
    for (const unit of activeUnits(s)) {
      const relationActors = (world.actor(unit).getSnapshot().context as { relationActors?: Record<string, { getSnapshot: () => { value: unknown, context: { violation?: string } } }> }).relationActors ?? {}
      for (const [id, ref] of Object.entries(relationActors)) {
        const snapshot = ref.getSnapshot()
        if (snapshot.value === 'violated') return `relation actor ${id} of ${unit} refused a commit: ${snapshot.context.violation ?? '?'}`
      }
    }
    if (world.maxConcurrentHooksPerMachine > 1) return `${world.maxConcurrentHooksPerMachine} hooks ran at once on one machine`
    if (s.realTime.length > 0 || s.checker.violations.length > 0) return 'property violated'
    return undefined
  }

  let failure = await check()
  for (let i = 0; i < length && failure === undefined; i++) {
    let description: string | undefined
    for (let attempt = 0; attempt < 20 && description === undefined; attempt++) {
      const total = walkActions.reduce((sum, a) => sum + a.weight, 0)
      let draw = s.rng.next() * total
      const action = walkActions.find(a => (draw -= a.weight) < 0) ?? walkActions[walkActions.length - 1]!
      try {
        description = await action.run(s)
      } catch (error) {
        description = `${action.name} threw`
        s.steps.push(description)
        failure = `step "${action.name}" threw: ${error instanceof Error ? error.stack ?? error.message : String(error)}`
        break
      }
    }
    if (failure !== undefined) break
    s.steps.push(description ?? '(nothing applicable)')
    world.sim.trace(`walk step ${s.steps.length - 1}: ${description ?? '(nothing applicable)'}`)
    failure = await check()
  }
  if (failure === undefined) {
    // Let held hooks finish, so the final events are checked too.
    for (const held of world.heldHooks()) world.releaseHook(held.unit)
    failure = await check()
  }
  return result(failure)
}

export function describeWalkFailure (walk: WalkResult, length: number): string {
  return [
    `random walk failed — seed ${walk.seed}, ${length} steps (replay: CANTRIP_WALK_SEED=${walk.seed} CANTRIP_WALK_LENGTH=${length} node --import tsx test/unit-model.test.ts)`,
    walk.failure ?? '',
    formatViolations(walk.violations),
    'steps:',
    ...walk.steps.map((step, i) => `  ${i}. ${step}`)
  ].join('\n')
}
