import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { initialLocalState, initialMemory, type LocalState, type UniterMemory } from '../actors/unit/local-state.ts'
import { initialRemoteState, type RemoteRelation } from '../actors/unit/remote-state.ts'
import { nextOp } from '../actors/unit/resolver.ts'
import type { RemoteSnapshot, ResolverInput } from '../actors/unit/resolver-types.ts'

/** The resolver as a table: local + remote in, decision + effects out (juju-semantics §1.4). */
function input (local: Partial<LocalState> = {}, remote: Partial<RemoteSnapshot> = {}, memory: Partial<UniterMemory> = {}): ResolverInput {
  return {
    unit: 'kv/0',
    local: { ...initialLocalState(), ...local },
    memory: { ...initialMemory(false), ...memory },
    remote: { ...initialRemoteState('local:kv-0'), updateStatusVersion: 0, retryHookVersion: 0, ...remote },
    retryTimer: { armed: false, attempt: 0 },
    automaticallyRetryHooks: true
  }
}

const installedIdle: Partial<LocalState> = {
  installed: true, started: true, charm: { url: 'local:kv-0', modifiedVersion: 0 }, configHash: '', leader: true
}

function relation (id: number, members: Record<string, number> = {}, extra: Partial<RemoteRelation> = {}): RemoteRelation {
  return { id, endpoint: 'db', remoteApplication: 'db', life: 'alive', suspended: false, peer: false, implicit: false, containerScoped: false, members, applicationVersion: 0, ...extra }
}

const resolver = suite('resolver: nextOp priorities')

resolver('a fresh unit deploys its charm first', () => {
  const { decision } = nextOp(input())
  assert.equal(decision, { kind: 'run', op: { kind: 'deploy', mode: 'install', charm: { url: 'local:kv-0', modifiedVersion: 0 } } })
})

resolver('dead or removed terminates; subordinates make it wait', () => {
  assert.equal(nextOp(input({}, { life: 'dead' })).decision, { kind: 'terminate' })
  assert.equal(nextOp(input({ removed: true })).decision, { kind: 'terminate' })
  assert.is(nextOp(input({ removed: true }, { subordinates: ['sub/0'] })).decision.kind, 'waiting')
})

resolver('a queued hook beats config and relations, but not leadership acceptance when idle', () => {
  const queued = nextOp(input({ ...installedIdle, leader: false, operation: { kind: 'run-hook', step: 'queued', hook: { kind: 'start' } } }, { leader: true, configHash: 'x' }))
  assert.equal(queued.decision, { kind: 'run', op: { kind: 'run-hook', hook: { kind: 'start' }, source: 'queued' } })
  const idle = nextOp(input({ ...installedIdle, leader: false }, { leader: true, configHash: 'x' }))
  assert.equal(idle.decision, { kind: 'run', op: { kind: 'accept-leadership' } })
})

resolver('resign needs no idle state and runs no hook', () => {
  const { decision } = nextOp(input({ ...installedIdle, operation: { kind: 'run-hook', step: 'pending', hook: { kind: 'start' } } }, { leader: false }))
  assert.equal(decision, { kind: 'run', op: { kind: 'resign-leadership' } })
})

resolver('hook error: report, arm the retry timer, and wait', () => {
  const { decision, effects } = nextOp(input({ ...installedIdle, operation: { kind: 'run-hook', step: 'pending', hook: { kind: 'config-changed' } } }, { leader: true }))
  assert.equal(decision, { kind: 'hook-error', hook: { kind: 'config-changed' } })
  assert.equal(effects, [{ type: 'start-retry-timer' }])
})

resolver('hook error with resolved modes and a fired retry timer', () => {
  const error = { ...installedIdle, operation: { kind: 'run-hook' as const, step: 'pending' as const, hook: { kind: 'start' as const } } }
  const retry = nextOp(input(error, { leader: true, resolvedMode: 'retry-hooks' }))
  assert.equal(retry.decision, { kind: 'run', op: { kind: 'run-hook', hook: { kind: 'start' }, source: 'resolved-retry' } })
  assert.equal(retry.effects, [{ type: 'stop-retry-timer' }, { type: 'clear-resolved' }])
  const skip = nextOp(input(error, { leader: true, resolvedMode: 'no-hooks' }))
  assert.equal(skip.decision, { kind: 'run', op: { kind: 'skip-hook', hook: { kind: 'start' }, reason: 'resolved-no-hooks' } })
  const timer = nextOp(input(error, { leader: true, retryHookVersion: 1 }))
  assert.equal(timer.decision, { kind: 'run', op: { kind: 'run-hook', hook: { kind: 'start' }, source: 'retry-timer' } })
  const consumed = nextOp(input(error, { leader: true, resolvedMode: 'retry-hooks' }, { resolvedConsumed: true }))
  assert.is(consumed.decision.kind, 'hook-error', 'a resolved request already consumed is not applied twice')
})

resolver('actions interleave with a hook error but not with a queued hook', () => {
  const action = { id: '7', name: 'backup', parameters: {} }
  const inError = nextOp(input({ ...installedIdle, operation: { kind: 'run-hook', step: 'pending', hook: { kind: 'start' } } }, { leader: true, actions: [action] }))
  assert.equal(inError.decision, { kind: 'run', op: { kind: 'run-action', action } })
  const queued = nextOp(input({ ...installedIdle, operation: { kind: 'run-hook', step: 'queued', hook: { kind: 'start' } } }, { leader: true, actions: [action] }))
  assert.is(queued.decision.kind === 'run' && queued.decision.op.kind, 'run-hook')
  const done = nextOp(input({ ...installedIdle }, { leader: true, actions: [action] }, { completedActions: ['7'] }))
  assert.equal(done.decision, { kind: 'none' })
})

