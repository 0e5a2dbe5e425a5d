import '../runtime/polyfill.ts'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { controllerProposeProtocol } from '../actors/controller/model-replica.ts'
import { decode, encode } from '../runtime/codec.ts'
import { admin, CantripdCluster } from '../test/support/cantripd-cluster.ts'
import { round } from './stats.ts'
import { deployBenchApplication, sharedTiming } from './writes.ts'
import { userHz } from './child-processes.ts'
import { EtcdGroup } from './etcd-group.ts'

/**
 * Server CPU per sequential write, by process and split into user and system time
 * (issue 28): three `cantripd` controllers, one client, one write in flight, nothing
 * traced, so the figure is the shipping code's. Wall time means nothing on a shared
 * machine; CPU per write does. The controllers' idle CPU (ticks, heartbeats, gossip),
 * sampled after the writes, is printed beside it and taken away in the `net` figures.
 *
 *   node --import tsx bench/write-cpu.ts [WRITES] [--block N] [--perf DIR] [--etcd]
 *
 * With `--etcd`, the same for etcd's three members (bench/etcd-group.ts, cantrip's Raft
 * timing, the put bench/writes.ts makes), to compare CPU per write in one sitting.
 *
 * With `--block N`, the servers' CPU per write is also given for each N writes in turn
 * (/proc counts in 10 ms steps, so a block wants a few hundred writes).
 *
 * With `--strace DIR`, `strace -c -f` counts each server process's system calls during
 * the measured writes (ROLE.strace, one table per process, all threads): how many
 * socket writes, reads, epoll waits and futex calls one write costs. strace slows the
 * traced processes several times over, so the CPU figures of such a run mean nothing;
 * only the counts do. With `--strace-log` as well, each call is logged instead of counted.
 *
 * With `--perf DIR`, `perf record -e cpu-clock` samples each controller during the writes
 * (on-CPU time only, kernel included, so a process waiting for a core is not counted as
 * busy, as V8's wall-clock sampler counts it); the controllers run with
 * `--perf-basic-prof` so perf names their JavaScript frames.
 */
const warmup = 50
const idleSampleMs = 3_000

interface Cpu { user: number, system: number }
/** User and system CPU ms of one process, all threads (/proc/PID/stat). */
function cpuOf (pid: number): Cpu {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return { user: Number(fields[11]) * 1000 / userHz, system: Number(fields[12]) * 1000 / userHz }
}

export interface WriteCpu {
  writes: number
  wallMs: number
  perWrite: Record<string, Cpu>
  idlePerSecond: Record<string, Cpu>
  netServersMsPerWrite: number
  /** The three controllers' CPU ms per write (user + system) in each block of `blockWrites` writes, in order: how it settles as V8 optimises. */
  serversMsPerWriteByBlock: number[]
  /** The wall ms of each block, to take the idle CPU out of its figure. */
  blockWallMs: number[]
  /** Each process's CPU ms from its start until the store was ready for the warm-up writes (for cantrip: elected, and the bench application deployed): what a V8 option costs a start. */
  startCpuMs: Record<string, number>
}

/** A store under the sequential load: its processes by role, and one write. */
interface Subject { roles: Map<string, number>, write: (i: number) => Promise<void>, startCpuMs: Record<string, number> }

/**
 * `launcher` (optional) goes in front of `node cantripd …` for each controller, as
 * CantripdCluster's launcher does (bench/v8-flag-trials.ts runs another build with V8
 * options that way); without it, CANTRIP_BENCH_LAUNCHER=PROGRAM starts each controller as
 * `PROGRAM node cantripd …` (to add V8 flags, say).
 */
