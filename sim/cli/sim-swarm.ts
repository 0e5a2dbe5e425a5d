import { performance } from 'node:perf_hooks'
import { Worker } from 'node:worker_threads'
import type { RunResult, Scenario } from '../scenario/scenario-types.ts'
import { crashResult } from './crash-result.ts'
import type { SimEngine } from './sim-engine.ts'
import type { SwarmWorkerData } from './sim-swarm-worker.ts'

/**
 * Many seeds of one scenario. With one job they run in this thread; with more, each
 * worker thread gets every K-th seed (so slow and fast seeds spread evenly) and posts
 * each result as it finishes. Results come back in seed order, so the summary and the
 * failing-seeds file are the same whatever the number of jobs.
 */
export interface SwarmRun {
  engine: SimEngine
  engineModule: string
  scenario: Scenario
  scenarioPath: string
  seeds: readonly number[]
  jobs: number
  onResult?: (result: RunResult) => void
}

export async function runSwarm (run: SwarmRun): Promise<RunResult[]> {
  const jobs = Math.max(1, Math.min(run.jobs, run.seeds.length))
  const results: RunResult[] = []
  const collect = (result: RunResult): void => { results.push(result); run.onResult?.(result) }
  if (jobs === 1) {
    for (const seed of run.seeds) collect(await runOne(run, seed))
  } else {
    const slices: number[][] = Array.from({ length: jobs }, () => [])
    run.seeds.forEach((seed, i) => slices[i % jobs]!.push(seed))
    await Promise.all(slices.map(seeds => runWorker({ engineModule: run.engineModule, scenario: run.scenario, scenarioPath: run.scenarioPath, seeds }, collect)))
  }
  return results.sort((a, b) => a.seed - b.seed)
}

async function runOne (run: SwarmRun, seed: number): Promise<RunResult> {
  const started = performance.now()
  try {
    return (await run.engine.runScenario(run.scenario, { seed, recordEvents: false, scenarioPath: run.scenarioPath })).result
  } catch (error) {
    return crashResult(run.scenario, seed, run.scenarioPath, error, performance.now() - started)
  }
}

function runWorker (data: SwarmWorkerData, collect: (result: RunResult) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const worker = swarmWorker(data)
    let received = 0
    worker.on('message', (result: RunResult) => { received++; collect(result) })
    worker.on('error', reject)
    worker.on('exit', code => {
      if (code === 0 && received === data.seeds.length) resolve()
      else reject(new Error(`sim: expected a swarm worker to run ${data.seeds.length} seeds, got exit code ${code} after ${received}`))
    })
  })
}

/**
 * From the bundle (scripts/build.ts: every file directly in dist/), the worker's own
 * entry point beside this code. From source, workers do not inherit the tsx loader:
 * register it, then load the TypeScript worker.
 */
function swarmWorker (data: SwarmWorkerData): Worker {
  if (import.meta.url.endsWith('.mjs')) return new Worker(new URL('./sim-swarm-worker.mjs', import.meta.url), { workerData: data })
  const tsx = import.meta.resolve('tsx/esm/api')
  const script = new URL('./sim-swarm-worker.ts', import.meta.url).href
  const bootstrap = `import(${JSON.stringify(tsx)}).then(m => { m.register(); return import(${JSON.stringify(script)}) })`
  return new Worker(bootstrap, { eval: true, workerData: data })
}
