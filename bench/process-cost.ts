import '../runtime/polyfill.ts'
import { resolve } from 'node:path'
import { CantripdCluster, freePortRun, waitFor, type Agent } from '../test/support/cantripd-cluster.ts'
import { cpuMs } from './child-processes.ts'
import { sleep } from './stats.ts'

/**
 * `node --import tsx bench/process-cost.ts [IDLE_S]`: what the cantripd processes of a
 * real-process test cost. Three controllers and three machine agents (the dist bundle, as
 * the tests run it), kv deployed with one unit per machine: each process's CPU (user +
 * system, from /proc) to become ready (a controller: a leader known; a machine agent: its
 * unit active and idle), then its CPU per minute once settled, over IDLE_S seconds
 * (default 60). With CANTRIP_PROF_DIR set every agent runs with --cpu-prof into that
 * directory (summarise with bench/profile-summary.ts).
 */
const settleMs = 10_000

interface Row { name: string, readyCpuMs: number, idleCpuMsPerMin: number }

function label (agent: Agent): string {
  return agent.role === 'controller' ? `controller ${agent.id.slice(-4)}` : `machine ${agent.machineId!}`
}

export async function measureProcessCost (idleMs: number): Promise<{ rows: Row[], bootstrapWallMs: number }> {
  const profDir = process.env['CANTRIP_PROF_DIR']
  const cluster = new CantripdCluster()
  // Extra cantripd arguments for an ablation (e.g. CANTRIP_EXTRA_ARGS='--presence-ms 2000,5000,5000').
  const extra = process.env['CANTRIP_EXTRA_ARGS']
  if (extra !== undefined && extra.trim() !== '') cluster.extraArgs = extra.trim().split(/\s+/)
  // Node refuses --cpu-prof in NODE_OPTIONS: a shell in front adds it and execs node (same pid).
  // CANTRIP_BENCH_DIST: another build's dist/ (in a copy of the tree) runs instead, to
  // compare two builds alternately on a loaded machine.
  const otherDist = process.env['CANTRIP_BENCH_DIST']
  const program = otherDist === undefined ? '"$@"' : `${otherDist}/cantripd.mjs "\${@:2}"`
  const prof = profDir === undefined ? '' : `--cpu-prof --cpu-prof-dir=${profDir} `
  if (profDir !== undefined || otherDist !== undefined) cluster.launcher = () => ['bash', '-c', `node="$1"; shift; exec "$node" ${prof}${program}`, 'bench']
  const ready = new Map<Agent, number>()
  const began = performance.now()
  try {
    await cluster.prepare(3, 3)
    for (const c of cluster.controllers) cluster.start(c)
    await cluster.connectClient()
    await waitFor('a leader', () => cluster.leader() !== undefined)
    for (const c of cluster.controllers) ready.set(c, cpuMs(c.process!.pid!))
    const bootstrapWallMs = performance.now() - began
    const charm = await cluster.addCharm(cluster.controllers[0]!, resolve('examples/charms/kv'), 'local:kv-0')
    if (charm.added?.ok !== true) throw new Error(`add-charm: ${JSON.stringify(charm.added)}`)
    for (const _ of cluster.machines) await cluster.submit({ type: 'add-machine' })
    await cluster.submit({ type: 'deploy', application: 'kv', charm: 'local:kv-0', config: { 'port-base': await freePortRun(3) }, constraints: {}, numUnits: 3, placement: ['0', '1', '2'] })
    for (const m of cluster.machines) cluster.start(m)
    const units = ['kv/0', 'kv/1', 'kv/2']
    await waitFor('every unit active and idle', async () => {
      const summary = await cluster.summary(cluster.leader() ?? cluster.controllers[0]!)
      if (summary === undefined || !summary.ok) return false
      units.forEach((unit, i) => {
        const m = cluster.machines[i]!
        if (!ready.has(m) && summary.units[unit]?.workload === 'active' && summary.units[unit]?.agent === 'idle') ready.set(m, cpuMs(m.process!.pid!))
      })
      return cluster.machines.every(m => ready.has(m))
    })
    await sleep(settleMs)
    const agents = [...cluster.controllers, ...cluster.machines]
    const before = agents.map(a => cpuMs(a.process!.pid!))
    // For strace or perf from outside while the cluster idles.
    process.stderr.write(`idle: ${agents.map(a => `${label(a)}=${a.process!.pid!}`).join(' ')}\n`)
    await sleep(idleMs)
    const rows = agents.map((a, i) => ({
      name: `${label(a)}${a === cluster.leader() ? ' (leader)' : ''}`,
      readyCpuMs: ready.get(a)!,
      idleCpuMsPerMin: Math.round((cpuMs(a.process!.pid!) - before[i]!) * 60_000 / idleMs)
    }))
    return { rows, bootstrapWallMs }
  } finally {
    await cluster.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { rows, bootstrapWallMs } = await measureProcessCost(Number(process.argv[2] ?? 60) * 1000)
  console.log('process                 ready CPU ms   idle CPU ms/min')
  for (const row of rows) console.log(`${row.name.padEnd(24)}${String(row.readyCpuMs).padStart(12)}${String(row.idleCpuMsPerMin).padStart(18)}`)
  console.log(`(a leader ${Math.round(bootstrapWallMs)} ms after the controllers started)`)
  process.exit(0)
}
