import '../runtime/polyfill.ts'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { MembersReply } from '../actors/controller/api-members.ts'
import { controllerProposeProtocol } from '../actors/controller/model-replica.ts'
import { decode, encode } from '../runtime/codec.ts'
import type { CommandResult } from '../runtime/model/model-types.ts'
import { admin, CantripdCluster } from '../test/support/cantripd-cluster.ts'
import { rssBytes } from './child-processes.ts'
import { noticeStages, parseTrace, type NoticeChange, type NoticeStages } from './notice-stages.ts'
import { latencySummary, pollUntil, quantile, sleep, wallMs, type LatencySummary } from './stats.ts'

/**
 * Change propagation in real processes, the counterpart of the serf bench: 3 `cantripd`
 * controllers and N machine agents on loopback. Each change is a `set-model-config`
 * committed as the admin (`update-status-hook-interval`, a new value each time): the
 * model's config is what every Juju agent watches (the ModelWatcher facade every agent
 * facade embeds), so it truly reaches every agent, as each put reaches every watcher of
 * the etcd anchor (bench/etcd-watch.ts). Until 2026-11-28 the change was an `add-machine`,
 * which reached every agent only because every view carried the model's counters (no
 * longer: runtime/model/machine-view.ts), and then a second time through the
 * provisioner's commit for the new machine; results before then measured that change.
 * A change's notice at an agent is that agent holding a view of the model at that
 * revision or later (pushed to the watch it holds at a controller, leader or follower,
 * as soon as that controller applied the commit: actors/controller/machine-watches.ts).
 * Two clocks, both stopped at the agent's own stamp of its new view (taken when the view
 * is applied, before it prints the `model` line): `propagation` from the command's
 * acknowledgement at the client (the client has the leader's answer), `fromSend` from
 * the client's send of the command. p50/p99 over all agents and changes.
 * With `trace`, every process records the change's steps (bench/notice-stages.ts) and
 * each hop's p50/p99 is reported too:
 *   node --import tsx bench/cantrip-propagation.ts AGENTS CHANGES [detect] [trace]
 * With CANTRIP_PROF_DIR set, every machine agent writes a V8 CPU profile there as it stops
 * (and every controller too with CANTRIP_PROF_CONTROLLERS set), sampled every
 * CANTRIP_PROF_INTERVAL_US µs if set.
 * Detection: kill -9 of one machine agent, and the time until the leader's presence table
 * (the `members` API) says it failed (presence defaults: suspect after 5 s of silence,
 * failed 5 s later).
 */
const component = 'bench cantrip propagation'
/** Starting N agents on 2 loaded cores takes a while; bounded all the same. */
const startWithinMs = 240_000
const noticeWithinMs = 10_000
const detectWithinMs = 60_000
const changeGapMs = 300
/** After the changes: a pause for the last notice and reports, then the idle window cpuPerChange subtracts. */
const idleSettleMs = 1_000
const idleWindowMs = 6_000
/**
 * Machine agents starting at once (the provisioner's default starts in flight): a new one
 * starts as soon as one has its first view, not a wave after the slowest of ten.
 */
const agentsStartingMax = 8
const submitWithinMs = 60_000

export interface CantripPropagation {
  agents: number
  changes: number
  propagation: LatencySummary
  /**
   * The same notices timed from the client's send of the command instead of its
   * acknowledgement, as the etcd watch anchor reports both (bench/etcd-watch.ts): its
   * watchers often see a put before the writer's answer returns, so from the ack it
   * clamps at 0.
   */
  fromSend: LatencySummary
  /** Notices that had not arrived within noticeWithinMs (counted at that bound in the percentiles). */
  missed: number
  detection?: { suspectMs: number | null, failedMs: number | null }
  agentRssBytes: number
  controllerRssBytes: number
  startSeconds: number
  /** One agent's start: from its spawn to its first view (wall, p50 and max) and the CPU it had used by then (median). */
  agentStart: { p50Ms: number, maxMs: number, cpuMs: number }
  /** Each hop of a notice (bench/notice-stages.ts), with `trace`. */
  stages?: NoticeStages
  /**
   * CPU-ms per change above idle, summed over the controllers and over the agents: the
   * CPU of the changes phase less the idle rate (measured over a quiet window after it)
   * times its length. On 2 shared cores a notice's tail is mostly the queue of this
   * work, so unlike the wall-clock figures it compares across loads.
   */
  cpuPerChange: { controllersMs: number, agentsMs: number, idleWindowMs: number, changesWindowMs: number }
  /** The command each change is (see above): what the figures are of. */
  change: 'set-model-config'
}

