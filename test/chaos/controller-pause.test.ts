/**
 * Chaos, issue 12 item 2: SIGSTOP of the Raft leader among three real cantripd
 * controllers for longer than the election timeout, then SIGCONT. While it is stopped a
 * client keeps writing through the group, sends writes to the stopped leader itself, and
 * keeps reading from every controller (the stopped one too: those reads are answered
 * after SIGCONT). Checked: no read misses a write acknowledged before the read was sent
 * (0 stale reads); the old leader steps down; a write sent to it while stopped is
 * acknowledged only if it committed (after SIGCONT a follower forwards a client's write to
 * the new leader, so some are; one the old leader proposed in its own term never commits
 * and is refused): each acknowledged one is read back from every controller, and each of
 * them, sent again with its request id, applies exactly once with the same answer.
 */
import '../../runtime/polyfill.ts'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { controllerApiProtocol, type SummaryReply } from '../../actors/controller/controller-api.ts'
import { decode, encode } from '../../runtime/codec.ts'
import { CantripdCluster, type Agent } from '../support/cantripd-cluster.ts'
import { chaosCount, reportFigures } from './support/chaos-scale.ts'
import { firstLeaderAfter, percentile, proposeTo, readBack, type RoleReport, startWatched, waitUntil, type Write, WriteLoad } from './support/controller-chaos.ts'

/** Longer than the controllers' election timeout (6 ticks of 100 ms, randomised up to twice that). */
const pauseMs = 3_000
/** A read sent to the stopped leader waits this long: it is answered after SIGCONT. */
const readTimeoutMs = 20_000
/** Writes sent to the stopped leader in each trial. */
const pendingWrites = 10

interface Read { target: Agent, calledAt: number, ackedBefore: string[], machines?: string[] }

async function summaryOf (cluster: CantripdCluster, agent: Agent): Promise<string[] | undefined> {
  try {
    const reply = decode(await cluster.client!.request(agent.id, controllerApiProtocol, encode({ op: 'model-summary' }, 'chaos'), { timeoutMs: readTimeoutMs }), 'chaos') as SummaryReply
    return reply.ok ? reply.machines : undefined
  } catch {
    return undefined
  }
}

/** Reads from `agent` and records what was acknowledged before the read was sent. */
async function readFrom (cluster: CantripdCluster, agent: Agent, load: WriteLoad, reads: Read[]): Promise<void> {
  const read: Read = { target: agent, calledAt: performance.now(), ackedBefore: load.acknowledged.map(w => w.machine!) }
  reads.push(read)
  const machines = await summaryOf(cluster, agent)
  if (machines !== undefined) read.machines = machines
}

interface TrialFigures { electionMs: number, stepDownMs: number, staleReads: number, reads: number, answeredByOld: number, pendingAckedByOld: number, lost: number, duplicates: number, mismatched: number }

