import { writeFile, readFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
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
results['machine'] = { cores: (await import('node:os')).availableParallelism(), node: process.version }
results['load'] = { start: loadStart, end: loadavg() }
results['measuredAt'] = new Date().toISOString()
await writeFile(resultsPath, JSON.stringify(results, null, 2) + '\n')
process.stdout.write(`  simulated ${sim.simulatedSeconds} s in ${sim.wallSeconds} s wall: ${sim.simToWall}× real time, ${sim.hooksPerWallSecond} hooks/s, ${sim.failures} failures\n`)
process.stdout.write(`bench: wrote ${resultsPath.pathname}\n`)
