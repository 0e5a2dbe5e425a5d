import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { RemoteState } from '../actors/unit/remote-state.ts'
import { naturalCompare, type ApplicationName, type UnitName } from '../runtime/ids.ts'
import { limits } from '../runtime/limits.ts'
import { applyCommand, emptyModel } from '../runtime/model/model-store.ts'
import type { CharmSummaryInput, CommandOf, CommandResult, Entity, ModelCommand, ModelCommandType, ModelContext } from '../runtime/model/model-types.ts'
import { remoteStateFor, type RemoteStateView } from '../runtime/model/remote-state-view.ts'
import { tableGet, tableValues } from '../runtime/model/table.ts'
import { ScriptedController, type ApplicationSpec } from '../sim/scripted-controller.ts'

// ---------------------------------------------------------------------------------
// Type level: the projection is assignable to the unit actor's RemoteState.

type Assignable<A, B> = [A] extends [B] ? true : false
const viewIsRemoteState: Assignable<RemoteStateView, RemoteState> = true
void viewIsRemoteState

function asRemoteState (view: RemoteStateView): RemoteState {
  return view
}

// ---------------------------------------------------------------------------------
// A model and a scripted controller driven through the same scenario.

const admin: Entity = { kind: 'user', name: 'admin' }
const unitEntity = (name: UnitName): Entity => ({ kind: 'unit', name })
const hash = 'a1b2c3d4e5f60718'
const leaseMs = limits.leadershipLeaseDurationMsDefault

class Pair {
  readonly scripted = new ScriptedController()
  context: ModelContext = emptyModel()
  index = 0
  requests = 0
  /** The units' clock reading when remote state is compared. */
  now = 1_000

  apply<T extends ModelCommandType> (type: T, fields: Omit<CommandOf<T>, 'type' | 'requestId' | 'proposer'>, proposer: Entity = admin): CommandResult {
    const command = { type, requestId: `req-${this.requests++}`, proposer, ...fields } as unknown as ModelCommand
    const outcome = applyCommand(this.context, command, { index: ++this.index })
    this.context = outcome.context
    assert.ok(outcome.result.ok, outcome.result.ok ? '' : outcome.result.error)
    return outcome.result
  }

  /** Deploy in both: the charm summary mirrors the spec, and the first unit claims leadership as the scripted controller assumes. */
  deploy (spec: ApplicationSpec, count: number, extra: Partial<CharmSummaryInput> = {}): UnitName[] {
    const units = this.scripted.deploy(spec, count)
    const url = spec.charm ?? `local:${spec.name}-0`
    const peers: Record<string, string> = {}
    for (const peer of spec.peers ?? []) peers[peer] = `${spec.name}-${peer}`
    const metadata: CharmSummaryInput = {
      name: spec.name,
      peers,
      provides: { server: 'db' },
      requires: { db: 'db' },
      config: { port: { type: 'int', default: 80 } },
      ...(spec.subordinate === true ? { subordinate: true, provides: {}, requires: { 'juju-info': { interface: 'juju-info', scope: 'container' } } } : {}),
      ...extra
    }
    this.apply('add-charm', { url, hash, metadata })
    const result = this.apply('deploy', { application: spec.name, charm: url, config: {}, constraints: {}, numUnits: count })
    assert.equal(result.ok && result.units, units)
    if (units[0] !== undefined) this.claim(spec.name, units[0])
    return units
  }

  claim (application: ApplicationName, unit: UnitName): void {
    this.apply('claim-leadership', { application, unit, now: this.now - 500, durationMs: leaseMs }, unitEntity(unit))
  }

  addUnit (application: ApplicationName): UnitName {
    const unit = this.scripted.addUnit(application)
    const result = this.apply('add-unit', { application, numUnits: 1 })
    assert.equal(result.ok && result.units, [unit])
    return unit
  }

  relate (a: string, b: string): number {
    const id = this.scripted.relate(a, b)
    const result = this.apply('integrate', { a, b })
    assert.is(result.ok && result.relationId, id)
    return id
  }

  /** Every unit enters the scope of every relation it sees (what relation-created does). */
  enterAllScopes (): void {
    for (const unit of this.scripted.units()) {
      const state = this.scripted.remoteState(unit)
      for (const relation of Object.values(state.relations)) {
        if (relation.life !== 'alive') continue
        this.scripted.enterScope(unit, relation.id)
        const member = tableGet(this.context.relations, String(relation.id))
        if (member !== undefined && tableGet(member.members, unit)?.inScope === true) continue
        this.apply('enter-scope', { unit, relationId: relation.id }, unitEntity(unit))
      }
    }
  }

  leaveScope (unit: UnitName, relationId: number): void {
    this.scripted.leaveScope(unit, relationId)
    this.apply('leave-scope', { unit, relationId }, unitEntity(unit))
  }

  removeUnit (unit: UnitName): void {
    this.scripted.removeUnit(unit)
    this.apply('remove-unit', { unit })
  }

