/**
 * The workload statuses the uniter itself sends to the model (juju-semantics §8), as Juju's
 * runHook.beforeHook/afterHook set them (juju/juju internal/worker/uniter/operation/runhook.go;
 * StatusSet kept for good once set, operation/state.go `stateChange.apply`): `maintenance`
 * "installing charm software" before install unless the charm ever set its status, `unknown`
 * after a start in which it never did, the stop and remove statuses, `terminated` at the end.
 * Checked on the events the unit actor emits and the model commands its host makes of them
 * (emitted-commands.ts).
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { commandForEmitted } from '../actors/unit/emitted-commands.ts'
import type { UnitEmitted } from '../actors/unit/unit-effects.ts'
import { UnitWorld } from '../sim/unit-world.ts'

const workload = suite('uniter: the workload statuses the uniter sets (§8)')

/** The uniter's own workload statuses for `unit` since `mark`, as `status message`. */
function uniterSet (world: UnitWorld, unit: string, mark = 0): string[] {
  return world.emitted.slice(mark)
    .filter((e): e is { unit: string, event: Extract<UnitEmitted, { type: 'unit.workloadStatus' }> } => e.unit === unit && e.event.type === 'unit.workloadStatus')
    .map(e => `${e.event.workload.status} ${e.event.workload.message}`.trimEnd())
}

workload('a silent charm: maintenance while installing, unknown after start, sent as set-unit-status', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  assert.equal(uniterSet(world, 'kv/0'), ['maintenance installing charm software', 'unknown'])
  const sent = world.emitted.find(e => e.event.type === 'unit.workloadStatus')!
  assert.equal(commandForEmitted('kv/0', sent.event, 1234), { type: 'set-unit-status', unit: 'kv/0', status: 'maintenance', message: 'installing charm software', now: 1234 })
})

workload('the install status goes out before the agent shows the hook executing, as beforeHook runs first', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  const types = world.emitted.filter(e => e.unit === 'kv/0').map(e => e.event)
  const installing = types.findIndex(e => e.type === 'unit.workloadStatus')
  const executing = types.findIndex(e => e.type === 'unit.status' && e.status.agent.message === 'running install hook')
  assert.ok(installing >= 0 && installing < executing, `${installing} < ${executing}`)
})

workload('a charm that ran status-set in install is not reset to unknown after start', async () => {
  const world = new UnitWorld()
  world.rule((unit, hook) => unit === 'kv/0' && hook.kind === 'install' ? { kind: 'succeeded', statusSet: true } : undefined)
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  assert.equal(uniterSet(world, 'kv/0'), ['maintenance installing charm software'])
  assert.is(world.durable.get('kv/0')!.statusSet, true)
})

workload('a start that fails sets nothing; the retried start that succeeds sets unknown', async () => {
  const world = new UnitWorld()
  world.failHook('kv/0', 'start')
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  assert.equal(uniterSet(world, 'kv/0'), ['maintenance installing charm software'])
  const mark = world.emitted.length
  world.model.resolved('kv/0', 'retry-hooks')
  await world.settle()
  assert.equal(uniterSet(world, 'kv/0', mark), ['unknown'])
})

workload('a start skipped by resolved --no-retry sets nothing (no afterHook)', async () => {
  const world = new UnitWorld()
  world.failHook('kv/0', 'start')
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  const mark = world.emitted.length
  world.model.resolved('kv/0', 'no-hooks')
  await world.settle()
  assert.equal(uniterSet(world, 'kv/0', mark), [])
})

workload('once set, the charm\'s status survives an upgrade: upgrade-charm sets no workload status', async () => {
  const world = new UnitWorld()
  world.rule((unit, hook) => unit === 'kv/0' && hook.kind === 'config-changed' ? { kind: 'succeeded', statusSet: true } : undefined)
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  const mark = world.emitted.length
  world.model.refresh('kv', 'local:kv-1')
  await world.settle()
  assert.equal(world.hooks('kv/0').slice(-2), ['upgrade-charm', 'config-changed'])
  assert.equal(uniterSet(world, 'kv/0', mark), [])
})

workload('removal: stopping, maintenance after stop, cleaning up, terminated after remove', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'kv' }, 2)
  await world.settle()
  const mark = world.emitted.length
  world.model.removeUnit('kv/1')
  await world.settle()
  assert.equal(uniterSet(world, 'kv/1', mark), [
    'maintenance stopping charm software',
    'maintenance',
    'maintenance cleaning up prior to charm deletion',
    'terminated'
  ])
  // The unit that stays is left alone.
  assert.equal(uniterSet(world, 'kv/0', mark), [])
})

workload.run()

const agent = suite('uniter: the agent status between operations')

/** The agent statuses `unit`'s actor emitted since `mark`, as `status message`. */
function agentShown (world: UnitWorld, unit: string, mark = 0): string[] {
  return world.emitted.slice(mark)
    .filter((e): e is { unit: string, event: Extract<UnitEmitted, { type: 'unit.status' }> } => e.unit === unit && e.event.type === 'unit.status')
    .map(e => `${e.event.status.agent.status} ${e.event.status.agent.message}`.trimEnd())
}

// Juju's resolver loop (internal/worker/uniter/resolver/loop.go) runs operations back to
// back and calls OnIdle — the agent's `idle` — only once the resolver has nothing left
// (ErrNoOperation): between two hooks the agent goes from one `executing` to the next.
agent('hooks queued back to back: executing from one to the next, idle once at the end', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  assert.equal(agentShown(world, 'kv/0'), [
    'executing installing charm',
    'executing running install hook',
    'executing running leader-elected hook',
    'executing running config-changed hook',
    'executing running start hook',
    'idle'
  ])
  const mark = world.emitted.length
  world.model.setConfig('kv', { setting: 'changed' })
  await world.settle()
  assert.equal(agentShown(world, 'kv/0', mark), ['executing running config-changed hook', 'idle'])
})

agent.run()
