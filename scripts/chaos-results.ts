/**
 * The summary a `npm run test:chaos` run writes to bench/results/<UTC stamp>-chaos.json
 * (issue 28, item 5), so that the reliability figures the README states trace to a recorded
 * run, as the bench's figures do (bench/run.ts). The suites run as separate uvu processes
 * under scripts/run-tests.ts; each reportFigures call (test/chaos/support/chaos-scale.ts)
 * appends one JSON line to the file run-tests names in CANTRIP_CHAOS_FIGURES, and run-tests
 * builds the summary from those lines and each file's verdict. Pure: run-tests does the I/O.
 *
 * Every suite a chaos file promises (chaosPromises) is in the summary: with its figures,
 * as skipped with the reason it gave, or with `figures: null` and the reason it has none (the
 * file failed before reporting, or was not run). A missing figure is never a zero.
 * Everything but startChaosRecording (the run's file I/O) is pure.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'

/** The variable naming the file a chaos run collects its figure records in (set by scripts/run-tests.ts). */
export const chaosFiguresVariable = 'CANTRIP_CHAOS_FIGURES'

/** One reportFigures call as the chaos run collects it: which suite and file, at what count, every figure. */
export interface FigureRecord {
  suite: string
  /** The test file below test/ that reported, from the call's stack (undefined if not found). */
  file: string | undefined
  run: 'full' | 'sample'
  /** The fraction of the full counts that ran (0 for the sample). */
  fraction: number
  /** CANTRIP_CHAOS_SEED as set for the run, if it was. */
  seedEnv: string | undefined
  figures: Record<string, number | string>
  /** Why the suite did not run, for a suite that skipped. */
  skipped?: string
}

/** The figures each suite promises, by the test file (below test/) that reports it. */
export interface SuitePromise { suite: string, figures: readonly string[] }

const fuzzTally = (names: readonly string[]): string[] => names.flatMap(name => ['inputs', 'crashes', 'hangs'].map(f => `${name}.${f}`))
const killFigures = ['seed', 'trials', 'writesPerTrial', 'acknowledged', 'lost', 'duplicates', 'electionP50Ms', 'electionP99Ms', 'servingP50Ms', 'servingP99Ms']

/**
 * What each file under test/chaos/ reports. test/chaos-results.test.ts checks that every
 * chaos file is listed and every suite name its source passes to reportFigures is here.
 */
export const chaosPromises: Readonly<Record<string, readonly SuitePromise[]>> = {
  'chaos/authorisation.test.ts': [{ suite: 'authorisation', figures: ['triples', 'permitted', 'denied', 'proposals', 'proposalsDenied'] }],
  'chaos/controller-disk.test.ts': [{ suite: 'controller-disk', figures: ['trials', 'acknowledged', 'lostDiskFull', 'lostIoError', 'stopMsMaxDiskFull', 'stopMsMaxIoError'] }],
  'chaos/controller-kill.test.ts': [
    { suite: 'controller-kill 3 controllers', figures: killFigures },
    { suite: 'controller-kill 5 controllers', figures: killFigures },
    { suite: 'controller-kill all at once', figures: ['seed', 'trials', 'acknowledged', 'lost', 'duplicates'] }
  ],
  'chaos/controller-partition.test.ts': [
    { suite: 'controller-partition', figures: ['trials', 'minorityWrites', 'minorityAcked', 'lost', 'electionP50Ms', 'electionMaxMs', 'convergeP50Ms', 'convergeMaxMs'] },
    { suite: 'controller-partition unit', figures: ['lostAfterMs', 'backAfterHealMs', 'workloads'] }
  ],
  'chaos/controller-pause.test.ts': [{ suite: 'controller-pause', figures: ['trials', 'reads', 'staleReads', 'pendingWrites', 'pendingAckedByOld', 'lost', 'duplicates', 'electionP50Ms', 'electionP99Ms'] }],
  'chaos/fuzz-charm-yaml.test.ts': [{ suite: 'fuzz-charm-yaml', figures: fuzzTally(['metadata.yaml', 'config.yaml', 'actions.yaml']) }],
  'chaos/fuzz-cli.test.ts': [{ suite: 'fuzz-cli', figures: fuzzTally(['cli']) }],
  'chaos/fuzz-controller-api.test.ts': [{ suite: 'fuzz-controller-api', figures: fuzzTally(['api', 'propose']) }],
  'chaos/fuzz-hook-tools.test.ts': [{ suite: 'fuzz-hook-tools', figures: fuzzTally(['hook-tools']) }],
  'chaos/fuzz-wire.test.ts': [{
    suite: 'fuzz-wire',
    figures: fuzzTally(['codec', 'envelope.gossip', 'envelope.request', 'envelope.response', 'channel-frames', 'gossip.change-notice', 'gossip.log-batch', 'gossip.presence', 'raft.messages', 'bootstrap-data', 'unit-state', 'hook-frames.call', 'hook-frames.reader'])
  }],
  'chaos/hostile-peers.test.ts': [{ suite: 'hostile-peers', figures: ['handshakeRefused', 'requestFrameRefused', 'requestEnvelopeRefused', 'honestMessages', 'flooded', 'baselineP50Ms', 'attackP50Ms', 'baselineP99Ms', 'attackP99Ms'] }],
  'chaos/multi-host.test.ts': [{ suite: 'multi-host', figures: ['seconds'] }],
  'chaos/uniter-kill.test.ts': [{ suite: 'uniter-kill', figures: ['seed', 'trials', 'kills', 'killsDuringHooks', 'hookRunsStarted', 'hookRunsEnded', 'finalRounds'] }]
}