export async function measureCantripWriteCpu (writes: number, perfDir?: string, blockWrites = writes, launcher?: string[]): Promise<WriteCpu> {
  const root = mkdtempSync(join(tmpdir(), 'cantrip-write-cpu-'))
  const cluster = new CantripdCluster()
  const previous = process.env['NODE_OPTIONS']
  try {
    await cluster.prepare(3, 0)
    const fromEnv = process.env['CANTRIP_BENCH_LAUNCHER']
    if (launcher !== undefined) cluster.launcher = () => launcher
    else if (fromEnv !== undefined && fromEnv !== '') cluster.launcher = () => [fromEnv]
    if (perfDir !== undefined) process.env['NODE_OPTIONS'] = `${previous ?? ''} --perf-basic-prof`
    for (const c of cluster.controllers) cluster.start(c)
    if (previous === undefined) delete process.env['NODE_OPTIONS']
    else process.env['NODE_OPTIONS'] = previous
    await cluster.connectClient()
    await deployBenchApplication(cluster, root, 'bench write cpu')
    const leader = cluster.leader()!
    const roles = new Map<string, number>([['leader', leader.process!.pid!], ...cluster.controllers.filter(c => c !== leader).map((c, i): [string, number] => [`follower${i + 1}`, c.process!.pid!])])
    const write = async (i: number): Promise<void> => {
      const body = { type: 'set-config', application: 'bench', config: { v: `${i}:`.padEnd(200, 'v') }, requestId: `cpu-${i}`, proposer: admin }
      const reply = decode(await cluster.client!.request(leader.id, controllerProposeProtocol, encode(body, 'bench'), { timeoutMs: 10_000 }), 'bench') as { ok?: boolean }
      if (reply.ok !== true) throw new Error(`bench write cpu: expected write ${i} committed, got ${JSON.stringify(reply).slice(0, 200)}`)
    }
    return await measureSequential({ roles, write, startCpuMs: startCpuOf(roles) }, writes, blockWrites, perfDir)
  } finally {
    await cluster.close()
    rmSync(root, { recursive: true, force: true })
  }
}

/** The same for etcd, as bench/writes.ts writes to it (a unique 32-byte key, a 200-byte value, to the leader). */
export async function measureEtcdWriteCpu (writes: number, perfDir?: string, blockWrites = writes): Promise<WriteCpu> {
  const etcd = new EtcdGroup()
  try {
    await etcd.start(3, sharedTiming)
    const leader = await etcd.leader()
    if (leader === undefined) throw new Error('bench write cpu: expected an etcd leader after start, got none')
    const roles = new Map<string, number>([['leader', leader.process.pid!], ...etcd.members.filter(m => m !== leader).map((m, i): [string, number] => [`follower${i + 1}`, m.process.pid!])])
    const write = async (i: number): Promise<void> => { await etcd.put(leader, `bench/${String(i).padStart(26, '0')}`, `${i}:`.padEnd(200, 'v')) }
    return await measureSequential({ roles, write, startCpuMs: startCpuOf(roles) }, writes, blockWrites, perfDir)
  } finally {
    await etcd.close()
  }
}

function straceDirArg (): string | undefined {
  const at = process.argv.indexOf('--strace')
  return at > 0 ? process.argv[at + 1] : undefined
}

function startCpuOf (roles: Map<string, number>): Record<string, number> {
  return Object.fromEntries([...roles].map(([role, pid]) => { const c = cpuOf(pid); return [role, round(c.user + c.system, 3)] }))
}

