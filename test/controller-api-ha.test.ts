/**
 * The API ops behind `enable-ha` and `show-controller`, on the simulated controller group:
 * `add-controller` (admins only, on the leader, idempotent) makes a joining server a voter;
 * `remove-controller` (admins only, on the leader, idempotent) takes the vote of a member
 * that is down and never of one the leader hears, so `enable-ha` can replace it;
 * `controller-status` gives each member's Raft state and, on the leader, each voter's
 * commit lag (commit index minus match index); `controllers` lists the voters with the
 * addresses the serving controller knows.
 */
import '../runtime/polyfill.ts'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { AddControllerReply } from '../actors/controller/api-add-controller.ts'
import type { RemoveControllerReply } from '../actors/controller/api-remove-controller.ts'
import type { ControllerStatusReply } from '../actors/controller/api-controller-status.ts'
import type { ControllersReply } from '../actors/controller/api-controllers.ts'
import { controllerApiProtocol, serveApiRequest, type ApiExtras } from '../actors/controller/controller-api.ts'
import type { ModelReplica } from '../actors/controller/model-replica.ts'
import { decode, encode } from '../runtime/codec.ts'
import type { Entity } from '../runtime/model/model-types.ts'
import { SimControllerGroup } from '../sim/sim-controller-group.ts'
import { Simulation } from '../sim/simulation.ts'

const test = suite('controller api ha')
const admin = { kind: 'user', name: 'admin' } as const

const identify = (peer: string): Entity | undefined =>
  peer === 'admin' ? admin : /^c\d$/.test(peer) ? { kind: 'controller', id: peer } : peer === 'm' ? { kind: 'machine', id: '0' } : undefined

async function ask<T> (g: SimControllerGroup, node: ModelReplica, body: Record<string, unknown>, from = 'admin', extras: ApiExtras = {}): Promise<T> {
  let reply: T | undefined
  void serveApiRequest(node, identify, { from, protocol: controllerApiProtocol, data: encode(body) }, undefined, undefined, extras)
    .then(data => { reply = decode(data, 'test') as T })
  assert.ok(await g.runUntil(() => reply !== undefined, 10_000, 5), `${String(body.op)} answered`)
  return reply!
}

/** Runs the group until `promise` settles (the simulated clock moves only while it runs). */
async function settle<T> (g: SimControllerGroup, promise: Promise<T>, ms = 10_000): Promise<T> {
  let outcome: { ok: true, value: T } | { ok: false, error: unknown } | undefined
  promise.then(value => { outcome = { ok: true, value } }, (error: unknown) => { outcome = { ok: false, error } })
  assert.ok(await g.runUntil(() => outcome !== undefined, ms, 5), 'the promise settled')
  if (!outcome!.ok) throw outcome!.error
  return outcome!.value
}

function addMachine (id: string): never {
  return { type: 'add-machine', requestId: id, proposer: admin } as never
}

async function group (seed: number): Promise<SimControllerGroup> {
  const g = await SimControllerGroup.create(new Simulation({ seed }), { size: 3 })
  assert.ok(await g.runUntil(() => g.leader() !== undefined, 3_000), 'a leader was elected')
  return g
}

test('add-controller: admins only, on the leader; the joiner becomes a voter and catches up; again is ok', async () => {
  const g = await group(11)
  for (let n = 0; n < 5; n++) assert.ok((await settle(g, g.leaderNode()!.submit(addMachine(`m${n}`)))).ok)
  const seat = await g.addController()
  const joiner = g.ids[seat]!
  const leader = g.leaderNode()!
  const follower = g.nodes().find(node => node !== leader && node.id !== joiner)!

  const byMachine = await ask<AddControllerReply>(g, leader, { op: 'add-controller', peer: joiner }, 'm')
  assert.equal(byMachine, { ok: false, error: 'controller api: permission denied: peer "m" may not add controllers' })
  const byController = await ask<AddControllerReply>(g, leader, { op: 'add-controller', peer: joiner }, 'c1')
  assert.is(byController.ok, false, 'controllers do not add controllers on their own')
  const bad = await ask<AddControllerReply>(g, leader, { op: 'add-controller', peer: 'not a peer id!' })
  assert.equal(bad, { ok: false, error: 'controller api: expected {op: "add-controller", peer} with a peer id, got "not a peer id!"' })
  const notLeader = await ask<AddControllerReply>(g, follower, { op: 'add-controller', peer: joiner })
  assert.equal(notLeader, { ok: false, error: `controller api: controller "${follower.id}" cannot add "${joiner}": not the leader`, leader: leader.id })
  assert.equal(g.leader()!.status().config.voters, ['c0', 'c1', 'c2'], 'nothing changed by a refusal')

  const added = await ask<AddControllerReply>(g, leader, { op: 'add-controller', peer: joiner })
  assert.equal(added, { ok: true, voters: ['c0', 'c1', 'c2', 'c3'] })
  assert.ok(await g.runUntil(() => g.host(g.indexOf(joiner))?.state().machines.size === 5, 3_000), 'the joiner caught up')
  assert.equal(await ask<AddControllerReply>(g, leader, { op: 'add-controller', peer: joiner }), { ok: true, voters: ['c0', 'c1', 'c2', 'c3'] })
  await g.stop()
})