/** How a test file ended: passed, failed (with the lines that say why), or never started. */
export type FileVerdict = { outcome: 'passed' } | { outcome: 'failed', reason: string } | { outcome: 'not run', reason: string }

/** Lines of a failing file's output kept as the reason (its first FAIL and what follows). */
const reasonLinesMax = 8

/**
 * Each file's verdict from its uvu job: the job's output is cut at the file headers uvu
 * prints; a file whose part shows a FAIL or ✘ failed; if the job failed and no part does,
 * the last file that started failed (a crash or a timeout there) and those after it never ran.
 */
export function fileVerdicts (files: readonly string[], output: string, ok: boolean): Map<string, FileVerdict> {
  const verdicts = new Map<string, FileVerdict>()
  if (ok) {
    for (const file of files) verdicts.set(file, { outcome: 'passed' })
    return verdicts
  }
  const lines = output.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '').split('\n')
  const starts = files.map(file => lines.findIndex(line => line.trim() === file))
  const parts = files.map((file, i) => {
    if (starts[i]! < 0) return undefined
    const next = starts.filter(s => s > starts[i]!).sort((a, b) => a - b)[0] ?? lines.length
    return lines.slice(starts[i]! + 1, next)
  })
  const failedAt = (part: string[]): number => part.findIndex(line => /^\s*FAIL\s/.test(line) || line.includes('✘'))
  const lastStarted = files.reduce((last, _file, i) => starts[i]! > (last < 0 ? -1 : starts[last]!) ? i : last, -1)
  const anyFailed = parts.some(part => part !== undefined && failedAt(part) >= 0)
  const tail = lines.filter(line => line.startsWith('run-tests:') || /error/i.test(line)).slice(-reasonLinesMax).join('\n').trim()
  files.forEach((file, i) => {
    const part = parts[i]
    if (part === undefined) { verdicts.set(file, { outcome: 'not run', reason: `its uvu process ended before it started${tail === '' ? '' : `: ${tail}`}` }); return }
    const at = failedAt(part)
    if (at >= 0) {
      const fail = part.findIndex(line => /^\s*FAIL\s/.test(line))
      verdicts.set(file, { outcome: 'failed', reason: part.slice(fail < 0 ? at : fail, (fail < 0 ? at : fail) + reasonLinesMax).map(line => line.trimEnd()).filter(line => line !== '').join('\n') })
    } else if (!anyFailed && i === lastStarted) {
      verdicts.set(file, { outcome: 'failed', reason: `its uvu process failed with no test marked failed (a crash or a timeout)${tail === '' ? '' : `: ${tail}`}` })
    } else {
      verdicts.set(file, { outcome: 'passed' })
    }
  })
  return verdicts
}

/** One JSON line per record; a line that does not parse is kept as a problem, not dropped silently. */
export function parseFigureLines (text: string): { records: FigureRecord[], problems: string[] } {
  const records: FigureRecord[] = []
  const problems: string[] = []
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue
    try {
      const value = JSON.parse(line) as unknown
      if (!isFigureRecord(value)) throw new Error('not a figure record')
      records.push(value)
    } catch (error) {
      problems.push(`chaos figures: expected a JSON figure record, got ${JSON.stringify(line.slice(0, 200))} (${error instanceof Error ? error.message : String(error)})`)
    }
  }
  return { records, problems }
}

function isFigureRecord (value: unknown): value is FigureRecord {
  if (typeof value !== 'object' || value === null) return false
  const r = value as Record<string, unknown>
  return typeof r['suite'] === 'string' && typeof r['figures'] === 'object' && r['figures'] !== null &&
    Object.values(r['figures']).every(v => typeof v === 'number' || typeof v === 'string')
}

