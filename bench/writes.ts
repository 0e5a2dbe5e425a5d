import '../runtime/polyfill.ts'
import { existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { controllerProposeProtocol } from '../actors/controller/model-replica.ts'
import { decode, encode } from '../runtime/codec.ts'
import type { CommandResult } from '../runtime/model/model-types.ts'
import { admin, CantripdCluster, waitFor, type Agent } from '../test/support/cantripd-cluster.ts'
import { agentRaftTiming } from '../sim/system/system-world.ts'
import { EtcdGroup, type EtcdMember, type EtcdTiming } from './etcd-group.ts'
import { cpuMs } from './child-processes.ts'
import { runLoad, type LoadFigures } from './load-driver.ts'
import { cantripElectionEvents, etcdElectionEvents } from './election-log.ts'
import { failoverTrials, runFailoverTrials, type FailoverFigures, type FailoverSubject } from './failover-trials.ts'
import { pollUntil, wallMs } from './stats.ts'

/**
 * Desired-state writes, cantrip against etcd, the same load driver for both:
 *   - cantrip: 3 `cantripd` controllers on loopback (Raft log in LevelDB, sync writes),
 *     each write a `set-config` of one application's option, the command `cantrip config
 *     app k=v` commits, sent as the admin over the controller propose protocol;
 *   - etcd: 3 members, each write a `/v3/kv/put` of a unique 32-byte key with a 200-byte value.
 * Every write goes to the current leader (where a client lands after its first redirect),
 * one in flight per client: sequential, then 16 and 64 clients, then sequential again
 * once warm (seqWarm, below). Then failover, as a
 * distribution over failoverTrials kills (bench/failover-trials.ts): kill -9 of the
 * leader, and the time until a write sent to any survivor every 10 ms succeeds. etcd
 * runs with cantrip's controllers' Raft timing (100 ms heartbeat, 600 ms election
 * timeout, both randomised over [t, 2t)), so failover compares like with like (issue 28).
 */
export const sharedTiming: EtcdTiming = {
  heartbeatMs: agentRaftTiming.tickMs * agentRaftTiming.heartbeatTicks,
  electionTimeoutMs: agentRaftTiming.tickMs * agentRaftTiming.electionTicks
}
/**
 * Besides the load figures, the CPU the store's three processes used per write (user +
 * system, all threads, from /proc): on a shared, loaded machine throughput follows the
 * share of the cores each store gets, while CPU per write is what the code costs.
 */
export type CaseFigures = LoadFigures & { serverCpuMsPerWrite: number }
/**
 * `seq` runs first, 50 writes after the store started; `seqWarm` is the same sequential
 * case again after the 64-client one. A cantrip controller spends its first thousands of
 * writes with V8 still optimising its code (issue 28: 11.4 ms of server CPU per write in
 * the first 250 sequential writes, 4.2-4.7 ms after 2,000), which a long-running
 * controller pays once and etcd's compiled Go never; `seqWarm` is the per-write cost a
 * controller that has been up a while pays, `seq` the cold one. Both stores run both.
 */
export interface WriteFigures { seq: CaseFigures, c16: CaseFigures, c64: CaseFigures, seqWarm: CaseFigures }
export interface StoreWrites {
  /** null when only the failover was asked for (`writes.ts failover`). */
  writes: WriteFigures | null
  failover: FailoverFigures | null
  /** The same trials with SIGSTOP of the leader (nothing closes); null when not asked for. */
  silentFailover: FailoverFigures | null
  /** cantrip: writes that needed more than one attempt (a change of leader under load). */
  retriedWrites?: number
  /** cantrip: what the failover probes were answered, by kind, over every trial. */
  probeReplies?: ProbeReplies
}
/** How a probe sent to a survivor during a failover was answered. */
export interface ProbeReplies { committed: number, noLeader: number, notLeaderAsk: number, otherRefusal: number, noAnswer: number }

/** Writes per case and the wall time a case may take, whichever ends it first. */
export const writeCases = {
  warmup: 50,
  seq: { clients: 1, total: 1_000, maxMs: 8_000 },
  c16: { clients: 16, total: 4_000, maxMs: 10_000 },
  c64: { clients: 64, total: 8_000, maxMs: 12_000 }
} as const
/** How long a restarted member may take to rejoin before the failover trials give up. */
const rejoinWithinMs = 60_000
const valueBytes = 200

const value = (i: number): string => `${i}:`.padEnd(valueBytes, 'v')

async function loadCases (write: (i: number) => Promise<void>, pids: readonly number[]): Promise<WriteFigures> {
  for (let i = 0; i < writeCases.warmup; i++) await write(-1 - i)
  const measured = async (options: typeof writeCases.seq | typeof writeCases.c16 | typeof writeCases.c64): Promise<CaseFigures> => {
    const cpu = (): number => pids.reduce((sum, pid) => sum + cpuMs(pid), 0)
    const before = cpu()
    const figures = await runLoad(write, options)
    return { ...figures, serverCpuMsPerWrite: Number(((cpu() - before) / Math.max(1, figures.writes)).toFixed(3)) }
  }
  const seq = await measured(writeCases.seq)
  const c16 = await measured(writeCases.c16)
  const c64 = await measured(writeCases.c64)
  return { seq, c16, c64, seqWarm: await measured(writeCases.seq) }
}

/** What a run measures: the write loads (skipped to study failover alone), and how many failover trials of each kind (0: none). */
export interface WriteScope { loads: boolean, trials: number, silentTrials: number }
const everything: WriteScope = { loads: true, trials: failoverTrials, silentTrials: failoverTrials }

/** Both kinds of failover trials the scope asks for, kill -9 first. */
async function failovers (subject: FailoverSubject, scope: WriteScope): Promise<Pick<StoreWrites, 'failover' | 'silentFailover'>> {
  const failover = scope.trials > 0 ? await runFailoverTrials(subject, sharedTiming.electionTimeoutMs, scope.trials, 'kill') : null
  const silentFailover = scope.silentTrials > 0 ? await runFailoverTrials(subject, sharedTiming.electionTimeoutMs, scope.silentTrials, 'stop') : null
  return { failover, silentFailover }
}

export async function measureEtcdWrites (scope = everything): Promise<StoreWrites> {
  const etcd = new EtcdGroup()
  try {
    await etcd.start(3, sharedTiming)
    const leader = await etcd.leader()
    if (leader === undefined) throw new Error('bench etcd: expected a leader after start, got none')
    const writes = scope.loads ? await loadCases(async i => { await etcd.put(leader, `bench/${String(i).padStart(26, '0')}`, value(i)) }, etcd.members.map(m => m.process.pid!)) : null
    return { writes, ...await failovers(etcdFailover(etcd), scope) }
  } finally {
    await etcd.close()
  }
}

/** etcd's part of the failover trials: probes are puts to a survivor, which forwards them to its leader. */
function etcdFailover (etcd: EtcdGroup): FailoverSubject {
  let killed: EtcdMember | undefined
  let trial = 0
  return {
    killLeader: async fault => {
      let leader: EtcdMember | undefined
      await pollUntil(async () => (leader = await etcd.leader()) !== undefined, rejoinWithinMs)
      if (leader === undefined) throw new Error(`bench etcd: expected a leader before failover trial ${trial + 1}, got none within ${rejoinWithinMs} ms`)
      killed = leader
      trial++
      if (fault === 'kill') etcd.killNow(leader)
      else leader.process.kill('SIGSTOP')
    },
    probe: async n => {
      const survivors = etcd.members.filter(m => m !== killed)
      return await etcd.tryPut(survivors[n % survivors.length]!, `failover/${trial}/${n}`, 'x', 3_000)
    },
    restore: async fault => {
      const member = killed!
      if (fault === 'kill') await etcd.restart(member)
      else member.process.kill('SIGCONT')
      // A put to the restarted member commits only once it has rejoined and knows the leader.
      const back = await pollUntil(async () => await etcd.tryPut(member, `failover/${trial}/rejoined`, 'x', 3_000), rejoinWithinMs, 50)
      if (!back) throw new Error(`bench etcd: expected ${member.name} to rejoin within ${rejoinWithinMs} ms of its restart, got no committed put`)
    },
    elections: () => etcd.members.flatMap(m => existsSync(m.logFile) ? etcdElectionEvents(readFileSync(m.logFile, 'utf8')) : [])
  }
}

/** A charm with one string option, so `set-config` has something to set. */
export function writeBenchCharm (root: string): string {
  const dir = join(root, 'bench-config')
  mkdirSync(join(dir, 'hooks'), { recursive: true })
  writeFileSync(join(dir, 'metadata.yaml'), 'name: bench-config\nsummary: a charm with one option\ndescription: for the write bench\n')
  writeFileSync(join(dir, 'config.yaml'), 'options:\n  v:\n    type: string\n    default: ""\n')
  return dir
}

/**
 * Adds the bench charm and deploys it (no units) through a connected cluster, so writes
 * have a config to set; `component` names the bench in the error when either is refused.
 */
export async function deployBenchApplication (cluster: CantripdCluster, root: string, component: string): Promise<void> {
  await waitFor('a leader', () => cluster.leader() !== undefined)
  const added = await cluster.addCharm(cluster.leader()!, writeBenchCharm(root), 'local:bench-config-0')
  if (added.added?.ok !== true) throw new Error(`${component}: expected the charm added, got ${JSON.stringify(added.added)}`)
  const deployed = await cluster.submit({ type: 'deploy', application: 'bench', charm: 'local:bench-config-0', config: {}, constraints: {}, numUnits: 0 })
  if (deployed?.ok !== true) throw new Error(`${component}: expected the application deployed, got ${JSON.stringify(deployed)}`)
}

function profilingNode (root: string, profileDir: string): string {
  const wrapper = join(root, 'node-cpu-prof')
  writeFileSync(wrapper, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} --cpu-prof --cpu-prof-dir=${JSON.stringify(profileDir)} "$@"\n`, { mode: 0o755 })
  return wrapper
}

type ForwardReply = { ok: true, result: CommandResult } | { ok: false, message?: string, leader?: string }
/** How long one write may keep retrying through a change of leader before it fails the case. */
const writeRetryWithinMs = 15_000
const writeRetryPauseMs = 20

export async function measureCantripWrites (scope = everything): Promise<StoreWrites> {
  const cluster = new CantripdCluster()
  const charmRoot = mkdtempSync(join(tmpdir(), 'cantrip-bench-charm-'))
  let request = 0
  const body = (i: number): Record<string, unknown> => ({ type: 'set-config', application: 'bench', config: { v: value(i) }, requestId: `bench-${++request}`, proposer: admin })
  /** One attempt; the reply, or undefined when the request itself failed (timeout, connection). */
  const attempt = async (target: Agent, command: Record<string, unknown>, timeoutMs: number): Promise<ForwardReply | undefined> => {
    try {
      return decode(await cluster.client!.request(target.id, controllerProposeProtocol, encode(command, 'bench'), { timeoutMs }), 'bench') as ForwardReply
    } catch {
      return undefined
    }
  }
  const applied = (reply: ForwardReply & { ok: true }): void => {
    if (!reply.result.ok) throw new Error(`bench cantrip: expected set-config applied, got ${JSON.stringify(reply.result).slice(0, 200)}`)
  }
  // Under load, as a client does (agent/cli/connection.ts): a write the leader could not
  // commit (leadership moved, no answer) is sent again with the same request id to the
  // leader named in the refusal, or else to the leader the cluster reports; the retries
  // count in its latency. The driver's clients share the latest hint.
  let hint: Agent | undefined
  const retried = { writes: 0 }
  const proposeRetrying = async (i: number): Promise<void> => {
    const command = body(i)
    const until = performance.now() + writeRetryWithinMs
    let last = 'no answer'
    for (let n = 0; performance.now() < until; n++) {
      if (n === 1) retried.writes++
      const target = hint ?? cluster.leader() ?? cluster.controllers[n % cluster.controllers.length]!
      const reply = await attempt(target, command, 3_000)
      if (reply?.ok === true) { applied(reply); hint = target; return }
      last = reply?.message ?? 'no answer'
      hint = cluster.controllers.find(c => c.id === reply?.leader && c.process !== undefined)
      await new Promise(resolve => setTimeout(resolve, writeRetryPauseMs))
    }
    throw new Error(`bench cantrip: expected the write committed within ${writeRetryWithinMs} ms, got ${last}`)
  }
  // With CANTRIP_BENCH_CPU_PROF=DIR the controllers write V8 CPU profiles there on exit
  // (to see what limits the write path). Node refuses --cpu-prof in NODE_OPTIONS, so the
  // controllers are started through a wrapper that adds it. With
  // CANTRIP_BENCH_CPU_PROF_RESTARTS=1 as well, the members the failover trials restart are
  // profiled too and the leader is not stopped first: the survivors of the last trials
  // write profiles at the end, which CANTRIP_WRITE_TRACE's clock offset lines up with the
  // trace (to see what a survivor does, or whether it ran at all, during a failover).
  const profileDir = process.env['CANTRIP_BENCH_CPU_PROF']
  const profileRestarts = profileDir !== undefined && process.env['CANTRIP_BENCH_CPU_PROF_RESTARTS'] === '1'
  const execPath = process.execPath
  try {
    await cluster.prepare(3, 0)
    if (profileDir !== undefined) process.execPath = profilingNode(charmRoot, profileDir)
    for (const c of cluster.controllers) cluster.start(c)
    if (!profileRestarts) process.execPath = execPath
    await cluster.connectClient()
    await waitFor('a leader', () => cluster.leader() !== undefined)
    const added = await cluster.addCharm(cluster.leader()!, writeBenchCharm(charmRoot), 'local:bench-config-0')
    if (added.added?.ok !== true) throw new Error(`bench cantrip: expected the charm added, got ${JSON.stringify(added.added)}`)
    const deployed = await cluster.submit({ type: 'deploy', application: 'bench', charm: 'local:bench-config-0', config: {}, constraints: {}, numUnits: 0 })
    if (deployed?.ok !== true) throw new Error(`bench cantrip: expected the application deployed, got ${JSON.stringify(deployed)}`)
    hint = cluster.leader()!
    const writes = scope.loads ? await loadCases(async i => { await proposeRetrying(i) }, cluster.controllers.map(c => c.process!.pid!)) : null
    // Profiling: let the leader write its profile (a graceful stop) before the failovers.
    if (profileDir !== undefined && !profileRestarts) {
      await waitFor('a leader', () => cluster.leader() !== undefined)
      const leader = cluster.leader()!
      await new Promise(resolve => { leader.process!.once('exit', resolve); leader.process!.kill('SIGTERM') })
      leader.process = undefined
      cluster.start(leader)
      await waitFor('the profiled leader back as a follower', () => leader.raftRole === 'follower')
    }
    const replies: ProbeReplies = { committed: 0, noLeader: 0, notLeaderAsk: 0, otherRefusal: 0, noAnswer: 0 }
    const both = await failovers(cantripFailover(cluster, attempt, body, proposeRetrying, replies), scope)
    return { writes, ...both, retriedWrites: retried.writes, probeReplies: replies }
  } finally {
    process.execPath = execPath
    await cluster.close()
    rmSync(charmRoot, { recursive: true, force: true })
  }
}

/**
 * cantrip's part of the failover trials. A probe is one `set-config` to a survivor; its
 * answer is counted by kind, which shows the client's path: a survivor with no leader
 * refuses at once ("leader unknown"), one that still names the dead leader refuses with
 * that hint, and no answer means the request itself failed or timed out.
 */
function cantripFailover (cluster: CantripdCluster, attempt: (target: Agent, command: Record<string, unknown>, timeoutMs: number) => Promise<ForwardReply | undefined>,
  body: (i: number) => Record<string, unknown>, proposeRetrying: (i: number) => Promise<void>, replies: ProbeReplies): FailoverSubject {
  let killed: Agent | undefined
  let probes = 2_000_000
  return {
    killLeader: async fault => {
      await waitFor('a leader', () => cluster.leader() !== undefined)
      killed = cluster.leader()!
      if (fault === 'stop') {
        killed.process!.kill('SIGSTOP')
        return
      }
      killed.process!.kill('SIGKILL')
      killed.process = undefined
    },
    probe: async n => {
      const survivors = cluster.controllers.filter(c => c !== killed)
      const target = survivors[n % survivors.length]!
      const sentAt = wallMs()
      const reply = await attempt(target, body(probes++), 3_000)
      // With CANTRIP_BENCH_FAILOVER_TRACE=1, every probe on stderr: when sent (wall ms), to whom, how long, what answer.
      if (process.env['CANTRIP_BENCH_FAILOVER_TRACE'] === '1') process.stderr.write(`probe ${sentAt.toFixed(1)} ${target.id.slice(-6)} ${(wallMs() - sentAt).toFixed(1)} ${reply === undefined ? 'no-answer' : reply.ok ? 'ok' : String(reply.message)}\n`)
      if (reply === undefined) replies.noAnswer++
      else if (reply.ok) replies.committed++
      else if (reply.leader === '' && reply.message?.includes('leader unknown') === true) replies.noLeader++
      else if (reply.leader !== undefined && reply.leader !== '') replies.notLeaderAsk++
      else replies.otherRefusal++
      return reply?.ok === true && reply.result.ok
    },
    restore: async fault => {
      const member = killed!
      if (fault === 'kill') cluster.start(member)
      else member.process!.kill('SIGCONT')
      await waitFor(`${member.id.slice(-6)} back as a follower of the new leader`, () => member.raftRole === 'follower' && member.term === cluster.leader()?.term)
      await proposeRetrying(probes++)
    },
    elections: () => cluster.controllers.flatMap(c => {
      const file = join(cluster.root, 'logs', `${basename(c.dir)}.err`)
      return existsSync(file) ? cantripElectionEvents(readFileSync(file, 'utf8')) : []
    })
  }
}

// `writes.ts [both|etcd|cantrip] [failover|silent|failovers [TRIALS]]`: the failover trials
// alone (no write loads), TRIALS of them per store: `failover` kill -9 only, `silent` SIGSTOP
// only, `failovers` both.
if (import.meta.url === `file://${process.argv[1]}`) {
  const which = process.argv[2] ?? 'both'
  const leg = process.argv[3]
  const trials = Number(process.argv[4] ?? failoverTrials)
  const scope: WriteScope = leg === 'failover' ? { loads: false, trials, silentTrials: 0 }
    : leg === 'silent' ? { loads: false, trials: 0, silentTrials: trials }
      : leg === 'failovers' ? { loads: false, trials, silentTrials: trials } : everything
  if (which !== 'cantrip') console.log('etcd', JSON.stringify(await measureEtcdWrites(scope)))
  if (which !== 'etcd') console.log('cantrip', JSON.stringify(await measureCantripWrites(scope)))
  process.exit(0)
}
