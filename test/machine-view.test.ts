/**
 * A machine agent's view of the model (runtime/model/machine-view.ts): every unit on the
 * machine projects the same remote state from it as from the whole model, and what other
 * machines keep to themselves is not in it.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { machineModelView } from '../runtime/model/machine-view.ts'
import { readerOf } from '../runtime/model/model-draft.ts'
import { remoteStateFor } from '../runtime/model/remote-state-view.ts'
import { tableGet, tableKeys } from '../runtime/model/table.ts'
import { MemoryController } from './support/model-controller.ts'

function world (): MemoryController {
  const c = new MemoryController()
  c.run('add-charm', { url: 'local:web-0', hash: 'a'.repeat(16), metadata: { name: 'web', requires: { db: 'mysql' }, peers: { cluster: 'web-peer' }, config: { title: { type: 'string', default: 't' } }, actions: { backup: {} } } })
  c.run('add-charm', { url: 'local:mysql-0', hash: 'b'.repeat(16), metadata: { name: 'mysql', provides: { db: 'mysql' } } })
  c.run('add-charm', { url: 'local:other-0', hash: 'c'.repeat(16), metadata: { name: 'other' } })
  c.run('deploy', { application: 'web', charm: 'local:web-0', config: {}, constraints: {}, numUnits: 2 })
  c.run('deploy', { application: 'mysql', charm: 'local:mysql-0', config: {}, constraints: {}, numUnits: 1 })
  c.run('deploy', { application: 'other', charm: 'local:other-0', config: {}, constraints: {}, numUnits: 1 })
  const db = c.run('integrate', { a: 'web:db', b: 'mysql:db' }).relationId!
  for (const unit of ['web/0', 'web/1', 'mysql/0']) c.runAs(unit, 'enter-scope', { unit, relationId: db })
  c.runAs('mysql/0', 'relation-settings', { unit: 'mysql/0', relationId: db, settings: { password: 'secret' } })
  c.runAs('web/0', 'claim-leadership', { application: 'web', unit: 'web/0', now: 0, durationMs: 60_000 })
  c.runAs('web/1', 'commit-hook-changes', { unit: 'web/1', charmState: { set: { private: 'x' } } })
  c.run('enqueue-action', { unit: 'web/1', name: 'backup', parameters: {} })
  return c
}

test('every unit on the machine projects the same remote state from its view as from the whole model', () => {
  const c = world()
  const model = c.context
  for (const id of tableKeys(model.machines)) {
    const view = machineModelView(model, id)
    for (const unit of readerOf(model).machine(id)!.units) {
      assert.equal(remoteStateFor(view, unit, 1_000), remoteStateFor(model, unit, 1_000), `unit ${unit} on machine ${id}`)
    }
  }
})

test('a machine sees its units\' applications and relations, not unrelated ones or other machines\' private data', () => {
  const c = world()
  const model = c.context
  const web0 = readerOf(model).unit('web/0')!.machine
  const view = machineModelView(model, web0)
  assert.equal(tableKeys(view.applications).sort(), ['mysql', 'web'])
  assert.is(tableGet(view.applications, 'other'), undefined)
  assert.equal(tableKeys(view.machines), [web0])
  // The remote side's databag is readable; web/1 (another machine's), its charm state and actions are not there.
  assert.ok(tableKeys(view.settings).some(key => key.endsWith('/mysql/0')))
  assert.is(tableGet(view.units, 'web/1'), undefined)
  assert.equal(tableKeys(view.actions), [])
  assert.not.match(JSON.stringify(view), '"private"')
  assert.is(view.revision, model.revision)
})

test('a machine\'s view holds only its own units of an application, the leader\'s too (status-get --application asks the controller)', () => {
  const c = world()
  const model = c.context
  const reader = readerOf(model)
  assert.is(tableGet(model.leases, 'web')!.holder, 'web/0')
  const leaderView = machineModelView(model, reader.unit('web/0')!.machine)
  assert.equal(tableKeys(leaderView.units), ['web/0'])
  assert.equal(tableGet(leaderView.applications, 'web')!.units, ['web/0'])
  assert.is(tableGet(leaderView.leases, 'web')!.holder, 'web/0', 'the leader still sees its lease')
  const otherView = machineModelView(model, reader.unit('web/1')!.machine)
  assert.equal(tableKeys(otherView.units).filter(u => u.startsWith('web/')), ['web/1'])
  assert.equal(tableGet(otherView.applications, 'web')!.units, ['web/1'])
  // The other side of a relation: its application record, without its units.
  assert.equal(tableGet(otherView.applications, 'mysql')!.units, [])
})

test('a departed unit\'s bag rides in the views of machines in the relation after it left the model, but not in its members', () => {
  const c = world()
  const db = readerOf(c.context).application('mysql')!.relations[0]!
  c.run('remove-unit', { unit: 'mysql/0' })
  c.runAs('mysql/0', 'leave-scope', { unit: 'mysql/0', relationId: db })
  c.runAs('mysql/0', 'unit-dead', { unit: 'mysql/0' })
  const model = c.context
  assert.is(readerOf(model).unit('mysql/0'), undefined, 'mysql/0 has left the model')
  const key = `relation/${db}/settings/mysql/0`
  for (const unit of ['web/0', 'web/1']) {
    const view = machineModelView(model, readerOf(model).unit(unit)!.machine)
    assert.equal(tableGet(view.settings, key)?.values.password, 'secret', `${unit}'s machine can still read mysql/0's last settings`)
    assert.equal(tableGet(view.relations, String(db))!.departed, ['mysql/0'])
    const state = remoteStateFor(view, unit, 1_000)!
    assert.equal(state.relations[String(db)]!.members, {}, 'a departed unit is no member of the remote state')
    assert.equal(state, remoteStateFor(model, unit, 1_000))
  }
  const otherView = machineModelView(model, readerOf(model).unit('other/0')!.machine)
  assert.is(tableGet(otherView.settings, key), undefined, 'a machine outside the relation never sees the bag')
})

test('the registration secret never leaves the controllers; the token does', () => {
  const c = world()
  c.run('set-machine-provisioning', { machine: '0', token: 'ab'.repeat(8), secret: 'cd'.repeat(16) }, { kind: 'controller', id: 'c0' })
  const view = machineModelView(c.model(), '0')
  assert.equal(tableGet(view.machines, '0')!.provisioning, { token: 'ab'.repeat(8), secret: '' })
  assert.not.match(JSON.stringify(view), 'cd'.repeat(16))
})

test.run()