/** A suite in the summary: its figures as measured, or null beside the reason there are none. */
export interface SuiteSummary {
  file: string
  passed: boolean
  run?: 'full' | 'sample'
  fraction?: number
  figures: Record<string, number | string> | null
  /** Promised figures the suite did not report (a suite that failed part way). */
  missing?: string[]
  skipped?: string
  reason?: string
}

export interface ChaosRunFacts {
  startedAt: string
  measuredAt: string
  commit: string
  machine: { cores: number, cpu: string, memoryBytes: number, node: string }
  load: { start: number[], end: number[] }
  fraction: number
  seed: string | undefined
  pattern: string
  runSeconds: number
  cpuSeconds: number | undefined
}

/** Keys summed into the totals: a reader looks for trials, acknowledged, lost and applied twice across every suite. */
const lostKeys = new Set(['lost', 'lostDiskFull', 'lostIoError'])

/** The summary object written as bench/results/<stamp>-chaos.json. */
export function chaosSummary (facts: ChaosRunFacts, files: readonly string[], records: readonly FigureRecord[], verdicts: ReadonlyMap<string, FileVerdict>, problems: readonly string[] = [], seconds: ReadonlyMap<string, { wall: number, cpu?: number }> = new Map()): Record<string, unknown> {
  const suites: Record<string, SuiteSummary> = {}
  const byFile = new Map<string, SuitePromise[]>()
  for (const file of files) byFile.set(file, [...(chaosPromises[file] ?? [])])
  for (const record of records) {
    const file = record.file ?? [...byFile.keys()].find(f => chaosPromises[f]?.some(p => p.suite === record.suite)) ?? 'unknown'
    const passed = verdicts.get(file)?.outcome === 'passed'
    const promised = chaosPromises[file]?.find(p => p.suite === record.suite)?.figures ?? []
    const missing = record.skipped === undefined ? promised.filter(key => !Object.hasOwn(record.figures, key)) : []
    // A suite that reported more than once (a retried hook, a loop) keeps every report.
    let name = record.suite
    for (let n = 2; Object.hasOwn(suites, name); n++) name = `${record.suite} #${n}`
    suites[name] = {
      file,
      passed,
      run: record.run,
      fraction: record.fraction,
      figures: record.figures,
      ...(missing.length === 0 ? {} : { missing }),
      ...(record.skipped === undefined ? {} : { skipped: record.skipped }),
      ...(passed ? {} : { reason: verdictReason(verdicts.get(file)) })
    }
  }
  for (const [file, promises] of byFile) {
    for (const promise of promises) {
      if (Object.hasOwn(suites, promise.suite)) continue
      const verdict = verdicts.get(file)
      suites[promise.suite] = {
        file,
        passed: false,
        figures: null,
        missing: [...promise.figures],
        reason: verdict?.outcome === 'passed' ? 'the file passed but never reported these figures' : verdictReason(verdict)
      }
    }
  }
  const fileResults = Object.fromEntries(files.map(file => {
    const verdict = verdicts.get(file) ?? { outcome: 'not run' as const, reason: 'no verdict recorded' }
    // Wall and CPU seconds of the file (its share of its uvu job, as run-tests measures it).
    const time = seconds.get(file)
    return [file, { ...(verdict.outcome === 'passed' ? { outcome: 'passed' } : verdict), ...(time === undefined ? {} : { wallSeconds: Math.round(time.wall), ...(time.cpu === undefined ? {} : { cpuSeconds: Math.round(time.cpu) }) }) }]
  }))
  return {
    kind: 'chaos',
    startedAt: facts.startedAt,
    measuredAt: facts.measuredAt,
    commit: facts.commit,
    machine: facts.machine,
    load: facts.load,
    fraction: facts.fraction,
    seed: facts.seed ?? null,
    pattern: facts.pattern,
    runSeconds: facts.runSeconds,
    cpuSeconds: facts.cpuSeconds ?? null,
    complete: Object.keys(chaosPromises).every(file => files.includes(file)),
    files: fileResults,
    suites,
    totals: chaosTotals(suites),
    ...(problems.length === 0 ? {} : { problems })
  }
}

function verdictReason (verdict: FileVerdict | undefined): string {
  if (verdict === undefined) return 'no verdict recorded for its file'
  return verdict.outcome === 'passed' ? 'passed' : `${verdict.outcome}: ${verdict.reason}`
}

