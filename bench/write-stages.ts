import '../runtime/polyfill.ts'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { controllerProposeProtocol } from '../actors/controller/model-replica.ts'
import { decode, encode } from '../runtime/codec.ts'
import { admin, CantripdCluster, waitFor } from '../test/support/cantripd-cluster.ts'
import { quantile, round, wallMs } from './stats.ts'
import { writeBenchCharm } from './writes.ts'

/**
 * Where one sequential write's time goes (issue 28): three `cantripd` controllers started
 * with CANTRIP_WRITE_TRACE (agent/write-stage-trace.ts) record each step of the write
 * path with its wall time; this client records when it sent each write and got its
 * answer, and the median of every stage is printed:
 *
 *   node --import tsx bench/write-stages.ts [WRITES]
 *
 * Each write's window (client send to client receive) is read on its own, the leader's
 * and the first follower to answer's steps in it; the stages tile the critical path
 * (client → leader → follower's disk → leader → client), so their medians show which
 * hop or disk holds the write up. The machine's clock is shared by all four processes.
 */
const warmup = 20

interface Event { at: number, pid: number, stage: string, detail: number }

export type StageMedians = Record<string, number>

export async function measureWriteStages (writes: number): Promise<{ medians: StageMedians, p50Ms: number, samples: number }> {
  const root = mkdtempSync(join(tmpdir(), 'cantrip-write-stages-'))
  const file = join(root, 'stages.log')
  const previous = process.env['CANTRIP_WRITE_TRACE']
  process.env['CANTRIP_WRITE_TRACE'] = file
  const cluster = new CantripdCluster()
  const client: Event[] = []
  try {
    await cluster.prepare(3, 0)
    for (const c of cluster.controllers) cluster.start(c)
    await cluster.connectClient()
    await waitFor('a leader', () => cluster.leader() !== undefined)
    const added = await cluster.addCharm(cluster.leader()!, writeBenchCharm(root), 'local:bench-config-0')
    if (added.added?.ok !== true) throw new Error(`bench write stages: expected the charm added, got ${JSON.stringify(added.added)}`)
    const deployed = await cluster.submit({ type: 'deploy', application: 'bench', charm: 'local:bench-config-0', config: {}, constraints: {}, numUnits: 0 })
    if (deployed?.ok !== true) throw new Error(`bench write stages: expected the application deployed, got ${JSON.stringify(deployed)}`)
    const leader = cluster.leader()!
    for (let i = 0; i < warmup + writes; i++) {
      const body = { type: 'set-config', application: 'bench', config: { v: `${i}:`.padEnd(200, 'v') }, requestId: `stages-${i}`, proposer: admin }
      client.push({ at: wallMs(), pid: process.pid, stage: 'client-send', detail: i })
      const reply = decode(await cluster.client!.request(leader.id, controllerProposeProtocol, encode(body, 'bench'), { timeoutMs: 10_000 }), 'bench') as { ok?: boolean }
      client.push({ at: wallMs(), pid: process.pid, stage: 'client-receive', detail: i })
      if (reply.ok !== true) throw new Error(`bench write stages: expected write ${i} committed, got ${JSON.stringify(reply).slice(0, 200)}`)
    }
    // A graceful stop flushes each controller's trace.
    await Promise.all(cluster.controllers.map(async c => await new Promise(resolve => { c.process!.once('exit', resolve); c.process!.kill('SIGTERM') })))
    const events = [...client, ...parseTrace(readFileSync(file, 'utf8'))].sort((a, b) => a.at - b.at)
    return summarise(events, leader.process!.pid!, warmup)
  } finally {
    if (previous === undefined) delete process.env['CANTRIP_WRITE_TRACE']
    else process.env['CANTRIP_WRITE_TRACE'] = previous
    await cluster.close()
    rmSync(root, { recursive: true, force: true })
  }
}

function parseTrace (text: string): Event[] {
  return text.split('\n').filter(line => line !== '').map(line => {
    const [pid, at, stage, detail] = line.split(' ')
    return { pid: Number(pid), at: Number(at), stage: stage!, detail: Number(detail) }
  })
}