test('add-controller refuses a voter that would leave the reachable voters short of a quorum (etcd\'s strict reconfiguration check)', async () => {
  // Found by the controller-API fuzz: three made-up peers added one after another gave 6 voters, 3 of them real, and the group never had a leader again.
  const g = await group(14)
  assert.ok((await settle(g, g.leaderNode()!.submit(addMachine('first')))).ok, 'a leader ready for membership changes')
  const add = async (peer: string): Promise<AddControllerReply> => await ask<AddControllerReply>(g, g.leaderNode()!, { op: 'add-controller', peer })
  assert.equal(await add('12D3KooWfakeA'), { ok: true, voters: ['12D3KooWfakeA', 'c0', 'c1', 'c2'] }, '3 reachable of 5: still a quorum')
  assert.equal(await add('12D3KooWfakeB'), { ok: true, voters: ['12D3KooWfakeA', '12D3KooWfakeB', 'c0', 'c1', 'c2'] })
  const leader = g.leaderNode()!
  assert.equal(await add('12D3KooWfakeC'), {
    ok: false, error: `controller api: controller "${leader.id}" cannot add "12D3KooWfakeC": 3 of 5 voters are reachable, and 6 voters need 4 for a quorum`
  })
  assert.is(g.leader()!.status().config.voters.length, 5, 'nothing changed by the refusal')
  // Still serving: a write commits with 3 of 5.
  assert.ok((await settle(g, g.leaderNode()!.submit(addMachine('after')))).ok)
  await g.stop()
})

test('add-controller grows a group of one, as etcd does, though the leader has not heard from its second voter yet', async () => {
  const g = await SimControllerGroup.create(new Simulation({ seed: 16 }), { size: 1 })
  assert.ok(await g.runUntil(() => g.leader() !== undefined, 3_000), 'a leader was elected')
  assert.ok((await settle(g, g.leaderNode()!.submit(addMachine('first')))).ok)
  const seat = await g.addController()
  const joiner = g.ids[seat]!
  assert.equal(g.leader()!.reachableVoters, ['c0'])
  assert.equal(await ask<AddControllerReply>(g, g.leaderNode()!, { op: 'add-controller', peer: joiner }), { ok: true, voters: ['c0', joiner] })
  assert.ok(await g.runUntil(() => g.host(g.indexOf(joiner))?.state().machines.size === 1, 3_000), 'the joiner caught up')
  await g.stop()
})

test('add-controller counts a crashed voter as unreachable', async () => {
  const g = await group(15)
  const leader = g.leaderNode()!
  const follower = g.ids.find(id => id !== leader.id)!
  g.crash(g.indexOf(follower))
  // Past an election timeout, the leader has not heard from it.
  await g.runUntil(() => false, 3_000)
  const reply = await ask<AddControllerReply>(g, leader, { op: 'add-controller', peer: '12D3KooWfakeA' })
  assert.equal(reply, { ok: false, error: `controller api: controller "${leader.id}" cannot add "12D3KooWfakeA": 2 of 3 voters are reachable, and 4 voters need 3 for a quorum` })
  await g.stop()
})

