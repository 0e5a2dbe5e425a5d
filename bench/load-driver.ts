import { quantile, round } from './stats.ts'

/**
 * A closed-loop load generator, the same for every store so the figures compare: `clients`
 * workers, each with one write in flight, until `total` writes completed or `maxMs` passed
 * (whichever first, so a slow store cannot stretch the run). Throughput is completed
 * writes over the elapsed time; latency is per write, from send to acknowledgement.
 * A failed write fails the case: a benchmark that counts errors as speed would lie.
 */
export interface LoadFigures { clients: number, writes: number, opsPerSec: number, p50Ms: number, p99Ms: number, maxMs: number, seconds: number }

export interface LoadOptions { clients: number, total: number, maxMs: number, warmup?: number }

export async function runLoad (write: (i: number, client: number) => Promise<void>, options: LoadOptions): Promise<LoadFigures> {
  let next = 0
  for (let i = 0; i < (options.warmup ?? 0); i++) await write(next++, 0)
  const latencies: number[] = []
  const started = performance.now()
  const until = started + options.maxMs
  let issued = 0
  const worker = async (client: number): Promise<void> => {
    while (issued < options.total && performance.now() < until) {
      issued++
      const t0 = performance.now()
      await write(next++, client)
      latencies.push(performance.now() - t0)
    }
  }
  await Promise.all(Array.from({ length: options.clients }, async (_, c) => { await worker(c) }))
  const seconds = (performance.now() - started) / 1000
  return {
    clients: options.clients,
    writes: latencies.length,
    opsPerSec: Math.round(latencies.length / seconds),
    p50Ms: round(quantile(latencies, 0.5)),
    p99Ms: round(quantile(latencies, 0.99)),
    maxMs: round(quantile(latencies, 1)),
    seconds: round(seconds)
  }
}
