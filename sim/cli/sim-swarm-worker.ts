import '../../runtime/polyfill.ts'
import { performance } from 'node:perf_hooks'
import { parentPort, workerData } from 'node:worker_threads'
import type { RunResult, Scenario } from '../scenario/scenario-types.ts'
import { crashResult } from './crash-result.ts'
import type { SimEngine } from './sim-engine.ts'

/** What a swarm worker is given: the parsed scenario, its seeds, and where to load the engine from. */
export interface SwarmWorkerData {
  engineModule: string
  scenario: Scenario
  scenarioPath: string
  seeds: number[]
}

/** One swarm worker thread: runs its seeds in order and posts each result as it completes. */
const data = workerData as SwarmWorkerData
const { engine } = await import(data.engineModule) as { engine: SimEngine }
for (const seed of data.seeds) {
  const started = performance.now()
  let result: RunResult
  try {
    result = (await engine.runScenario(data.scenario, { seed, recordEvents: false, scenarioPath: data.scenarioPath })).result
  } catch (error) {
    result = crashResult(data.scenario, seed, data.scenarioPath, error, performance.now() - started)
  }
  parentPort!.postMessage(result)
}
