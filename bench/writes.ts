import '../runtime/polyfill.ts'
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { controllerProposeProtocol } from '../actors/controller/model-replica.ts'
import { decode, encode } from '../runtime/codec.ts'
import type { CommandResult } from '../runtime/model/model-types.ts'
import { admin, CantripdCluster, waitFor, type Agent } from '../test/support/cantripd-cluster.ts'
import { agentRaftTiming } from '../sim/system/system-world.ts'
import { EtcdGroup, type EtcdTiming } from './etcd-group.ts'
import { runLoad, type LoadFigures } from './load-driver.ts'
import { firstSuccessMs } from './stats.ts'

/**
 * Desired-state writes, cantrip against etcd, the same load driver for both:
 *   - cantrip: 3 `cantripd` controllers on loopback (Raft log in LevelDB, sync writes),
 *     each write a `set-config` of one application's option, the command `cantrip config
 *     app k=v` commits, sent as the admin over the controller propose protocol;
 *   - etcd: 3 members, each write a `/v3/kv/put` of a unique 32-byte key with a 200-byte value.
 * Every write goes to the current leader (where a client lands after its first redirect),
 * one in flight per client: sequential, then 16 and 64 clients. Then failover: kill -9 of
 * the leader, and the time until a write sent to any survivor every 10 ms succeeds. etcd
 * runs with cantrip's controllers' Raft timing (100 ms heartbeat, 600 ms election
 * timeout, both randomised over [t, 2t)), so failover compares like with like (issue 28).
 */
export const sharedTiming: EtcdTiming = {
  heartbeatMs: agentRaftTiming.tickMs * agentRaftTiming.heartbeatTicks,
  electionTimeoutMs: agentRaftTiming.tickMs * agentRaftTiming.electionTicks
}
export interface WriteFigures { seq: LoadFigures, c16: LoadFigures, c64: LoadFigures }
export interface StoreWrites { writes: WriteFigures, failoverMs: number | null, electionTimeoutMs: number }

/** Writes per case and the wall time a case may take, whichever ends it first. */
export const writeCases = {
  warmup: 50,
  seq: { clients: 1, total: 1_000, maxMs: 8_000 },
  c16: { clients: 16, total: 4_000, maxMs: 10_000 },
  c64: { clients: 64, total: 8_000, maxMs: 12_000 }
} as const
/** Retry period of the failover probe, and how long a failover may take before it counts as not recovered. */
const failoverProbeMs = 10
const failoverWithinMs = 30_000
const valueBytes = 200

const value = (i: number): string => `${i}:`.padEnd(valueBytes, 'v')

async function loadCases (write: (i: number) => Promise<void>): Promise<WriteFigures> {
  for (let i = 0; i < writeCases.warmup; i++) await write(-1 - i)
  return {
    seq: await runLoad(write, writeCases.seq),
    c16: await runLoad(write, writeCases.c16),
    c64: await runLoad(write, writeCases.c64)
  }
}

export async function measureEtcdWrites (): Promise<StoreWrites> {
  const etcd = new EtcdGroup()
  try {
    await etcd.start(3, sharedTiming)
    const leader = await etcd.leader()
    if (leader === undefined) throw new Error('bench etcd: expected a leader after start, got none')
    const writes = await loadCases(async i => { await etcd.put(leader, `bench/${String(i).padStart(26, '0')}`, value(i)) })
    await etcd.killHard(leader)
    let n = 0
    const survivors = etcd.live()
    const failoverMs = await firstSuccessMs(async () => await etcd.tryPut(survivors[n % survivors.length]!, `failover/${n++}`, 'x', 3_000), failoverProbeMs, failoverWithinMs)
    return { writes, failoverMs, electionTimeoutMs: sharedTiming.electionTimeoutMs }
  } finally {
    await etcd.close()
  }
}

