import { writeFile, readFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { measureDeploy100 } from './deploy-100.ts'
import { measureHookRunnerOverhead } from './hook-runner-overhead.ts'
import { measureHookToolCall } from './hook-tool-call.ts'
import { measureMesh } from './mesh-agents.ts'
import { measureSimSpeed } from './sim-speed.ts'
import { measureSimScale } from './sim-scale.ts'

/**
 * `npm run bench [-- name…]`: runs the benchmarks (all, or those named: sim, simscale,
 * tools, runner, mesh, deploy100) and merges their figures into bench/results.json (kept
 * between runs, so partial runs update only their keys). Benchmarks are never timed
 * unit tests: this machine is shared, so every figure comes with the load average at
 * the start and end.
 */
const resultsPath = new URL('./results.json', import.meta.url)

async function previous (): Promise<Record<string, unknown>> {
  try {
    return JSON.parse(await readFile(resultsPath, 'utf8')) as Record<string, unknown>
  } catch {
    return {}
  }
}

const say = (line: string): void => { process.stdout.write(line + '\n') }
type Bench = (results: Record<string, unknown>) => Promise<void>

const benches: Record<string, Bench> = {
  async sim (results) {
    say('bench: simulator speed, 5-unit machine agent world (40 seeds × 40 steps)…')
    const sim = await measureSimSpeed()
    results['simMachineAgent'] = sim
    say(`  simulated ${sim.simulatedSeconds} s in ${sim.wallSeconds} s wall: ${sim.simToWall}× real time, ${sim.hooksPerWallSecond} hooks/s, ${sim.failures} failures`)
  },
  async simscale (results) {
    say('bench: the whole system on the simulator, 3 controllers and N machine agents × 5 units deploying (10, 100, 1,000)…')
    const points = []
    for (const agents of [10, 100, 1_000]) {
      const point = await measureSimScale(agents)
      points.push(point)
      say(`  ${agents} agents, ${point.units} units: ${point.outcome}, ${point.convergedSimulatedSeconds ?? '-'} s simulated in ${point.wallSeconds} s wall (${point.simToWall}× real time), ${point.hooks} hooks, ${point.peakRssMb} MB peak RSS`)
    }
    results['simScale'] = { goal: '1,000 agents converge in < 60 s wall', points }
  },
  async tools (results) {
    say('bench: hook-tool call latency (C client over the unit socket) vs a bare spawn…')
    const tools = await measureHookToolCall()
    results['hookToolCall'] = tools
    say(`  median ${tools.spawned.client.medianMs} ms (p90 ${tools.spawned.client.p90Ms}, p99 ${tools.spawned.client.p99Ms}); bare spawn ${tools.spawned.spawnFloor.medianMs} ms; from a bash loop ${tools.inBashLoop.clientMeanMs} ms vs ${tools.inBashLoop.spawnFloorMeanMs} ms`)
  },
  async runner (results) {
    say('bench: hook runner overhead around a trivial hook…')
    const runner = await measureHookRunnerOverhead()
    results['hookRunnerOverhead'] = runner
    say(`  median: bare spawn ${runner.bare.medianMs} ms, process runner ${runner.processRunner.medianMs} ms, hook runner ${runner.hookRunner.medianMs} ms (+${runner.overheadMs} ms)`)
  },
  async mesh (results) {
    say('bench: the mesh in real processes, 3 controllers + 20 machine agents (about a minute)…')
    const mesh = await measureMesh(20, 20)
    results['mesh'] = mesh
    say(`  change notice to view at 20 agents: p50 ${mesh.noticeLatencyMs.p50} ms, p99 ${mesh.noticeLatencyMs.p99} ms (${mesh.noticeLatencyMs.samples} samples); idle RSS: machine agent ${mesh.idleRssMb.machineAgent} MB, controller ${mesh.idleRssMb.controller} MB; ${mesh.unitActorKb.perUnit} KB per unit actor`)
  },
  async deploy100 (results) {
    say('bench: deploy-to-active, 100 units of a trivial charm on 10 machines of the local provider…')
    const d = await measureDeploy100()
    results['deploy100'] = d
    say(`  ${d.seconds} s from add-machine + deploy to all ${d.units} active (${d.afterDeployCommandSeconds} s after the deploy command); floor ${d.floorSeconds} s = ${d.machines} machine agents started ${d.machineAgentsStartedSeconds} s + ${d.units}×${d.hooksPerUnit} hooks spawned serially per machine ${d.hookSpawnFloorSeconds} s`)
  }
}

const chosen = process.argv.slice(2)
for (const name of chosen) {
  if (!Object.hasOwn(benches, name)) {
    process.stderr.write(`bench: expected one of ${Object.keys(benches).join(', ')}, got ${JSON.stringify(name)}\n`)
    process.exit(2)
  }
}
const loadStart = loadavg()
const results = await previous()
for (const [name, bench] of Object.entries(benches)) {
  if (chosen.length === 0 || chosen.includes(name)) await bench(results)
}
results['machine'] = { cores: (await import('node:os')).availableParallelism(), node: process.version }
results['load'] = { start: loadStart, end: loadavg() }
results['measuredAt'] = new Date().toISOString()
await writeFile(resultsPath, JSON.stringify(results, null, 2) + '\n')
say(`bench: wrote ${resultsPath.pathname}`)
process.exit(0)