export async function measureCantripPropagation (agents: number, changes: number, options: { detect?: boolean, trace?: boolean } = {}): Promise<CantripPropagation> {
  // Every process the cluster starts inherits the trace file (agent/write-stage-trace.ts).
  const trace = options.trace === true ? { dir: mkdtempSync(join(tmpdir(), 'cantrip-notice-stages-')), previous: process.env['CANTRIP_WRITE_TRACE'], file: '' } : undefined
  if (trace !== undefined) {
    trace.file = join(trace.dir, 'stages.log')
    process.env['CANTRIP_WRITE_TRACE'] = trace.file
  }
  const cluster = new CantripdCluster()
  let closed = false
  try {
    await cluster.prepare(3, agents)
    // Each process on its own loopback address, which it also dials from
    // (agent/mesh/loopback-dial-source.ts): N machines, not N processes of one host that
    // libp2p's per-host inbound pacing would queue behind each other.
    const everyone = [...cluster.controllers, ...cluster.machines]
    cluster.hostOf = agent => `127.0.1.${everyone.indexOf(agent) + 1}`
    // CANTRIP_PROF_DIR: the machine agents run under --cpu-prof into it (node refuses it in
    // NODE_OPTIONS; a shell in front adds it and execs node, same pid), as bench/process-cost.ts.
    const profDir = process.env['CANTRIP_PROF_DIR']
    // CANTRIP_PERF: every process with JIT symbols for `perf record` (node's own flag, same pid).
    if (process.env['CANTRIP_PERF'] !== undefined) cluster.launcher = () => ['bash', '-c', 'node="$1"; shift; exec "$node" --perf-basic-prof "$@"', 'bench']
    // CANTRIP_PROF_INTERVAL_US: a finer sampling interval (V8's default is 1,000 µs; one change costs an agent a few hundred).
    const interval = process.env['CANTRIP_PROF_INTERVAL_US'] === undefined ? '' : ` --cpu-prof-interval=${Number(process.env['CANTRIP_PROF_INTERVAL_US'])}`
    if (profDir !== undefined) {
      cluster.launcher = agent => agent.role === 'controller' && process.env['CANTRIP_PROF_CONTROLLERS'] === undefined ? [] : ['bash', '-c', `node="$1"; shift; exec "$node" --cpu-prof${interval} --cpu-prof-dir=${profDir} "$@"`, 'bench']
    }
    const started = performance.now()
    for (const c of cluster.controllers) cluster.start(c)
    await cluster.connectClient()
    if (!await pollUntil(() => cluster.leader() !== undefined, startWithinMs, 50)) throw new Error(`${component}: expected a leader within ${startWithinMs} ms, got none`)
    // Agents come up at most agentsStartingMax at a time, as the provisioner starts
    // machines (8 in flight by default), not all 50 at once: 53 Node processes starting
    // together on 2 cores starve the controllers of CPU, which measures start-up, not propagation.
    const agentStart = await startAgents(cluster, performance.now() + startWithinMs)
    const startSeconds = (performance.now() - started) / 1000
    // Let start-up (dials, mesh grafts, first fetches) settle before measuring.
    await sleep(3_000)
    const cpuOf = (): { controllers: number, agents: number, at: number } => ({
      controllers: cluster.controllers.reduce((sum, c) => sum + onCpuMs(c.process!.pid!), 0),
      agents: cluster.machines.reduce((sum, m) => sum + onCpuMs(m.process!.pid!), 0),
      at: performance.now()
    })
    const changesFrom = cpuOf()
    const latencies: number[] = []
    const fromSend: number[] = []
    const traced: NoticeChange[] = []
    let missed = 0
    for (let i = 0; i < changes; i++) {
      const sentAt = wallMs()
      const result = await submit(cluster)
      const ackedAt = wallMs()
      if (!result.ok) throw new Error(`${component}: expected change ${i} committed, got ${JSON.stringify(result)}`)
      const at = (m: typeof cluster.machines[number]): number | undefined => m.views.find(v => v.revision >= result.index)?.at
      await pollUntil(() => cluster.machines.every(m => at(m) !== undefined), noticeWithinMs, 5)
      // An agent that had no notice within the bound counts at the bound (the figures stay pessimistic, never flattering).
      for (const m of cluster.machines) {
        const t = at(m)
        if (t === undefined) missed++
        latencies.push(t === undefined ? noticeWithinMs : Math.max(0, t - ackedAt))
        fromSend.push(t === undefined ? noticeWithinMs : Math.max(0, t - sentAt))
      }
      traced.push({ revision: result.index, sentAt, ackedAt, views: cluster.machines.flatMap(m => { const t = at(m); return t === undefined ? [] : [{ pid: m.process!.pid!, at: t }] }) })
      await sleep(changeGapMs)
    }
    const changesTo = cpuOf()
    // The idle rate after the changes, not before: just after start-up the processes are
    // still settling (mesh grafts, first status reports), which made the rate before the
    // changes higher than during them in runs at load 20-40.
    await sleep(idleSettleMs)
    const idleFrom = cpuOf()
    await sleep(idleWindowMs)
    const idleTo = cpuOf()
    const changesWindowMs = changesTo.at - changesFrom.at
    const idleRate = (key: 'controllers' | 'agents'): number => (idleTo[key] - idleFrom[key]) / (idleTo.at - idleFrom.at)
    const busyPerChange = (key: 'controllers' | 'agents'): number =>
      Number((((changesTo[key] - changesFrom[key]) - idleRate(key) * changesWindowMs) / changes).toFixed(1))
    const figures: CantripPropagation = {
      agents,
      changes,
      propagation: latencySummary(latencies),
      fromSend: latencySummary(fromSend),
      missed,
      agentRssBytes: quantile(cluster.machines.map(m => rssBytes(m.process!.pid!)), 0.5),
      controllerRssBytes: quantile(cluster.controllers.map(c => rssBytes(c.process!.pid!)), 0.5),
      startSeconds: Number(startSeconds.toFixed(1)),
      agentStart,
      cpuPerChange: { controllersMs: busyPerChange('controllers'), agentsMs: busyPerChange('agents'), idleWindowMs: Math.round(idleTo.at - idleFrom.at), changesWindowMs: Math.round(changesWindowMs) },
      change: 'set-model-config'
    }
    if (options.detect === true) figures.detection = await detectFailure(cluster)
    if (trace !== undefined) {
      const leader = cluster.leader()!.process!.pid!
      // A graceful stop flushes every process's trace.
      await cluster.close()
      closed = true
      const text = readFileSync(trace.file, 'utf8')
      // CANTRIP_NOTICE_TRACE_OUT: the raw trace and the changes kept for a closer look (bench/notice-stages.ts reads them).
      const out = process.env['CANTRIP_NOTICE_TRACE_OUT']
      if (out !== undefined) writeFileSync(out, JSON.stringify({ leader, changes: traced, machines: cluster.machines.map(m => ({ id: m.machineId, pid: m.process?.pid })), controllers: cluster.controllers.map(c => c.process?.pid) }) + '\n' + text)
      figures.stages = noticeStages(parseTrace(text), traced, leader)
    }
    return figures
  } finally {
    if (!closed) await cluster.close()
    if (trace !== undefined) {
      if (trace.previous === undefined) delete process.env['CANTRIP_WRITE_TRACE']
      else process.env['CANTRIP_WRITE_TRACE'] = trace.previous
      rmSync(trace.dir, { recursive: true, force: true })
    }
  }
}

