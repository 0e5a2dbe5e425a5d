/**
 * The unit statechart obeys the model's configuration and juju-reboot, pinned by
 * transitions in the simulated unit world. Juju sources followed:
 * - worker/uniter/resolver (hook error): with automatically-retry-hooks false no retry
 *   timer runs and the hook stays in error until `juju resolved`; worker/retrystrategy
 *   gives the back-off (5 s, ×2, capped at 5 min) when true.
 * - worker/uniter/remotestate/watcher.go: update-status ticks every
 *   update-status-hook-interval, re-armed when the interval changes.
 * - worker/uniter/operation/runhook.go + worker/uniter/uniter.go: juju-reboot commits the
 *   hook and stops the uniter (ErrRebootMachine); --now kills the hook and leaves it
 *   queued (ErrRequeueAndReboot), so it runs again after the reboot.
 * - worker/uniter/reboot/resolver.go: after a reboot a started unit runs `start` once; a
 *   unit that had not started does not.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { UnitWorld } from '../sim/unit-world.ts'
import { expectHooks, startupHooks } from './support/hook-order.ts'

const config = suite('uniter: model config (automatically-retry-hooks, update-status-hook-interval)')

config('retry off: a failed hook stays in error until resolved', async () => {
  const world = new UnitWorld({ automaticallyRetryHooks: false })
  world.failHook('kv/0', 'install')
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  await world.advance(1_800_000, 60_000)
  assert.equal(world.hooks('kv/0'), ['install'], 'no timer retries in 30 minutes')
  assert.is(world.stateOf('kv/0'), 'hookError')
  assert.is(world.actor('kv/0').getSnapshot().context.retry.armed, false)
  world.model.resolved('kv/0', 'retry-hooks')
  await world.settle()
  expectHooks(world.hooks('kv/0'), ['install', ...startupHooks(true)])
})

config('turning retry off while the back-off is armed disarms it; turning it on arms it', async () => {
  const world = new UnitWorld({ automaticallyRetryHooks: true, seed: 3 })
  world.failHook('kv/0', 'install', 5)
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  assert.is(world.actor('kv/0').getSnapshot().context.retry.armed, true)
  world.actor('kv/0').send({ type: 'config.changed', config: { automaticallyRetryHooks: false, updateStatusIntervalMs: 300_000 } })
  await world.settle()
  assert.equal(world.actor('kv/0').getSnapshot().context.retry, { ...world.actor('kv/0').getSnapshot().context.retry, armed: false, attempt: 0 })
  await world.advance(600_000, 10_000)
  assert.equal(world.hooks('kv/0'), ['install'])
  world.actor('kv/0').send({ type: 'config.changed', config: { automaticallyRetryHooks: true, updateStatusIntervalMs: 300_000 } })
  await world.settle()
  assert.is(world.actor('kv/0').getSnapshot().context.retry.armed, true, 'the unit in error arms the back-off at once')
  await world.advance(7_000, 1_000)
  assert.equal(world.hooks('kv/0'), ['install', 'install'], 'retried after about 5 s')
})

config('a new update-status interval re-arms the ticker at once', async () => {
  const world = new UnitWorld({ updateStatusIntervalMs: 300_000 })
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  await world.advance(100_000, 10_000)
  const mark = world.mark()
  world.actor('kv/0').send({ type: 'config.changed', config: { automaticallyRetryHooks: false, updateStatusIntervalMs: 10_000 } })
  await world.settle()
  assert.is(world.actor('kv/0').getSnapshot().context.config.updateStatusIntervalMs, 10_000)
  await world.advance(60_000, 1_000)
  assert.equal(world.hooksSince('kv/0', mark), Array(6).fill('update-status'), 'every 10 s from the change')
})

const reboot = suite('uniter: juju-reboot and the start hook after a reboot')

reboot('juju-reboot: the hook commits, the uniter stops and asks for the reboot; after it, start runs once', async () => {
  const world = new UnitWorld({ updateStatusIntervalMs: 60_000 })
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  world.holdHook('kv/0', 'update-status')
  await world.advance(60_000, 60_000)
  world.releaseHook('kv/0', { kind: 'succeeded', reboot: true })
  await world.settle()
  assert.is(world.stateOf('kv/0'), 'stopped')
  const asked = world.emitted.filter(e => e.event.type === 'machine.reboot')
  assert.equal(asked.map(e => e.event), [{ type: 'machine.reboot', hook: { kind: 'update-status' }, now: false }])
  assert.equal(world.durable.get('kv/0')!.operation.kind, 'continue', 'the hook was committed before the reboot')
  const mark = world.mark()
  world.restart('kv/0', { rebooted: true })
  await world.settle()
  assert.equal(world.hooksSince('kv/0', mark), ['start'], 'start once after the reboot (leader: nothing else)')
  world.restart('kv/0')
  await world.settle()
  assert.equal(world.hooksSince('kv/0', mark), ['start'], 'a later restart without a reboot runs nothing')
})

reboot('juju-reboot --now: the hook is killed and re-queued; after the reboot it runs again', async () => {
  const world = new UnitWorld()
  world.holdHook('kv/0', 'install')
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  world.releaseHook('kv/0', { kind: 'reboot-now' })
  await world.settle()
  assert.is(world.stateOf('kv/0'), 'stopped')
  const events = world.emitted.filter(e => e.event.type === 'machine.reboot' || e.event.type === 'hook.requeued').map(e => e.event.type)
  assert.equal(events, ['hook.requeued', 'machine.reboot'])
  const local = world.durable.get('kv/0')!
  assert.equal(local.operation, { ...local.operation, kind: 'run-hook', step: 'queued' })
  world.restart('kv/0', { rebooted: true })
  await world.settle()
  // Not started before the reboot: no extra start (Juju's reboot resolver skips it).
  expectHooks(world.hooks('kv/0'), ['install', ...startupHooks(true)])
})

reboot('a failed hook that asked for a reboot does not reboot', async () => {
  const world = new UnitWorld()
  world.holdHook('kv/0', 'install')
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  world.releaseHook('kv/0', { kind: 'failed', exitCode: 1, reason: 'exit status 1' })
  await world.settle()
  assert.is(world.stateOf('kv/0'), 'hookError')
  assert.equal(world.emitted.filter(e => e.event.type === 'machine.reboot'), [])
})

config.run()
reboot.run()