  /** The dying unit's teardown: leave every scope, then terminate. */
  terminate (unit: UnitName): void {
    for (const relation of Object.values(this.scripted.remoteState(unit).relations)) {
      const rel = tableGet(this.context.relations, String(relation.id))
      if (rel !== undefined && tableGet(rel.members, unit)?.inScope === true) this.leaveScope(unit, relation.id)
    }
    this.scripted.unitTerminated(unit)
    this.apply('unit-dead', { unit }, unitEntity(unit))
  }

  /**
   * Both sides agree on which units exist and on each one's remote state. `dyingLeaders`:
   * units the scripted controller still calls leader although they are dying (it hands
   * leadership over only for the unit removed, not for subordinates dying with it); the
   * model never lets a dying unit believe it leads.
   */
  compare (label: string, dyingLeaders: UnitName[] = []): void {
    const modelUnits = tableValues(this.context.units).map(u => u.name).sort(naturalCompare)
    assert.equal(modelUnits, this.scripted.units(), `${label}: units`)
    for (const unit of this.scripted.units()) {
      const scripted = this.scripted.remoteState(unit)
      const view = remoteStateFor(this.context, unit, this.now)
      assert.ok(view !== undefined, `${label}: no view of ${unit}`)
      if (dyingLeaders.includes(unit)) {
        assert.equal([scripted.life, scripted.leader, view.leader], ['dying', true, false], `${label}: ${unit} leadership`)
        scripted.leader = false
      }
      assert.equal(normalise(asRemoteState(view)), normalise(scripted), `${label}: ${unit}`)
    }
  }
}

/** Hash strings differ by construction (the scripted controller labels them): compare everything else. */
function normalise (state: RemoteState): unknown {
  return { ...state, configHash: '', trustHash: '', addressesHash: '', storage: {}, storageRequiredForInstall: [] }
}

const compare = suite('model: remote state matches the scripted controller')

compare('deploy, integrate, settings, leader settings and config', () => {
  const pair = new Pair()
  pair.deploy({ name: 'web', peers: ['cluster'] }, 2)
  pair.deploy({ name: 'db' }, 1)
  pair.compare('deployed')
  const id = pair.relate('web:db', 'db:server')
  pair.compare('related')
  pair.enterAllScopes()
  pair.compare('in scope')

  pair.scripted.relationSet('db/0', id)
  pair.apply('relation-settings', { unit: 'db/0', relationId: id, settings: { host: '10.0.0.9' } }, unitEntity('db/0'))
  pair.scripted.relationSet('db/0', id, { application: true })
  pair.apply('relation-settings', { unit: 'db/0', relationId: id, application: true, settings: { password: 's3cret' } }, unitEntity('db/0'))
  pair.compare('settings written')

  pair.scripted.leaderSet('web')
  pair.apply('leader-settings', { application: 'web', unit: 'web/0', settings: { token: 'x' } }, unitEntity('web/0'))
  pair.compare('leader settings')

  const before = remoteStateFor(pair.context, 'web/1', pair.now)!.configHash
  pair.apply('set-config', { application: 'web', config: { port: 8080 } })
  assert.is.not(remoteStateFor(pair.context, 'web/1', pair.now)!.configHash, before)
  pair.apply('set-config', { application: 'web', config: { port: 8080 } })
  pair.apply('set-config', { application: 'web', config: { port: null } })
  assert.is(remoteStateFor(pair.context, 'web/1', pair.now)!.configHash, before, 'back to the default: the same hash')
})

compare('scale up and down, with the leader handing over after its lease', () => {
  const pair = new Pair()
  pair.deploy({ name: 'web', peers: ['cluster'] }, 2)
  pair.enterAllScopes()
  pair.addUnit('web')
  pair.compare('added')
  pair.enterAllScopes()
  pair.compare('newcomer in scope')

  pair.removeUnit('web/1')
  pair.compare('web/1 dying')
  pair.terminate('web/1')
  pair.compare('web/1 gone')

  // The leader leaves: the scripted controller hands over at once; the model after the lease runs out.
  pair.removeUnit('web/0')
  pair.terminate('web/0')
  pair.now += leaseMs
  pair.claim('web', 'web/2')
  pair.compare('new leader')
  assert.ok(remoteStateFor(pair.context, 'web/2', pair.now)!.leader)
})

compare('subordinates follow principals through a container-scoped relation', () => {
  const pair = new Pair()
  pair.deploy({ name: 'web' }, 2)
  pair.deploy({ name: 'logging', subordinate: true }, 0)
  pair.relate('web:juju-info', 'logging:juju-info')
  pair.claim('logging', 'logging/0')
  pair.compare('subordinates deployed')
  pair.enterAllScopes()
  pair.compare('subordinates in scope')
  assert.equal(Object.values(remoteStateFor(pair.context, 'logging/1', pair.now)!.relations)[0]!.members, { 'web/1': 1 }, 'only its own principal')

  pair.removeUnit('web/0')
  // The scripted controller hands web's leadership to web/1 at once; the model once web/0's lease has run out.
  pair.now += leaseMs
  pair.claim('web', 'web/1')
  pair.compare('principal dying takes its subordinate', ['logging/0'])
  pair.terminate('logging/0')
  // The holder is gone, so its lease went with it: another unit may claim at once.
  pair.claim('logging', 'logging/1')
  pair.compare('subordinate gone')
  pair.terminate('web/0')
  pair.compare('principal gone')
})

