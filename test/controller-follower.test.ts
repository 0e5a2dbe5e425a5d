/**
 * A machine agent following the group's membership (agent/controller-follower.ts), round
 * by round against scripted controllers: the race behind cli-ha-rejoin's CI failure
 * (issue 25). Right after `enable-ha`, the original controller c0 names the new voters
 * before its mesh has learned where they listen; the agent must not remember them as
 * peer ids without addresses (the file then counted three controllers while only c0 was
 * reachable: c0 killed, the agent could reach no one, and restarted it had only c0's
 * address). It asks again soon (bounded) and learns them on the round that carries their
 * addresses, and a restart reads them back. Juju keeps only API servers left with an address
 * (juju/juju internal/worker/apiaddressupdater/apiaddressupdater.go, getAddresses).
 *
 * Mutation check: with runtime/known-controllers.ts's dialableControllers returning its
 * input, the first test fails (c1 and c2 remembered with no address).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { ControllerFollower } from '../agent/controller-follower.ts'
import { KnownControllersFile } from '../agent/known-controllers-file.ts'
import type { ControllersReply } from '../actors/controller/api-controllers.ts'
import { decode, encode } from '../runtime/codec.ts'
import { dialableControllers } from '../runtime/known-controllers.ts'
import { limits } from '../runtime/limits.ts'
import type { Logger } from '../runtime/logger.ts'

const addr = (peer: string): string => `/ip4/127.0.0.1/tcp/${4000 + peer.charCodeAt(1)}/p2p/${peer}`
const c = (peerId: string, ...addresses: string[]) => ({ peerId, addresses })

/** Controllers answering `controllers` from a script; `down` ones fail as a dead peer does. */
class ScriptedMesh {
  replies = new Map<string, ControllersReply>()
  down = new Set<string>()
  readonly asked: string[] = []
  readonly dialled: string[] = []

  async request (peer: string, _protocol: string, data: Uint8Array): Promise<Uint8Array> {
    this.asked.push(peer)
    assert.equal(decode(data, 'test'), { op: 'controllers' })
    const reply = this.replies.get(peer)
    if (this.down.has(peer) || reply === undefined) throw new Error(`peer "${peer}": unreachable: connection refused`)
    return encode(reply, 'test')
  }

  async dial (address: string): Promise<unknown> {
    this.dialled.push(address)
    if ([...this.down].some(peer => address.endsWith(`/p2p/${peer}`))) throw new Error('connection refused')
    return {}
  }
}

const silent: Logger = { module: 'test', log: () => {}, child: () => silent }

