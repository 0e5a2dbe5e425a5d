/**
 * ModelReplica on the simulated controller group: a forwarded command whose reply is
 * lost applies once; the singular workers never run on two controllers, and move to a
 * new leader only once the old lease has run out; a server joins as a voter through a
 * RaftSnapshot and a voter is removed.
 */
import '../runtime/polyfill.ts'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { controllerProposeProtocol, singularLease, type ForwardReply } from '../actors/controller/model-replica.ts'
import { decode, encode } from '../runtime/codec.ts'
import { limits } from '../runtime/limits.ts'
import type { ModelCommand } from '../runtime/model/model-types.ts'
import { tableGet } from '../runtime/model/table.ts'
import { SimControllerGroup, type SimControllerGroupOptions } from '../sim/sim-controller-group.ts'
import { Simulation } from '../sim/simulation.ts'

const test = suite('controller node')
const admin = { kind: 'user', name: 'admin' } as const
const leaseDurationMs = 3_000

function addMachine (id: string): ModelCommand {
  return { type: 'add-machine', requestId: id, proposer: admin }
}

async function group (seed: number, options: Partial<SimControllerGroupOptions> = {}): Promise<SimControllerGroup> {
  const g = await SimControllerGroup.create(new Simulation({ seed }), { size: 3, leaseDurationMs, ...options })
  assert.ok(await g.runUntil(() => g.leader() !== undefined, 3_000), 'a leader was elected')
  return g
}

/** Runs the group until `promise` settles; fails the test if it does not within `ms`. */
async function settle<T> (g: SimControllerGroup, promise: Promise<T>, ms = 10_000): Promise<T> {
  let outcome: { ok: true, value: T } | { ok: false, error: unknown } | undefined
  promise.then(value => { outcome = { ok: true, value } }, (error: unknown) => { outcome = { ok: false, error } })
  assert.ok(await g.runUntil(() => outcome !== undefined, ms, 5), 'the promise settled')
  if (!outcome!.ok) throw outcome!.error
  return outcome!.value
}

test('a follower forwards to the leader; when the reply is lost the retry (same request id) applies once', async () => {
  const g = await group(1)
  const leader = g.leaderNode()!
  const follower = g.nodes().find(node => node !== leader)!
  // Everything from the leader to this follower is lost for a while: the forwarded
  // command commits (the third controller acknowledges it) but its reply never arrives.
  g.network.setLoss(1, { from: leader.id, to: follower.id })
  const submitted = follower.submit(addMachine('lost-reply'))
  await g.runFor(1_500)
  g.network.setLoss(0, { from: leader.id, to: follower.id })
  const result = await settle(g, submitted)
  assert.ok(result.ok)
  const model = await settle(g, follower.read())
  assert.is(model.machines.size, 1, 'applied exactly once')
  await g.stop()
})

/** A client's write (from a peer that is no controller), sent to controller `to`; settles with its reply. */
const clients = new WeakMap<SimControllerGroup, ReturnType<SimControllerGroup['network']['transport']>>()
function clientWrite (g: SimControllerGroup, to: string, requestId: string): { reply: ForwardReply | undefined, at: number | undefined } {
  const client = clients.get(g) ?? g.network.transport('client-1')
  clients.set(g, client)
  const outcome: { reply: ForwardReply | undefined, at: number | undefined } = { reply: undefined, at: undefined }
  client.request(to, controllerProposeProtocol, encode(addMachine(requestId), 'test'), { timeoutMs: 30_000 }).then(
    bytes => { outcome.reply = decode(bytes, 'test') as ForwardReply; outcome.at = g.sim.clock.now() },
    (error: unknown) => { outcome.reply = { ok: false, name: 'transport', message: String(error), leader: '' }; outcome.at = g.sim.clock.now() })
  return outcome
}

test('a client\'s write sent to a follower is forwarded to the leader and commits there', async () => {
  const g = await group(4)
  const leader = g.leaderNode()!
  const follower = g.nodes().find(node => node !== leader)!
  const write = clientWrite(g, follower.id, 'via-follower')
  assert.ok(await g.runUntil(() => write.reply !== undefined, 5_000), 'answered')
  assert.ok(write.reply!.ok, JSON.stringify(write.reply))
  const model = await settle(g, leader.read())
  assert.is(model.machines.size, 1)
  await g.stop()
})