/**
 * Sums over the suites that reported: trials, acknowledged writes, lost and applied twice
 * (each suite's `lost…` and `duplicates`), fuzz inputs, crashes and hangs; each suite's
 * seed; the latencies
 * (every `…Ms` figure) stay per suite, since a median of medians means nothing. Suites with
 * no figures are named in `suitesWithoutFigures`, so a total is never read as covering them.
 */
export function chaosTotals (suites: Readonly<Record<string, SuiteSummary>>): Record<string, unknown> {
  let trials = 0
  let acknowledged = 0
  let lost = 0
  let appliedTwice = 0
  let fuzzInputs = 0
  let fuzzCrashes = 0
  let fuzzHangs = 0
  const latenciesMs: Record<string, Record<string, number>> = {}
  // The seed each seeded suite ran with (drawn anew by a full run unless CANTRIP_CHAOS_SEED fixes it): what replays it.
  const seeds: Record<string, number | string> = {}
  const suitesWithoutFigures: string[] = []
  const suitesFailed: string[] = []
  const suitesSkipped: string[] = []
  for (const [name, s] of Object.entries(suites)) {
    if (!s.passed) suitesFailed.push(name)
    if (s.skipped !== undefined) suitesSkipped.push(name)
    if (s.figures === null) { suitesWithoutFigures.push(name); continue }
    for (const [key, value] of Object.entries(s.figures)) {
      if (key === 'seed') seeds[name] = value
      if (typeof value !== 'number') continue
      if (key === 'trials') trials += value
      else if (key === 'acknowledged') acknowledged += value
      else if (lostKeys.has(key)) lost += value
      else if (key === 'duplicates') appliedTwice += value
      else if (key.endsWith('.inputs')) fuzzInputs += value
      else if (key.endsWith('.crashes')) fuzzCrashes += value
      else if (key.endsWith('.hangs')) fuzzHangs += value
      if (key.endsWith('Ms')) (latenciesMs[name] ??= {})[key] = value
    }
  }
  return { trials, acknowledged, lost, appliedTwice, fuzzInputs, fuzzCrashes, fuzzHangs, seeds, latenciesMs, suitesFailed, suitesSkipped, suitesWithoutFigures }
}

/** The keys every committed chaos file holds (test/chaos-results.test.ts checks each one). */
export const chaosRequiredPaths: readonly string[] = [
  'kind', 'startedAt', 'commit', 'machine.cores', 'machine.cpu', 'machine.memoryBytes', 'load.start', 'load.end', 'fraction', 'seed',
  'files', 'suites', ...['trials', 'acknowledged', 'lost', 'appliedTwice', 'fuzzInputs', 'fuzzCrashes', 'fuzzHangs', 'seeds', 'latenciesMs', 'suitesFailed', 'suitesSkipped', 'suitesWithoutFigures'].map(k => `totals.${k}`)
]

/** One line per problem (`chaos results: expected …, got …`); empty when `results` is a well-formed chaos summary. */
export function checkChaosResults (results: unknown): string[] {
  const problems: string[] = []
  const at = (path: string): { found: boolean, value: unknown } => {
    let value: unknown = results
    for (const key of path.split('.')) {
      if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) return { found: false, value: undefined }
      value = (value as Record<string, unknown>)[key]
    }
    return { found: true, value }
  }
  for (const path of chaosRequiredPaths) if (!at(path).found) problems.push(`chaos results: expected ${path}, got nothing`)
  if (problems.length > 0) return problems
  for (const path of ['load.start', 'load.end']) {
    const value = at(path).value
    if (!Array.isArray(value) || value.length !== 3 || !value.every(v => typeof v === 'number' && Number.isFinite(v))) problems.push(`chaos results: expected ${path} to be three load averages, got ${JSON.stringify(value)}`)
  }
  const fraction = at('fraction').value
  if (typeof fraction !== 'number' || !(fraction > 0 && fraction <= 1)) problems.push(`chaos results: expected fraction in (0, 1], got ${JSON.stringify(fraction)}`)
  const suites = at('suites').value as Record<string, Record<string, unknown>>
  const files = at('files').value as Record<string, unknown>
  for (const [file, promises] of Object.entries(chaosPromises)) {
    if (at('complete').value === true && !Object.hasOwn(files, file)) problems.push(`chaos results: expected a verdict for ${file}, got nothing`)
    if (!Object.hasOwn(files, file)) continue
    for (const { suite } of promises) {
      const s = suites[suite]
      if (s === undefined) { problems.push(`chaos results: expected suite "${suite}" (${file}), got nothing`); continue }
      if (typeof s['passed'] !== 'boolean') problems.push(`chaos results: expected suites["${suite}"].passed to be true or false, got ${JSON.stringify(s['passed'])}`)
      const figures = s['figures']
      const hasReason = typeof s['reason'] === 'string' && s['reason'] !== ''
      if (figures === null && !hasReason) problems.push(`chaos results: expected suites["${suite}"] without figures to say why, got no reason`)
      if (figures !== null && (typeof figures !== 'object' || Object.values(figures as object).some(v => typeof v !== 'number' && typeof v !== 'string'))) problems.push(`chaos results: expected suites["${suite}"].figures to hold numbers and strings, got ${JSON.stringify(figures)}`)
      if (s['passed'] === false && !hasReason) problems.push(`chaos results: expected failed suite "${suite}" to say why, got no reason`)
    }
  }
  return problems
}

