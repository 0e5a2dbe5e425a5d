/**
 * Three controllers on real LevelDB (classic-level, synced writes) in temp directories,
 * in real time: the SimNetwork's clock is driven by the wall clock, so the network is
 * the only simulated part. Commands go in through a follower (forwarded to the leader),
 * a follower reads linearizably, logs are compacted behind RaftSnapshots on disk, the
 * whole group stops and comes back from disk with the same model, and a controller that
 * was down while the others compacted catches up from a RaftSnapshot.
 */
import '../runtime/polyfill.ts'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { ModelReplica } from '../actors/controller/model-replica.ts'
import { LevelStorage } from '../agent/level-storage.ts'
import type { ModelCommand } from '../runtime/model/model-types.ts'
import { SeededRandom } from '../runtime/random.ts'
import { SimClock } from '../sim/sim-clock.ts'
import { SimNetwork } from '../sim/sim-network.ts'

const ids = ['c0', 'c1', 'c2']
const admin = { kind: 'user', name: 'admin' } as const
/**
 * Every wait in this test is bounded by this: generous, since it runs on the wall clock
 * and a busy machine (load 20+) stalls it for seconds; each wait ends on its event.
 */
const waitMsMax = 120_000

interface Seat { dir: string, storage: LevelStorage | undefined, node: ModelReplica | undefined }

async function waitFor (what: string, condition: () => boolean): Promise<void> {
  const until = performance.now() + waitMsMax
  while (!condition()) {
    if (performance.now() > until) throw new Error(`controller leveldb test: timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 5))
  }
}

function addMachine (n: number): ModelCommand {
  return { type: 'add-machine', requestId: `machine-${n}`, proposer: admin }
}

test('controllers on LevelDB: forwarding, follower reads, compaction on disk, restart from disk, catch-up by RaftSnapshot', async () => {
  const root = mkdtempSync(join(tmpdir(), 'cantrip-controllers-'))
  const clock = new SimClock()
  const started = performance.now()
  // The simulated clock follows the wall clock, so hosts, network and disk share real time.
  const driver = setInterval(() => { clock.advanceTo(Math.max(clock.now(), performance.now() - started)) }, 2)
  const network = new SimNetwork({ clock, random: new SeededRandom(7), latency: { kind: 'uniform', minMs: 0, maxMs: 2 } })
  const seats: Seat[] = ids.map(id => ({ dir: join(root, id), storage: undefined, node: undefined }))
  const start = async (i: number): Promise<ModelReplica> => {
    const seat = seats[i]!
    seat.storage = await LevelStorage.open(seat.dir)
    seat.node = await ModelReplica.start({
      id: ids[i]!,
      peers: ids,
      storage: seat.storage,
      transport: network.transport(ids[i]!),
      clock,
      random: new SeededRandom(100 + i),
      // The timing the shipped controllers use (agent/roles/hosted-model.ts). With 20 ms
      // ticks (200 ms elections) a loaded machine's scheduling stalls alone deposed
      // leaders, and a submit's limits.controllerSubmitAttemptsMax tries, one election
      // timeout apart, ran out with the leader unknown.
      tickMs: 100,
      electionTicks: 6,
      heartbeatTicks: 1,
      snapshotEveryEntries: 10,
      leaseDurationMs: 3_000
    })
    return seat.node
  }
  const stop = async (i: number): Promise<void> => {
    const seat = seats[i]!
    await seat.node?.stop()
    network.crash(ids[i]!)
    await seat.storage?.close()
    seat.node = undefined
    seat.storage = undefined
  }
  const leader = (): ModelReplica | undefined => seats.map(s => s.node).find(n => n !== undefined && n.host.role === 'leader')
  const follower = (): ModelReplica => seats.map(s => s.node).find(n => n !== undefined && n.host.role !== 'leader')!
  try {
    for (let i = 0; i < ids.length; i++) await start(i)
    await waitFor('a leader', () => leader() !== undefined)

    // Through a follower: forwarded to the leader, each applied once.
    const via = follower()
    for (let n = 0; n < 25; n++) {
      const result = await via.submit(addMachine(n))
      assert.ok(result.ok, `machine ${n}: ${JSON.stringify(result)}`)
    }
    const again = await via.submit(addMachine(3))
    assert.ok(again.ok)
    const read = await follower().read()
    assert.is(read.machines.size, 25, 'a retried request id applied once; a follower read sees every acknowledged write')

    // Compacted on disk: the RaftSnapshot moved past the first 10 entries everywhere.
    await waitFor('compaction on every controller', () => seats.every(s => (s.node?.host.snapshotIndex ?? 0) >= 20))
    const revision = leader()!.host.state().revision

    // The whole group stops and comes back from its directories.
    for (let i = 0; i < ids.length; i++) await stop(i)
    for (let i = 0; i < ids.length; i++) await start(i)
    await waitFor('a leader after restart', () => leader() !== undefined)
    const reread = await seats[0]!.node!.read()
    assert.ok(reread.revision >= revision, `restarted at revision ${reread.revision}, was ${revision}`)
    assert.is(reread.machines.size, 25)
    for (const seat of seats) assert.ok(seat.node!.host.persistedLog().firstIndex() > 10, 'the log on disk starts after the RaftSnapshot')

    // c2 misses 15 commands and two compactions; it comes back through a RaftSnapshot.
    await stop(2)
    await waitFor('a leader without c2', () => leader() !== undefined && leader()!.id !== 'c2')
    for (let n = 25; n < 40; n++) assert.ok((await leader()!.submit(addMachine(n))).ok)
    await start(2)
    const target = leader()!.host.state().revision
    await waitFor('c2 to catch up', () => (seats[2]!.node?.host.state().revision ?? 0) >= target)
    assert.ok(seats[2]!.node!.host.snapshotsReceived >= 1, 'c2 was sent a RaftSnapshot')
    assert.is(seats[2]!.node!.host.state().machines.size, 40)
    await waitFor('singular workers on one controller', () => seats.filter(s => s.node?.runsSingularWorkers() === true).length === 1)
  } finally {
    for (let i = 0; i < ids.length; i++) await stop(i)
    clearInterval(driver)
    rmSync(root, { recursive: true, force: true })
  }
})

test.run()
