/**
 * Runs the uvu suites under test/ in parallel lanes, so that the process tests (which
 * mostly wait on real agents, elections and hooks) overlap with each other and with the
 * CPU-bound simulator suites, instead of running one file after another as uvu does.
 *
 * Files are grouped into jobs: a file expected to take longer than `soloJobSecondsMin`
 * runs in a uvu process of its own, the quick ones are packed into batches of about
 * `batchJobSecondsTarget`. Expected durations come from test/test-timings.json (written by
 * `--write-timings` after a run); a file not listed there counts as `unknownFileSeconds`.
 * Lanes take the longest job left first. Each job's output is printed whole when it
 * ends, so lines from different files never interleave, and the run ends with uvu's own
 * summary lines (Total / Passed / Skipped / Duration) summed over every job, which
 * .ci/run reads.
 *
 *   node --import tsx scripts/run-tests.ts [PATTERN] [--lanes N] [--write-timings]
 *
 * dist/ is built first (scripts/build.ts): the real-process tests start the shipped bundles.
 *
 * PATTERN is uvu's (a case-insensitive regex on the path below test/). Lanes default to
 * CANTRIP_TEST_LANES, else lanesDefault (3). A job that runs past `jobSecondsMax` has its process group
 * killed and counts as failed.
 */
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildDist } from './build.ts'

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..')
const testDir = join(root, 'test')
const timingsFile = join(testDir, 'test-timings.json')

/** A file expected to take at least this long gets a uvu process of its own. */
const soloJobSecondsMin = 15
/** Quick files are packed into jobs of about this many seconds. */
const batchJobSecondsTarget = 30
/** Expected duration of a file test-timings.json does not list. */
const unknownFileSeconds = 5
/** One job may run this long before its process group is killed (the long and chaos suites take hours). */
const jobSecondsMax = process.env['CANTRIP_LONG'] === undefined && process.env['CANTRIP_CHAOS'] === undefined ? 600 : 4 * 3600
const lanesMax = 8
/**
 * Three lanes on a 2-core machine: the real-process tests spend much of their time waiting
 * on agents, elections and hooks, so a third lane keeps both cores busy. Measured on an
 * idle 2-core machine, the whole suite: 2 lanes 626 s, 3 lanes 553 s (all passing).
 */
const lanesDefault = 3
/**
 * The simulator swarms run a worker thread per core: two at once only share the cores
 * (in a clean 3-lane run the three started together and each took twice as long), so at
 * most one of them runs at a time while the other lanes take the waiting tests.
 */
const coreSaturatingFiles = /^sim-(machine-agent|controller-group|provisioning)\.test\.ts$/

function saturatesCores (job: Job): boolean {
  return job.files.some(file => coreSaturatingFiles.test(file))
}

interface Options { pattern: string, lanes: number, writeTimings: boolean }
interface Job { files: string[], expectedSeconds: number }
interface JobResult { job: Job, output: string, total: number, passed: number, skipped: number, ok: boolean, seconds: number, fileSeconds: Map<string, number> }

function parseOptions (argv: string[]): Options {
  let pattern = '.*\\.test\\.ts$'
  let lanes = Number(process.env['CANTRIP_TEST_LANES'] ?? lanesDefault)
  let writeTimings = false
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--lanes') lanes = Number(argv[++i])
    else if (arg === '--write-timings') writeTimings = true
    else if (arg.startsWith('--')) throw new Error(`run-tests: expected --lanes N or --write-timings, got ${JSON.stringify(arg)}`)
    else pattern = arg
  }
  if (!Number.isInteger(lanes) || lanes < 1 || lanes > lanesMax) throw new Error(`run-tests: expected --lanes (or CANTRIP_TEST_LANES) to be a whole number from 1 to ${lanesMax}, got ${String(lanes)}`)
  return { pattern, lanes, writeTimings }
}

/** The files uvu would run for `pattern`: every file below test/ whose relative path matches. */
function testFiles (pattern: string): string[] {
  const regex = new RegExp(pattern, 'i')
  const found: string[] = []
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) walk(path)
      else if (regex.test(relative(testDir, path))) found.push(relative(testDir, path))
    }
  }
  walk(testDir)
  return found.sort()
}

function readTimings (): Record<string, number> {
  if (!existsSync(timingsFile)) return {}
  return JSON.parse(readFileSync(timingsFile, 'utf8')) as Record<string, number>
}

/** Slow files alone, quick ones in batches; longest first. */
function planJobs (files: string[], timings: Record<string, number>): Job[] {
  const expected = (file: string): number => timings[file] ?? unknownFileSeconds
  const jobs: Job[] = []
  let batch: Job = { files: [], expectedSeconds: 0 }
  for (const file of files) {
    if (expected(file) >= soloJobSecondsMin) {
      jobs.push({ files: [file], expectedSeconds: expected(file) })
      continue
    }
    batch.files.push(file)
    batch.expectedSeconds += expected(file)
    if (batch.expectedSeconds >= batchJobSecondsTarget) {
      jobs.push(batch)
      batch = { files: [], expectedSeconds: 0 }
    }
  }
  if (batch.files.length > 0) jobs.push(batch)
  return jobs.sort((a, b) => b.expectedSeconds - a.expectedSeconds)
}

