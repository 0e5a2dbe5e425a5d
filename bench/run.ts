import { writeFile, readFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { measureHookRunnerOverhead } from './hook-runner-overhead.ts'
import { measureHookToolCall } from './hook-tool-call.ts'
import { measureMesh } from './mesh-agents.ts'
import { measureSimSpeed } from './sim-speed.ts'

/**
 * `npm run bench`: runs the benchmarks that exist so far and merges their figures into
 * bench/results.json (kept between runs, so partial runs update only their keys).
 * Benchmarks are never timed unit tests: this machine is shared, so every figure comes
 * with the load average at the start and end.
 */
const resultsPath = new URL('./results.json', import.meta.url)

async function previous (): Promise<Record<string, unknown>> {
  try {
    return JSON.parse(await readFile(resultsPath, 'utf8')) as Record<string, unknown>
  } catch {
    return {}
  }
}

const loadStart = loadavg()
const results = await previous()
process.stdout.write('bench: simulator speed, 5-unit machine agent world (40 seeds × 40 steps)…\n')
const sim = await measureSimSpeed()
results['simMachineAgent'] = sim
process.stdout.write('bench: hook-tool call latency (C client over the unit socket) vs a bare spawn…\n')
const tools = await measureHookToolCall()
results['hookToolCall'] = tools
process.stdout.write(`  median ${tools.spawned.client.medianMs} ms (p90 ${tools.spawned.client.p90Ms}, p99 ${tools.spawned.client.p99Ms}); bare spawn ${tools.spawned.spawnFloor.medianMs} ms; from a bash loop ${tools.inBashLoop.clientMeanMs} ms vs ${tools.inBashLoop.spawnFloorMeanMs} ms\n`)
process.stdout.write('bench: hook runner overhead around a trivial hook…\n')
const runner = await measureHookRunnerOverhead()
results['hookRunnerOverhead'] = runner
process.stdout.write(`  median: bare spawn ${runner.bare.medianMs} ms, process runner ${runner.processRunner.medianMs} ms, hook runner ${runner.hookRunner.medianMs} ms (+${runner.overheadMs} ms)\n`)
process.stdout.write('bench: the mesh in real processes, 3 controllers + 20 machine agents (about a minute)…\n')
const mesh = await measureMesh(20, 20)
results['mesh'] = mesh
process.stdout.write(`  change notice to view at 20 agents: p50 ${mesh.noticeLatencyMs.p50} ms, p99 ${mesh.noticeLatencyMs.p99} ms (${mesh.noticeLatencyMs.samples} samples); idle RSS: machine agent ${mesh.idleRssMb.machineAgent} MB, controller ${mesh.idleRssMb.controller} MB; ${mesh.unitActorKb.perUnit} KB per unit actor\n`)
results['machine'] = { cores: (await import('node:os')).availableParallelism(), node: process.version }
results['load'] = { start: loadStart, end: loadavg() }
results['measuredAt'] = new Date().toISOString()
await writeFile(resultsPath, JSON.stringify(results, null, 2) + '\n')
process.stdout.write(`  simulated ${sim.simulatedSeconds} s in ${sim.wallSeconds} s wall: ${sim.simToWall}× real time, ${sim.hooksPerWallSecond} hooks/s, ${sim.failures} failures\n`)
process.stdout.write(`bench: wrote ${resultsPath.pathname}\n`)