/** The commit that ran, with `-dirty` when the tree has changes git would commit (as bench/run.ts says it). */
function commitNow (root: string): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim()
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, encoding: 'utf8' }).trim() !== ''
    return dirty ? `${head}-dirty` : head
  } catch {
    return 'unknown'
  }
}

/** Whether a run records chaos figures: only a chaos run (CANTRIP_CHAOS=1, as npm run test:chaos sets) that selects a chaos file; npm test's samples never write under bench/results/. */
export function chaosRecordingWanted (env: Readonly<Record<string, string | undefined>>, files: readonly string[]): boolean {
  return env['CANTRIP_CHAOS'] === '1' && files.some(file => file.startsWith('chaos/'))
}

/** A job's files and how it ended, as run-tests knows them. */
export interface JobOutcome { files: readonly string[], output: string, ok: boolean, fileSeconds?: ReadonlyMap<string, { wall: number, cpu?: number }> }

/**
 * Starts collecting a chaos run's figures: sets CANTRIP_CHAOS_FIGURES (inherited by every
 * uvu job run-tests starts) to a fresh file, and returns what writes the summary at the end
 * to bench/results/<UTC stamp>-chaos.json (the path, for run-tests to print).
 */
export function startChaosRecording (root: string, pattern: string, files: readonly string[]): { finish: (jobs: readonly JobOutcome[], cpuSeconds: number | undefined) => string } {
  const started = Date.now()
  const startedAt = new Date(started)
  const loadStart = loadavg()
  // The commit as the run starts: the tree may change (or be committed) while a long run goes on.
  const commit = commitNow(root)
  const dir = mkdtempSync(join(tmpdir(), 'cantrip-chaos-figures-'))
  const figuresFile = join(dir, 'figures.jsonl')
  writeFileSync(figuresFile, '')
  // A run stopped by a signal ends through process.exit: its figures go with it, and so does their directory.
  process.on('exit', () => { rmSync(dir, { recursive: true, force: true }) })
  process.env[chaosFiguresVariable] = figuresFile
  const finish = (jobs: readonly JobOutcome[], cpuSeconds: number | undefined): string => {
    const verdicts = new Map<string, FileVerdict>()
    const seconds = new Map<string, { wall: number, cpu?: number }>()
    for (const job of jobs) {
      for (const [file, verdict] of fileVerdicts(job.files, job.output, job.ok)) verdicts.set(file, verdict)
      for (const [file, t] of job.fileSeconds ?? []) seconds.set(file, t)
    }
    const { records, problems } = parseFigureLines(readFileSync(figuresFile, 'utf8'))
    rmSync(dir, { recursive: true, force: true })
    const fraction = process.env['CANTRIP_CHAOS_FRACTION']
    const summary = chaosSummary({
      startedAt: startedAt.toISOString(),
      measuredAt: new Date().toISOString(),
      commit,
      machine: { cores: availableParallelism(), cpu: cpus()[0]?.model ?? '', memoryBytes: totalmem(), node: process.version },
      load: { start: loadStart, end: loadavg() },
      fraction: fraction === undefined || fraction === '' ? 1 : Number(fraction),
      seed: process.env['CANTRIP_CHAOS_SEED'],
      pattern,
      runSeconds: Math.round((Date.now() - started) / 1000),
      cpuSeconds: cpuSeconds === undefined ? undefined : Math.round(cpuSeconds)
    }, files.filter(file => file.startsWith('chaos/')), records, verdicts, problems, seconds)
    const resultsDir = join(root, 'bench', 'results')
    mkdirSync(resultsDir, { recursive: true })
    const path = join(resultsDir, `${startedAt.toISOString().slice(0, 19).replaceAll(':', '-')}Z-chaos.json`)
    writeFileSync(path, JSON.stringify(summary, null, 2) + '\n')
    return path
  }
  return { finish }
}
