/**
 * A stand-in for the scenario runner and report writer of `cantrip sim`, for the CLI's
 * tests (and its swarm workers, which load this module by URL). It runs no simulation:
 * it stands for a system with a bug that breaks safety whenever a schedule holds both a
 * leader crash and a full disk, and that fails to converge whenever a hook hangs. The
 * schedule is the scenario's faults plus, with random-faults, events "drawn" from the
 * seed by a small deterministic generator, so some seeds fail and the same seed always
 * gives the same result and hash.
 */
import { createHash } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { SimEngine } from '../../sim/cli/sim-engine.ts'
import type { FaultEvent, RunOutcome, RunRecord, RunResult, Scenario } from '../../sim/scenario/scenario-types.ts'

/** Runs of the double, counted so tests can see the shrinker's runs are bounded. */
export const calls = { runs: 0 }

/** The faults a seed "draws": a few of a small menu, placed in the random window. */
export function drawnFaults (scenario: Scenario, seed: number): FaultEvent[] {
  const r = scenario.randomFaults
  if (r === undefined) return []
  let state = (seed * 2654435761 + 1) >>> 0
  const next = (): number => { state = (state * 1664525 + 1013904223) >>> 0; return state / 2 ** 32 }
  const span = r.untilMs - r.fromMs
  return Array.from({ length: r.events }, (): FaultEvent => {
    const at = r.fromMs + Math.floor(next() * span)
    const pick = next()
    if (pick < 0.06) return { at, kind: 'crash', target: 'leader' }
    if (pick < 0.12) return { at, kind: 'disk-full', target: 'controller/1', forMs: 4000 }
    if (pick < 0.5) return { at, kind: 'loss', probability: 0.1, forMs: 3000 }
    if (pick < 0.8) return { at, kind: 'pause', target: 'machine/0', forMs: 2000 }
    return { at, kind: 'restart', target: 'controller/0' }
  })
}

export function outcomeOf (faults: readonly FaultEvent[]): { outcome: RunOutcome, failure?: string } {
  const crash = faults.find(e => e.kind === 'crash')
  const full = faults.find(e => e.kind === 'disk-full')
  if (crash !== undefined && full !== undefined) return { outcome: 'safety', failure: `raft-safety at ${Math.max(crash.at, full.at) + 500}ms: two leaders committed different entries at index 7` }
  const hang = faults.find(e => e.kind === 'hook-hang')
  if (hang !== undefined) return { outcome: 'liveness', failure: `not converged ${hang.at}ms after the heal: kv/0 still executing install` }
  return { outcome: 'pass' }
}

export const engine: SimEngine = {
  runScenario: async (scenario, options): Promise<RunRecord> => {
    calls.runs++
    if (scenario.name === 'throws') throw new Error('runner exploded\n  with a second line')
    const faults = [...scenario.faults, ...drawnFaults(scenario, options.seed)].sort((a, b) => a.at - b.at)
    const { outcome, failure } = outcomeOf(faults)
    const hash = createHash('sha256').update(JSON.stringify({ name: scenario.name, seed: options.seed, faults })).digest('hex').slice(0, 16)
    const result: RunResult = {
      scenario: scenario.name,
      seed: options.seed,
      hash,
      outcome,
      ...(failure === undefined ? {} : { failure }),
      simulatedMs: scenario.faultsUntilMs + 1500,
      wallMs: 12,
      faults,
      counts: { controllers: scenario.controllers, machines: 0, units: 0, hooks: 0, hookFailures: 0, leaderTerms: 1, commands: 0, invariantChecks: 0 },
      replay: `cantrip sim ${options.scenarioPath ?? '?'} --seed ${options.seed}`
    }
    return { result, events: options.recordEvents === true ? [{ t: 0, kind: 'phase', phase: 'setup' }] : [] }
  },
  writeReport: (record, dir) => {
    mkdirSync(dir, { recursive: true })
    const base = join(dir, `${record.result.scenario}-${record.result.seed}`)
    writeFileSync(`${base}.html`, `<html><body>${record.events.length} events</body></html>`)
    writeFileSync(`${base}.json`, JSON.stringify(record.result))
    return { html: `${base}.html`, json: `${base}.json` }
  }
}