/** A charm with one string option, so `set-config` has something to set. */
function writeBenchCharm (root: string): string {
  const dir = join(root, 'bench-config')
  mkdirSync(join(dir, 'hooks'), { recursive: true })
  writeFileSync(join(dir, 'metadata.yaml'), 'name: bench-config\nsummary: a charm with one option\ndescription: for the write bench\n')
  writeFileSync(join(dir, 'config.yaml'), 'options:\n  v:\n    type: string\n    default: ""\n')
  return dir
}

function profilingNode (root: string, profileDir: string): string {
  const wrapper = join(root, 'node-cpu-prof')
  writeFileSync(wrapper, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} --cpu-prof --cpu-prof-dir=${JSON.stringify(profileDir)} "$@"\n`, { mode: 0o755 })
  return wrapper
}

type ForwardReply = { ok: true, result: CommandResult } | { ok: false, message?: string }

export async function measureCantripWrites (): Promise<StoreWrites> {
  const cluster = new CantripdCluster()
  const charmRoot = mkdtempSync(join(tmpdir(), 'cantrip-bench-charm-'))
  let request = 0
  const propose = async (target: Agent, i: number, timeoutMs = 5_000): Promise<void> => {
    const body = { type: 'set-config', application: 'bench', config: { v: value(i) }, requestId: `bench-${++request}`, proposer: admin }
    const reply = decode(await cluster.client!.request(target.id, controllerProposeProtocol, encode(body, 'bench'), { timeoutMs }), 'bench') as ForwardReply
    if (!reply.ok) throw new Error(`bench cantrip: expected the write committed, got ${reply.message ?? 'a refusal'}`)
    if (!reply.result.ok) throw new Error(`bench cantrip: expected set-config applied, got ${JSON.stringify(reply.result).slice(0, 200)}`)
  }
  // With CANTRIP_BENCH_CPU_PROF=DIR the controllers write V8 CPU profiles there on exit
  // (to see what limits the write path). Node refuses --cpu-prof in NODE_OPTIONS, so the
  // controllers are started through a wrapper that adds it.
  const profileDir = process.env['CANTRIP_BENCH_CPU_PROF']
  const execPath = process.execPath
  try {
    await cluster.prepare(3, 0)
    if (profileDir !== undefined) process.execPath = profilingNode(charmRoot, profileDir)
    for (const c of cluster.controllers) cluster.start(c)
    process.execPath = execPath
    await cluster.connectClient()
    await waitFor('a leader', () => cluster.leader() !== undefined)
    const added = await cluster.addCharm(cluster.leader()!, writeBenchCharm(charmRoot), 'local:bench-config-0')
    if (added.added?.ok !== true) throw new Error(`bench cantrip: expected the charm added, got ${JSON.stringify(added.added)}`)
    const deployed = await cluster.submit({ type: 'deploy', application: 'bench', charm: 'local:bench-config-0', config: {}, constraints: {}, numUnits: 0 })
    if (deployed?.ok !== true) throw new Error(`bench cantrip: expected the application deployed, got ${JSON.stringify(deployed)}`)
    const leader = cluster.leader()!
    const writes = await loadCases(async i => { await propose(leader, i) })
    // Profiling: let the leader write its profile (a graceful stop) before the failover.
    if (profileDir !== undefined) await new Promise(resolve => { leader.process!.once('exit', resolve); leader.process!.kill('SIGTERM') })
    leader.process?.kill('SIGKILL')
    leader.process = undefined
    let n = 0
    const survivors = cluster.controllers.filter(c => c.process !== undefined)
    const failoverMs = await firstSuccessMs(async () => {
      const target = survivors[n % survivors.length]!
      try { await propose(target, 1_000_000 + n++, 3_000); return true } catch { return false }
    }, failoverProbeMs, failoverWithinMs)
    return { writes, failoverMs, electionTimeoutMs: sharedTiming.electionTimeoutMs }
  } finally {
    await cluster.close()
    rmSync(charmRoot, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const which = process.argv[2] ?? 'both'
  if (which !== 'cantrip') console.log('etcd', JSON.stringify(await measureEtcdWrites()))
  if (which !== 'etcd') console.log('cantrip', JSON.stringify(await measureCantripWrites()))
  process.exit(0)
}
