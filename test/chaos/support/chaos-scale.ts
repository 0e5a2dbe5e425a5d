/**
 * How much of a chaos or fuzz suite to run. `npm test` runs a short sample of every suite
 * under test/chaos/ (all of them together in under about 3 minutes); `npm run test:chaos`
 * sets CANTRIP_CHAOS=1 and runs the full counts the suites promise (100 trials, 100,000
 * inputs, …). A suite asks for its count with `chaosCount(full, sample)` and reports the
 * figures it measured either way.
 */
export const chaosFull = process.env['CANTRIP_CHAOS'] === '1'

/**
 * `CANTRIP_CHAOS_FRACTION=F` (0 < F ≤ 1) runs that fraction of every full count, for a
 * bounded run of the full suites on a busy machine; the figures say which fraction ran.
 */
export const chaosFraction = parseFraction(process.env['CANTRIP_CHAOS_FRACTION'])

function parseFraction (text: string | undefined): number {
  if (text === undefined || text === '') return 1
  const value = Number(text)
  if (!Number.isFinite(value) || value <= 0 || value > 1) throw new Error(`chaos suites: expected CANTRIP_CHAOS_FRACTION to be a number in (0, 1], got ${JSON.stringify(text)}`)
  return value
}

/** The full count (times the fraction, never below the sample) under `npm run test:chaos`, the sample otherwise. */
export function chaosCount (full: number, sample: number): number {
  return chaosFull ? Math.max(sample, Math.ceil(full * chaosFraction)) : sample
}

/** One line of measured figures, printed so the run's log carries them (closing notes quote them). */
export function reportFigures (suite: string, figures: Record<string, number | string>): void {
  const parts = Object.entries(figures).map(([key, value]) => `${key}=${String(value)}`)
  process.stdout.write(`  figures ${suite}${chaosFull ? (chaosFraction === 1 ? ' (full)' : ` (full × ${chaosFraction})`) : ' (sample)'}: ${parts.join(' ')}\n`)
}

/** The p-th percentile (0..100) of `values`, nearest rank; NaN when empty. */
export function percentile (values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p / 100 * sorted.length) - 1))]!
}
