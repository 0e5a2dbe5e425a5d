/**
 * ModelHosts (agent/roles/model-hosts.ts): one model controller per registry entry, in a
 * directory named by the model and its creating index; a removed entry's controller is
 * stopped and its data deleted; data of models removed while the controller was away is
 * deleted once the registry here has caught up past their creation.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { ModelHosts } from '../agent/roles/model-hosts.ts'
import type { HostedModel } from '../agent/roles/hosted-model.ts'
import { createMemoryLogger } from '../runtime/logger.ts'
import { applyCommand, emptyModel } from '../runtime/model/model-store.ts'
import type { ModelCommand, ModelContext } from '../runtime/model/model-types.ts'
import type { PresenceAgent } from '../runtime/presence/presence-agent.ts'

async function until (what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

test('a controller per registry model; removal stops it and deletes its data; stale data is collected', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'model-hosts-'))
  let context: ModelContext = emptyModel()
  const apply = (type: string, name: string): void => {
    const uuid = `00000000-0000-4000-8000-${String(context.revision).padStart(12, '0')}`
    const command = { type, name, ...(type === 'add-model' ? { uuid } : {}), requestId: `r${context.revision}`, proposer: { kind: 'user', name: 'admin' } } as unknown as ModelCommand
    context = applyCommand(context, command, { index: context.revision + 1, term: 1 }).context
  }
  // Left by models removed while this controller was away: one created before the registry's revision, one after.
  mkdirSync(join(dataDir, 'models', 'gone-1', 'controller'), { recursive: true })
  mkdirSync(join(dataDir, 'models', 'later-50', 'controller'), { recursive: true })
  const events: string[] = []
  const hosts = new ModelHosts({
    dataDir,
    registry: () => context,
    presenceFor: model => ({ leave: async () => { events.push(`leave ${model}`) } }) as unknown as PresenceAgent,
    start: async (model, dir) => {
      mkdirSync(dir, { recursive: true })
      events.push(`start ${model} ${dir.slice(dataDir.length)}`)
      return { model, stop: async () => { events.push(`stop ${model}`) } } as unknown as HostedModel
    },
    onRemoved: model => { events.push(`removed ${model}`) },
    logger: createMemoryLogger('test')
  })
  try {
    apply('add-model', 'two')
    apply('add-model', 'three')
    hosts.changed()
    await until('two models served', () => hosts.models.size === 2)
    assert.equal(events.filter(e => e.startsWith('start')).sort(), ['start three /models/three-2/controller', 'start two /models/two-1/controller'])
    assert.not.ok(existsSync(join(dataDir, 'models', 'gone-1')), 'data of a model created at or before the registry\'s revision and not in it')
    assert.ok(existsSync(join(dataDir, 'models', 'later-50')), 'kept: the registry here has not reached its creation')

    // Unchanged registry: nothing happens (the hosts are told on every applied entry).
    hosts.changed()
    await new Promise(resolve => setTimeout(resolve, 20))
    assert.is(events.length, 2)

    apply('destroy-model', 'two')
    hosts.changed()
    await new Promise(resolve => setTimeout(resolve, 20))
    assert.equal([...hosts.models.keys()].sort(), ['three', 'two'], 'a dying model is served until it is removed')
    apply('remove-model', 'two')
    hosts.changed()
    await until('two removed', () => events.includes('removed two'))
    assert.equal([...hosts.models.keys()], ['three'])
    assert.equal(events.slice(2), ['stop two', 'leave two', 'removed two'])
    assert.equal(readdirSync(join(dataDir, 'models')).sort(), ['later-50', 'three-2'])

    // Re-added under the same name: a fresh directory, never the old log.
    apply('add-model', 'two')
    hosts.changed()
    await until('two again', () => hosts.models.size === 2)
    assert.is(events.at(-1), `start two /models/two-${context.revision}/controller`)
  } finally {
    await hosts.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
  assert.equal(events.slice(-4).sort(), ['leave three', 'leave two', 'stop three', 'stop two'])
})

test.run()
