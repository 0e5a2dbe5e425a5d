/**
 * The mesh in real processes: 3 cantripd controllers and N machine agents on loopback.
 *   - notice latency: from a command's acknowledgement at the client to each machine
 *     agent holding a view of the model at that revision or later (notice by gossip, then
 *     a machine-model fetch), over several commits; p50 and p99 over all agents;
 *   - idle RSS of a machine agent and of a controller (VmRSS from /proc, median);
 *   - memory per unit actor: the heap of one process running K unit actors in the
 *     simulator's unit world, minus the heap with none, over K.
 * Run alone with `node --expose-gc --import tsx bench/mesh-agents.ts [agents] [commits]`;
 * `npm run bench` includes it with 20 agents.
 */
import '../runtime/polyfill.ts'
import { readFileSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { UnitWorld } from '../sim/unit-world.ts'
import { CantripdCluster, waitFor } from '../test/support/cantripd-cluster.ts'

export interface MeshBench {
  agents: number
  commits: number
  noticeLatencyMs: { p50: number, p99: number, max: number, samples: number }
  idleRssMb: { machineAgent: number, controller: number }
  unitActorKb: { units: number, perUnit: number, perUnitBytes: number }
}

function quantile (values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 10) / 10
}

function rssMb (pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find(l => l.startsWith('VmRSS:'))
  return Math.round(Number(line?.split(/\s+/)[1] ?? 0) / 1024)
}

export async function measureMesh (agents = 20, commits = 20): Promise<MeshBench> {
  const cluster = new CantripdCluster()
  try {
    await cluster.prepare(3, agents)
    for (const c of cluster.controllers) cluster.start(c)
    await cluster.connectClient()
    await waitFor('a leader', () => cluster.leader() !== undefined)
    for (const m of cluster.machines) cluster.start(m)
    await waitFor('every machine agent with a first view', () => cluster.machines.every(m => m.views.length > 0))
    // Let start-up settle before measuring.
    await new Promise(resolve => setTimeout(resolve, 3_000))
    const latencies: number[] = []
    for (let i = 0; i < commits; i++) {
      const result = await cluster.submit({ type: 'add-machine' })
      const ackedAt = performance.timeOrigin + performance.now()
      if (result === undefined || !result.ok) throw new Error(`mesh bench: commit ${i} failed: ${JSON.stringify(result)}`)
      await waitFor(`every agent at revision ${result.index}`, () => cluster.machines.every(m => m.views.some(v => v.revision >= result.index)))
      for (const m of cluster.machines) {
        const view = m.views.find(v => v.revision >= result.index)!
        latencies.push(Math.max(0, view.at - ackedAt))
      }
      await new Promise(resolve => setTimeout(resolve, 100))
    }
    await new Promise(resolve => setTimeout(resolve, 2_000))
    const machineRss = cluster.machines.map(m => rssMb(m.process!.pid!))
    const controllerRss = cluster.controllers.map(c => rssMb(c.process!.pid!))
    return {
      agents,
      commits,
      noticeLatencyMs: { p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), max: quantile(latencies, 1), samples: latencies.length },
      idleRssMb: { machineAgent: quantile(machineRss, 0.5), controller: quantile(controllerRss, 0.5) },
      unitActorKb: await measureUnitActorMemory(200)
    }
  } finally {
    await cluster.close()
  }
}

/** Heap per unit actor, from a unit world with `units` units that have run their first hooks. */
export async function measureUnitActorMemory (units: number): Promise<{ units: number, perUnit: number, perUnitBytes: number }> {
  const gc = (globalThis as { gc?: () => void }).gc
  const heap = (): number => { gc?.(); gc?.(); return process.memoryUsage().heapUsed }
  const world = new UnitWorld({ seed: 1, updateStatusIntervalMs: 300_000 })
  const before = heap()
  world.model.deploy({ name: 'bench' }, units, Array.from({ length: units }, () => '0'))
  await world.advance(60_000)
  const after = heap()
  return { units, perUnit: Math.round((after - before) / units / 1024), perUnitBytes: Math.round((after - before) / units) }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await measureMesh(Number(process.argv[2] ?? 20), Number(process.argv[3] ?? 20))
  const path = new URL('./results.json', import.meta.url)
  let results: Record<string, unknown> = {}
  try { results = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown> } catch { /* first run */ }
  results['mesh'] = result
  await writeFile(path, JSON.stringify(results, null, 2) + '\n')
  process.stdout.write(JSON.stringify(result, null, 2) + '\n')
  process.exit(0)
}
