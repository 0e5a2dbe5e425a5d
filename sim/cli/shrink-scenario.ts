import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { stringify } from 'yaml'
import { parseScenario } from '../scenario/parse-scenario.ts'
import type { FaultEvent, RunOutcome, RunResult, Scenario } from '../scenario/scenario-types.ts'
import { shrinkFaults, shrinkRunsMax } from '../scenario/shrink.ts'
import { faultYaml, scenarioToYaml } from '../scenario/write-scenario.ts'
import type { SimEngine } from './sim-engine.ts'

/**
 * `--shrink`: a failing run reduced to a minimal fault schedule, written as a scenario
 * file and checked. The run's concrete schedule (its own faults plus the drawn ones)
 * becomes a plain `faults:` list with no random faults; the predicate is "the same seed
 * still fails with the same outcome kind". The file is announced only once a run of it,
 * parsed back from disk, fails the same way; otherwise it is removed.
 */
export interface ShrinkRequest {
  engine: SimEngine
  scenario: Scenario
  failed: RunResult
  /** Where the shrunk scenario goes. */
  dir: string
  out: (line: string) => void
  progress: (line: string) => void
  maxRuns?: number
}

export interface ShrinkOutcome {
  /** The written scenario file, when it reproduced the failure. */
  file?: string
  before: FaultEvent[]
  after: FaultEvent[]
  runs: number
  exhausted: boolean
}

/** A fault event on one line, as it would be written in a scenario file. */
export function faultLine (event: FaultEvent): string {
  return stringify(faultYaml(event), { collectionStyle: 'flow', lineWidth: 0 }).trim()
}

/** The scenario with exactly these faults and nothing drawn. */
export function withFaults (scenario: Scenario, faults: readonly FaultEvent[], name = scenario.name, description = scenario.description): Scenario {
  const { randomFaults: _, ...rest } = scenario
  return { ...rest, name, description, faults: [...faults].sort((a, b) => a.at - b.at) }
}

export async function shrinkScenario (request: ShrinkRequest): Promise<ShrinkOutcome> {
  const { engine, scenario, failed } = request
  const kind: RunOutcome = failed.outcome
  const seed = failed.seed
  const before = [...failed.faults].sort((a, b) => a.at - b.at)
  const fails = async (faults: FaultEvent[]): Promise<boolean> => {
    try {
      return (await engine.runScenario(withFaults(scenario, faults), { seed })).result.outcome === kind
    } catch {
      return kind === 'crash'
    }
  }
  request.out(`shrink: seed ${seed} failed (${kind}) with ${before.length} fault events:`)
  for (const event of before) request.out(`  ${faultLine(event)}`)
  // The drawn schedule must fail on its own, without the draw, or there is nothing to shrink.
  if (!await fails(before)) {
    request.out(`shrink: the ${before.length} events as a fixed schedule do not fail (${kind}) with seed ${seed}; nothing to shrink`)
    return { before, after: before, runs: 1, exhausted: false }
  }
  const shrunk = await shrinkFaults(before, fails, {
    maxRuns: request.maxRuns ?? shrinkRunsMax,
    onRun: (items, fails, run) => request.progress(`shrink: run ${run}: ${items.length} events ${fails ? `still fail (${kind})` : 'pass'}`)
  })
  const after = shrunk.items
  request.out(`shrink: ${before.length} → ${after.length} fault events in ${shrunk.runs + 1} runs${shrunk.exhausted ? ` (stopped at the cap of ${request.maxRuns ?? shrinkRunsMax} runs; may not be minimal)` : ''}:`)
  for (const event of after) request.out(`  ${faultLine(event)}`)

  const name = `${scenario.name}-shrunk-${seed}`
  const file = join(request.dir, `${name}.yaml`)
  const description = `${scenario.name} seed ${seed} shrunk to ${after.length} fault events; fails: ${failed.failure ?? kind}`
  // The failing seed becomes the file's own: running it with no --seed reproduces the failure.
  writeFileSync(file, scenarioToYaml({ ...withFaults(scenario, after, name, description), seed }))
  const again = parseScenario(readFileSync(file, 'utf8'), file)
  const check = await engine.runScenario(again, { seed, scenarioPath: file })
  if (check.result.outcome !== kind) {
    rmSync(file, { force: true })
    request.out(`shrink: the written scenario gave ${check.result.outcome}, not ${kind}, with seed ${seed}; not kept`)
    return { before, after, runs: shrunk.runs + 2, exhausted: shrunk.exhausted }
  }
  return { file, before, after, runs: shrunk.runs + 2, exhausted: shrunk.exhausted }
}
