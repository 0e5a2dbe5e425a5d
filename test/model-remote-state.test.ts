import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { RemoteState } from '../actors/unit/remote-state.ts'
import { limits } from '../runtime/limits.ts'
import { readerOf } from '../runtime/model/model-draft.ts'
import { remoteStateFor, type RemoteStateView } from '../runtime/model/remote-state-view.ts'
import { tableGet } from '../runtime/model/table.ts'
import { fixtureLeaseDurationMs } from '../sim/fixture-leadership.ts'
import { ModelFixture } from '../sim/model-fixture.ts'
import { SimClock } from '../sim/sim-clock.ts'

/**
 * The remote state the model projects for each unit (runtime/model/remote-state-view.ts).
 * This suite once compared it with the scripted controller's; the unit tests now run on
 * the real model (sim/model-fixture.ts), so what is left is the projection's own rules,
 * driven through the same fixture.
 */

// ---------------------------------------------------------------------------------
// Type level: the projection is assignable to the unit actor's RemoteState.

type Assignable<A, B> = [A] extends [B] ? true : false
const viewIsRemoteState: Assignable<RemoteStateView, RemoteState> = true
void viewIsRemoteState

function fixture (): { model: ModelFixture, clock: SimClock } {
  const clock = new SimClock({ startMs: 1_000 })
  return { model: new ModelFixture({ clock }), clock }
}

const view = suite('model: remote state view')

view('config: a real change moves the hash, the same value does not, the default comes back', () => {
  const { model } = fixture()
  model.deploy({ name: 'web' }, 2)
  const before = model.remoteState('web/1').configHash
  model.setConfig('web', { setting: 'x' })
  const changed = model.remoteState('web/1').configHash
  assert.is.not(changed, before)
  model.setConfig('web', { setting: 'x' })
  assert.is(model.remoteState('web/1').configHash, changed)
  model.setConfig('web', { setting: null })
  assert.is(model.remoteState('web/1').configHash, before, 'back to the default: the same hash')
})

view('members: settings versions of units in scope, application bag versions, own scope', () => {
  const { model } = fixture()
  model.deploy({ name: 'web', requires: { db: 'db' } }, 1)
  model.deploy({ name: 'db', provides: { server: 'db' } }, 1)
  const id = model.relate('web:db', 'db:server')
  let relation = model.remoteState('web/0').relations[String(id)]!
  assert.equal([relation.members, relation.selfInScope, relation.applicationVersion], [{}, false, 0])
  model.propose('db/0', { type: 'enter-scope', unit: 'db/0', relationId: id })
  model.propose('web/0', { type: 'enter-scope', unit: 'web/0', relationId: id })
  model.relationSet('db/0', id)
  model.relationSet('db/0', id, { application: true })
  relation = model.remoteState('web/0').relations[String(id)]!
  assert.equal([relation.members, relation.selfInScope, relation.applicationVersion], [{ 'db/0': 2 }, true, 1])
})

view('subordinates: container-scoped members are the unit on the same machine only', () => {
  const { model } = fixture()
  model.deploy({ name: 'web' }, 2)
  model.deploy({ name: 'logging', subordinate: true, requires: { host: { interface: 'juju-info', scope: 'container' } } }, 0)
  const id = model.relate('web:juju-info', 'logging:host')
  assert.equal(model.units(), ['logging/0', 'logging/1', 'web/0', 'web/1'])
  for (const unit of model.units()) model.propose(unit, { type: 'enter-scope', unit, relationId: id })
  const sub = model.remoteState('logging/1')
  assert.is(model.machineOf('logging/1'), model.machineOf('web/1'))
  assert.equal(sub.relations[String(id)]!.members, { 'web/1': 1 }, 'only its own principal')
  assert.is(sub.principalApplication, 'web')
  assert.equal(model.remoteState('web/0').subordinates, ['logging/0'])
  assert.is(model.remoteState('web/0').relations[String(id)]!.implicit, true, 'the principal side is the implicit juju-info')
})

view('leadership: a dying holder never believes it leads; another is granted only after the lease ran out', () => {
  const { model, clock } = fixture()
  model.deploy({ name: 'web' }, 2)
  assert.equal([model.remoteState('web/0').leader, model.remoteState('web/1').leader], [true, false])
  model.removeUnit('web/0')
  assert.equal([model.remoteState('web/0').leader, model.remoteState('web/1').leader], [false, false])
  clock.advance(fixtureLeaseDurationMs)
  assert.is(model.leaderOf('web'), 'web/1')
  assert.ok(model.remoteState('web/1').leader)
})

view('storage from charm metadata waits for attachment; leader only within the lease minus the margin', () => {
  const { model, clock } = fixture()
  model.deploy({ name: 'web', storage: { data: 'filesystem' } }, 1)
  let state = model.remoteState('web/0')
  assert.equal(state.storageRequiredForInstall, ['data/0'])
  assert.equal(state.storage['data/0'], { id: 'data/0', name: 'data', kind: 'filesystem', life: 'alive', attached: false, location: '/var/lib/juju/storage/data/0' })
  model.attachStorage('web/0')
  state = model.remoteState('web/0')
  assert.ok(state.storage['data/0']!.attached)

  const expiry = readerOf(model.context).lease('web')!.expiry
  assert.is(expiry, clock.now() + fixtureLeaseDurationMs)
  const margin = limits.leadershipClockDriftMarginMs
  assert.ok(remoteStateFor(model.context, 'web/0', expiry - margin - 1)!.leader)
  assert.not.ok(remoteStateFor(model.context, 'web/0', expiry - margin)!.leader)
  assert.is(remoteStateFor(model.context, 'web/9', clock.now()), undefined)
})

view('machine addresses feed the addresses hash and the address keys written on entering scope', () => {
  const { model } = fixture()
  model.deploy({ name: 'web', peers: ['cluster'] }, 2)
  const before = model.remoteState('web/0').addressesHash
  model.setMachineAddresses(model.machineOf('web/0'), ['10.0.0.1'])
  assert.is.not(model.remoteState('web/0').addressesHash, before)
  assert.is(model.remoteState('web/1').addressesHash, before, 'web/1 is on another machine')
  model.propose('web/0', { type: 'enter-scope', unit: 'web/0', relationId: 0 })
  const settings = tableGet(model.context.settings, 'relation/0/settings/web/0')!
  assert.equal(settings, { version: 1, values: { 'egress-subnets': '10.0.0.1/32', 'ingress-address': '10.0.0.1', 'private-address': '10.0.0.1' } })
})

view('actions, commands and resolved are projected until the agent reports them done', () => {
  const { model } = fixture()
  model.deploy({ name: 'web' }, 1)
  const action = model.enqueueAction('web/0', 'backup', { to: '/tmp' })
  const command = model.enqueueCommand('web/0', 'hostname')
  model.resolved('web/0', 'no-hooks')
  let state = model.remoteState('web/0')
  assert.equal([state.actions, state.commands, state.resolvedMode], [[{ id: action, name: 'backup', parameters: { to: '/tmp' } }], [{ id: command, commands: 'hostname' }], 'no-hooks'])
  model.propose('web/0', { type: 'complete-action', unit: 'web/0', actionId: action, status: 'completed', results: { ok: 'yes' } })
  model.propose('web/0', { type: 'complete-command', unit: 'web/0', commandId: command })
  model.propose('web/0', { type: 'clear-resolved', unit: 'web/0' })
  state = model.remoteState('web/0')
  assert.equal([state.actions, state.commands, state.resolvedMode], [[], [], 'none'])
  assert.equal(model.refusals, [])
})

view.run()