/**
 * Starts every machine agent, at most agentsStartingMax at once, each counted started at
 * its first view; answers one agent's start time (spawn to first view) and its CPU then.
 */
export async function startAgents (cluster: CantripdCluster, deadline: number): Promise<CantripPropagation['agentStart']> {
  const waits: number[] = []
  const cpu: number[] = []
  let next = 0
  const starter = async (): Promise<void> => {
    while (next < cluster.machines.length) {
      const m = cluster.machines[next++]!
      const spawned = performance.now()
      cluster.start(m)
      if (!await pollUntil(() => m.views.length > 0, Math.max(0, deadline - performance.now()), 50)) {
        throw new Error(`${component}: expected all ${cluster.machines.length} machine agents with a first view within ${startWithinMs} ms, got ${cluster.machines.filter(a => a.views.length > 0).length}`)
      }
      waits.push(performance.now() - spawned)
      cpu.push(cpuMs(m.process!.pid!))
    }
  }
  await Promise.all(Array.from({ length: Math.min(agentsStartingMax, cluster.machines.length) }, starter))
  return { p50Ms: Math.round(quantile(waits, 0.5)), maxMs: Math.round(quantile(waits, 1)), cpuMs: Math.round(quantile(cpu, 0.5)) }
}

/**
 * Time a process's threads have run on a CPU, in ms, from /proc/PID/task/TID/schedstat
 * (nanoseconds, where /proc/PID/stat counts 10 ms ticks: too coarse for a few ms per change).
 */