/** The stage medians over every write after the warm-up. */
function summarise (events: readonly Event[], leader: number, skip: number): { medians: StageMedians, p50Ms: number, samples: number } {
  const stages = new Map<string, number[]>()
  const add = (name: string, from: number | undefined, to: number | undefined): void => {
    if (from === undefined || to === undefined) return
    const list = stages.get(name) ?? []
    list.push(to - from)
    stages.set(name, list)
  }
  const totals: number[] = []
  for (const window of windows(events).slice(skip)) {
    const start = window[0]!.at
    const end = window[window.length - 1]!.at
    totals.push(end - start)
    const first = (test: (e: Event) => boolean, after = start): Event | undefined => window.find(e => e.at >= after && test(e))
    const propose = first(e => e.pid === leader && e.stage === 'propose')
    const leaderReady = first(e => e.pid === leader && e.stage === 'ready' && e.detail > 0, propose?.at)
    const leaderSynced = first(e => e.pid === leader && e.stage === 'synced' && e.detail > 0, leaderReady?.at)
    const applied = first(e => e.pid === leader && e.stage === 'applied', leaderReady?.at)
    const follower = firstFollowerAnswer(window, leader, leaderReady?.at)
    add('client → leader propose', start, propose?.at)
    add('propose → leader Ready', propose?.at, leaderReady?.at)
    add('leader Ready → synced (its fsync)', leaderReady?.at, leaderSynced?.at)
    add('leader Ready → follower Ready (append in transit)', leaderReady?.at, follower?.ready)
    add('follower Ready → synced (its fsync)', follower?.ready, follower?.synced)
    add('follower synced → acknowledgement sent', follower?.synced, follower?.sent)
    add('acknowledgement sent → leader applied (transit, commit, apply)', follower?.sent, applied?.at)
    add('leader applied → client receive', applied?.at, end)
  }
  const medians: StageMedians = {}
  for (const [name, values] of stages) medians[name] = round(quantile(values, 0.5), 2)
  return { medians, p50Ms: round(quantile(totals, 0.5), 2), samples: totals.length }
}

/** The events from each client send to its answer. */
function windows (events: readonly Event[]): Event[][] {
  const result: Event[][] = []
  let current: Event[] | undefined
  for (const event of events) {
    if (event.stage === 'client-send') current = [event]
    else if (current !== undefined) {
      current.push(event)
      if (event.stage === 'client-receive') { result.push(current); current = undefined }
    }
  }
  return result
}

/** The follower whose acknowledgement of the write's entry left first: its Ready, synced and sent times. */
function firstFollowerAnswer (window: readonly Event[], leader: number, after: number | undefined): { ready: number, synced: number, sent: number } | undefined {
  if (after === undefined) return undefined
  let best: { ready: number, synced: number, sent: number } | undefined
  const followers = new Set(window.filter(e => e.pid !== leader && e.stage !== 'client-send' && e.stage !== 'client-receive').map(e => e.pid))
  for (const pid of followers) {
    const ready = window.find(e => e.pid === pid && e.at >= after && e.stage === 'ready' && e.detail > 0)
    const synced = ready === undefined ? undefined : window.find(e => e.pid === pid && e.at >= ready.at && e.stage === 'synced' && e.detail > 0)
    const sent = synced === undefined ? undefined : window.find(e => e.pid === pid && e.at >= synced.at && e.stage.startsWith('sent-'))
    if (ready !== undefined && synced !== undefined && sent !== undefined && (best === undefined || sent.at < best.sent)) best = { ready: ready.at, synced: synced.at, sent: sent.at }
  }
  return best
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const writes = Number(process.argv[2] ?? 300)
  if (!Number.isSafeInteger(writes) || writes < 1) throw new Error(`bench write stages: expected a positive number of writes, got ${process.argv[2]}`)
  const { medians, p50Ms, samples } = await measureWriteStages(writes)
  console.log(`write stages over ${samples} sequential writes (median ms); whole write p50 ${p50Ms} ms`)
  for (const [name, ms] of Object.entries(medians)) console.log(`  ${name.padEnd(64)} ${ms.toFixed(2)}`)
  process.exit(0)
}
