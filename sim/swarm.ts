import { Worker } from 'node:worker_threads'
import { availableParallelism } from 'node:os'
import { runMachineAgentFaults, type ScenarioOptions, type ScenarioResult } from './scenarios/machine-agent-faults.ts'

/**
 * Many seeds of a scenario, spread over worker threads. Each worker runs a contiguous
 * slice of seeds and reports every result; the swarm returns them in seed order, so the
 * summary is the same whatever the number of jobs.
 */
export interface SwarmOptions {
  fromSeed: number
  toSeed: number
  jobs?: number
  scenario?: Omit<ScenarioOptions, 'seed'>
}

export interface SwarmWorkerRequest {
  seeds: number[]
  scenario: Omit<ScenarioOptions, 'seed'>
}

/** Seeds a worker runs before reporting back, so progress stays visible. */
const seedsPerMessageMax = 1

export async function runSeeds (seeds: readonly number[], scenario: Omit<ScenarioOptions, 'seed'>, onResult?: (result: ScenarioResult) => void): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = []
  for (const seed of seeds) {
    const result = await runMachineAgentFaults({ ...scenario, seed })
    results.push(result)
    onResult?.(result)
  }
  return results
}

export async function runSwarm (options: SwarmOptions, onResult?: (result: ScenarioResult) => void): Promise<ScenarioResult[]> {
  const seeds: number[] = []
  for (let seed = options.fromSeed; seed <= options.toSeed; seed++) seeds.push(seed)
  const jobs = Math.max(1, Math.min(options.jobs ?? availableParallelism(), seeds.length))
  const scenario = options.scenario ?? {}
  if (jobs === 1) return runSeeds(seeds, scenario, onResult)
  const slices: number[][] = Array.from({ length: jobs }, () => [])
  seeds.forEach((seed, index) => slices[index % jobs]!.push(seed))
  const all = await Promise.all(slices.map(slice => runInWorker({ seeds: slice, scenario }, onResult)))
  return all.flat().sort((a, b) => a.seed - b.seed)
}

function runInWorker (request: SwarmWorkerRequest, onResult?: (result: ScenarioResult) => void): Promise<ScenarioResult[]> {
  return new Promise((resolve, reject) => {
    // Workers do not inherit the tsx loader: register it, then load the TypeScript worker.
    const tsx = import.meta.resolve('tsx/esm/api')
    const script = new URL('./swarm-worker.ts', import.meta.url).href
    const bootstrap = `import(${JSON.stringify(tsx)}).then(m => { m.register(); return import(${JSON.stringify(script)}) })`
    const worker = new Worker(bootstrap, { eval: true, workerData: request })
    const results: ScenarioResult[] = []
    worker.on('message', (batch: ScenarioResult[]) => {
      for (const result of batch.slice(0, seedsPerMessageMax * batch.length)) {
        results.push(result)
        onResult?.(result)
      }
    })
    worker.on('error', reject)
    worker.on('exit', code => {
      if (code === 0 && results.length === request.seeds.length) resolve(results)
      else reject(new Error(`sim swarm: worker exited with code ${code} after ${results.length} of ${request.seeds.length} seeds`))
    })
  })
}
