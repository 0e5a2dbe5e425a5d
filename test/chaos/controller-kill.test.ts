/**
 * Chaos, issue 12 item 1: kill -9 of the Raft leader among real cantripd controller
 * processes (loopback, LevelDB) while a client writes through the real propose protocol.
 * Each trial writes up to 1,000 commands, kills the leader at a random point, brings it
 * back from its directory and reads everything back from every controller: no
 * acknowledged write may be missing, none may apply twice, and a new leader must be
 * elected (and serving) soon after the kill. Then every controller at once: kill -9 of
 * all, restart, and again nothing acknowledged is lost.
 */
import '../../runtime/polyfill.ts'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { SeededRandom } from '../../runtime/random.ts'
import { CantripdCluster, waitFor, type Agent } from '../support/cantripd-cluster.ts'
import { chaosCount, chaosFull, reportFigures } from './support/chaos-scale.ts'
import { firstLeaderAfter, killNine, percentile, readBack, type RoleReport, startWatched, timingBoundMs, waitUntil, watchRoles, WriteLoad } from './support/controller-chaos.ts'

const writesPerTrial = chaosCount(1_000, 60)
/** A write takes well under this on an idle machine; a loaded one gets the same bound per write. */
const writeMsBound = 500
/** The promise: a new leader within this long of kill -9, at the 99th percentile. */
const electionP99MsMax = 2_000
/**
 * The sample's seed is pinned: 75574 puts the 5-controller kill after the sample's load has
 * issued all 60 writes, the case that once left no write to start after the kill (fixed by
 * `WriteLoad.probe`). The full run draws a new seed each time and prints it.
 */
const sampleSeed = 75574
const seed = Number(process.env['CANTRIP_CHAOS_SEED'] ?? (chaosFull ? Date.now() % 1_000_000 : sampleSeed))

interface TrialFigures { electionMs: number, servingMs: number, lost: number, duplicates: number, acked: number }

async function startCluster (controllers: number, reports: Map<Agent, RoleReport[]>): Promise<CantripdCluster> {
  const cluster = new CantripdCluster()
  try {
    await cluster.prepare(controllers, 0)
    await startWatched(cluster, reports)
  } catch (error) {
    // The callers' finally blocks close only a cluster they were handed: one that failed to
    // start (a wait for the client to connect timed out on a busy machine) would otherwise
    // keep its controller processes, their stdio pipes and the client's libp2p node alive,
    // and the test process with them until the runner killed it.
    await cluster.close()
    throw error
  }
  return cluster
}

async function killLeaderTrial (controllers: number, trial: number, random: SeededRandom): Promise<TrialFigures> {
  const reports = new Map<Agent, RoleReport[]>()
  const cluster = await startCluster(controllers, reports)
  let loadToStop: WriteLoad | undefined
  try {
    const killAt = random.int(Math.ceil(writesPerTrial * 0.1), Math.floor(writesPerTrial * 0.9))
    const load = loadToStop = new WriteLoad(cluster, `kill-${controllers}-${trial}`, writesPerTrial)
    await waitUntil(`${killAt} writes acknowledged`, 60_000 + killAt * writeMsBound, () => load.acknowledged.length >= killAt)
    const leader = cluster.leader()!
    const term = leader.term
    const killedAt = performance.now()
    await killNine(leader)
    // The load may have issued all of its writes by a late kill point; this one is started after it whatever happens.
    const probe = load.probe()
    const survivors = cluster.controllers.filter(c => c !== leader)
    await waitUntil('a new leader', 30_000, () => firstLeaderAfter(reports, survivors, term, killedAt) !== undefined)
    const electionMs = firstLeaderAfter(reports, survivors, term, killedAt)!.at - killedAt
    await waitUntil('a write started after the kill acknowledged', 30_000, () => load.writes.some(w => w.startedAt >= killedAt && w.ackedAt !== undefined))
    const servingMs = Math.min(...load.writes.filter(w => w.startedAt >= killedAt && w.ackedAt !== undefined).map(w => w.ackedAt!)) - killedAt
    await Promise.all([load.done(), probe])
    cluster.start(leader)
    watchRoles(leader, reports)
    const back = await readBack(cluster, load.writes)
    return { electionMs, servingMs, lost: back.lost.length, duplicates: Math.max(0, back.machines - back.issued), acked: load.acknowledged.length }
  } finally {
    await loadToStop?.stop()
    await cluster.close()
  }
}

for (const controllers of [3, 5]) {
  test(`kill -9 of the leader of ${controllers} controllers during acknowledged writes: none lost, a new leader soon`, async () => {
    const random = new SeededRandom(seed + controllers)
    const trials = chaosCount(100, 1)
    const figures: TrialFigures[] = []
    for (let trial = 0; trial < trials; trial++) figures.push(await killLeaderTrial(controllers, trial, random))
    const elections = figures.map(f => f.electionMs)
    const serving = figures.map(f => f.servingMs)
    const lost = figures.reduce((sum, f) => sum + f.lost, 0)
    const duplicates = figures.reduce((sum, f) => sum + f.duplicates, 0)
    reportFigures(`controller-kill ${controllers} controllers`, {
      seed,
      trials,
      writesPerTrial,
      acknowledged: figures.reduce((sum, f) => sum + f.acked, 0),
      lost,
      duplicates,
      electionP50Ms: Math.round(percentile(elections, 50)),
      electionP99Ms: Math.round(percentile(elections, 99)),
      servingP50Ms: Math.round(percentile(serving, 50)),
      servingP99Ms: Math.round(percentile(serving, 99))
    })
    assert.is(lost, 0, 'acknowledged writes lost')
    assert.is(duplicates, 0, 'writes applied twice')
    assert.ok(percentile(elections, 99) <= timingBoundMs(electionP99MsMax), `new leader p99 ${Math.round(percentile(elections, 99))} ms, expected at most ${timingBoundMs(electionP99MsMax)} ms`)
  })
}

test('kill -9 of every controller at once, then restart: no acknowledged write lost', async () => {
  const random = new SeededRandom(seed)
  const trials = chaosCount(20, 1)
  let lost = 0
  let acked = 0
  let duplicates = 0
  for (let trial = 0; trial < trials; trial++) {
    const reports = new Map<Agent, RoleReport[]>()
    const cluster = await startCluster(3, reports)
    let loadToStop: WriteLoad | undefined
    try {
      const killAt = random.int(Math.ceil(writesPerTrial * 0.1), Math.floor(writesPerTrial * 0.9))
      const load = loadToStop = new WriteLoad(cluster, `all-${trial}`, writesPerTrial)
      await waitUntil(`${killAt} writes acknowledged`, 60_000 + killAt * writeMsBound, () => load.acknowledged.length >= killAt)
      // As close to at once as signals go: no controller gets to react to another's death.
      const all = [...cluster.controllers]
      await Promise.all(all.map(async c => { await killNine(c) }))
      await load.stop()
      for (const c of all) {
        cluster.start(c)
        watchRoles(c, reports)
      }
      await waitFor('a leader after the restart', () => cluster.leader() !== undefined)
      const back = await readBack(cluster, load.writes)
      lost += back.lost.length
      acked += load.acknowledged.length
      duplicates += Math.max(0, back.machines - back.issued)
    } finally {
      await loadToStop?.stop()
      await cluster.close()
    }
  }
  reportFigures('controller-kill all at once', { seed, trials, acknowledged: acked, lost, duplicates })
  assert.is(lost, 0, 'acknowledged writes lost')
  assert.is(duplicates, 0, 'writes applied twice')
})

test.run()
