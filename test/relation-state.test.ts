import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createActor } from 'xstate'
import { commitRelationHook, nextRelationHook, relationHookRefusal } from '../actors/relation/relation-state.ts'
import { relationMachine } from '../actors/relation/relation-machine.ts'
import type { LocalRelation } from '../actors/unit/local-state.ts'
import type { RemoteRelation } from '../actors/unit/remote-state.ts'
import type { HookInfo } from '../actors/unit/hook-info.ts'

const local: LocalRelation = { id: 5, endpoint: 'db', remoteApplication: 'db', peer: false, implicit: false, containerScoped: false, members: {}, applicationMembers: {} }
const remote = (members: Record<string, number>, extra: Partial<RemoteRelation> = {}): RemoteRelation =>
  ({ id: 5, endpoint: 'db', remoteApplication: 'db', life: 'alive', suspended: false, peer: false, implicit: false, containerScoped: false, members, applicationVersion: 0, ...extra })
const view = { unit: 'web/0', unitDying: false, leader: false }

const state = suite('relation state (§3)')

state('joined, then the pending changed, then changes by version', () => {
  const joined = nextRelationHook(local, remote({ 'db/1': 3, 'db/0': 1 }), view)
  assert.equal(joined, { kind: 'relation-joined', relationId: 5, endpoint: 'db', remoteApplication: 'db', remoteUnit: 'db/0', changeVersion: 1 })
  const afterJoin = commitRelationHook(local, joined!)!
  assert.is(afterJoin.changedPending, 'db/0')
  const changed = nextRelationHook(afterJoin, remote({ 'db/1': 3, 'db/0': 2 }), view)
  assert.equal(changed?.kind, 'relation-changed')
  assert.equal(changed?.changeVersion, 2)
  const afterChanged = commitRelationHook(afterJoin, changed!)!
  assert.is(afterChanged.changedPending, undefined)
  assert.equal(nextRelationHook(afterChanged, remote({ 'db/0': 2, 'db/1': 3 }), view)?.remoteUnit, 'db/1')
})

state('a suspended or dying relation is treated as empty: departed then broken; peers never broken', () => {
  const member = { ...local, members: { 'db/0': 1 } }
  assert.equal(nextRelationHook(member, remote({ 'db/0': 1 }, { suspended: true }), view)?.kind, 'relation-departed')
  assert.equal(nextRelationHook(local, remote({}, { life: 'dying' }), view)?.kind, 'relation-broken')
  assert.equal(nextRelationHook({ ...local, peer: true }, remote({}, { life: 'dying' }), view), undefined)
})

state('validation refuses what Juju refuses', () => {
  const member = { ...local, members: { 'db/0': 1 } }
  const hook = (kind: HookInfo['kind'], remoteUnit?: string): HookInfo => remoteUnit === undefined ? { kind, relationId: 5 } : { kind, relationId: 5, remoteUnit }
  assert.match(relationHookRefusal(member, hook('relation-joined', 'db/0'))!, 'already joined')
  assert.match(relationHookRefusal(local, hook('relation-changed', 'db/0'))!, 'non-member')
  assert.match(relationHookRefusal(local, hook('relation-departed', 'db/0'))!, 'non-member')
  assert.match(relationHookRefusal(member, hook('relation-broken'))!, 'members remain')
  assert.match(relationHookRefusal({ ...member, changedPending: 'db/0' }, hook('relation-departed', 'db/0'))!, 'pending')
  assert.is(relationHookRefusal({ ...member, changedPending: 'db/0' }, hook('relation-changed', 'db/0')), undefined)
})

state('commits are idempotent, so a re-commit after a crash changes nothing', () => {
  const joined: HookInfo = { kind: 'relation-joined', relationId: 5, remoteUnit: 'db/0', changeVersion: 4 }
  const once = commitRelationHook(local, joined)
  assert.equal(commitRelationHook(once!, joined), once)
  const departed: HookInfo = { kind: 'relation-departed', relationId: 5, remoteUnit: 'db/0' }
  const gone = commitRelationHook({ ...once!, changedPending: undefined as never }, departed)!
  assert.equal(commitRelationHook(gone, departed), gone)
})

const actor = suite('relation actor')

actor('mirrors commits and shows the lifecycle as states', () => {
  const ref = createActor(relationMachine, { input: { unit: 'web/0', local, remote: remote({ 'db/0': 1 }), unitDying: false, leader: false } }).start()
  assert.is(ref.getSnapshot().value, 'created')
  assert.is(ref.getSnapshot().context.nextHook?.kind, 'relation-joined')
  ref.send({ type: 'relation.hookCommitted', hook: { kind: 'relation-joined', relationId: 5, remoteUnit: 'db/0', changeVersion: 1 } })
  assert.is(ref.getSnapshot().value, 'changedPending')
  ref.send({ type: 'relation.hookCommitted', hook: { kind: 'relation-changed', relationId: 5, remoteUnit: 'db/0', changeVersion: 1 } })
  assert.is(ref.getSnapshot().value, 'joined')
  ref.send({ type: 'relation.remoteChanged', remote: undefined, unitDying: false, leader: false })
  assert.is(ref.getSnapshot().value, 'departing')
  ref.send({ type: 'relation.hookCommitted', hook: { kind: 'relation-departed', relationId: 5, remoteUnit: 'db/0' } })
  ref.send({ type: 'relation.hookCommitted', hook: { kind: 'relation-broken', relationId: 5 } })
  assert.is(ref.getSnapshot().value, 'broken')
  assert.is(ref.getSnapshot().status, 'done')
})

actor('refuses an illegal commit and stops in violated with the reason', () => {
  const ref = createActor(relationMachine, { input: { unit: 'web/0', local, remote: remote({}), unitDying: false, leader: false } }).start()
  ref.send({ type: 'relation.hookCommitted', hook: { kind: 'relation-changed', relationId: 5, remoteUnit: 'db/9' } })
  assert.is(ref.getSnapshot().value, 'violated')
  assert.match(ref.getSnapshot().context.violation!, 'non-member "db/9"')
})

state.run()
actor.run()
