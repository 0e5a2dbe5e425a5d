import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { UnitWorld } from '../sim/unit-world.ts'
import { hookRetryDelayMs, loopRestartDelayMs } from '../actors/unit/retry-backoff.ts'
import { readerOf } from '../runtime/model/model-draft.ts'
import { expectHooks, startupHooks } from './support/hook-order.ts'

const errors = suite('uniter: hook errors and resolved (§6)')

errors('a failed install puts the unit in error and nothing else runs', async () => {
  const world = new UnitWorld()
  world.failHook('kv/0', 'install')
  world.model.deploy({ name: 'kv', peers: ['cluster'] }, 1)
  await world.settle()
  assert.equal(world.hooks('kv/0'), ['install'])
  assert.is(world.stateOf('kv/0'), 'hookError')
  const status = world.actor('kv/0').getSnapshot().context.status
  assert.equal(status.agent, { status: 'error', message: 'hook failed: "install"', data: { hook: 'install' } })
  world.model.setConfig('kv', { setting: 'config-1' })
  world.model.leaderSet('kv')
  await world.advance(900_000, 60_000)
  assert.equal(world.hooks('kv/0'), ['install'], 'no config, leadership, relation or update-status hooks in error')
})

errors('resolved (retry) re-runs the failed hook, then the chain continues', async () => {
  const world = new UnitWorld()
  world.failHook('kv/0', 'install')
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  world.model.resolved('kv/0', 'retry-hooks')
  await world.settle()
  expectHooks(world.hooks('kv/0'), ['install', ...startupHooks(true)])
  assert.is(world.model.remoteState('kv/0').resolvedMode, 'none', 'the resolved flag is cleared')
})

errors('resolved (retry) that fails again stays in error and needs its own resolve', async () => {
  const world = new UnitWorld()
  world.failHook('kv/0', 'start', 2)
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  world.model.resolved('kv/0', 'retry-hooks')
  await world.settle()
  assert.is(world.stateOf('kv/0'), 'hookError')
  assert.equal(world.hooks('kv/0').filter(h => h === 'start'), ['start', 'start'])
  world.model.resolved('kv/0', 'retry-hooks')
  await world.settle()
  assert.is(world.stateOf('kv/0'), 'idle')
  assert.equal(world.hooks('kv/0').filter(h => h === 'start'), ['start', 'start', 'start'])
})

errors('resolved --no-retry of config-changed skips it and still queues start', async () => {
  const world = new UnitWorld()
  world.failHook('kv/0', 'config-changed')
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  world.model.resolved('kv/0', 'no-hooks')
  await world.settle()
  expectHooks(world.hooks('kv/0'), ['install', 'leader-elected', 'config-changed', 'start'])
  assert.is(world.durable.get('kv/0')!.configHash, world.model.remoteState('kv/0').configHash, 'the skipped hook committed its effects')
})

errors('resolved --no-retry of install marks it installed', async () => {
  const world = new UnitWorld()
  world.failHook('kv/0', 'install')
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  world.model.resolved('kv/0', 'no-hooks')
  await world.settle()
  expectHooks(world.hooks('kv/0'), ['install', 'leader-elected', 'config-changed', 'start'])
  assert.is(world.durable.get('kv/0')!.installed, true)
})

errors('resolved --no-retry of start marks it started', async () => {
  const world = new UnitWorld()
  world.failHook('kv/0', 'start')
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  world.model.resolved('kv/0', 'no-hooks')
  await world.settle()
  assert.is(world.durable.get('kv/0')!.started, true)
  assert.is(world.stateOf('kv/0'), 'idle')
})

errors('a failed relation hook records relation id and remote unit, and blocks later relation hooks', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'db', provides: { server: 'db' } }, 2)
  world.model.deploy({ name: 'web', requires: { db: 'db', cache: 'cache', kv: 'kv' } }, 1)
  await world.settle()
  world.failHook('web/0', 'db-relation-changed')
  const id = world.model.relate('web:db', 'db:server')
  await world.settle()
  assert.is(world.stateOf('web/0'), 'hookError')
  const data = world.actor('web/0').getSnapshot().context.status.agent.data
  assert.equal(data, { hook: 'db-relation-changed', 'relation-id': id, 'remote-unit': 'db/0' })
  assert.equal(world.hooks('web/0').slice(-2), ['db-relation-joined db/0', 'db-relation-changed db/0'])
  world.model.resolved('web/0')
  await world.settle()
  expectHooks(world.hooks('web/0'), [...startupHooks(true), 'db-relation-created',
    'db-relation-joined db/0', 'db-relation-changed db/0', 'db-relation-changed db/0',
    'db-relation-joined db/1', 'db-relation-changed db/1'])
})

errors('automatic retry: 5 s, doubling with jitter, until the hook succeeds', async () => {
  const world = new UnitWorld({ automaticallyRetryHooks: true, seed: 7 })
  world.failHook('kv/0', 'install', 3)
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  const rng = world.actor('kv/0').getSnapshot().context.retry.rng
  const first = hookRetryDelayMs(0, rng)
  assert.ok(first >= 4_000 && first <= 6_000, `first delay ${first} ms within 5 s ± 20%`)
  await world.advance(first - 1, first - 1)
  assert.equal(world.hooks('kv/0'), ['install'], 'not before the delay')
  await world.advance(1, 1)
  assert.equal(world.hooks('kv/0'), ['install', 'install'])
  const retry = world.actor('kv/0').getSnapshot().context.retry
  const second = hookRetryDelayMs(1, retry.rng)
  assert.ok(second >= 8_000 && second <= 12_000, `second delay ${second} ms within 10 s ± 20%`)
  await world.advance(second, 1_000)
  await world.advance(30_000, 1_000)
  expectHooks(world.hooks('kv/0'), ['install', 'install', 'install', ...startupHooks(true)])
  assert.is(world.actor('kv/0').getSnapshot().context.retry.attempt, 0, 'back-off resets after leaving error')
})

