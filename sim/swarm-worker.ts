import '../runtime/polyfill.ts'
import { parentPort, workerData } from 'node:worker_threads'
import { runSeeds, type SwarmWorkerRequest } from './swarm.ts'

/** One swarm worker: runs its seeds and posts each result as it completes. */
const request = workerData as SwarmWorkerRequest
await runSeeds(request.kind, request.seeds, request.scenario, result => parentPort!.postMessage([result]))
