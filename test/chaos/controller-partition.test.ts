/**
 * Chaos, issue 12 item 3 (the controllers' part): three real cantripd controllers, each in
 * a network namespace the test creates (support/netns-net.ts), under a write load. The
 * leader's link to the others is taken down: the cut-off minority acknowledges none of
 * the writes sent straight to it, the majority elects a new leader within 2 s and goes on
 * acknowledging, and within 5 s of the link coming back every controller holds every
 * acknowledged write. Namespaces and links are deleted whatever happens.
 */
import '../../runtime/polyfill.ts'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { CantripdCluster, waitFor, type Agent } from '../support/cantripd-cluster.ts'
import { chaosCount, reportFigures } from './support/chaos-scale.ts'
import { connectAll, firstLeaderAfter, machinesAt, percentile, proposeTo, readBack, timingBoundMs, waitUntil, watchRoles, WriteLoad, type RoleReport } from './support/controller-chaos.ts'
import { NetnsNet } from './support/netns-net.ts'

const electionMsMax = 2_000
const convergeMsMax = 5_000
/** Writes sent straight to the cut-off controller in each trial. */
const minorityWrites = 10

interface TrialFigures { electionMs: number, convergeMs: number, minorityAcked: number, lost: number }

async function partitionTrial (trial: number): Promise<TrialFigures> {
  const net = new NetnsNet(3)
  const cluster = new CantripdCluster()
  const reports = new Map<Agent, RoleReport[]>()
  let loadToStop: WriteLoad | undefined
  try {
    net.create()
    const index = (agent: Agent): number => cluster.controllers.indexOf(agent)
    cluster.hostOf = agent => net.address(index(agent))
    cluster.launcher = agent => net.launcher(index(agent))
    await cluster.prepare(3, 0)
    for (const c of cluster.controllers) {
      cluster.start(c)
      watchRoles(c, reports)
    }
    await cluster.connectClient()
    await connectAll(cluster)
    await waitFor('a leader', () => cluster.leader() !== undefined)
    const load = loadToStop = new WriteLoad(cluster, `partition-${trial}`, 100_000, 4)
    await waitUntil('writes acknowledged', 60_000, () => load.acknowledged.length >= 10)

    const minority = cluster.leader()!
    const term = minority.term
    const majority = cluster.controllers.filter(c => c !== minority)
    net.cut(index(minority))
    const cutAt = performance.now()
    // Straight to the cut-off controller, which the test still reaches: none may be acknowledged.
    const minorityReplies = Promise.all(Array.from({ length: minorityWrites }, async (_, i) =>
      await proposeTo(cluster, minority, { type: 'add-machine' }, `partition-${trial}-minority-${i}`, 5_000)))
    await waitUntil('a leader on the majority side', 30_000, () => firstLeaderAfter(reports, majority, term, cutAt) !== undefined)
    const electionMs = firstLeaderAfter(reports, majority, term, cutAt)!.at - cutAt
    const ackedAtElection = load.acknowledged.length
    await waitUntil('the majority acknowledging writes', 30_000, () => load.acknowledged.length >= ackedAtElection + 10)
    const minorityAcked = (await minorityReplies).filter(result => result?.ok === true).length

    net.heal(index(minority))
    const healedAt = performance.now()
    const ackedAtHeal = load.acknowledged.map(w => w.machine!)
    await waitUntil('every controller to hold every write acknowledged before the heal', 30_000, async () => {
      const held = await Promise.all(cluster.controllers.map(async c => await machinesAt(cluster, c)))
      return held.every(machines => machines !== undefined && ackedAtHeal.every(id => machines.includes(id)))
    })
    const convergeMs = performance.now() - healedAt
    await load.stop()
    const back = await readBack(cluster, load.writes)
    return { electionMs, convergeMs, minorityAcked, lost: back.lost.length }
  } finally {
    await loadToStop?.stop()
    await cluster.close()
    net.destroy()
  }
}

test('a partition cuts the leader off: it acknowledges nothing, the majority elects within 2 s, all converge within 5 s of the heal', async () => {
  const trials = chaosCount(20, 1)
  const figures: TrialFigures[] = []
  for (let trial = 0; trial < trials; trial++) figures.push(await partitionTrial(trial))
  const elections = figures.map(f => f.electionMs)
  const converge = figures.map(f => f.convergeMs)
  reportFigures('controller-partition', {
    trials,
    minorityWrites: trials * minorityWrites,
    minorityAcked: figures.reduce((sum, f) => sum + f.minorityAcked, 0),
    lost: figures.reduce((sum, f) => sum + f.lost, 0),
    electionP50Ms: Math.round(percentile(elections, 50)),
    electionMaxMs: Math.round(Math.max(...elections)),
    convergeP50Ms: Math.round(percentile(converge, 50)),
    convergeMaxMs: Math.round(Math.max(...converge))
  })
  assert.is(figures.reduce((sum, f) => sum + f.minorityAcked, 0), 0, 'writes the cut-off controller acknowledged')
  assert.is(figures.reduce((sum, f) => sum + f.lost, 0), 0, 'acknowledged writes lost')
  assert.ok(Math.max(...elections) <= timingBoundMs(electionMsMax), `majority elected after ${Math.round(Math.max(...elections))} ms, expected at most ${timingBoundMs(electionMsMax)} ms`)
  assert.ok(Math.max(...converge) <= timingBoundMs(convergeMsMax), `converged ${Math.round(Math.max(...converge))} ms after the heal, expected at most ${timingBoundMs(convergeMsMax)} ms`)
})

test.run()