export function onCpuMs (pid: number): number {
  let ns = 0
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0])
    } catch {
      // A thread that ended meanwhile: its time is gone from the sum either way.
    }
  }
  return ns / 1e6
}

/** CPU time (user + system) a process has used, from /proc (clock ticks of 10 ms). */
function cpuMs (pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/**
 * Commits one change every agent sees, a model-config set, as the admin, as the CLI does
 * (agent/cli/connection.ts): one request id across attempts, to the leader or else each
 * controller in turn, until one commits it or submitWithinMs passes (a loaded machine can
 * hold an election up). Each value differs from the last (5m0s, 5m1s, … 5m59s, round
 * again), so every change changes every view; units would reschedule update-status, and
 * the bench's machines have none.
 */
export async function submit (cluster: CantripdCluster): Promise<CommandResult> {
  const n = ++submitted
  const requestId = `bench-propagation-${n}`
  const command = { type: 'set-model-config', config: { 'update-status-hook-interval': `5m${n % 60}s` }, requestId, proposer: admin }
  let last = 'no controller answered'
  const until = performance.now() + submitWithinMs
  for (let attempt = 0; performance.now() < until; attempt++) {
    const target = cluster.leader() ?? cluster.controllers[attempt % cluster.controllers.length]!
    try {
      const reply = decode(await cluster.client!.request(target.id, controllerProposeProtocol, encode(command, 'bench'), { timeoutMs: 5_000 }), 'bench') as { ok: true, result: CommandResult } | { ok: false, message: string }
      if (reply.ok) return reply.result
      last = reply.message
    } catch (error) {
      last = error instanceof Error ? error.message : String(error)
    }
    await sleep(200)
  }
  throw new Error(`${component}: expected set-model-config committed within ${submitWithinMs} ms, got ${last}`)
}
let submitted = 0

async function detectFailure (cluster: CantripdCluster): Promise<{ suspectMs: number | null, failedMs: number | null }> {
  const victim = cluster.machines[Math.floor(cluster.machines.length / 2)]!
  const leader = cluster.leader()!
  const stateOf = async (): Promise<string | undefined> => {
    const reply = await cluster.api<MembersReply>(leader, { op: 'members' })
    return reply?.ok === true ? reply.members.find(row => row.id === victim.id)?.state : undefined
  }
  victim.process!.kill('SIGKILL')
  const killedAt = performance.now()
  victim.process = undefined
  let suspectMs: number | null = null
  const failed = await pollUntil(async () => {
    const state = await stateOf()
    if (state !== 'alive' && state !== undefined && suspectMs === null) suspectMs = Math.round(performance.now() - killedAt)
    return state === 'failed'
  }, detectWithinMs, 50)
  return { suspectMs, failedMs: failed ? Math.round(performance.now() - killedAt) : null }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const flags = process.argv.slice(4)
  console.log(JSON.stringify(await measureCantripPropagation(Number(process.argv[2] ?? 10), Number(process.argv[3] ?? 5), { detect: flags.includes('detect'), trace: flags.includes('trace') }), null, 2))
  process.exit(0)
}
