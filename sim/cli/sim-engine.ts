import { writeReport } from '../report/write-report.ts'
import { runScenario } from '../scenario/run-scenario.ts'
import type { RunOptions, RunRecord, Scenario } from '../scenario/scenario-types.ts'

/**
 * What `cantrip sim` runs: the scenario runner and the report writer, behind one seam so
 * the command (and its swarm workers, which load this module by URL) can be tested with a
 * stand-in.
 */
export interface SimEngine {
  runScenario (scenario: Scenario, options: RunOptions): Promise<RunRecord>
  /** Writes the run's timeline (HTML) and JSON summary into `dir`; returns their paths. */
  writeReport (record: RunRecord, dir: string): { html: string, json: string }
}

export const engine: SimEngine = { runScenario, writeReport }

/**
 * The module workers import `engine` from; a test passes its stand-in's URL instead. In
 * the bundle (scripts/build.ts: every file directly in dist/), this code may sit in a
 * shared chunk, so workers import the engine's own entry point beside it.
 */
export const engineModuleUrl = import.meta.url.endsWith('.mjs') ? new URL('./sim-engine.mjs', import.meta.url).href : import.meta.url