test('a client\'s write reaching a survivor during an election waits for the new leader and commits, not refused as leader unknown', async () => {
  const g = await group(5)
  const dead = g.indexOf(g.leaderNode()!.id)
  g.crash(dead)
  const survivors = g.nodes()
  // Both survivors' election timers ran out: neither knows a leader.
  assert.ok(await g.runUntil(() => survivors.every(node => node.host.leader === ''), 3_000), 'an election began')
  const writes = survivors.map((node, i) => clientWrite(g, node.id, `during-election-${i}`))
  assert.ok(await g.runUntil(() => writes.every(w => w.reply !== undefined), 5_000), 'both answered')
  for (const w of writes) assert.ok(w.reply!.ok, JSON.stringify(w.reply))
  const leader = g.leaderNode()!
  assert.ok(survivors.includes(leader))
  const model = await settle(g, leader.read())
  assert.is(model.machines.size, 2, 'each write applied once')
  await g.stop()
})

test('a client\'s write forwarded to a leader cut off from the group goes to the new leader once elected, not after the forward\'s timeout', async () => {
  const g = await group(7)
  const old = g.leaderNode()!
  const follower = g.nodes().find(node => node !== old)!
  assert.ok(await g.runUntil(() => g.nodes().every(node => node.host.leader === old.id), 3_000), 'every controller knows the leader')
  // The leader is partitioned (alive, unreachable both ways): the follower still names it.
  for (const node of g.nodes()) {
    if (node === old) continue
    g.network.setLoss(1, { from: old.id, to: node.id })
    g.network.setLoss(1, { from: node.id, to: old.id })
  }
  assert.is(follower.host.leader, old.id)
  const sentAt = g.sim.clock.now()
  const write = clientWrite(g, follower.id, 'old-leader-cut-off')
  assert.ok(await g.runUntil(() => write.reply !== undefined, 5_000), 'answered')
  assert.ok(write.reply!.ok, JSON.stringify(write.reply))
  // The group's election timeout is 100 ms (10 ticks of 10 ms): the survivors elect within
  // a few; a forward's own timeout is 21 of them (2,100 ms), which it must not wait out.
  const heldMs = write.at! - sentAt
  assert.ok(heldMs < 1_000, `held ${heldMs} ms`)
  // The old leader may not have stepped down yet (CheckQuorum takes an election timeout).
  const leader = g.nodes().find(node => node !== old && node.host.role === 'leader')
  assert.ok(leader !== undefined, 'a survivor leads')
  const model = await settle(g, leader.read())
  assert.is(model.machines.size, 1, 'applied once')
  await g.stop()
})

test('a client\'s write to a controller that cannot learn a leader is refused after two election timeouts, not held longer', async () => {
  const g = await group(6)
  const leader = g.leaderNode()!
  const lone = g.nodes().find(node => node !== leader)!
  for (const node of g.nodes()) if (node !== lone) g.crash(g.indexOf(node.id))
  assert.ok(await g.runUntil(() => lone.host.leader === '', 3_000), 'the survivor knows no leader')
  const sentAt = g.sim.clock.now()
  const write = clientWrite(g, lone.id, 'no-quorum')
  assert.ok(await g.runUntil(() => write.reply !== undefined, 5_000), 'answered')
  assert.is(write.reply!.ok, false)
  assert.match(write.reply!.ok ? '' : write.reply!.message, /leader unknown/, JSON.stringify(write.reply))
  // The group's election timeout is 100 ms (10 ticks of 10 ms). At most: a forward to
  // the dead leader, if a message of its still in flight named it (no answer within a
  // forward's timeout of 21 election timeouts), then two election timeouts with none.
  const heldMs = write.at! - sentAt
  assert.ok(heldMs >= 200 && heldMs <= 2_400, `held ${heldMs} ms`)
  await g.stop()
})

test('a follower\'s read whose forwarded read index was lost is asked again and served, not left to its timeout', async () => {
  const g = await group(3)
  const leader = g.leaderNode()!
  const follower = g.nodes().find(node => node !== leader)!
  assert.ok((await settle(g, leader.submit(addMachine('before-read')))).ok)
  // The forwarded read index is lost on the way; the link is back soon after.
  g.network.setLoss(1, { from: follower.id, to: leader.id })
  const started = g.sim.clock.now()
  let servedAt: number | undefined
  let failure: unknown
  follower.host.read().then(() => { servedAt = g.sim.clock.now() }, (error: unknown) => { failure = error })
  await g.runFor(200)
  g.network.setLoss(0, { from: follower.id, to: leader.id })
  assert.ok(await g.runUntil(() => servedAt !== undefined || failure !== undefined, 10_000), 'the read settled')
  assert.is(failure, undefined, `served, not failed: ${String(failure)}`)
  // Asked again after an election timeout; without that the read fails at its own timeout (5 election timeouts).
  assert.ok(servedAt! - started < 500, `served ${servedAt! - started} ms after it started`)
  await g.stop()
})

