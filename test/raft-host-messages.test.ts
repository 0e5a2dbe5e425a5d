/**
 * What one sequential write costs on the wire between three controllers (issue 28):
 * Raft needs the leader's append and its commit index to each follower, and each
 * follower's acknowledgement of both, and here every request carries its answer back
 * (runtime/raft/held-answers.ts). So per write the leader sends four requests, each
 * follower answers two and sends none of its own, and the leader answers none (etcd's
 * raft sends the same four messages and four responses: raft.go bcastAppend after
 * maybeCommit, and a MsgAppResp to every MsgApp). Counted in the simulator on its
 * transport counters, with a network hop of 1 ms and a synced write of 2 to 6 ms on each
 * controller, so the count does not depend on how busy the machine is. Which of the
 * answers are empty is test/held-answers.test.ts's part.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { Clock } from '../runtime/clock.ts'
import type { ModelCommand } from '../runtime/model/model-types.ts'
import type { NodeId } from '../runtime/raft/raft-types.ts'
import type { StorageOperation, WriteOptions } from '../runtime/storage.ts'
import { SimControllerGroup } from '../sim/sim-controller-group.ts'
import { Simulation } from '../sim/simulation.ts'
import { SimStorageWrapper } from './support/sim-storage-wrapper.ts'

const admin = { kind: 'user', name: 'admin' } as const
/** Each controller's synced write: unequal, as disks under load are, so one follower is the slower. */
const syncMsById: Record<string, number> = { c0: 2, c1: 3, c2: 6 }
const writes = 60
/** cantripd's Raft timing: a 100 ms heartbeat, a 600 ms election timeout. */
const timing = { tickMs: 100, heartbeatTicks: 1, electionTicks: 6 }

/**
 * SimStorage whose synced writes take `syncMs` of simulated time, as an fsync does, once
 * `delaying` (the group's start-up runs no clock yet).
 */
class SyncDelayStorage extends SimStorageWrapper {
  static delaying = false
  readonly #clock: Clock
  readonly #syncMs: number
  constructor (clock: Clock, syncMs: number) { super(); this.#clock = clock; this.#syncMs = syncMs }
  override async batch (operations: readonly StorageOperation[], options: WriteOptions): Promise<void> {
    if (options.sync && SyncDelayStorage.delaying) await new Promise<void>(resolve => { this.#clock.setTimeout(resolve, this.#syncMs) })
    await this.inner.batch(operations, options)
  }
}

test('a sequential write costs the leader four requests and each follower two answers, none empty', async () => {
  const sim = new Simulation({ seed: 7 })
  const g = await SimControllerGroup.create(sim, {
    size: 3,
    ...timing,
    latency: { kind: 'fixed', ms: 1 },
    hostOptions: id => ({ storage: new SyncDelayStorage(sim.clock, syncMsById[id] ?? 2) })
  })
  assert.ok(await g.runUntil(() => g.leader() !== undefined, 5_000), 'a leader')
  SyncDelayStorage.delaying = true
  const leader = g.leader()!
  const propose = async (requestId: string): Promise<void> => {
    const outcome = { ok: false }
    leader.propose({ type: 'add-machine', requestId, proposer: admin } satisfies ModelCommand).then(result => { outcome.ok = result.ok })
    assert.ok(await g.runUntil(() => outcome.ok, 1_000, 1), `write ${requestId} applied`)
  }
  await propose('warm-up')
  const counters = (id: NodeId): { sent: number, served: number } => {
    const { requestsSent, requestsServed } = g.network.transport(id).counters()
    return { sent: requestsSent, served: requestsServed }
  }
  const followers = g.ids.filter(id => id !== leader.id)
  const before = new Map(g.ids.map(id => [id, counters(id)]))
  const startedAt = sim.clock.now()
  for (let i = 0; i < writes; i++) await propose(`w${i}`)
  const elapsedMs = sim.clock.now() - startedAt
  // Heartbeats go on in the background: one request per follower and its answer per round.
  const heartbeatRounds = Math.ceil(elapsedMs / (timing.tickMs * timing.heartbeatTicks)) + 1
  const per = (id: NodeId, key: 'sent' | 'served'): number => counters(id)[key] - before.get(id)![key]
  const leaderSent = per(leader.id, 'sent')
  if (process.env['CANTRIP_TEST_VERBOSE'] !== undefined) console.log(JSON.stringify({ writes, heartbeatRounds, leader: { sent: leaderSent, served: per(leader.id, 'served') }, followers: followers.map(id => ({ sent: per(id, 'sent'), served: per(id, 'served') })) }))
  assert.ok(leaderSent <= 4 * writes + 2 * heartbeatRounds, `leader requests: ${leaderSent} for ${writes} writes (${heartbeatRounds} heartbeat rounds)`)
  assert.ok(leaderSent >= 4 * writes, `the leader sent its appends and commit indexes: ${leaderSent}`)
  for (const id of followers) {
    const sent = per(id, 'sent')
    const served = per(id, 'served')
    assert.ok(sent <= 1, `follower ${id} sent ${sent} requests of its own; its messages ride on answers`)
    assert.ok(served >= 2 * writes && served <= 2 * writes + heartbeatRounds, `follower ${id} answered ${served} requests for ${writes} writes`)
  }
  // Each of the leader's requests is answered once: with one held answer, the commit index
  // arriving while the append was being synced had the first answered empty.
  assert.ok(per(leader.id, 'served') <= 1, `the leader answered ${per(leader.id, 'served')} follower requests`)
  // A graceful stop waits for the write in hand and then writes the commit index synced;
  // nothing runs the simulated clock then, so let the writes in flight finish first.
  SyncDelayStorage.delaying = false
  await g.runFor(100)
  await g.stop()
})

test.run()
