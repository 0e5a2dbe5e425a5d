/**
 * Model configuration: the key table (types, defaults), the set-model-config command,
 * the model-config CLI's parsing and rendering, Juju's logging-config syntax, and the
 * boot record the reboot detection keeps. Juju sources followed:
 * environs/config/config.go (automatically-retry-hooks default true,
 * update-status-hook-interval default 5m within 1m..60m, logging-config default
 * `<root>=INFO`), cmd/juju/model/config.go (the Attribute/From/Value listing, `--reset`),
 * juju/loggo config.go (`module=LEVEL;…`).
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createUnitStateStore } from '../actors/unit/unit-state-store.ts'
import { modelConfigChanges, renderModelConfig } from '../agent/cli/commands/model-config.ts'
import { configRequest } from '../agent/cli/commands/config.ts'
import { levelForModule, parseLoggingConfig } from '../runtime/logging-config.ts'
import { modelConfigSettings, parseDurationMs, parseModelConfigText } from '../runtime/model/model-config.ts'
import { applyCommand, emptyModel } from '../runtime/model/model-store.ts'
import { machineModelView } from '../runtime/model/machine-view.ts'
import { changesSince } from '../runtime/model/watch.ts'
import type { ConfigChanges, Entity, ModelContext } from '../runtime/model/model-types.ts'
import { restoreModel, snapshotModel } from '../runtime/model/model-snapshot.ts'
import { SimStorage } from '../sim/sim-storage.ts'

const admin: Entity = { kind: 'user', name: 'admin' }

function set (context: ModelContext, config: ConfigChanges, proposer: Entity = admin, index = context.revision + 1) {
  return applyCommand(context, { type: 'set-model-config', requestId: `r${index}`, proposer, config }, { index, term: 1 })
}

const keys = suite('model config: keys, types and defaults')

keys('defaults are Juju\'s', () => {
  assert.equal(modelConfigSettings({}), { automaticallyRetryHooks: true, updateStatusIntervalMs: 300_000, loggingConfig: '<root>=INFO' })
})

keys('durations parse as Go\'s time.ParseDuration', () => {
  assert.is(parseDurationMs('5m'), 300_000)
  assert.is(parseDurationMs('10s'), 10_000)
  assert.is(parseDurationMs('1m30s'), 90_000)
  assert.is(parseDurationMs('1h'), 3_600_000)
  assert.is(parseDurationMs('10'), undefined)
  assert.is(parseDurationMs('ten seconds'), undefined)
})

keys('values from the command line are typed, and bad ones get one line naming key, type and value', () => {
  assert.equal(parseModelConfigText('automatically-retry-hooks', 'false'), { value: false })
  assert.equal(parseModelConfigText('update-status-hook-interval', '10s'), { value: '10s' })
  assert.equal(parseModelConfigText('logging-config', 'unit=debug;<root>=warning'), { value: '<root>=WARNING;unit=DEBUG' })
  assert.equal(parseModelConfigText('automatically-retry-hooks', 'maybe'), { error: 'automatically-retry-hooks: expected bool (true or false), got "maybe"' })
  assert.equal(parseModelConfigText('update-status-hook-interval', '5'), { error: 'update-status-hook-interval: expected duration from 1s to 60m (e.g. 5m, 10s), got "5"' })
  assert.equal(parseModelConfigText('update-status-hook-interval', '2h'), { error: 'update-status-hook-interval: expected duration from 1s to 60m (e.g. 5m, 10s), got "2h"' })
  assert.equal(parseModelConfigText('logging-config', 'unit=LOUD'), { error: 'logging-config: expected a level (TRACE, DEBUG, INFO, WARNING, ERROR or CRITICAL) for "unit", got "LOUD"' })
})

keys('logging-config: the longest named module wins, else the root', () => {
  const config = parseLoggingConfig('<root>=WARNING;unit=DEBUG;unit.web/0=ERROR')
  assert.ok(typeof config !== 'string')
  if (typeof config === 'string') return
  assert.is(levelForModule(config, 'unit.kv/0.install'), 'debug')
  assert.is(levelForModule(config, 'unit.web/0.install'), 'error')
  assert.is(levelForModule(config, 'machine'), 'warning')
  assert.is(levelForModule(config, 'units'), 'warning', 'a name is matched whole, not as a prefix')
})

const command = suite('model config: set-model-config')

command('sets, resets and tells every agent', () => {
  let context = emptyModel()
  const first = set(context, { 'automatically-retry-hooks': false, 'update-status-hook-interval': '10s' })
  assert.ok(first.result.ok)
  context = first.context
  assert.equal(context.config, { 'automatically-retry-hooks': false, 'update-status-hook-interval': '10s' })
  assert.equal(first.deltas.map(d => d.key), ['model/config'])
  assert.equal(machineModelView(context, '0').config, context.config, 'a machine\'s view carries it')
  assert.equal(changesSince(context, 0, { kind: 'machine', id: '0' }).changes.map(c => c.key), ['model/config'], 'machine agents are told')
  const reset = set(context, { 'automatically-retry-hooks': null })
  assert.ok(reset.result.ok)
  assert.equal(reset.context.config, { 'update-status-hook-interval': '10s' })
  const same = set(reset.context, { 'update-status-hook-interval': '10s' })
  assert.equal(same.deltas, [], 'no change, no notice')
  assert.equal(restoreModel(snapshotModel(reset.context)).config, reset.context.config, 'kept in snapshots')
})

command('refuses unknown keys, bad values and non-admins with one line', () => {
  const context = emptyModel()
  const unknown = set(context, { 'no-such-key': true })
  assert.equal(unknown.result, { ok: false, index: 1, error: 'controller: cannot set model config: "no-such-key" is not a model configuration key; the keys are automatically-retry-hooks, logging-config, update-status-hook-interval' })
  const bad = set(context, { 'automatically-retry-hooks': 'yes' })
  assert.equal(bad.result, { ok: false, index: 1, error: 'controller: cannot set model config: automatically-retry-hooks: expected bool (true or false), got "yes"' })
  const agent = set(context, { 'automatically-retry-hooks': false }, { kind: 'machine', id: '0' })
  assert.equal(agent.result, { ok: false, index: 1, error: 'controller: cannot set model config: permission denied for machine-0' })
})

const cli = suite('model config: the CLI')

cli('KEY=VALUE and --reset become one typed change', () => {
  const request = configRequest(['automatically-retry-hooks=false', 'update-status-hook-interval=10s'], 'logging-config')
  assert.ok(request.kind === 'set')
  if (request.kind !== 'set') return
  assert.equal(modelConfigChanges(request), { 'automatically-retry-hooks': false, 'update-status-hook-interval': '10s', 'logging-config': null })
  assert.throws(() => modelConfigChanges({ kind: 'set', pairs: [['colour', 'red']], reset: [] }),
    (e: Error) => e.message === 'cantrip model-config: "colour" is not a model configuration key; the keys are automatically-retry-hooks, logging-config, update-status-hook-interval')
})

cli('the listing: Attribute, From, Value; yaml and json with value and source', () => {
  const context = { ...emptyModel(), config: { 'update-status-hook-interval': '10s' } }
  assert.is(renderModelConfig(context, 'tabular'), [
    'Attribute                    From     Value',
    'automatically-retry-hooks    default  true',
    'logging-config               default  <root>=INFO',
    'update-status-hook-interval  model    10s'
  ].join('\n'))
  assert.equal(JSON.parse(renderModelConfig(context, 'json')), {
    'automatically-retry-hooks': { value: true, source: 'default' },
    'logging-config': { value: '<root>=INFO', source: 'default' },
    'update-status-hook-interval': { value: '10s', source: 'model' }
  })
  assert.match(renderModelConfig(context, 'yaml'), /^automatically-retry-hooks:\n {2}value: true\n {2}source: default\n/)
})

const boot = suite('model config: boot record (reboot detection)')

boot('a unit first seen in a boot is not rebooted; a different boot later is, once', async () => {
  const store = createUnitStateStore(new SimStorage())
  assert.is(await store.recordBoot('kv/0', 'boot-a'), false, 'first start')
  assert.is(await store.recordBoot('kv/0', 'boot-a'), false, 'agent restart in the same boot')
  assert.is(await store.recordBoot('kv/0', 'boot-b'), true, 'the machine rebooted')
  assert.is(await store.recordBoot('kv/0', 'boot-b'), false, 'only once')
})

keys.run()
command.run()
cli.run()
boot.run()
