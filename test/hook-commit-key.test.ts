/**
 * A hook run's commit key (actors/unit/operation-steps.ts): prepare numbers each new
 * hook run, and keeps the number while the same hook stays pending (a crash or a failure
 * interrupted it), so the commit the run makes when it is started again carries the same
 * key and the controller applies it once. Then the same through the unit actor: a failed
 * hook retried by `resolved` keeps its run, and the durable state carries it.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { HookInfo } from '../actors/unit/hook-info.ts'
import { initialLocalState, initialMemory, type LocalState } from '../actors/unit/local-state.ts'
import { afterExecute, hookCommitKey, prepare, type CurrentOperation } from '../actors/unit/operation-steps.ts'
import { UnitWorld } from '../sim/unit-world.ts'

const test = suite('hook commit keys')
const captured = { configHash: '', trustHash: '', addressesHash: '', leaderSettingsVersion: 0, updateStatusVersion: 0, retryHookVersion: 0 }
const run = (hook: HookInfo): CurrentOperation => ({ op: { kind: 'run-hook', hook, source: 'resolver' }, captured })
const prepared = (local: LocalState, hook: HookInfo): LocalState => prepare({ unit: 'kv/0', local, memory: initialMemory(false) }, run(hook)).local

test('prepare: a new hook gets the next run; the same pending hook keeps its run; the key joins state id and run', () => {
  let local: LocalState = { ...initialLocalState(), stateId: 'state-1' }
  assert.is(hookCommitKey(local), undefined, 'no key outside a hook run')
  local = prepared(local, { kind: 'install' })
  assert.equal([local.operation.run, local.hookRuns, hookCommitKey(local)], [1, 1, 'state-1:1'])
  // Restarted with install still pending (kill -9 mid-hook, or after its commit but before `done`).
  local = prepared(local, { kind: 'install' })
  assert.equal([local.operation.run, local.hookRuns, hookCommitKey(local)], [1, 1, 'state-1:1'])
  // The hook failed: the state stays pending with its run, and the retry reuses it.
  const failed = afterExecute({ unit: 'kv/0', local, memory: initialMemory(false) }, run({ kind: 'install' }), { type: 'hook', outcome: { kind: 'failed', exitCode: 1, reason: 'exit 1' } })
  assert.is(failed.next, 'error')
  assert.is(prepared(failed.local, { kind: 'install' }).operation.run, 1)
  // Another hook while install is pending (say, after resolved --no-retry moved on) is a new run.
  local = prepared(local, { kind: 'config-changed' })
  assert.equal([local.operation.run, local.hookRuns, hookCommitKey(local)], [2, 2, 'state-1:2'])
  // The same kind of hook about another relation is another run too.
  const created = (relationId: number): HookInfo => ({ kind: 'relation-created', relationId, remoteApplication: 'db', endpoint: 'db' } as HookInfo)
  local = prepared(local, created(1))
  assert.is(local.operation.run, 3)
  local = prepared(local, created(2))
  assert.is(local.operation.run, 4)
  const { stateId: _id, ...withoutId } = local
  assert.is(hookCommitKey(withoutId), '-:4', 'a state from before ids still gets a key')
})

test('unit actor: a failed install retried by resolved runs under the same run number; the next hook gets the next', async () => {
  const world = new UnitWorld()
  world.failHook('kv/0', 'install')
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  assert.is(world.stateOf('kv/0'), 'hookError')
  const failedRun = world.durable.get('kv/0')?.operation.run
  assert.is(failedRun, 1)
  world.model.resolved('kv/0', 'retry-hooks')
  await world.settle()
  assert.equal(world.hooks('kv/0').slice(0, 2), ['install', 'install'])
  const local = world.durable.get('kv/0')!
  assert.ok(local.installed)
  assert.ok((local.hookRuns ?? 0) > 1, 'later hooks had runs of their own')
  assert.is(local.hookRuns, world.hooks('kv/0').length - 1, 'one run per hook run, the retried install counted once')
})

test.run()
