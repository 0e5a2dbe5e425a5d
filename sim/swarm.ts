import { Worker } from 'node:worker_threads'
import { availableParallelism } from 'node:os'
import { runControllerGroupFaults, type ControllerScenarioOptions, type ControllerScenarioResult } from './scenarios/controller-group-faults.ts'
import { runMachineAgentFaults, type ScenarioOptions, type ScenarioResult } from './scenarios/machine-agent-faults.ts'
import { runProvisioningFaults, type ProvisioningScenarioOptions, type ProvisioningScenarioResult } from './scenarios/provisioning-faults.ts'

/**
 * Many seeds of a scenario, spread over worker threads. Each worker runs a slice of the
 * seeds and reports every result; the swarm returns them in seed order, so the summary
 * is the same whatever the number of jobs.
 */
export interface Scenarios {
  'machine-agent': { options: Omit<ScenarioOptions, 'seed'>, result: ScenarioResult }
  'controller-group': { options: Omit<ControllerScenarioOptions, 'seed'>, result: ControllerScenarioResult }
  'provisioning': { options: Omit<ProvisioningScenarioOptions, 'seed'>, result: ProvisioningScenarioResult }
}

export type ScenarioName = keyof Scenarios

export interface SwarmOptions<K extends ScenarioName = 'machine-agent'> {
  fromSeed: number
  toSeed: number
  /**
   * The first `again` seeds run a second time, after the rest, in the same workers: a
   * determinism check that pays for no second set of workers (each loads the code and
   * warms up, seconds of CPU). Both results are returned, the first run's first.
   */
  again?: number
  jobs?: number
  /** Which scenario; the machine agent's when absent. */
  kind?: K
  scenario?: Scenarios[K]['options']
  /**
   * The built worker (dist/scenario-swarm-worker.mjs, scripts/build.ts) for workers to
   * load: one bundle read instead of the tree transpiled through tsx in every worker
   * (about a CPU-second each). Without it, and outside a bundle, workers use tsx.
   */
  workerBundle?: URL
}

export interface SwarmWorkerRequest {
  kind: ScenarioName
  seeds: number[]
  scenario: Scenarios[ScenarioName]['options']
}

/** Runs one seed of the named scenario in this thread. */
async function runOne<K extends ScenarioName> (kind: K, seed: number, scenario: Scenarios[K]['options']): Promise<Scenarios[K]['result']> {
  if (kind === 'controller-group') return await runControllerGroupFaults({ ...scenario as Scenarios['controller-group']['options'], seed })
  if (kind === 'provisioning') return await runProvisioningFaults({ ...scenario as Scenarios['provisioning']['options'], seed })
  return await runMachineAgentFaults({ ...scenario as Scenarios['machine-agent']['options'], seed })
}

export async function runSeeds<K extends ScenarioName> (
  kind: K, seeds: readonly number[], scenario: Scenarios[K]['options'], onResult?: (result: Scenarios[K]['result']) => void
): Promise<Array<Scenarios[K]['result']>> {
  const results: Array<Scenarios[K]['result']> = []
  for (const seed of seeds) {
    const result = await runOne(kind, seed, scenario)
    results.push(result)
    onResult?.(result)
  }
  return results
}

export async function runSwarm<K extends ScenarioName = 'machine-agent'> (
  options: SwarmOptions<K>, onResult?: (result: Scenarios[K]['result']) => void
): Promise<Array<Scenarios[K]['result']>> {
  const kind = (options.kind ?? 'machine-agent') as K
  const seeds: number[] = []
  for (let seed = options.fromSeed; seed <= options.toSeed; seed++) seeds.push(seed)
  const jobs = Math.max(1, Math.min(options.jobs ?? availableParallelism(), seeds.length))
  const scenario = options.scenario ?? {}
  const slices: number[][] = Array.from({ length: jobs }, () => [])
  seeds.forEach((seed, index) => slices[index % jobs]!.push(seed))
  // A seed run again goes to the worker that ran it first, after that worker's share.
  seeds.slice(0, Math.max(0, options.again ?? 0)).forEach((seed, index) => slices[index % jobs]!.push(seed))
  if (jobs === 1) return await runSeeds(kind, slices[0]!, scenario, onResult)
  const all = await Promise.all(slices.map(slice => runInWorker<K>({ kind, seeds: slice, scenario }, options.workerBundle, onResult)))
  // A stable sort: a seed run twice by one worker keeps its first run first.
  return all.flat().sort((a, b) => a.seed - b.seed)
}

function startWorker (request: SwarmWorkerRequest, bundle: URL | undefined): Worker {
  // Inside the bundle, the worker is a sibling file.
  if (import.meta.url.endsWith('.mjs')) return new Worker(new URL('./scenario-swarm-worker.mjs', import.meta.url), { workerData: request })
  if (bundle !== undefined) return new Worker(bundle, { workerData: request })
  // Workers do not inherit the tsx loader: register it, then load the TypeScript worker.
  const tsx = import.meta.resolve('tsx/esm/api')
  const script = new URL('./swarm-worker.ts', import.meta.url).href
  const bootstrap = `import(${JSON.stringify(tsx)}).then(m => { m.register(); return import(${JSON.stringify(script)}) })`
  return new Worker(bootstrap, { eval: true, workerData: request })
}

function runInWorker<K extends ScenarioName> (request: SwarmWorkerRequest, bundle: URL | undefined, onResult?: (result: Scenarios[K]['result']) => void): Promise<Array<Scenarios[K]['result']>> {
  return new Promise((resolve, reject) => {
    const worker = startWorker(request, bundle)
    const results: Array<Scenarios[K]['result']> = []
    worker.on('message', (batch: Array<Scenarios[K]['result']>) => {
      for (const result of batch) {
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