resolver('idle order: upgrade, then config, then relations, then update-status', () => {
  const remote = { leader: true, charm: { url: 'local:kv-1', modifiedVersion: 0, forceUpgrade: false }, configHash: 'x', updateStatusVersion: 1, relations: {} }
  assert.is(nextOp(input(installedIdle, remote)).decision.kind === 'run' && (nextOp(input(installedIdle, remote)).decision as { op: { kind: string } }).op.kind, 'deploy')
  const config = nextOp(input(installedIdle, { ...remote, charm: { url: 'local:kv-0', modifiedVersion: 0, forceUpgrade: false } }))
  assert.equal(config.decision, { kind: 'run', op: { kind: 'run-hook', hook: { kind: 'config-changed' }, source: 'resolver' } })
  const status = nextOp(input({ ...installedIdle, configHash: 'x' }, { ...remote, charm: { url: 'local:kv-0', modifiedVersion: 0, forceUpgrade: false } }))
  assert.equal(status.decision, { kind: 'run', op: { kind: 'run-hook', hook: { kind: 'update-status' }, source: 'resolver' } })
})

resolver('relation-created comes before leadership, only for alive relations, only once installed', () => {
  const relations = { 3: relation(3), 4: relation(4, {}, { life: 'dying' }) }
  const created = nextOp(input({ ...installedIdle, leader: false }, { leader: true, relations }))
  assert.equal(created.decision, { kind: 'run', op: { kind: 'run-hook', hook: { kind: 'relation-created', relationId: 3, endpoint: 'db', remoteApplication: 'db', relationKind: { peer: false, implicit: false, containerScoped: false } }, source: 'resolver' } })
  const notInstalled = nextOp(input({ charm: { url: 'local:kv-0', modifiedVersion: 0 } }, { relations }))
  assert.equal(notInstalled.decision, { kind: 'run', op: { kind: 'run-hook', hook: { kind: 'install' }, source: 'resolver' } })
})

// Juju's uniter deploys the charm first (its first operation), then storage hooks precede the queued install.
resolver('storage: a fresh unit deploys its charm before any storage hook', () => {
  const storage = { 'data/0': { id: 'data/0', name: 'data', kind: 'filesystem' as const, life: 'alive' as const, attached: true, location: '/srv' } }
  const { decision } = nextOp(input({}, { storage, storageRequiredForInstall: ['data/0'] }))
  assert.equal(decision, { kind: 'run', op: { kind: 'deploy', mode: 'install', charm: { url: 'local:kv-0', modifiedVersion: 0 } } })
})

resolver('storage: install waits for deploy-time storage; attached hooks precede a queued install', () => {
  const storage = { 'data/0': { id: 'data/0', name: 'data', kind: 'filesystem' as const, life: 'alive' as const, attached: false, location: '/srv' } }
  const waiting = nextOp(input({ charm: { url: 'local:kv-0', modifiedVersion: 0 } }, { storage, storageRequiredForInstall: ['data/0'] }))
  assert.equal(waiting.decision, { kind: 'waiting', reason: 'waiting for storage data/0' })
  const attached = { 'data/0': { ...storage['data/0'], attached: true } }
  const queuedInstall = nextOp(input({ charm: { url: 'local:kv-0', modifiedVersion: 0 }, operation: { kind: 'run-hook', step: 'queued', hook: { kind: 'install' } } }, { storage: attached, storageRequiredForInstall: ['data/0'] }))
  assert.equal(queuedInstall.decision, { kind: 'run', op: { kind: 'run-hook', hook: { kind: 'storage-attached', storageId: 'data/0', storageName: 'data' }, source: 'resolver' } })
})

resolver('dying: relations torn down first, then stop, then remove, then terminate', () => {
  const local = { ...installedIdle, leader: false, relations: { 3: { id: 3, endpoint: 'db', remoteApplication: 'db', peer: false, implicit: false, containerScoped: false, members: { 'db/0': 1 }, applicationMembers: {} } } }
  const remote = { life: 'dying' as const, relations: { 3: relation(3, { 'db/0': 1 }) } }
  const departed = nextOp(input(local, remote)).decision
  assert.equal(departed.kind === 'run' && departed.op.kind === 'run-hook' && departed.op.hook.kind, 'relation-departed')
  assert.is(departed.kind === 'run' && departed.op.kind === 'run-hook' && departed.op.hook.departee, 'kv/0', 'a dying unit departs as itself')
  const stop = nextOp(input({ ...installedIdle, leader: false }, { life: 'dying' })).decision
  assert.equal(stop, { kind: 'run', op: { kind: 'run-hook', hook: { kind: 'stop' }, source: 'resolver' } })
  const remove = nextOp(input({ ...installedIdle, leader: false, stopped: true }, { life: 'dying' })).decision
  assert.equal(remove, { kind: 'run', op: { kind: 'run-hook', hook: { kind: 'remove' }, source: 'resolver' } })
  assert.equal(nextOp(input({ leader: false }, { life: 'dying' })).decision, { kind: 'terminate' }, 'never installed: no hooks')
})

resolver('a subordinate without an alive container relation to its principal asks to be destroyed', () => {
  const { effects } = nextOp(input(installedIdle, { leader: true, principalApplication: 'web', relations: { 1: relation(1, {}, { remoteApplication: 'web', containerScoped: true, life: 'dying' }) } }))
  assert.ok(effects.some(e => e.type === 'destroy-unit'))
})

resolver.run()
