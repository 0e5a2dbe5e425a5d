import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { UnitWorld } from '../sim/unit-world.ts'

const upgrade = suite('uniter: charm upgrade (§2.10)')

upgrade('idle unit: upgrade-charm, config-changed, then leader-settings-changed on non-leaders only', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'kv', peers: ['cluster'] }, 2)
  await world.settle()
  const mark = world.mark()
  world.model.refresh('kv', 'local:kv-1')
  await world.settle()
  assert.equal(world.hooksSince('kv/0', mark), ['upgrade-charm', 'config-changed'])
  assert.equal(world.hooksSince('kv/1', mark), ['upgrade-charm', 'config-changed', 'leader-settings-changed'])
  // A refresh bumps the charm-modified version, as Juju's SetCharm does.
  assert.equal(world.durable.get('kv/0')!.charm, { url: 'local:kv-1', modifiedVersion: 1 })
})

upgrade('upgrade-charm fails: resolved --no-retry still runs config-changed', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  world.failHook('kv/0', 'upgrade-charm')
  const mark = world.mark()
  world.model.refresh('kv', 'local:kv-1')
  await world.settle()
  assert.is(world.stateOf('kv/0'), 'hookError')
  world.model.resolved('kv/0', 'no-hooks')
  await world.settle()
  assert.equal(world.hooksSince('kv/0', mark), ['upgrade-charm', 'config-changed'])
})

upgrade('upgrade-charm fails: resolved retries upgrade-charm, then config-changed', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  world.failHook('kv/0', 'upgrade-charm')
  const mark = world.mark()
  world.model.refresh('kv', 'local:kv-1')
  await world.settle()
  world.model.resolved('kv/0', 'retry-hooks')
  await world.settle()
  assert.equal(world.hooksSince('kv/0', mark), ['upgrade-charm', 'upgrade-charm', 'config-changed'])
})

upgrade('unit in error, unforced refresh: ignored until resolved, then upgrade-charm, config-changed', async () => {
  const world = new UnitWorld()
  world.failHook('kv/0', 'start')
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  const mark = world.mark()
  world.model.refresh('kv', 'local:kv-1')
  await world.settle()
  assert.equal(world.hooksSince('kv/0', mark), [])
  assert.equal(world.durable.get('kv/0')!.charm?.url, 'local:kv-0')
  world.model.resolved('kv/0', 'no-hooks')
  await world.settle()
  assert.equal(world.hooksSince('kv/0', mark), ['upgrade-charm', 'config-changed'])
})

upgrade('unit in error, forced refresh: charm swapped at once, hook stays failed, no upgrade-charm', async () => {
  const world = new UnitWorld()
  world.failHook('kv/0', 'start')
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  const mark = world.mark()
  world.model.refresh('kv', 'local:kv-1', { force: true, configDefaults: { setting: 'kv-1' } })
  await world.settle()
  assert.equal(world.hooksSince('kv/0', mark), [])
  assert.equal(world.durable.get('kv/0')!.charm?.url, 'local:kv-1', 'swapped while in error')
  assert.is(world.stateOf('kv/0'), 'hookError')
  assert.is(world.durable.get('kv/0')!.operation.hook?.kind, 'start')
  world.model.resolved('kv/0', 'retry-hooks')
  await world.settle()
  assert.equal(world.hooksSince('kv/0', mark), ['start', 'config-changed'], 'config hash changed with the new charm')
})

upgrade('a new resource (charm-modified version) upgrades like a refresh', async () => {
  const world = new UnitWorld()
  world.model.deploy({ name: 'kv' }, 1)
  await world.settle()
  const mark = world.mark()
  const remote = world.model.remoteState('kv/0')
  world.actor('kv/0').send({ type: 'remote.changed', remote: { ...remote, charm: { ...remote.charm, modifiedVersion: 1 } } })
  await world.settle()
  assert.equal(world.hooksSince('kv/0', mark), ['upgrade-charm', 'config-changed'])
})

upgrade.run()
