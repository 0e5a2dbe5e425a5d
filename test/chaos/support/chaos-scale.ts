/**
 * How much of a chaos or fuzz suite to run. `npm test` runs a short sample of every suite
 * under test/chaos/ (all of them together in under about 3 minutes); `npm run test:chaos`
 * sets CANTRIP_CHAOS=1 and runs the full counts the suites promise (100 trials, 100,000
 * inputs, …). A suite asks for its count with `chaosCount(full, sample)` and reports the
 * figures it measured either way.
 */
import { appendFileSync } from 'node:fs'
import { chaosFiguresVariable, type FigureRecord } from '../../../scripts/chaos-results.ts'

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

/**
 * One line of measured figures, printed so the run's log carries them (closing notes quote
 * them), and appended as a record to the file run-tests names for a chaos run
 * (scripts/chaos-results.ts), which becomes the committed bench/results/<stamp>-chaos.json.
 */
export function reportFigures (suite: string, figures: Record<string, number | string>): void {
  const parts = Object.entries(figures).map(([key, value]) => `${key}=${String(value)}`)
  process.stdout.write(`  figures ${suite}${chaosFull ? (chaosFraction === 1 ? ' (full)' : ` (full × ${chaosFraction})`) : ' (sample)'}: ${parts.join(' ')}\n`)
  appendFigureRecord(process.env[chaosFiguresVariable], figureRecord(suite, figures, callerTestFile(new Error().stack)))
}

/** A suite that could not run here (no root, no network namespaces): said in the log and in the chaos run's record. */
export function reportSkipped (suite: string, reason: string): void {
  process.stdout.write(`  skipped: ${suite} ${reason}\n`)
  appendFigureRecord(process.env[chaosFiguresVariable], { ...figureRecord(suite, {}, callerTestFile(new Error().stack)), skipped: reason })
}

/** The record of one report; a figure that is not a finite number (a percentile of nothing) is kept as its text, since JSON would turn it into null. */
export function figureRecord (suite: string, figures: Record<string, number | string>, file: string | undefined): FigureRecord {
  const kept = Object.fromEntries(Object.entries(figures).map(([key, value]) => [key, typeof value === 'number' && !Number.isFinite(value) ? String(value) : value]))
  return { suite, file, run: chaosFull ? 'full' : 'sample', fraction: chaosFull ? chaosFraction : 0, seedEnv: process.env['CANTRIP_CHAOS_SEED'], figures: kept }
}

/**
 * Appends the record as one JSON line: each uvu job is a process of its own and a line is
 * written whole with O_APPEND, so jobs running at once cannot interleave within a record.
 */
export function appendFigureRecord (path: string | undefined, record: FigureRecord): void {
  if (path === undefined || path === '') return
  appendFileSync(path, JSON.stringify(record) + '\n')
}

/** The first test/…test.ts path in a stack (the suite that called), relative to test/. */
export function callerTestFile (stack: string | undefined): string | undefined {
  const match = /\/test\/((?:[\w.-]+\/)*[\w.-]+\.test\.ts)/.exec(stack ?? '')
  return match?.[1]
}

/** The p-th percentile (0..100) of `values`, nearest rank; NaN when empty. */
export function percentile (values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p / 100 * sorted.length) - 1))]!
}