test('singular workers: one controller at a time; a new leader starts them only after the paused old holder\'s lease ran out', async () => {
  const runs: Array<{ id: string, from: number, to: number | undefined }> = []
  const g = await group(2, {
    singularWorkers: id => {
      const run = { id, from: g.sim.clock.now(), to: undefined as number | undefined }
      runs.push(run)
      return { stop: () => { run.to = g.sim.clock.now() } }
    }
  })
  assert.ok(await g.runUntil(() => runs.length === 1, 2_000), 'the leader started the singular workers')
  const old = g.leaderNode()!
  const oldIndex = g.indexOf(old.id)
  // SIGSTOP the holder: it cannot renew, nor notice anything, until it resumes.
  g.pause(oldIndex)
  const pausedAt = g.sim.clock.now()
  assert.ok(await g.runUntil(() => g.leaderNode() !== undefined && g.leaderNode() !== old, 3_000), 'a new leader was elected')
  const lease = tableGet(g.leaderNode()!.host.state().controllerLeases, singularLease)!
  assert.is(lease.holder, old.id, 'the old lease is still on record')
  assert.ok(await g.runUntil(() => runs.length === 2, leaseDurationMs * 3), 'the new leader started them')
  const second = runs[1]!
  assert.is.not(second.id, old.id)
  assert.ok(second.from >= lease.expiry - limits.controllerLeaseClockDriftMarginMs / 2,
    `started at ${second.from}, before the old lease expired at ${lease.expiry}`)
  assert.ok(second.from - pausedAt < leaseDurationMs * 2, `took ${second.from - pausedAt} ms`)
  // The old holder resumes: its belief ran out while it was stopped, so it stops at once.
  g.resume(oldIndex)
  await g.runFor(1)
  assert.ok(runs[0]!.to !== undefined && runs[0]!.to <= g.sim.clock.now())
  assert.is(g.nodes().filter(node => node.runsSingularWorkers()).length, 1)
  await g.stop()
})

test('membership: an empty server joins through a RaftSnapshot and becomes a voter; a voter is removed', async () => {
  const g = await group(3, { snapshotEveryEntries: 5 })
  for (let n = 0; n < 12; n++) assert.ok((await settle(g, g.leaderNode()!.submit(addMachine(`m${n}`)))).ok)
  const joiner = await g.addController()
  const joinerId = g.ids[joiner]!
  await settle(g, g.leader()!.changeMembership({ type: 'add-voter', node: joinerId }))
  assert.ok(await g.runUntil(() => (g.host(joiner)?.state().machines.size ?? 0) === 12, 3_000), 'the joiner caught up')
  assert.ok(g.host(joiner)!.snapshotsReceived >= 1, 'through a RaftSnapshot')
  assert.equal(g.leader()!.appliedConfig().voters, ['c0', 'c1', 'c2', 'c3'])
  const removed = g.ids.find(id => id !== g.leader()!.id && id !== joinerId)!
  await settle(g, g.leader()!.changeMembership({ type: 'remove-voter', node: removed }))
  assert.not.ok(g.leader()!.appliedConfig().voters.includes(removed))
  // Three voters remain; the group still commits with the removed server gone.
  g.crash(g.indexOf(removed))
  assert.ok((await settle(g, g.leaderNode()!.submit(addMachine('after')))).ok)
  await g.stop()
})

test('a controller restarted after a crash, with the write-stage trace on, applies its log and keeps running', async () => {
  // The failover bench restarts a killed controller with CANTRIP_WRITE_TRACE set: its Raft
  // host applied committed entries before ModelReplica.start returned, and the machine
  // watches' stage record read the model through the replica not yet made ("reading host").
  const stages: string[] = []
  const g = await group(5, { hostOptions: () => ({ onStage: stage => { stages.push(stage) } }) })
  const leader = g.leaderNode()!
  for (const id of ['m-a', 'm-b', 'm-c']) assert.ok((await settle(g, leader.submit(addMachine(id)))).ok)
  const follower = g.nodes().findIndex(node => node !== leader)
  await g.runFor(500)
  g.crash(follower)
  const restarted = await g.restart(follower)
  await g.runFor(2_000)
  assert.not.ok(restarted.stopped, 'the restarted controller is still running')
  assert.is(restarted.host.state().machines.size, 3, 'and has applied every committed command')
  assert.ok(stages.includes('watch-applied'))
  await g.stop()
})

test.run()
