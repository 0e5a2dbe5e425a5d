/**
 * How much of a chaos or fuzz suite to run. `npm test` runs a short sample of every suite
 * under test/chaos/ (all of them together in under about 3 minutes); `npm run test:chaos`
 * sets CANTRIP_CHAOS=1 and runs the full counts the suites promise (100 trials, 100,000
 * inputs, …). A suite asks for its count with `chaosCount(full, sample)` and reports the
 * figures it measured either way.
 */
export const chaosFull = process.env['CANTRIP_CHAOS'] === '1'

/** The full count under `npm run test:chaos`, the sample otherwise. */
export function chaosCount (full: number, sample: number): number {
  return chaosFull ? full : sample
}

/** One line of measured figures, printed so the run's log carries them (closing notes quote them). */
export function reportFigures (suite: string, figures: Record<string, number | string>): void {
  const parts = Object.entries(figures).map(([key, value]) => `${key}=${String(value)}`)
  process.stdout.write(`  figures ${suite}${chaosFull ? ' (full)' : ' (sample)'}: ${parts.join(' ')}\n`)
}