function withDir (run: (dir: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'controller-follower-'))
    try {
      await run(dir)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

test('new voters named without addresses are not learned; the next round with addresses is, and a restart reads them back', withDir(async dir => {
  const mesh = new ScriptedMesh()
  const known = new KnownControllersFile(dir, silent)
  const controllers = ['c0']
  const follower = new ControllerFollower({ mesh, model: 'default', controllers, known, logger: silent })

  // enable-ha has just made c1 and c2 voters; c0's mesh has not met them yet.
  mesh.replies.set('c0', { ok: true, controllers: [c('c0', addr('c0')), c('c1'), c('c2')] })
  await follower.round()
  assert.equal(known.remembered, [c('c0', addr('c0'))], 'a peer id alone is not remembered')
  assert.equal(controllers, ['c0'])
  assert.equal(mesh.dialled, [])
  assert.is(follower.nextDelayMs, limits.controllerFollowRetryMs, 'asked again soon: c0 is about to learn them')

  // c0 has learned where they listen.
  mesh.replies.set('c0', { ok: true, controllers: [c('c0', addr('c0')), c('c1', addr('c1')), c('c2', addr('c2'))] })
  await follower.round()
  assert.equal(known.remembered, [c('c0', addr('c0')), c('c1', addr('c1')), c('c2', addr('c2'))])
  assert.equal(controllers, ['c0', 'c1', 'c2'])
  assert.equal(mesh.dialled, [addr('c1'), addr('c2')])
  assert.is(follower.nextDelayMs, limits.controllerFollowPeriodMs, 'every voter known: back to the period')

  // c0 dies: the next controller answers, and what is kept stays.
  mesh.down.add('c0')
  mesh.replies.set('c1', { ok: true, controllers: [c('c1', addr('c1')), c('c2', addr('c2'))] })
  mesh.asked.length = 0
  await follower.round()
  assert.equal(mesh.asked, ['c0', 'c1'])
  const restarted = new KnownControllersFile(dir, silent).remembered
  assert.equal(restarted.filter(r => r.peerId !== 'c0'), [c('c1', addr('c1')), c('c2', addr('c2'))], 'a restart finds the live ones')
}))

test('a voter named without an address keeps the address remembered for it before', withDir(async dir => {
  const mesh = new ScriptedMesh()
  const known = new KnownControllersFile(dir, silent)
  known.remember([c('c0', addr('c0')), c('c1', addr('c1'))])
  const follower = new ControllerFollower({ mesh, model: 'default', controllers: ['c0', 'c1'], known, logger: silent })
  mesh.replies.set('c0', { ok: true, controllers: [c('c0', addr('c0')), c('c1')] })
  await follower.round()
  assert.equal(known.remembered, [c('c0', addr('c0')), c('c1', addr('c1'))])
}))

test('quick rounds for voters without an address are bounded; then the period', withDir(async dir => {
  const mesh = new ScriptedMesh()
  const follower = new ControllerFollower({ mesh, model: 'default', controllers: ['c0'], known: new KnownControllersFile(dir, silent), logger: silent })
  // c0 never learns where c1 listens (c1 died before c0 met it).
  mesh.replies.set('c0', { ok: true, controllers: [c('c0', addr('c0')), c('c1')] })
  const delays: number[] = []
  for (let round = 0; round < limits.controllerFollowRetriesMax + 3; round++) {
    await follower.round()
    delays.push(follower.nextDelayMs)
  }
  assert.equal(delays, [...Array(limits.controllerFollowRetriesMax).fill(limits.controllerFollowRetryMs), ...Array(3).fill(limits.controllerFollowPeriodMs)])
  // Known at last: a later membership change gets its quick rounds again.
  mesh.replies.set('c0', { ok: true, controllers: [c('c0', addr('c0')), c('c1', addr('c1'))] })
  await follower.round()
  mesh.replies.set('c0', { ok: true, controllers: [c('c0', addr('c0')), c('c1', addr('c1')), c('c2')] })
  await follower.round()
  assert.is(follower.nextDelayMs, limits.controllerFollowRetryMs)
}))

test('a refusal or an unreachable controller moves on to the next; a voter that does not answer its dial is tried again next round', withDir(async dir => {
  const mesh = new ScriptedMesh()
  const known = new KnownControllersFile(dir, silent)
  const controllers = ['c0', 'c1']
  const follower = new ControllerFollower({ mesh, model: 'default', controllers, known, logger: silent })
  mesh.replies.set('c0', { ok: false, error: 'controller api: permission denied' })
  mesh.replies.set('c1', { ok: true, controllers: [c('c1', addr('c1')), c('c2', addr('c2'))] })
  mesh.down.add('c2')
  await follower.round()
  assert.equal(mesh.asked, ['c0', 'c1'])
  assert.equal(controllers, ['c0', 'c1'], 'c2 did not answer its dial')
  mesh.down.delete('c2')
  await follower.round()
  assert.equal(controllers, ['c0', 'c1', 'c2'])
}))

test('dialableControllers keeps the controllers that name an address, in order', () => {
  assert.equal(dialableControllers([c('a'), c('b', '/b1'), c('c'), c('d', '/d1', '/d2')]), [c('b', '/b1'), c('d', '/d1', '/d2')])
  assert.equal(dialableControllers([]), [])
})

test.run()
