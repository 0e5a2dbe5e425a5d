import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { decode, encode } from '../runtime/codec.ts'
import { limits } from '../runtime/limits.ts'
import { applyCommand, emptyModel } from '../runtime/model/model-store.ts'
import { restoreModel, snapshotModel } from '../runtime/model/model-snapshot.ts'
import type { CommandResult, Entity, ModelCommand, ModelContext } from '../runtime/model/model-types.ts'
import { tableGet, tableKeys } from '../runtime/model/table.ts'

const admin: Entity = { kind: 'user', name: 'admin' }
/** A valid v4 UUID per Raft index, so each add-model carries its own. */
const uuidOf = (index: number): string => `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`

class Registry {
  context: ModelContext = emptyModel()
  index = 0

  run (type: 'add-model' | 'destroy-model' | 'remove-model', name: unknown, proposer: Entity = admin): CommandResult {
    const uuid = uuidOf(this.index + 1)
    const command = { type, name, ...(type === 'add-model' ? { uuid } : {}), requestId: `req-${this.index}`, proposer } as unknown as ModelCommand
    const outcome = applyCommand(this.context, command, { index: ++this.index, term: 1 })
    this.context = outcome.context
    return outcome.result
  }

  error (type: 'add-model' | 'destroy-model' | 'remove-model', name: unknown, proposer?: Entity): string {
    const result = this.run(type, name, proposer)
    if (result.ok) throw new Error(`${type} ${String(name)} was accepted`)
    assert.not.match(result.error, /\n/)
    return result.error
  }
}

const registry = suite('model registry')

registry('add-model records an alive model at its revision', () => {
  const r = new Registry()
  assert.ok(r.run('add-model', 'staging').ok)
  assert.equal(tableGet(r.context.models, 'staging'), { name: 'staging', life: 'alive', createdAt: 1, uuid: uuidOf(1) })
})

