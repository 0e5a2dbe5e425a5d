/**
 * Chaos, issue 12 item 3 (the controllers' part): three real cantripd controllers, each in
 * a network namespace the test creates (support/netns-net.ts), under a write load. The
 * leader's link to the others is taken down: the cut-off minority acknowledges none of
 * the writes sent straight to it, the majority elects a new leader within 2 s and goes on
 * acknowledging, and within 5 s of the link coming back every controller holds every
 * acknowledged write. Then a machine agent with a unit is cut off: its workload keeps
 * running, and the controllers show the unit's agent `lost` until the link is back.
 * Namespaces and links are deleted whatever happens.
 */
import '../../runtime/polyfill.ts'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { CantripdCluster, freePortRun, waitFor, type Agent } from '../support/cantripd-cluster.ts'
import { processAlive } from '../support/processes.ts'
import { chaosCount, reportFigures } from './support/chaos-scale.ts'
import { connectAll, firstLeaderAfter, machinesAt, percentile, proposeTo, readBack, type RoleReport, startWatched, timingBoundMs, waitUntil, WriteLoad } from './support/controller-chaos.ts'
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
    await startWatched(cluster, reports)
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

/** Pids of the workloads the charms of `dataDir`'s units started (their pid files). */
function workloadPids (dataDir: string): number[] {
  const agents = join(dataDir, 'agents')
  if (!existsSync(agents)) return []
  return readdirSync(agents).flatMap(unit => {
    const state = join(agents, unit, 'state')
    if (!existsSync(state)) return []
    return readdirSync(state).filter(name => name.endsWith('.pid')).map(name => Number(readFileSync(join(state, name), 'utf8').trim()))
  }).filter(pid => Number.isSafeInteger(pid) && pid > 1)
}

test('a machine agent cut off with its unit: the workload keeps running, the controllers show the unit lost, then back after the heal', async () => {
  const net = new NetnsNet(4)
  const cluster = new CantripdCluster()
  cluster.extraArgs = ['--presence-ms', '200,1000,1000']
  try {
    net.create()
    const index = (agent: Agent): number => [...cluster.controllers, ...cluster.machines].indexOf(agent)
    cluster.hostOf = agent => net.address(index(agent))
    cluster.launcher = agent => net.launcher(index(agent))
    await cluster.prepare(3, 1)
    for (const c of cluster.controllers) cluster.start(c)
    await cluster.connectClient()
    await connectAll(cluster)
    await waitFor('a leader', () => cluster.leader() !== undefined)
    const charm = await cluster.addCharm(cluster.controllers[0]!, resolve('examples/charms/kv'), 'local:kv-0')
    assert.ok(charm.added?.ok, JSON.stringify(charm.added))
    assert.ok((await cluster.submit({ type: 'add-machine' }))?.ok)
    assert.ok((await cluster.submit({ type: 'deploy', application: 'kv', charm: 'local:kv-0', config: { 'port-base': await freePortRun(1) }, constraints: {}, numUnits: 1, placement: ['0'] }))?.ok)
    const machine = cluster.machines[0]!
    cluster.start(machine)
    let last: unknown
    const describe = (): string => JSON.stringify(last) + '\n' + machine.output.slice(-1_500)
    const unitAgent = async (): Promise<string | undefined> => {
      const summary = await cluster.summary(cluster.leader() ?? cluster.controllers[0]!)
      last = summary
      return summary?.ok === true && summary.units['kv/0']?.workload === 'active' ? summary.units['kv/0'].agent : undefined
    }
    await waitFor('kv/0 active and idle', async () => await unitAgent() === 'idle', describe)
    const pids = workloadPids(machine.dir)
    assert.ok(pids.length > 0 && pids.every(processAlive), `kv/0's workload runs: pids ${pids.join(', ')}`)

    net.cut(index(machine))
    const cutAt = performance.now()
    await waitFor('kv/0 shown lost by the controllers', async () => await unitAgent() === 'lost', describe)
    const lostMs = performance.now() - cutAt
    // Cut off, the unit's workload goes on as it was.
    assert.ok(pids.every(processAlive), 'the cut-off unit\'s workload still runs')
    net.heal(index(machine))
    const healedAt = performance.now()
    await waitFor('kv/0 back from lost', async () => await unitAgent() === 'idle', describe)
    reportFigures('controller-partition unit', { lostAfterMs: Math.round(lostMs), backAfterHealMs: Math.round(performance.now() - healedAt), workloads: pids.length })
    assert.ok(pids.every(processAlive), 'the workload runs after the heal')
  } finally {
    await cluster.close()
    net.destroy()
  }
})

test.run()