compare('remove-application breaks its relations and removes its units', () => {
  const pair = new Pair()
  pair.deploy({ name: 'web' }, 1)
  pair.deploy({ name: 'db' }, 2)
  const id = pair.relate('web:db', 'db:server')
  pair.enterAllScopes()
  pair.scripted.removeApplication('db')
  pair.apply('remove-application', { application: 'db' })
  pair.compare('db dying')
  pair.terminate('db/0')
  pair.terminate('db/1')
  pair.leaveScope('web/0', id)
  pair.compare('db gone')
  assert.is(tableGet(pair.context.applications, 'db'), undefined)
  assert.is(tableGet(pair.context.relations, String(id)), undefined)
})

compare('actions, commands and resolved', () => {
  const pair = new Pair()
  pair.deploy({ name: 'web' }, 1, { actions: { backup: {} } })
  const scriptedAction = pair.scripted.enqueueAction('web/0', 'backup', { to: '/tmp' })
  const action = pair.apply('enqueue-action', { unit: 'web/0', name: 'backup', parameters: { to: '/tmp' } })
  assert.is(action.ok && action.actionId, scriptedAction)
  const scriptedCommand = pair.scripted.enqueueCommand('web/0', 'hostname')
  const command = pair.apply('enqueue-command', { unit: 'web/0', commands: 'hostname' })
  assert.is(command.ok && command.commandId, scriptedCommand)
  pair.scripted.resolved('web/0', 'no-hooks')
  pair.apply('resolved', { unit: 'web/0', mode: 'no-hooks' })
  pair.compare('queued')
  pair.scripted.actionCompleted('web/0', scriptedAction)
  pair.apply('complete-action', { unit: 'web/0', actionId: scriptedAction, status: 'completed', results: { ok: 'yes' } }, unitEntity('web/0'))
  pair.scripted.commandCompleted('web/0', scriptedCommand)
  pair.apply('complete-command', { unit: 'web/0', commandId: scriptedCommand }, unitEntity('web/0'))
  pair.scripted.clearResolved('web/0')
  pair.apply('clear-resolved', { unit: 'web/0' }, unitEntity('web/0'))
  pair.compare('done')
})

compare.run()

const view = suite('model: remote state view')

view('storage from charm metadata waits for attachment; leader only within the lease minus the margin', () => {
  const pair = new Pair()
  pair.deploy({ name: 'web' }, 1, { storage: { data: { type: 'filesystem', location: '/srv/data' } } })
  let state = remoteStateFor(pair.context, 'web/0', pair.now)!
  assert.equal(state.storageRequiredForInstall, ['data/0'])
  assert.equal(state.storage['data/0'], { id: 'data/0', name: 'data', kind: 'filesystem', life: 'alive', attached: false, location: '/srv/data' })
  pair.apply('storage-attached', { unit: 'web/0', storageId: 'data/0' }, { kind: 'machine', id: '0' })
  state = remoteStateFor(pair.context, 'web/0', pair.now)!
  assert.ok(state.storage['data/0']!.attached)

  const expiry = pair.now - 500 + leaseMs
  const margin = limits.leadershipClockDriftMarginMs
  assert.ok(remoteStateFor(pair.context, 'web/0', expiry - margin - 1)!.leader)
  assert.not.ok(remoteStateFor(pair.context, 'web/0', expiry - margin)!.leader)
  assert.is(remoteStateFor(pair.context, 'web/9', pair.now), undefined)
})

view('machine addresses feed the addresses hash and the address keys written on entering scope', () => {
  const pair = new Pair()
  pair.deploy({ name: 'web', peers: ['cluster'] }, 2)
  const before = remoteStateFor(pair.context, 'web/0', pair.now)!.addressesHash
  pair.apply('set-machine-instance', { machine: '0', instanceId: 'i-0', addresses: ['10.0.0.1'] }, { kind: 'controller', id: '0' })
  assert.is.not(remoteStateFor(pair.context, 'web/0', pair.now)!.addressesHash, before)
  assert.is(remoteStateFor(pair.context, 'web/1', pair.now)!.addressesHash, before, 'web/1 is on another machine')
  pair.enterAllScopes()
  const settings = tableGet(pair.context.settings, 'relation/0/settings/web/0')!
  assert.equal(settings, { version: 1, values: { 'egress-subnets': '10.0.0.1/32', 'ingress-address': '10.0.0.1', 'private-address': '10.0.0.1' } })
})

view.run()
