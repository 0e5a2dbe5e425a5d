import '../runtime/polyfill.ts'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { controllerProposeProtocol } from '../actors/controller/model-replica.ts'
import { decode, encode } from '../runtime/codec.ts'
import { admin, CantripdCluster } from '../test/support/cantripd-cluster.ts'
import { quantile, round, wallMs } from './stats.ts'
import { deployBenchApplication } from './writes.ts'
import { cpuMs } from './child-processes.ts'
import { probeSockets, schedUs } from '../agent/write-stage-trace.ts'

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
 *
 * Every process also records its TCP socket writes and reads (by connection), so each hop
 * splits into the sender's own stack, the kernel and scheduler between, and the
 * receiver's stack; the socket writes per write say how many messages one write costs,
 * and the CPU each process burns per write (idle CPU printed beside it) what it costs.
 * CANTRIP_WRITE_TRACE_SCHED=1 splits each leg of one process into running, waiting for a
 * core and waiting for anything else (each trace line then costs ~10 µs more, which the
 * legs' times include); CANTRIP_WRITE_STAGES_DUMP=1 prints one write's events in order;
 * CANTRIP_BENCH_CPU_PROF=DIR has the controllers write V8 CPU profiles there, sampled every
 * CANTRIP_BENCH_CPU_PROF_INTERVAL_US (default 1,000; 100 gives a sequential write's few
 * hundred µs in a process enough samples).
 */
const warmup = 20
const idleSampleMs = 3_000

/**
 * `run` and `queued`: the process's main thread's µs on a CPU and in the run queue so far
 * (write-stage-trace.ts), so a leg within one process splits into running, waiting for a
 * core and waiting for anything else.
 */
interface Event { at: number, pid: number, stage: string, detail: number, connection?: string, run?: number, queued?: number }

export type StageMedians = Record<string, number>

interface ProcessCpu { leader: number, followers: number, client: number }

/**
 * `cpuMsPerWrite` is each process's CPU over the writes divided by their count;
 * `netCpuMsPerWrite` takes away what the controller would have burnt idle over the same
 * wall time (ticks, heartbeats, gossip; sampled after the writes), which on a busy machine,
 * where writes are slow, is most of the first.
 */
export interface WriteStages { medians: StageMedians, p50Ms: number, samples: number, cpuMsPerWrite: ProcessCpu, netCpuMsPerWrite: ProcessCpu }

export async function measureWriteStages (writes: number): Promise<WriteStages> {
  const root = mkdtempSync(join(tmpdir(), 'cantrip-write-stages-'))
  const file = join(root, 'stages.log')
  const previous = process.env['CANTRIP_WRITE_TRACE']
  process.env['CANTRIP_WRITE_TRACE'] = file
  const cluster = new CantripdCluster()
  const client: Event[] = []
  let probing = false
  try {
    await cluster.prepare(3, 0)
    // With CANTRIP_BENCH_CPU_PROF=DIR the controllers write V8 CPU profiles there when stopped.
    const profileDir = process.env['CANTRIP_BENCH_CPU_PROF']
    const execPath = process.execPath
    if (profileDir !== undefined) {
      process.execPath = join(root, 'node-cpu-prof')
      writeFileSync(process.execPath, `#!/bin/sh\nexec ${JSON.stringify(execPath)} --cpu-prof --cpu-prof-interval=${process.env['CANTRIP_BENCH_CPU_PROF_INTERVAL_US'] ?? 1000} --cpu-prof-dir=${JSON.stringify(profileDir)} "$@"\n`, { mode: 0o755 })
    }
    for (const c of cluster.controllers) cluster.start(c)
    process.execPath = execPath
    await cluster.connectClient()
    await deployBenchApplication(cluster, root, 'bench write stages')
    const leader = cluster.leader()!
    probing = true
    const followers = cluster.controllers.filter(c => c !== leader).map(c => c.process!.pid!)
    const cpu = (): { leader: number, followers: number, client: number } => ({
      leader: cpuMs(leader.process!.pid!),
      followers: followers.reduce((sum, pid) => sum + cpuMs(pid), 0) / followers.length,
      client: process.cpuUsage().user / 1000 + process.cpuUsage().system / 1000
    })
    let cpuBefore = cpu()
    probeSockets((stage, detail) => { if (probing) client.push(clientEvent(stage, detail)) })
    for (let i = 0; i < warmup + writes; i++) {
      const body = { type: 'set-config', application: 'bench', config: { v: `${i}:`.padEnd(200, 'v') }, requestId: `stages-${i}`, proposer: admin }
      if (i === warmup) cpuBefore = cpu()
      client.push(clientEvent('client-send', i))
      const reply = decode(await cluster.client!.request(leader.id, controllerProposeProtocol, encode(body, 'bench'), { timeoutMs: 10_000 }), 'bench') as { ok?: boolean }
      client.push(clientEvent('client-receive', i))
      if (reply.ok !== true) throw new Error(`bench write stages: expected write ${i} committed, got ${JSON.stringify(reply).slice(0, 200)}`)
    }
    probing = false
    const cpuAfter = cpu()
    const loopMs = client[client.length - 1]!.at - client.find(e => e.stage === 'client-send' && e.detail === warmup)!.at
    // What the controllers burn doing nothing (ticks, heartbeats, gossip), to tell apart from the writes' own cost.
    await new Promise(resolve => setTimeout(resolve, idleSampleMs))
    const cpuIdle = cpu()
    console.log(`idle CPU ms per s: leader ${round((cpuIdle.leader - cpuAfter.leader) * 1000 / idleSampleMs)}, each follower ${round((cpuIdle.followers - cpuAfter.followers) * 1000 / idleSampleMs)}; the writes took ${round(loopMs)} ms`)
    const cpuMsPerWrite = {
      leader: round((cpuAfter.leader - cpuBefore.leader) / writes, 3),
      followers: round((cpuAfter.followers - cpuBefore.followers) / writes, 3),
      client: round((cpuAfter.client - cpuBefore.client) / writes, 3)
    }
    const idleMsPerWrite = (process: 'leader' | 'followers'): number => (cpuIdle[process] - cpuAfter[process]) / idleSampleMs * loopMs / writes
    const netCpuMsPerWrite = {
      leader: round(cpuMsPerWrite.leader - idleMsPerWrite('leader'), 3),
      followers: round(cpuMsPerWrite.followers - idleMsPerWrite('followers'), 3),
      client: cpuMsPerWrite.client
    }
    // A graceful stop flushes each controller's trace.
    await Promise.all(cluster.controllers.map(async c => await new Promise(resolve => { c.process!.once('exit', resolve); c.process!.kill('SIGTERM') })))
    const events = [...client, ...parseTrace(readFileSync(file, 'utf8'))].sort((a, b) => a.at - b.at)
    return { ...summarise(events, process.pid, leader.process!.pid!, warmup), cpuMsPerWrite, netCpuMsPerWrite }
  } finally {
    if (previous === undefined) delete process.env['CANTRIP_WRITE_TRACE']
    else process.env['CANTRIP_WRITE_TRACE'] = previous
    await cluster.close()
    rmSync(root, { recursive: true, force: true })
  }
}

function parseTrace (text: string): Event[] {
  return text.split('\n').filter(line => line !== '').map(line => {
    const [pid, at, stage, detail, run, queued] = line.split(' ')
    return event(Number(pid), Number(at), stage!, Number(detail), Number(run), Number(queued))
  })
}

/** One of this client's own events, stamped as the controllers stamp theirs. */
function clientEvent (stage: string, detail: number): Event {
  if (process.env['CANTRIP_WRITE_TRACE_SCHED'] !== '1') return event(process.pid, wallMs(), stage, detail)
  const { runUs, queuedUs } = schedUs()
  return event(process.pid, wallMs(), stage, detail, runUs, queuedUs)
}

/** An event; a socket's (`socket-read:<ports>`) names its connection apart. */
function event (pid: number, at: number, stage: string, detail: number, run?: number, queued?: number): Event {
  const [name, connection] = stage.split(':')
  const e: Event = connection === undefined ? { pid, at, stage, detail } : { pid, at, stage: name!, detail, connection }
  // Older traces and machines without /proc/thread-self/schedstat have none.
  if (run !== undefined && queued !== undefined && Number.isFinite(run) && Number.isFinite(queued)) {
    e.run = run
    e.queued = queued
  }
  return e
}

/** A point of a leg: an event, or a plain number (a count measured from 0). */
type Point = Event | number | undefined

/**
 * The stage medians over every write after the warm-up; a leg whose two ends are events
 * of one process also gets `<leg> [run]` and `[queued]`: its main thread's time on a CPU
 * and waiting for one over the leg; what the wall time has beyond both is waiting for
 * something else (the disk through the thread pool, a timer, a peer).
 */
function summarise (events: readonly Event[], self: number, leader: number, skip: number): { medians: StageMedians, p50Ms: number, samples: number } {
  const stages = new Map<string, number[]>()
  const push = (name: string, value: number): void => {
    const list = stages.get(name) ?? []
    list.push(value)
    stages.set(name, list)
  }
  const add = (name: string, from: Point, to: Point): void => {
    if (from === undefined || to === undefined) return
    push(name, (typeof to === 'number' ? to : to.at) - (typeof from === 'number' ? from : from.at))
    if (typeof from === 'number' || typeof to === 'number' || from.pid !== to.pid) return
    if (from.run === undefined || to.run === undefined || from.queued === undefined || to.queued === undefined) return
    push(`${name} [run]`, (to.run - from.run) / 1000)
    push(`${name} [queued]`, (to.queued - from.queued) / 1000)
  }
  const totals: number[] = []
  if (process.env['CANTRIP_WRITE_STAGES_DUMP'] !== undefined) {
    const sample = windows(events)[skip + 5]!
    for (const e of sample) console.log(`${(e.at - sample[0]!.at).toFixed(2).padStart(8)} ${e.pid === self ? 'client' : e.pid === leader ? 'leader' : e.pid} ${e.stage} ${e.connection ?? ''} ${e.detail} ${e.run ?? ''} ${e.queued ?? ''}`)
  }
  for (const window of windows(events).slice(skip)) {
    const startEvent = window[0]!
    const endEvent = window[window.length - 1]!
    const start = startEvent.at
    totals.push(endEvent.at - start)
    const first = (test: (e: Event) => boolean, after = start): Event | undefined => window.find(e => e.at >= after && test(e))
    const propose = first(e => e.pid === leader && e.stage === 'propose')
    const leaderReady = first(e => e.pid === leader && e.stage === 'ready' && e.detail > 0, propose?.at)
    const leaderSynced = first(e => e.pid === leader && e.stage === 'synced' && e.detail > 0, leaderReady?.at)
    const applied = first(e => e.pid === leader && e.stage === 'applied', leaderReady?.at)
    const follower = firstFollowerAnswer(window, leader, leaderReady?.at)
    add('client → leader propose', startEvent, propose)
    add('propose → leader Ready', propose, leaderReady)
    add('leader Ready → synced (its fsync)', leaderReady, leaderSynced)
    add('leader Ready → follower Ready (append in transit)', leaderReady, follower?.ready)
    add('follower Ready → synced (its fsync)', follower?.ready, follower?.synced)
    add('follower synced → acknowledgement sent', follower?.synced, follower?.sent)
    add('acknowledgement sent → leader applied (transit, commit, apply)', follower?.sent, applied)
    add('leader applied → client receive', applied, endEvent)
    // The same path at the sockets: each process's own stack, and the kernel between.
    const socket = (pid: number, stage: string, after: number | undefined, on?: string): Event | undefined =>
      after === undefined ? undefined : first(e => e.pid === pid && e.stage === stage && (on === undefined || e.connection === on), after)
    const clientWrite = socket(self, 'socket-write', start)
    const clientConnection = clientWrite?.connection
    const leaderRead = socket(leader, 'socket-read', clientWrite?.at, clientConnection)
    add('  client send → its socket write', startEvent, clientWrite)
    add('  client socket write → leader socket read', clientWrite, leaderRead)
    add('  leader socket read → propose', leaderRead, propose)
    if (follower !== undefined) {
      const followerRead = socket(follower.pid, 'socket-read', leaderReady?.at)
      const leaderWrite = socket(leader, 'socket-write', leaderReady?.at, followerRead?.connection)
      add('  leader Ready → its socket write', leaderReady, leaderWrite)
      add('  leader socket write → follower socket read', leaderWrite, followerRead)
      add('  follower socket read → its Ready', followerRead, follower.ready)
      const followerWrite = socket(follower.pid, 'socket-write', follower.sent.at)
      add('  follower sent → its socket write', follower.sent, followerWrite)
      add('  follower Ready → its acknowledgement\'s socket write', follower.ready, followerWrite)
      const ackRead = socket(leader, 'socket-read', followerWrite?.at, followerWrite?.connection)
      const received = socket(leader, 'received-answer', ackRead?.at)
      add('  follower socket write → leader socket read', followerWrite, ackRead)
      add('  leader socket read → received answer', ackRead, received)
      add('  leader received answer → applied', received, applied)
    }
    const answerWrite = socket(leader, 'socket-write', applied?.at, clientConnection)
    const clientRead = socket(self, 'socket-read', answerWrite?.at, clientConnection)
    add('  leader applied → its socket write', applied, answerWrite)
    if (applied !== undefined && answerWrite !== undefined) {
      // A count, not a time: what the leader put on the wire ahead of the client's answer.
      const ahead = window.filter(e => e.pid === leader && e.stage === 'socket-write' && e.at >= applied.at && e.at < answerWrite.at).length
      add('  leader socket writes between applied and the answer (count)', 0, ahead)
    }
    add('  leader socket write → client socket read', answerWrite, clientRead)
    add('  client socket read → client receive', clientRead, endEvent)
  }
  const medians: StageMedians = {}
  for (const [name, values] of stages) medians[name] = round(quantile(values, 0.5), 2)
  // Socket writes and reads per write, by process: each is a syscall and a wake-up on the other end.
  const counted = windows(events).slice(skip)
  for (const stage of ['socket-write', 'socket-read']) {
    const perProcess = new Map<string, number>()
    for (const window of counted) {
      for (const e of window) {
        if (e.stage !== stage) continue
        const who = e.pid === self ? 'client' : e.pid === leader ? 'leader' : `follower ${e.pid}`
        perProcess.set(who, (perProcess.get(who) ?? 0) + 1)
      }
    }
    for (const [who, n] of perProcess) medians[`${stage}s per write: ${who}`] = round(n / counted.length, 2)
  }
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

/** The follower whose acknowledgement of the write's entry left first: its Ready, synced and sent events. */
function firstFollowerAnswer (window: readonly Event[], leader: number, after: number | undefined): { pid: number, ready: Event, synced: Event, sent: Event } | undefined {
  if (after === undefined) return undefined
  let best: { pid: number, ready: Event, synced: Event, sent: Event } | undefined
  const followers = new Set(window.filter(e => e.pid !== leader && e.pid !== window[0]!.pid).map(e => e.pid))
  for (const pid of followers) {
    const ready = window.find(e => e.pid === pid && e.at >= after && e.stage === 'ready' && e.detail > 0)
    const synced = ready === undefined ? undefined : window.find(e => e.pid === pid && e.at >= ready.at && e.stage === 'synced' && e.detail > 0)
    const sent = synced === undefined ? undefined : window.find(e => e.pid === pid && e.at >= synced.at && e.stage.startsWith('sent-'))
    if (ready !== undefined && synced !== undefined && sent !== undefined && (best === undefined || sent.at < best.sent.at)) best = { pid, ready, synced, sent }
  }
  return best
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const writes = Number(process.argv[2] ?? 300)
  if (!Number.isSafeInteger(writes) || writes < 1) throw new Error(`bench write stages: expected a positive number of writes, got ${process.argv[2]}`)
  const { medians, p50Ms, samples, cpuMsPerWrite, netCpuMsPerWrite } = await measureWriteStages(writes)
  console.log(`write stages over ${samples} sequential writes (median ms); whole write p50 ${p50Ms} ms`)
  console.log(`CPU ms per write: leader ${cpuMsPerWrite.leader}, each follower ${cpuMsPerWrite.followers}, client ${cpuMsPerWrite.client}`)
  const serversNet = round(netCpuMsPerWrite.leader + 2 * netCpuMsPerWrite.followers, 3)
  console.log(`CPU ms per write net of idle: leader ${netCpuMsPerWrite.leader}, each follower ${netCpuMsPerWrite.followers}; three servers ${serversNet}`)
  for (const [name, ms] of Object.entries(medians)) console.log(`  ${name.padEnd(64)} ${ms.toFixed(2)}`)
  process.exit(0)
}