async function pauseTrial (trial: number): Promise<TrialFigures> {
  const reports = new Map<Agent, RoleReport[]>()
  const cluster = new CantripdCluster()
  let paused: Agent | undefined
  let loadToStop: WriteLoad | undefined
  let reading = true
  try {
    await cluster.prepare(3, 0)
    await startWatched(cluster, reports)
    const load = loadToStop = new WriteLoad(cluster, `pause-${trial}`, 100_000, 4)
    const reads: Read[] = []
    const reader = (async () => {
      while (reading) {
        await Promise.all(cluster.controllers.filter(c => c.process !== undefined).map(async c => { await readFrom(cluster, c, load, reads) }))
      }
    })()
    await waitUntil('10 writes acknowledged', 60_000, () => load.acknowledged.length >= 10)

    const leader = paused = cluster.leader()!
    const term = leader.term
    leader.process!.kill('SIGSTOP')
    const stoppedAt = performance.now()
    // Writes and reads sent to the stopped leader: queued in its sockets until SIGCONT.
    const pending = Array.from({ length: pendingWrites }, (_, i) => `pause-${trial}-pending-${i}`)
    const pendingReplies = pending.map(async id => await proposeTo(cluster, leader, { type: 'add-machine' }, id, readTimeoutMs))
    const oldReads = Array.from({ length: 5 }, async () => { await readFrom(cluster, leader, load, reads) })
    const others = cluster.controllers.filter(c => c !== leader)
    await waitUntil('a new leader while the old one is stopped', 30_000, () => firstLeaderAfter(reports, others, term, stoppedAt) !== undefined)
    const electionMs = firstLeaderAfter(reports, others, term, stoppedAt)!.at - stoppedAt
    const ackedAtElection = load.acknowledged.length
    await waitUntil('writes acknowledged by the new leader', 30_000, () => load.acknowledged.length >= ackedAtElection + 5)
    await new Promise(resolve => setTimeout(resolve, Math.max(0, stoppedAt + pauseMs - performance.now())))

    leader.process!.kill('SIGCONT')
    const resumedAt = performance.now()
    paused = undefined
    await waitUntil('the old leader to step down', 30_000, () => (reports.get(leader) ?? []).some(r => r.at >= resumedAt && r.role !== 'leader' && r.term > term))
    const stepDownMs = (reports.get(leader) ?? []).find(r => r.at >= resumedAt && r.role !== 'leader' && r.term > term)!.at - resumedAt
    await Promise.all(oldReads)
    const replies = await Promise.all(pendingReplies)
    // Reads after the resume, from every controller, the old leader among them.
    for (let round = 0; round < 3; round++) await Promise.all(cluster.controllers.map(async c => { await readFrom(cluster, c, load, reads) }))
    reading = false
    await reader
    await load.stop()

    // Sent again through the group with the same request ids: each applies once, and one the old leader acknowledged keeps its answer.
    let mismatched = 0
    for (const [i, id] of pending.entries()) {
      const again = await cluster.submit({ type: 'add-machine' }, id)
      if (again?.ok !== true) mismatched++
      else if (replies[i]?.ok === true && replies[i]!.machines?.[0] !== again.machines?.[0]) mismatched++
    }
    // What the old leader acknowledged must be committed: read back like the load's writes.
    const ackedPending: Write[] = pending.flatMap((requestId, i) => {
      const machine = replies[i]?.ok === true ? replies[i]!.machines?.[0] : undefined
      return machine === undefined ? [] : [{ requestId, startedAt: stoppedAt, machine }]
    })
    const back = await readBack(cluster, [...load.writes, ...ackedPending])
    const stale = reads.filter(r => r.machines !== undefined && !r.ackedBefore.every(id => r.machines!.includes(id)))
    for (const r of stale.slice(0, 3)) process.stdout.write(`  stale read from ${r.target.id.slice(-6)} sent at ${Math.round(r.calledAt - stoppedAt)} ms after SIGSTOP: ${r.ackedBefore.filter(id => !r.machines!.includes(id)).length} acknowledged machines missing\n`)
    return {
      electionMs,
      stepDownMs,
      staleReads: stale.length,
      reads: reads.filter(r => r.machines !== undefined).length,
      answeredByOld: reads.filter(r => r.target === leader && r.calledAt >= stoppedAt && r.calledAt < resumedAt && r.machines !== undefined).length,
      pendingAckedByOld: replies.filter(r => r?.ok === true).length,
      lost: back.lost.length,
      // Every request id (the load's and the pending ones) applied once: exactly that many machines.
      duplicates: Math.max(0, back.machines - load.writes.length - pending.length),
      mismatched
    }
  } finally {
    reading = false
    await loadToStop?.stop()
    // A stopped process cannot act on SIGTERM: let it go on first.
    paused?.process?.kill('SIGCONT')
    await cluster.close()
  }
}

test('SIGSTOP of the leader past the election timeout, then SIGCONT: no stale read, the old leader steps down and acknowledges nothing it held', async () => {
  const trials = chaosCount(50, 1)
  const figures: TrialFigures[] = []
  for (let trial = 0; trial < trials; trial++) figures.push(await pauseTrial(trial))
  const sum = (key: keyof TrialFigures): number => figures.reduce((total, f) => total + f[key], 0)
  reportFigures('controller-pause', {
    trials,
    reads: sum('reads'),
    readsOfStoppedLeaderAnswered: sum('answeredByOld'),
    staleReads: sum('staleReads'),
    pendingWrites: trials * pendingWrites,
    pendingAckedByOld: sum('pendingAckedByOld'),
    lost: sum('lost'),
    duplicates: sum('duplicates'),
    mismatched: sum('mismatched'),
    electionP50Ms: Math.round(percentile(figures.map(f => f.electionMs), 50)),
    electionP99Ms: Math.round(percentile(figures.map(f => f.electionMs), 99)),
    stepDownP99Ms: Math.round(percentile(figures.map(f => f.stepDownMs), 99))
  })
  assert.is(sum('staleReads'), 0, 'stale reads')
  assert.is(sum('lost'), 0, 'acknowledged writes lost')
  assert.is(sum('duplicates'), 0, 'writes applied twice')
  assert.is(sum('mismatched'), 0, 'pending writes not applied exactly once')
})

test.run()
