/**
 * One-way delay of a simulated network link, as a distribution drawn once per message
 * leg. Draws are whole milliseconds: the trace then prints the same times on every
 * platform, and nothing depends on how `Math.log` rounds in the last bit.
 */
import { InvalidInputError } from '../runtime/errors.ts'
import type { Random } from '../runtime/random.ts'

export type LatencyDistribution =
  /** Any whole number of ms in [minMs, maxMs], equally likely. */
  | { kind: 'uniform', minMs: number, maxMs: number }
  /** `minMs` plus an exponential tail whose mean is `meanMs` (the total mean is minMs + meanMs). */
  | { kind: 'exponential', meanMs: number, minMs: number }
  | { kind: 'fixed', ms: number }

const isWholeMs = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0

/** Throws an InvalidInputError naming `component` unless `latency` is a usable distribution. */
export function checkLatency (component: string, latency: LatencyDistribution): void {
  const bad = (expected: string): never => { throw new InvalidInputError(component, expected, latency) }
  if (typeof latency !== 'object' || latency === null) bad('a latency distribution')
  switch (latency.kind) {
    case 'uniform':
      if (!isWholeMs(latency.minMs) || !isWholeMs(latency.maxMs) || latency.maxMs < latency.minMs) {
        bad('a uniform latency with whole ms 0 <= minMs <= maxMs')
      }
      return
    case 'exponential':
      if (!isWholeMs(latency.minMs) || typeof latency.meanMs !== 'number' || !Number.isFinite(latency.meanMs) || latency.meanMs <= 0) {
        bad('an exponential latency with whole ms minMs >= 0 and a finite meanMs > 0')
      }
      return
    case 'fixed':
      if (!isWholeMs(latency.ms)) bad('a fixed latency of whole ms >= 0')
      return
    default:
      bad('a latency of kind "uniform", "exponential" or "fixed"')
  }
}

/** One draw, in whole ms; takes at most one value from `random` (none when only one delay is possible). */
export function drawLatencyMs (latency: LatencyDistribution, random: Random): number {
  switch (latency.kind) {
    case 'uniform': return latency.minMs === latency.maxMs ? latency.minMs : random.int(latency.minMs, latency.maxMs)
    // 1 - next() is in (0, 1], so the logarithm is finite: the tail is at most about 22 means.
    case 'exponential': return latency.minMs + Math.round(-latency.meanMs * Math.log(1 - random.next()))
    case 'fixed': return latency.ms
  }
}

export function describeLatency (latency: LatencyDistribution): string {
  switch (latency.kind) {
    case 'uniform': return `uniform ${latency.minMs}..${latency.maxMs} ms`
    case 'exponential': return `exponential min ${latency.minMs} mean +${latency.meanMs} ms`
    case 'fixed': return `fixed ${latency.ms} ms`
  }
}