errors('retry delay is capped at 5 minutes', () => {
  for (let attempt = 0; attempt < 40; attempt++) {
    const delay = hookRetryDelayMs(attempt, 12345 + attempt)
    assert.ok(delay <= 300_000 * 1.2 + 1, `attempt ${attempt}: ${delay}`)
    assert.ok(delay >= 5_000 * 0.8 - 1, `attempt ${attempt}: ${delay}`)
  }
  assert.ok(hookRetryDelayMs(20, 1) >= 240_000)
})

errors('relation removed while its -created hook is in error: resolved runs -created, then -broken (found by the model walk, seed 276)', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'web', requires: { db: 'db', cache: 'cache', kv: 'kv' } }, 1)
  world.model.deploy({ name: 'db', provides: { server: 'db' } }, 0)
  await world.settle()
  world.failHook('web/0', 'db-relation-created')
  const id = world.model.relate('web:db', 'db:server')
  await world.settle()
  assert.is(world.stateOf('web/0'), 'hookError')
  world.model.removeRelation(id)
  await world.settle()
  const mark = world.mark()
  world.model.resolved('web/0', 'retry-hooks')
  await world.settle()
  assert.equal(world.hooksSince('web/0', mark), ['db-relation-created', 'db-relation-broken'])
  assert.is(world.stateOf('web/0'), 'idle')
  assert.equal(world.durable.get('web/0')!.relations, {})
})

errors('actions run while in error and do not clear it', async () => {
  const world = new UnitWorld()
  world.failHook('kv/0', 'config-changed')
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  const id = world.model.enqueueAction('kv/0', 'backup')
  await world.settle()
  const done = world.emitted.find(e => e.event.type === 'action.completed')
  assert.ok(done !== undefined)
  assert.is((done.event as { actionId: string }).actionId, id)
  assert.is(world.stateOf('kv/0'), 'hookError', 'still in error after the action')
  assert.is(world.durable.get('kv/0')!.operation.kind, 'run-hook')
  assert.is(world.durable.get('kv/0')!.operation.hook?.kind, 'config-changed')
})

errors('juju exec commands run while in error, once each, without clearing it', async () => {
  const world = new UnitWorld()
  world.failHook('kv/0', 'start')
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  world.model.enqueueCommand('kv/0', 'hostname')
  world.model.enqueueCommand('kv/0', 'uptime')
  await world.settle()
  assert.equal(world.commands, [{ unit: 'kv/0', commands: 'hostname' }, { unit: 'kv/0', commands: 'uptime' }])
  assert.is(world.stateOf('kv/0'), 'hookError')
  assert.equal(world.model.remoteState('kv/0').commands, [])
})

errors('a dying unit in error waits for resolution, then the failed hook, then teardown', async () => {
  const world = new UnitWorld()
  world.failHook('kv/0', 'config-changed')
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  const mark = world.mark()
  world.model.removeUnit('kv/0')
  await world.settle()
  assert.equal(world.hooksSince('kv/0', mark), [])
  world.model.resolved('kv/0', 'retry-hooks')
  await world.settle()
  assert.equal(world.hooksSince('kv/0', mark), ['config-changed', 'start', 'stop', 'remove'])
  assert.ok(world.model.removedUnits.includes('kv/0'))
})

// Juju's uniter ends its loop on an error that is not a hook's or a deploy conflict (a charm
// download that failed) with agent status `failed` "resolver loop error" (uniter.go,
// reportAgentError; TestUniterStartupStatus), and its agent's dependency engine starts it
// again after 3 s, 1.2 times longer per failure in a row: the download is tried again with
// no `resolved`. A conflict ("upgrade failed") is the one deploy error that waits for resolved.
errors('a charm that cannot be fetched: agent failed "resolver loop error", tried again after the restart delay, then installs', async () => {
  const world = new UnitWorld()
  world.failDeploy('kv/0', 2)
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  assert.equal(world.hooks('kv/0'), [], 'no hook runs without the charm')
  const failed = readerOf(world.model.context).unit('kv/0')!
  assert.equal([failed.agent.status, failed.agent.message], ['failed', 'resolver loop error'])
  assert.equal([failed.workload.status, failed.workload.message], ['waiting', 'agent initialising'], 'the agent reported: no longer waiting for a machine')
  assert.equal(world.emitted.filter(e => e.unit === 'kv/0' && e.event.type === 'uniter.loopError').length, 1, 'the reason, for the unit host to log')
  await world.advance(loopRestartDelayMs(0) - 1)
  assert.equal(world.emitted.filter(e => e.unit === 'kv/0' && e.event.type === 'uniter.loopError').length, 1, 'not tried again before the delay')
  await world.advance(1)
  assert.equal(world.emitted.filter(e => e.unit === 'kv/0' && e.event.type === 'uniter.loopError').length, 2, 'tried again after 3 s, failed again')
  await world.advance(loopRestartDelayMs(1))
  expectHooks(world.hooks('kv/0'), startupHooks(true))
  const running = readerOf(world.model.context).unit('kv/0')!
  assert.equal(running.agent.status, 'idle')
  assert.ok(running.statusHistory.some(e => e.type === 'juju-unit' && e.status === 'failed' && e.message === 'resolver loop error'), 'show-status-log keeps the failure')
  assert.equal([loopRestartDelayMs(0), loopRestartDelayMs(1), loopRestartDelayMs(100)], [3_000, 3_600, 120_000])
})

errors.run()