async function measureSequential ({ roles, write, startCpuMs }: Subject, writes: number, blockWrites: number, perfDir: string | undefined): Promise<WriteCpu> {
  let perf: ChildProcess[] = []
  const straceDir = straceDirArg()
  try {
    for (let i = 0; i < warmup; i++) await write(i)
    if (perfDir !== undefined) {
      perf = [...roles].map(([role, pid]) => spawn('perf', ['record', '-q', '-e', 'cpu-clock', '-F', '2000', '-g', '-p', String(pid), '-o', join(perfDir, `${role}.perf.data`)], { stdio: 'ignore' }))
      await new Promise(resolve => setTimeout(resolve, 500))
    }
    if (straceDir !== undefined) {
      // With --strace-log, every call with its thread, its fds named (-yy) and its size, to tell sockets from files and eventfds.
      const mode = process.argv.includes('--strace-log') ? ['-f', '-yy', '-s', '0', '-e', 'trace=!mprotect,madvise,mmap,munmap,getpid,brk'] : ['-c', '-f']
      // Beside perf's recorders when both are asked for, so that every tracer is stopped below.
      perf.push(...[...roles].map(([role, pid]) => spawn('strace', [...mode, '-p', String(pid), '-o', join(straceDir, `${role}.strace`)], { stdio: 'ignore' })))
      await new Promise(resolve => setTimeout(resolve, 1_000))
    }
    const sample = (): Map<string, Cpu> => new Map([...roles].map(([role, pid]) => [role, cpuOf(pid)]))
    const clientCpu = (): Cpu => { const u = process.cpuUsage(); return { user: u.user / 1000, system: u.system / 1000 } }
    // With --signal-counts, each server is sent SIGUSR2 before and after the measured writes and once more after the idle sample (a preload that counts, say, async resources by type answers it; without one, SIGUSR2 ends the process).
    const signalCounts = process.argv.includes('--signal-counts')
    if (signalCounts) for (const pid of roles.values()) process.kill(pid, 'SIGUSR2')
    const before = sample()
    const clientBefore = clientCpu()
    const started = performance.now()
    const servers = (): number => [...roles.values()].reduce((sum, pid) => { const c = cpuOf(pid); return sum + c.user + c.system }, 0)
    const byBlock: number[] = []
    const blockWallMs: number[] = []
    let blockStart = servers()
    let blockStartedAt = started
    for (let i = 0; i < writes; i++) {
      await write(warmup + i)
      if ((i + 1) % blockWrites === 0 || i + 1 === writes) {
        const now = servers()
        byBlock.push(round((now - blockStart) / ((i % blockWrites) + 1), 3))
        blockWallMs.push(round(performance.now() - blockStartedAt))
        blockStart = now
        blockStartedAt = performance.now()
      }
    }
    const wallMs = performance.now() - started
    if (signalCounts) for (const pid of roles.values()) process.kill(pid, 'SIGUSR2')
    const after = sample()
    const clientAfter = clientCpu()
    for (const p of perf) p.kill('SIGINT')
    await Promise.all(perf.map(async p => await new Promise(resolve => { p.once('exit', resolve) })))
    perf = []
    await new Promise(resolve => setTimeout(resolve, idleSampleMs))
    const idle = sample()
    // A third time after the idle sample, so the counts can be taken net of idle work too.
    if (signalCounts) for (const pid of roles.values()) process.kill(pid, 'SIGUSR2')
    const diff = (a: Cpu, b: Cpu, per: number): Cpu => ({ user: round((b.user - a.user) / per, 3), system: round((b.system - a.system) / per, 3) })
    const perWrite: Record<string, Cpu> = { client: diff(clientBefore, clientAfter, writes) }
    const idlePerSecond: Record<string, Cpu> = {}
    let net = 0
    for (const role of roles.keys()) {
      perWrite[role] = diff(before.get(role)!, after.get(role)!, writes)
      idlePerSecond[role] = diff(after.get(role)!, idle.get(role)!, idleSampleMs / 1000)
      const idleMs = idlePerSecond[role].user + idlePerSecond[role].system
      net += perWrite[role].user + perWrite[role].system - idleMs * wallMs / 1000 / writes
    }
    return { writes, wallMs: round(wallMs), perWrite, idlePerSecond, netServersMsPerWrite: round(net, 3), serversMsPerWriteByBlock: byBlock, blockWallMs, startCpuMs }
  } finally {
    // Each perf by its own pid, never by name: the machine is shared.
    for (const p of perf) p.kill('SIGINT')
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const writes = Number(process.argv[2] ?? 1000)
  if (!Number.isSafeInteger(writes) || writes < 1) throw new Error(`bench write cpu: expected a positive number of writes, got ${process.argv[2]}`)
  const perfAt = process.argv.indexOf('--perf')
  const blocksAt = process.argv.indexOf('--block')
  const measure = process.argv.includes('--etcd') ? measureEtcdWriteCpu : measureCantripWriteCpu
  const figures = await measure(writes, perfAt > 0 ? process.argv[perfAt + 1] : undefined, blocksAt > 0 ? Number(process.argv[blocksAt + 1]) : writes)
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
  const servers = ['leader', 'follower1', 'follower2'].reduce((sum, r) => sum + figures.perWrite[r]!.user + figures.perWrite[r]!.system, 0)
  console.log(JSON.stringify({ ...figures, serversMsPerWrite: round(servers, 3), load }))
  process.exit(0)
}