registry('a model\'s UUID: add-model carries a v4 UUID; set-model-uuid (controllers only) sets it once', () => {
  const r = new Registry()
  const apply = (command: Record<string, unknown>, proposer: Entity): CommandResult => {
    const outcome = applyCommand(r.context, { ...command, requestId: `u-${r.index}`, proposer } as unknown as ModelCommand, { index: ++r.index, term: 1 })
    r.context = outcome.context
    return outcome.result
  }
  const refused = (result: CommandResult): string => result.ok ? assert.unreachable('accepted') as never : result.error
  assert.match(refused(apply({ type: 'add-model', name: 'x', uuid: 'not-a-uuid' }, admin)), /^controller: cannot add model "x": uuid must be an RFC 4122 version 4 UUID in lower case, got "not-a-uuid"$/)
  assert.match(refused(apply({ type: 'add-model', name: 'x', uuid: '00000000-0000-1000-8000-000000000000' }, admin)), /version 4 UUID/)
  assert.match(refused(apply({ type: 'add-model', name: 'x' }, admin)), /uuid must be an RFC 4122 version 4 UUID in lower case, got undefined$/)
  assert.is(r.context.uuid, '', 'no UUID until a controller sets one')
  const controller: Entity = { kind: 'controller', id: 'c1' }
  const uuid = 'f47ac10b-58cc-4372-a567-0e02b2c3d479'
  assert.match(refused(apply({ type: 'set-model-uuid', uuid }, admin)), /only a controller sets the model's UUID/)
  assert.ok(apply({ type: 'set-model-uuid', uuid }, controller).ok)
  assert.is(r.context.uuid, uuid)
  assert.ok(apply({ type: 'set-model-uuid', uuid }, controller).ok, 'the same UUID again changes nothing')
  assert.match(refused(apply({ type: 'set-model-uuid', uuid: uuidOf(9) }, { kind: 'controller', id: 'c2' })), /the model's UUID is already "f47ac10b-58cc-4372-a567-0e02b2c3d479"/)
  assert.is(restoreModel(decode(encode(snapshotModel(r.context), 'test'), 'test')).uuid, uuid, 'kept in snapshots')
})

registry('names are Juju\'s: lower-case letters, digits and hyphens, at most 63 characters', () => {
  const r = new Registry()
  for (const good of ['a', 'staging-2', '0abc', 'x'.repeat(63)]) assert.ok(r.run('add-model', good).ok, good)
  for (const bad of ['', 'Staging', '-lead', 'with space', 'under_score', 'x'.repeat(64), 7, null]) {
    assert.match(r.error('add-model', bad), /^controller: cannot add model .*: .* is not a valid model name/)
  }
})

registry('"default" and existing names are refused', () => {
  const r = new Registry()
  assert.match(r.error('add-model', 'default'), /^controller: cannot add model "default": model "default" already exists$/)
  assert.ok(r.run('add-model', 'two').ok)
  assert.match(r.error('add-model', 'two'), /model "two" already exists/)
  assert.equal(tableKeys(r.context.models), ['two'])
})

registry('at most limits.modelsMax models besides "default"', () => {
  const r = new Registry()
  for (let i = 0; i < limits.modelsMax; i++) assert.ok(r.run('add-model', `m${i}`).ok)
  assert.match(r.error('add-model', 'one-more'), new RegExp(`hosts ${limits.modelsMax} models besides "default", the maximum`))
  assert.is(r.context.models.size, limits.modelsMax)
})

registry('only admins and controllers change the registry', () => {
  const r = new Registry()
  assert.match(r.error('add-model', 'm', { kind: 'machine', id: '0' }), /permission denied for machine-0/)
  assert.match(r.error('add-model', 'm', { kind: 'unit', name: 'web/0' }), /permission denied for unit-web-0/)
  assert.ok(r.run('add-model', 'm', { kind: 'controller', id: 'c1' }).ok)
  assert.match(r.error('destroy-model', 'm', { kind: 'machine', id: '0' }), /permission denied/)
})

registry('destroy-model marks it dying (again: no change); remove-model then drops it', () => {
  const r = new Registry()
  r.run('add-model', 'two')
  assert.match(r.error('remove-model', 'two'), /the model is alive; destroy it first/)
  assert.ok(r.run('destroy-model', 'two').ok)
  assert.is(tableGet(r.context.models, 'two')?.life, 'dying')
  assert.ok(r.run('destroy-model', 'two').ok)
  assert.is(tableGet(r.context.models, 'two')?.createdAt, 1)
  // Dying: the name stays taken until the model is removed.
  assert.match(r.error('add-model', 'two'), /already exists/)
  assert.ok(r.run('remove-model', 'two').ok)
  assert.is(tableGet(r.context.models, 'two'), undefined)
  // Removing what is gone is done already (a retried CLI).
  assert.ok(r.run('remove-model', 'two').ok)
  assert.ok(r.run('add-model', 'two').ok)
})

registry('"default" cannot be destroyed and unknown models are named', () => {
  const r = new Registry()
  assert.match(r.error('destroy-model', 'default'), /^controller: cannot destroy model "default": it is the controller group's own model, which holds the model registry; destroy-controller removes it$/)
  assert.match(r.error('destroy-model', 'nope'), /model "nope" not found/)
})

registry('the registry survives a snapshot, and a snapshot from before it restores with none', () => {
  const r = new Registry()
  r.run('add-model', 'two')
  const restored = restoreModel(decode(encode(snapshotModel(r.context), 'test'), 'test'))
  assert.equal(tableGet(restored.models, 'two'), tableGet(r.context.models, 'two'))
  const old = snapshotModel(emptyModel()) as unknown as { context: Record<string, unknown> }
  const { models: _gone, ...withoutModels } = old.context
  const fromOld = restoreModel(decode(encode({ ...old, context: withoutModels }, 'test'), 'test'))
  assert.is(fromOld.models.size, 0)
})

registry.run()
