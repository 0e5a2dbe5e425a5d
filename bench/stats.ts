/** Percentiles and rounding shared by the benches (nearest-rank on a sorted copy). */
export function quantile (values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
}

export function round (value: number, digits = 2): number {
  return Number(value.toFixed(digits))
}

export interface LatencySummary { p50Ms: number, p99Ms: number, maxMs: number, samples: number }

export function latencySummary (values: readonly number[]): LatencySummary {
  return { p50Ms: round(quantile(values, 0.5)), p99Ms: round(quantile(values, 0.99)), maxMs: round(quantile(values, 1)), samples: values.length }
}

export const sleep = async (ms: number): Promise<void> => { await new Promise(resolve => setTimeout(resolve, ms)) }

/** Wall-clock milliseconds with sub-ms resolution, comparable across processes on one host. */
export const wallMs = (): number => performance.timeOrigin + performance.now()

/** Polls `condition` every `everyMs` until it holds; false when `withinMs` passed first. */
export async function pollUntil (condition: () => boolean | Promise<boolean>, withinMs: number, everyMs = 20): Promise<boolean> {
  const until = performance.now() + withinMs
  while (performance.now() < until) {
    if (await condition()) return true
    await sleep(everyMs)
  }
  return false
}

/**
 * Starts `attempt` every `everyMs` without waiting for earlier ones (a request stuck in an
 * election must not delay the next), and answers the time from the call to the first
 * attempt that succeeds, or null when none did within `withinMs`. At most `inFlightMax`
 * attempts are outstanding.
 */
export async function firstSuccessMs (attempt: () => Promise<boolean>, everyMs: number, withinMs: number, inFlightMax = 500): Promise<number | null> {
  const started = performance.now()
  let done: number | null = null
  let inFlight = 0
  while (done === null && performance.now() - started < withinMs) {
    if (inFlight < inFlightMax) {
      inFlight++
      void attempt().then(ok => { if (ok && done === null) done = performance.now() - started }, () => {}).finally(() => { inFlight-- })
    }
    await sleep(everyMs)
  }
  // Let the attempts still out settle (each is bounded by its own timeout) before the caller tears down.
  await pollUntil(() => inFlight === 0, 10_000)
  return done === null ? null : Math.round(done)
}