test('remove-controller: only a member that is down, admins only, on the leader; the group commits with the rest and grows back', async () => {
  // Juju's enable-ha demotes only unavailable controllers (juju/juju state/enableha.go, enableHAIntentions).
  const g = await group(17)
  assert.ok((await settle(g, g.leaderNode()!.submit(addMachine('first')))).ok)
  const leader = g.leaderNode()!
  const [up, down] = g.ids.filter(id => id !== leader.id) as [string, string]
  const remove = async (peer: string, from = 'admin', node = leader): Promise<RemoveControllerReply> => await ask<RemoveControllerReply>(g, node, { op: 'remove-controller', peer }, from)
  assert.equal(await remove(up), { ok: false, error: `controller api: controller "${leader.id}" cannot remove "${up}": it is reachable (heard from within the election timeout); only a member that is down is replaced` })
  g.crash(g.indexOf(down))
  await g.runUntil(() => false, 3_000)
  assert.equal(await remove(down, 'm'), { ok: false, error: 'controller api: permission denied: peer "m" may not remove controllers' })
  assert.equal(await remove(down, 'admin', g.nodes().find(node => node.id === up)!), { ok: false, error: `controller api: controller "${up}" cannot remove "${down}": not the leader`, leader: leader.id })
  assert.equal(await ask<RemoveControllerReply>(g, leader, { op: 'remove-controller', peer: 'not a peer id!' }), { ok: false, error: 'controller api: expected {op: "remove-controller", peer} with a peer id, got "not a peer id!"' })
  assert.equal(g.leader()!.status().config.voters.length, 3, 'nothing changed by a refusal')
  const voters = [leader.id, up].sort()
  assert.equal(await remove(down), { ok: true, voters })
  assert.equal(await remove(down), { ok: true, voters }, 'again: nothing more to do')
  assert.ok((await settle(g, g.leaderNode()!.submit(addMachine('after')))).ok, 'two voters of two commit')
  // Then the replacement joins: 2 reachable of 3 is a quorum.
  const seat = await g.addController()
  const joiner = g.ids[seat]!
  assert.equal(await ask<AddControllerReply>(g, g.leaderNode()!, { op: 'add-controller', peer: joiner }), { ok: true, voters: [...voters, joiner].sort() })
  assert.ok(await g.runUntil(() => g.host(g.indexOf(joiner))?.state().machines.size === 2, 3_000), 'the replacement caught up')
  await g.stop()
})

test('controller-status: every member\'s own state; the leader\'s commit lag per voter, 0 caught up, commit - match behind', async () => {
  const g = await group(12)
  const leader = g.leaderNode()!
  await g.runFor(500)
  const own = await ask<ControllerStatusReply>(g, leader, { op: 'controller-status' }, 'admin', { version: '0.1.0' })
  if (!own.ok) throw new Error(own.error)
  assert.equal([own.id, own.role, own.version, own.voters], [leader.id, 'leader', '0.1.0', ['c0', 'c1', 'c2']])
  assert.equal(Object.values(own.progress).map(p => p.lag), [0, 0, 0])
  assert.is(own.applied, own.commit)

  const follower = g.nodes().find(node => node !== leader)!
  const behind = g.indexOf(follower.id)
  g.crash(behind)
  for (let n = 0; n < 4; n++) assert.ok((await settle(g, leader.submit(addMachine(`x${n}`)))).ok)
  const lagging = await ask<ControllerStatusReply>(g, leader, { op: 'controller-status' }, 'c1')
  if (!lagging.ok) throw new Error(lagging.error)
  const p = lagging.progress[follower.id]!
  assert.ok(p.lag >= 4, `lag ${p.lag}`)
  assert.is(p.lag, lagging.commit - p.match)
  assert.is(lagging.version, null, 'no version given')

  const other = g.nodes().find(node => node !== leader && node !== follower)!
  const fromFollower = await ask<ControllerStatusReply>(g, other, { op: 'controller-status' })
  if (!fromFollower.ok) throw new Error(fromFollower.error)
  assert.equal([fromFollower.role, fromFollower.leader, fromFollower.progress], ['follower', leader.id, {}])
  assert.is((await ask<ControllerStatusReply>(g, leader, { op: 'controller-status' }, 'm')).ok, false, 'machine agents may not read it')
  await g.stop()
})

test('controllers: every voter with the addresses known for it; strangers refused', async () => {
  const g = await group(13)
  const addresses = (voters: readonly string[]): Array<{ peerId: string, addresses: string[] }> => voters.filter(v => v !== 'c2').map(v => ({ peerId: v, addresses: [`/ip4/127.0.0.1/tcp/1/p2p/${v}`] }))
  const reply = await ask<ControllersReply>(g, g.leaderNode()!, { op: 'controllers' }, 'm', { controllerAddresses: addresses })
  assert.equal(reply, { ok: true, controllers: [
    { peerId: 'c0', addresses: ['/ip4/127.0.0.1/tcp/1/p2p/c0'] },
    { peerId: 'c1', addresses: ['/ip4/127.0.0.1/tcp/1/p2p/c1'] },
    { peerId: 'c2', addresses: [] }
  ] })
  assert.is((await ask<ControllersReply>(g, g.leaderNode()!, { op: 'controllers' }, 'stranger')).ok, false)
  await g.stop()
})

test.run()