function escapeRegex (text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

function summaryNumber (output: string, label: string): number | undefined {
  const match = new RegExp(`^\\s*${label}:\\s*(\\d+)`, 'm').exec(output.replace(/\x1b\[[0-9;]*[A-Za-z]/g, ''))
  return match === null ? undefined : Number(match[1])
}

/** When each file's header line appeared in the job's output: the file's share of the job's time. */
function fileSecondsOf (job: Job, marks: Array<{ file: string, at: number }>, endedAt: number): Map<string, number> {
  const seconds = new Map<string, number>()
  marks.forEach((mark, i) => { seconds.set(mark.file, ((marks[i + 1]?.at ?? endedAt) - mark.at) / 1000) })
  for (const file of job.files) if (!seconds.has(file)) seconds.set(file, 0)
  return seconds
}

/** Process groups of the jobs running now, ended with the runner if it is stopped. */
const running = new Set<number>()
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
  process.on(signal, () => {
    for (const pid of running) try { process.kill(-pid, 'SIGKILL') } catch { /* already gone */ }
    process.exit(1)
  })
}

async function runJob (job: Job): Promise<JobResult> {
  const pattern = `^(${job.files.map(escapeRegex).join('|')})$`
  const started = Date.now()
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'node_modules/uvu/bin.js'), 'test', pattern, '--no-color'], {
    cwd: root, stdio: ['ignore', 'pipe', 'pipe'], detached: true
  })
  running.add(child.pid!)
  let output = ''
  const marks: Array<{ file: string, at: number }> = []
  const headers = new Set(job.files)
  const take = (chunk: Buffer): void => {
    const text = chunk.toString()
    output += text
    for (const line of text.split('\n')) if (headers.has(line.trim())) marks.push({ file: line.trim(), at: Date.now() })
  }
  child.stdout.on('data', take)
  child.stderr.on('data', take)
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    try { process.kill(-child.pid!, 'SIGKILL') } catch { /* already gone */ }
  }, jobSecondsMax * 1000)
  const code = await new Promise<number | null>(resolve => { child.on('close', resolve) })
  clearTimeout(timer)
  running.delete(child.pid!)
  const endedAt = Date.now()
  if (timedOut) output += `\nrun-tests: ${job.files.join(', ')}: killed after ${jobSecondsMax} s\n`
  const total = summaryNumber(output, 'Total')
  const passed = summaryNumber(output, 'Passed')
  const skipped = summaryNumber(output, 'Skipped') ?? 0
  if (total === undefined || passed === undefined) output += `\nrun-tests: ${job.files.join(', ')}: no uvu summary (exit ${String(code)})\n`
  return {
    job,
    output,
    // A job that printed no summary crashed before counting: one failure at least.
    total: total ?? Math.max(1, passed ?? 0),
    passed: passed ?? 0,
    skipped,
    ok: code === 0 && !timedOut && total !== undefined && passed === total,
    seconds: (endedAt - started) / 1000,
    fileSeconds: fileSecondsOf(job, marks, endedAt)
  }
}

async function main (): Promise<number> {
  const options = parseOptions(process.argv.slice(2))
  const files = testFiles(options.pattern)
  if (files.length === 0) {
    process.stderr.write(`run-tests: no test file matches ${JSON.stringify(options.pattern)}\n`)
    return 1
  }
  const queue = planJobs(files, readTimings())
  const started = Date.now()
  // The processes the tests start run the bundles that ship, built from the tree as it is.
  await buildDist()
  const results: JobResult[] = []
  let saturating: Promise<void> | undefined
  /** The longest job left that may start now: one core-saturating job at a time. */
  const nextJob = (): Job | undefined => {
    const index = queue.findIndex(job => saturating === undefined || !saturatesCores(job))
    return index < 0 ? undefined : queue.splice(index, 1)[0]
  }
  const lane = async (): Promise<void> => {
    while (queue.length > 0) {
      const job = nextJob()
      if (job === undefined) {
        await saturating
        continue
      }
      const run = runJob(job)
      if (saturatesCores(job)) saturating = run.then(() => { saturating = undefined })
      const result = await run
      results.push(result)
      process.stdout.write(result.output.endsWith('\n') ? result.output : `${result.output}\n`)
      process.stdout.write(`run-tests: ${result.ok ? 'ok' : 'FAILED'} in ${result.seconds.toFixed(1)} s: ${job.files.join(' ')}\n\n`)
    }
  }
  await Promise.all(Array.from({ length: options.lanes }, lane))
  const sum = (pick: (r: JobResult) => number): number => results.reduce((n, r) => n + pick(r), 0)
  const failedJobs = results.filter(r => !r.ok)
  for (const r of failedJobs) process.stdout.write(`run-tests: failed: ${r.job.files.join(' ')}\n`)
  process.stdout.write(`\n  Total:     ${sum(r => r.total)}\n  Passed:    ${sum(r => r.passed)}\n  Skipped:   ${sum(r => r.skipped)}\n  Duration:  ${Date.now() - started}ms\n\n`)
  if (options.writeTimings) {
    const timings = { ...readTimings() }
    for (const r of results) for (const [file, seconds] of r.fileSeconds) timings[file] = Math.round(seconds * 10) / 10
    writeFileSync(timingsFile, JSON.stringify(Object.fromEntries(Object.entries(timings).sort()), null, 2) + '\n')
  }
  return failedJobs.length === 0 ? 0 : 1
}

process.exitCode = await main()
