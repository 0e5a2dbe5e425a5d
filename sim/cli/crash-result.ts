import type { RunResult, Scenario } from '../scenario/scenario-types.ts'
import { replayCommand } from './replay-command.ts'

/**
 * The result of a run whose runner threw instead of returning (a crash outside the
 * runner's own catch): outcome `crash`, with the error's first line and where it was
 * thrown, so a swarm counts it and keeps the seed like any other failure.
 */
export function crashResult (scenario: Scenario, seed: number, scenarioPath: string, error: unknown, wallMs: number): RunResult {
  const message = error instanceof Error ? error.message.split('\n')[0]! : String(error)
  const where = error instanceof Error ? (error.stack ?? '').split('\n').find(line => line.trim().startsWith('at '))?.trim() : undefined
  return {
    scenario: scenario.name,
    seed,
    hash: 'none',
    outcome: 'crash',
    failure: `the runner threw: ${message}${where === undefined ? '' : ` (${where})`}`,
    simulatedMs: 0,
    wallMs,
    faults: scenario.faults,
    counts: { controllers: scenario.controllers, machines: 0, units: 0, hooks: 0, hookFailures: 0, leaderTerms: 0, commands: 0, invariantChecks: 0 },
    replay: replayCommand(scenarioPath, seed)
  }
}
