import '../../runtime/polyfill.ts'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { join, resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { Command, CommanderError } from 'commander'
import { parseScenario } from '../scenario/parse-scenario.ts'
import { ScenarioError } from '../scenario/scenario-fields.ts'
import { simExitCodes, type RunOutcome, type RunRecord, type RunResult, type Scenario } from '../scenario/scenario-types.ts'
import { crashResult } from './crash-result.ts'
import { replayCommand } from './replay-command.ts'
import { engine as realEngine, engineModuleUrl, type SimEngine } from './sim-engine.ts'
import { runSwarm } from './sim-swarm.ts'
import { shrinkScenario } from './shrink-scenario.ts'
import { startSimInspectLog } from '../inspect/sim-inspect-log.ts'

/**
 * `cantrip sim SCENARIO [--seed N | --seeds A..B [--jobs K]] [--shrink] [--report DIR] [--json] [--quiet]`
 *
 * One seed: runs the scenario, prints one line (outcome, simulated and wall time, trace
 * hash) and, on a failure, the failure and — last — the command that replays it; exits
 * with the outcome's code (simExitCodes). A range of seeds: a swarm over worker threads,
 * progress on stderr, a summary by outcome, every failing seed kept in
 * `<name>-failing-seeds.json`, exit code the worst outcome. `--shrink` reduces the
 * (first) failing run to a minimal fault schedule and writes it as a scenario. Bad usage
 * or a bad scenario file: one line on stderr, exit 64, nothing run.
 */

/** Seeds one swarm may run. */
export const swarmSeedsMax = 1_000_000
/** Worker threads one swarm may use. */
export const swarmJobsMax = 64
/** Replay commands printed after a swarm (all of them are in the failing-seeds file). */
const replaysShownMax = 10
/** How worse one outcome is than another, for a swarm's exit code: a broken invariant first. */
const severity: Record<RunOutcome, number> = { pass: 0, liveness: 1, crash: 2, safety: 3 }

export interface SimMainDeps {
  engine: SimEngine
  /** URL of a module exporting `engine`, for swarm workers (they cannot be handed functions). */
  engineModule: string
  out: (line: string) => void
  err: (line: string) => void
  /** Progress drawn in place (a TTY) rather than as a line every few seeds. */
  tty: boolean
  cwd: string
}

interface Options {
  seed?: string
  seeds?: string
  jobs?: string
  shrink?: boolean
  report?: string
  json?: boolean
  quiet?: boolean
  /** `--inspect-log [FILE]`: true without a file (then `<report dir>/<scenario>-<seed>.inspect.jsonl`). */
  inspectLog?: string | boolean
}

class UsageError extends Error {}

export async function simMain (argv: readonly string[], given: Partial<SimMainDeps> = {}): Promise<number> {
  const deps: SimMainDeps = {
    engine: realEngine,
    engineModule: engineModuleUrl,
    out: line => { process.stdout.write(`${line}\n`) },
    err: line => { process.stderr.write(`${line}\n`) },
    tty: process.stderr.isTTY === true,
    cwd: process.cwd(),
    ...given
  }
  let parsed: { path: string, options: Options } | undefined
  const program = new Command('cantrip sim')
    .description('run a scenario on the deterministic simulator: one seed, or a swarm of seeds')
    .argument('<scenario>', 'scenario file (YAML)')
    .option('--seed <n>', 'seed of the run (default: the scenario\'s)')
    .option('--seeds <range>', 'a swarm: every seed from A to B, as A..B')
    .option('--jobs <k>', 'worker threads of a swarm (default: the cores)')
    .option('--shrink', 'reduce a failing run (a swarm\'s first) to a minimal fault schedule and write it as a scenario')
    .option('--report <dir>', 'write the run\'s timeline (HTML) and JSON summary there; a swarm writes its failing seeds there')
    .option('--json', 'print the result as JSON')
    .option('--quiet', 'no progress, only the results')
    .option('--inspect-log [file]', 'write the unit and relation actors\' inspection messages as JSONL (default <report dir>/<scenario>-<seed>.inspect.jsonl), for cantrip inspect --log or --sim')
    .exitOverride()
    .configureOutput({
      writeOut: text => { deps.out(text.trimEnd()) },
      writeErr: text => { deps.err(`sim: ${text.trim().replace(/^error: /, '')}`) }
    })
    .action((path: string, options: Options) => { parsed = { path, options } })
  try {
    await program.parseAsync([...argv], { from: 'user' })
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : simExitCodes.usage
    throw error
  }
  if (parsed === undefined) return simExitCodes.usage
  try {
    return await run(parsed.path, parsed.options, deps)
  } catch (error) {
    if (error instanceof UsageError || error instanceof ScenarioError) {
      deps.err(error.message)
      return simExitCodes.usage
    }
    throw error
  }
}

function integer (flag: string, text: string, min: number, max: number): number {
  const n = /^\d+$/.test(text) ? Number(text) : NaN
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new UsageError(`sim: ${flag}: expected a whole number from ${min} to ${max}, got ${JSON.stringify(text)}`)
  return n
}

function seedRange (text: string): number[] {
  const match = /^(\d+)\.\.(\d+)$/.exec(text)
  if (match === null) throw new UsageError(`sim: --seeds: expected a range like 1..2000, got ${JSON.stringify(text)}`)
  const from = integer('--seeds', match[1]!, 0, 2 ** 32 - 1)
  const to = integer('--seeds', match[2]!, 0, 2 ** 32 - 1)
  if (to < from) throw new UsageError(`sim: --seeds: expected A..B with A <= B, got ${JSON.stringify(text)}`)
  if (to - from + 1 > swarmSeedsMax) throw new UsageError(`sim: --seeds: expected at most ${swarmSeedsMax} seeds, got ${to - from + 1}`)
  return Array.from({ length: to - from + 1 }, (_, i) => from + i)
}

function loadScenario (path: string, cwd: string): Scenario {
  let text: string
  try {
    text = readFileSync(resolve(cwd, path), 'utf8')
  } catch (error) {
    throw new UsageError(`sim: scenario ${path}: expected a readable file, got ${(error as NodeJS.ErrnoException).code ?? String(error)}`)
  }
  return parseScenario(text, path)
}

async function run (path: string, options: Options, deps: SimMainDeps): Promise<number> {
  // Every flag is checked before the scenario is read, and the scenario before anything runs.
  if (options.seed !== undefined && options.seeds !== undefined) throw new UsageError('sim: expected --seed or --seeds, got both')
  if (options.jobs !== undefined && options.seeds === undefined) throw new UsageError('sim: --jobs: expected with --seeds A..B, got it alone')
  if (options.inspectLog !== undefined && options.seeds !== undefined) throw new UsageError('sim: --inspect-log: expected one run (--seed), got a swarm (--seeds)')
  const seed = options.seed === undefined ? undefined : integer('--seed', options.seed, 0, 2 ** 32 - 1)
  const seeds = options.seeds === undefined ? undefined : seedRange(options.seeds)
  const jobs = options.jobs === undefined ? availableParallelism() : integer('--jobs', options.jobs, 1, swarmJobsMax)
  const scenario = loadScenario(path, deps.cwd)
  const dir = options.report === undefined ? deps.cwd : resolve(deps.cwd, options.report)
  if (options.report !== undefined) mkdirSync(dir, { recursive: true })
  if (seeds !== undefined) return await swarm(path, scenario, seeds, jobs, dir, options, deps)
  return await single(path, scenario, seed ?? scenario.seed, dir, options, deps)
}

async function runRecorded (engine: SimEngine, scenario: Scenario, seed: number, path: string, recordEvents: boolean): Promise<RunRecord> {
  const started = performance.now()
  try {
    return await engine.runScenario(scenario, { seed, recordEvents, scenarioPath: path })
  } catch (error) {
    return { result: crashResult(scenario, seed, path, error, performance.now() - started), events: [] }
  }
}

/** Where `--inspect-log` writes: the file given, or `<scenario>-<seed>.inspect.jsonl` beside the report (what `cantrip inspect --sim REPORT.json` opens). */
function simInspectLogPath (given: string | boolean, dir: string, scenario: string, seed: number, cwd: string): string {
  return typeof given === 'string' ? resolve(cwd, given) : join(dir, `${scenario}-${seed}.inspect.jsonl`)
}

/** `scenario web seed 7: pass in 61.2s simulated, 1.84s wall, trace 3fa9…` */
export function resultLine (result: RunResult): string {
  return `scenario ${result.scenario} seed ${result.seed}: ${result.outcome} in ${(result.simulatedMs / 1000).toFixed(1)}s simulated, ${(result.wallMs / 1000).toFixed(2)}s wall, trace ${result.hash}`
}

async function single (path: string, scenario: Scenario, seed: number, dir: string, options: Options, deps: SimMainDeps): Promise<number> {
  const inspectFile = options.inspectLog === undefined ? undefined : simInspectLogPath(options.inspectLog, dir, scenario.name, seed, deps.cwd)
  const inspectLog = inspectFile === undefined ? undefined : startSimInspectLog(inspectFile)
  let record: RunRecord
  try {
    record = await runRecorded(deps.engine, scenario, seed, path, options.report !== undefined)
  } finally {
    const lines = inspectLog?.stop()
    if (inspectFile !== undefined) (options.json === true ? deps.err : deps.out)(`inspect log: ${inspectFile} (${lines ?? 0} messages; cantrip inspect --log ${inspectFile})`)
  }
  const result = record.result
  const writeReport = (): { html: string, json: string } | undefined => options.report === undefined ? undefined : deps.engine.writeReport(record, dir)
  if (options.json === true) {
    const report = writeReport()
    deps.out(JSON.stringify({ ...result, replay: replayCommand(path, seed), ...(report === undefined ? {} : { report }) }))
  } else {
    // The result first: a report that cannot be written does not hide it.
    deps.out(resultLine(result))
    const report = writeReport()
    if (report !== undefined) deps.out(`report: ${report.html} (summary ${report.json})`)
    if (result.outcome !== 'pass') deps.out(`${result.outcome} failure: ${result.failure ?? '(no description)'}`)
  }
  if (result.outcome !== 'pass' && options.shrink === true) await shrinkAndAnnounce(scenario, result, dir, options, deps)
  if (result.outcome !== 'pass' && options.json !== true) {
    deps.out(`replay: ${replayCommand(path, seed)}${options.report === undefined ? '   (add --report DIR for a timeline)' : ` --report ${options.report}`}`)
  }
  return simExitCodes[result.outcome]
}

async function shrinkAndAnnounce (scenario: Scenario, failed: RunResult, dir: string, options: Options, deps: SimMainDeps): Promise<void> {
  const say = options.json === true ? deps.err : deps.out
  const shrunk = await shrinkScenario({
    engine: deps.engine,
    scenario,
    failed,
    dir,
    out: say,
    progress: line => { if (options.quiet !== true) progressLine(deps, line) }
  })
  if (deps.tty && options.quiet !== true) deps.err('')
  if (shrunk.file !== undefined) say(`shrunk scenario: ${shrunk.file} (reproduces ${failed.outcome} with seed ${failed.seed}): ${replayCommand(shrunk.file, failed.seed)}`)
}

/** Progress on stderr: drawn in place on a TTY, else one line each time. */
function progressLine (deps: SimMainDeps, line: string): void {
  if (deps.tty) process.stderr.write(`\r\x1b[2K${line}`)
  else deps.err(line)
}

async function swarm (path: string, scenario: Scenario, seeds: number[], jobs: number, dir: string, options: Options, deps: SimMainDeps): Promise<number> {
  const started = performance.now()
  const total = seeds.length
  // Without a TTY, about twenty progress lines per swarm, at least one per seed for small ones.
  const every = Math.max(1, Math.ceil(total / 20))
  let done = 0
  let failing = 0
  const results = await runSwarm({
    engine: deps.engine,
    engineModule: deps.engineModule,
    scenario,
    scenarioPath: path,
    seeds,
    jobs,
    onResult: result => {
      done++
      if (result.outcome !== 'pass') failing++
      if (options.quiet === true || (!deps.tty && done % every !== 0 && done !== total)) return
      const rate = done / Math.max(0.001, (performance.now() - started) / 1000)
      progressLine(deps, `swarm ${scenario.name}: ${done}/${total} seeds, ${failing} failing, ${rate.toFixed(1)} seeds/s`)
    }
  })
  if (deps.tty && options.quiet !== true) deps.err('')
  const wallS = (performance.now() - started) / 1000
  const failed = results.filter(r => r.outcome !== 'pass')
  const file = join(dir, `${scenario.name}-failing-seeds.json`)
  if (failed.length > 0) {
    writeFileSync(file, `${JSON.stringify({
      scenario: scenario.name,
      path,
      seeds: `${seeds[0]}..${seeds.at(-1)}`,
      failing: failed.map(r => ({ seed: r.seed, outcome: r.outcome, hash: r.hash, failure: r.failure, replay: replayCommand(path, r.seed) }))
    }, null, 2)}\n`)
  }
  const worst = results.reduce<RunOutcome>((w, r) => severity[r.outcome] > severity[w] ? r.outcome : w, 'pass')
  if (options.json === true) {
    deps.out(JSON.stringify({
      scenario: scenario.name, seeds: { from: seeds[0], to: seeds.at(-1) }, jobs: Math.min(jobs, total), wallS,
      outcomes: countBy(results), worst, failing: failed.map(r => ({ seed: r.seed, outcome: r.outcome, hash: r.hash, failure: r.failure })),
      ...(failed.length > 0 ? { failingSeedsFile: file } : {})
    }))
  } else {
    for (const line of summaryTable(results)) deps.out(line)
    deps.out(`swarm ${scenario.name} seeds ${seeds[0]}..${seeds.at(-1)}: ${total} runs on ${Math.min(jobs, total)} jobs in ${wallS.toFixed(1)}s wall (${(total / Math.max(wallS, 0.001)).toFixed(1)} seeds/s), ${failed.length} failing`)
    if (failed.length > 0) {
      deps.out(`failing seeds: ${file}`)
      for (const r of failed.slice(0, replaysShownMax)) deps.out(`${r.outcome} seed ${r.seed}: ${r.failure ?? ''}`)
      for (const r of failed.slice(0, replaysShownMax)) deps.out(`replay: ${replayCommand(path, r.seed)}`)
      if (failed.length > replaysShownMax) deps.out(`(${failed.length - replaysShownMax} more in ${file})`)
    }
  }
  if (options.report !== undefined && failed.length > 0) {
    // Swarm runs keep no events; the first failing seed is run again, recorded, for its timeline.
    const record = await runRecorded(deps.engine, scenario, failed[0]!.seed, path, true)
    const report = deps.engine.writeReport(record, dir)
    const say = options.json === true ? deps.err : deps.out
    say(`report of seed ${failed[0]!.seed}: ${report.html} (summary ${report.json})`)
  }
  if (options.shrink === true && failed.length > 0) await shrinkAndAnnounce(scenario, failed[0]!, dir, options, deps)
  return simExitCodes[worst]
}

function countBy (results: readonly RunResult[]): Record<RunOutcome, number> {
  const counts: Record<RunOutcome, number> = { pass: 0, safety: 0, liveness: 0, crash: 0 }
  for (const r of results) counts[r.outcome]++
  return counts
}

/** Outcome, number of seeds, and the first seeds of each. */
function summaryTable (results: readonly RunResult[]): string[] {
  const counts = countBy(results)
  const rows = (Object.keys(counts) as RunOutcome[]).filter(o => counts[o] > 0).map(outcome => {
    const first = results.filter(r => r.outcome === outcome).slice(0, 5).map(r => r.seed)
    return [outcome, String(counts[outcome]), outcome === 'pass' ? '' : `${first.join(', ')}${counts[outcome] > first.length ? ', …' : ''}`]
  })
  const table = [['OUTCOME', 'SEEDS', 'FIRST SEEDS'], ...rows]
  const widths = [0, 1].map(c => Math.max(...table.map(row => row[c]!.length)))
  return table.map(row => `${row[0]!.padEnd(widths[0]!)}  ${row[1]!.padStart(widths[1]!)}  ${row[2]}`.trimEnd())
}
