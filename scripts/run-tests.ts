/**
 * Runs the uvu suites under test/ in parallel lanes, so that the process tests (which
 * mostly wait on real agents, elections and hooks) overlap with each other and with the
 * CPU-bound simulator suites, instead of running one file after another as uvu does.
 *
 * Files are grouped into jobs (scripts/test-schedule.ts): a file expected to take longer
 * than `soloJobSecondsMin` runs in a uvu process of its own, the quick ones are packed into
 * batches of about `batchJobSecondsTarget`, CPU-bound files with CPU-bound ones. Expected wall and CPU
 * seconds come from test/test-timings.json (written by `--write-timings` after a run; the
 * CPU of a file is that of everything its job ran, from the job's own cgroup where the
 * machine allows one (scripts/job-cgroup.ts), else its uvu process's and every child it
 * waited for, plus the daemons it started detached, found by a marker in their
 * environment, all read from /proc, which misses what those daemons' children burn); a
 * file not listed there counts as `unknownFileSeconds` at `unknownFileDemand` cores.
 *
 * Scheduling packs the cores: a job's demand is its CPU seconds over its wall seconds.
 * Jobs that mostly wait (real processes, elections, hooks) are started whenever a lane is
 * free; a CPU-bound job only while the CPU-bound jobs running leave room for it on the
 * cores (one always may start when none runs). Among the jobs that may start, the longest
 * goes first. Each job's output is printed whole when it ends, so lines from different
 * files never interleave, and the run ends with uvu's own summary lines (Total / Passed /
 * Skipped / Duration) summed over every job, which .ci/run reads.
 *
 *   node --import tsx scripts/run-tests.ts [PATTERN] [--lanes N] [--sleeper-lanes N] [--write-timings] [--plan]
 *
 * --sleeper-lanes N (or CANTRIP_TEST_SLEEPER_LANES; default 0) adds N lanes that run only
 * the jobs that mostly wait (test-schedule.ts, sleeperDemandMax).
 *
 * --plan prints the jobs as planned (expected seconds, demand in cores) and the run's
 * predicted wall seconds on a lane less, as many and a lane more (simulateRun), and runs none.
 *
 * dist/ is built first (scripts/build.ts) unless it is newer than everything it is built
 * from (scripts/dist-fresh.ts): the real-process tests start the shipped bundles.
 *
 * Each job's files run bundled by esbuild under plain node (scripts/test-bundle.ts), not
 * under tsx, whose module hooks cost a job that loads libp2p about a CPU-second;
 * CANTRIP_TEST_BUNDLED=0 runs them under tsx instead.
 *
 * A chaos run (CANTRIP_CHAOS=1 with a file under test/chaos/ selected: `npm run test:chaos`)
 * collects every suite's reported figures and each file's verdict, and writes them to
 * bench/results/<UTC time>-chaos.json (scripts/chaos-results.ts); `npm test` writes nothing there.
 *
 * PATTERN is uvu's (a case-insensitive regex on the path below test/). Lanes (jobs at
 * once) default to CANTRIP_TEST_LANES, else the cores plus `lanesBeyondCores`. A job that runs past `jobSecondsMax` has its process group
 * killed and counts as failed.
 */
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { availableParallelism, loadavg } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildDist } from './build.ts'
import { distFresh } from './dist-fresh.ts'
import { chaosRecordingWanted, startChaosRecording } from './chaos-results.ts'
import { makeJobCgroup } from './job-cgroup.ts'
import { bundleTests } from './test-bundle.ts'
import { cpuBound, nextJobIndex, nextSleeperIndex, planJobs, simulateRun, type Job, type Timing } from './test-schedule.ts'

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..')
const testDir = join(root, 'test')
const timingsFile = join(testDir, 'test-timings.json')

/** How often the CPU of a running job is read from /proc, for --write-timings. */
const cpuSampleMs = 500
/**
 * One job may run this long before its process group is killed (the long and chaos suites
 * take hours). A bound for hangs, not for slowness: the controller-group swarm's 500 seeds
 * took 343 s of wall with the machine's load at 20 on its 2 cores.
 */
const jobSecondsMax = process.env['CANTRIP_LONG'] === undefined && process.env['CANTRIP_CHAOS'] === undefined ? 900 : 4 * 3600
const lanesMax = 8
/**
 * Lanes beyond the cores: the real-process tests spend much of their time waiting on
 * agents, elections and hooks, so lanes beyond the cores keep both busy, while the
 * CPU-bound jobs are held to the cores' room (above). Measured on an idle 2-core machine
 * before the CPU bound existed: 2 lanes 626 s, 3 lanes 553 s. With it, on 1589 tests:
 * 4 lanes 719 s, 3 lanes 652 s (2026-11-27): the CPU a real-process job's detached
 * daemons burn was not counted in its demand, so a fourth lane starved the swarms. Jobs
 * now run in cgroups (scripts/job-cgroup.ts) and test-timings.json holds that CPU, so
 * the admission rule sees it. Clean-clone `.ci/run`s on the quiet 2-core machine since
 * (2026-11-27/28): 3 lanes 358-418 s of npm test (five runs, 614-745 CPU-s; 373 s and
 * 675 CPU-s at ff9a427), 4 lanes 346 s (670 CPU-s) and 321 s (623 CPU-s at ff9a427,
 * minutes after the 3-lane run of the same clone), so a fourth lane now pays.
 */
const lanesBeyondCores = 2
const cores = availableParallelism()
interface Options { pattern: string, lanes: number, sleeperLanes: number, writeTimings: boolean, plan: boolean }
interface JobResult { job: Job, output: string, total: number, passed: number, skipped: number, ok: boolean, seconds: number, cpuSeconds: number | undefined, fileSeconds: Map<string, Timing> }

function parseOptions (argv: string[]): Options {
  let pattern = '.*\\.test\\.ts$'
  let lanes = Number(process.env['CANTRIP_TEST_LANES'] ?? Math.min(lanesMax, cores + lanesBeyondCores))
  let sleeperLanes = Number(process.env['CANTRIP_TEST_SLEEPER_LANES'] ?? 0)
  let writeTimings = false
  let plan = false
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--lanes') lanes = Number(argv[++i])
    else if (arg === '--sleeper-lanes') sleeperLanes = Number(argv[++i])
    else if (arg === '--write-timings') writeTimings = true
    else if (arg === '--plan') plan = true
    else if (arg.startsWith('--')) throw new Error(`run-tests: expected --lanes N, --sleeper-lanes N, --write-timings or --plan, got ${JSON.stringify(arg)}`)
    else pattern = arg
  }
  if (!Number.isInteger(lanes) || lanes < 1 || lanes > lanesMax) throw new Error(`run-tests: expected --lanes (or CANTRIP_TEST_LANES) to be a whole number from 1 to ${lanesMax}, got ${String(lanes)}`)
  if (!Number.isInteger(sleeperLanes) || sleeperLanes < 0 || lanes + sleeperLanes > lanesMax) throw new Error(`run-tests: expected --sleeper-lanes (or CANTRIP_TEST_SLEEPER_LANES) to be a whole number from 0 to ${lanesMax - lanes}, got ${String(sleeperLanes)}`)
  return { pattern, lanes, sleeperLanes, writeTimings, plan }
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

/** test-timings.json: `file: { wall, cpu }` (a bare number, as older runs wrote it, is the wall time). */
function readTimings (): Record<string, Timing> {
  if (!existsSync(timingsFile)) return {}
  const raw = JSON.parse(readFileSync(timingsFile, 'utf8')) as Record<string, number | Timing>
  return Object.fromEntries(Object.entries(raw).map(([file, t]) => [file, typeof t === 'number' ? { wall: t } : t]))
}

/**
 * CPU seconds of a running process and of every child it has waited for (/proc/PID/stat:
 * utime, stime, cutime, cstime in clock ticks); undefined where there is no /proc.
 */
function cpuSecondsOf (pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / clockTicksPerSecond
  } catch {
    return undefined
  }
}
/** USER_HZ: 100 on every Linux the tests run on. */
const clockTicksPerSecond = 100

/** Set in each job's environment, inherited by everything the job starts: how its detached daemons are found. */
const jobMarkerVariable = 'CANTRIP_TEST_JOB'

/**
 * CPU seconds, by pid, of the processes carrying `marker` (`CANTRIP_TEST_JOB=<id>`) that
 * were orphaned to init: the daemons a job started detached (`bootstrap`'s controllers and
 * machine agents), which no process of the job waits for, so that their CPU (and their
 * hooks', which they wait for) is in no figure of the job's own process. A process whose
 * parent still runs is counted through that parent when it is waited for. Init's children
 * come from /proc/1/task/TID/children, and each one's environment is read once.
 */
function detachedCpuSeconds (marker: string): Map<number, number> {
  const found = new Map<number, number>()
  const orphans = new Set<number>()
  try {
    for (const tid of readdirSync('/proc/1/task')) {
      for (const pid of readFileSync(`/proc/1/task/${tid}/children`, 'utf8').split(' ')) if (pid !== '' && pid !== '\n') orphans.add(Number(pid))
    }
  } catch {
    return found
  }
  for (const pid of orphanMarkers.keys()) if (!orphans.has(pid)) orphanMarkers.delete(pid)
  for (const pid of orphans) {
    try {
      if (!orphanMarkers.has(pid)) {
        const variable = readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').find(entry => entry.startsWith(`${jobMarkerVariable}=`))
        orphanMarkers.set(pid, variable)
      }
      if (orphanMarkers.get(pid) !== marker) continue
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
      found.set(pid, (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / clockTicksPerSecond)
    } catch { /* gone, or not ours to read */ }
  }
  return found
}
/** Init's children seen so far, and the job marker in each one's environment (undefined: none). */
const orphanMarkers = new Map<number, string | undefined>()

function escapeRegex (text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

function summaryNumber (output: string, label: string): number | undefined {
  const match = new RegExp(`^\\s*${label}:\\s*(\\d+)`, 'm').exec(output.replace(/\x1b\[[0-9;]*[A-Za-z]/g, ''))
  return match === null ? undefined : Number(match[1])
}

interface Mark { file: string, at: number, cpu: number | undefined }

/** When each file's header line appeared in the job's output (and the CPU used by then): the file's share of the job's time. */
function fileSecondsOf (job: Job, marks: Mark[], end: Omit<Mark, 'file'>): Map<string, Timing> {
  const seconds = new Map<string, Timing>()
  marks.forEach((mark, i) => {
    const next = marks[i + 1] ?? end
    const cpu = next.cpu === undefined || mark.cpu === undefined ? undefined : Math.max(0, next.cpu - mark.cpu)
    seconds.set(mark.file, { wall: (next.at - mark.at) / 1000, ...(cpu === undefined ? {} : { cpu }) })
  })
  for (const file of job.files) if (!seconds.has(file)) seconds.set(file, { wall: 0 })
  return seconds
}

let jobsStarted = 0
/** Whether the jobs ran in cgroups of their own (their CPU then counts every descendant). */
let cgroupJobs = 0
function cgroupsCounted (results: readonly JobResult[]): boolean {
  return results.length > 0 && cgroupJobs === results.length
}
/** The 1-minute load average, as uptime prints it. */
function loadNow (): string {
  return loadavg()[0]!.toFixed(2)
}
/** How long (steps of leftoverGraceStepMs) a job's cgroup may take to empty after its process ends, before what is left is a leak. */
const leftoverGraceSteps = 40
const leftoverGraceStepMs = 50

/**
 * Kills (by pid) what a job left running in its cgroup after its own process ended: each
 * test cleans up what it starts, so anything here is a leak, named in the job's output.
 */
function endLeftovers (pids: readonly number[], job: Job): string {
  if (pids.length === 0) return ''
  const named = pids.map(pid => {
    let command = '?'
    try { command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim().slice(0, 120) } catch { /* gone */ }
    try { process.kill(pid, 'SIGKILL') } catch { /* gone */ }
    return `  ${pid} ${command}`
  })
  return `\nrun-tests: ${job.files.join(', ')} left ${pids.length} process(es) running; killed:\n${named.join('\n')}\n`
}

/** Process groups of the jobs running now, ended with the runner if it is stopped. */
const running = new Set<number>()
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
  process.on(signal, () => {
    for (const pid of running) try { process.kill(-pid, 'SIGKILL') } catch { /* already gone */ }
    process.exit(1)
  })
}

/**
 * Each job's files run bundled (scripts/test-bundle.ts) under plain node, through uvu's
 * own runner; CANTRIP_TEST_BUNDLED=0 runs them under tsx. The default since a whole
 * clean-clone run passed bundled (1886 of 1886, 2026-11-28, at load 12-48), where the jobs
 * of many small files cost less than under tsx (the 100-file job 8.5 -> 3.6 CPU-s, the
 * sim-system job 42.2 -> 37.8 even at that load).
 */
const bundledJobs = process.env['CANTRIP_TEST_BUNDLED'] !== '0'

/** A bundled job's node arguments; if its files cannot be bundled, a node that says why and fails (the job fails, the run goes on). */
async function bundledArgs (job: Job, dir: string): Promise<string[]> {
  try {
    return await bundleTests(testDir, job.files, dir)
  } catch (error) {
    const why = `run-tests: cannot bundle ${job.files.join(' ')}: ${error instanceof Error ? error.message : String(error)}\n`
    return ['-e', `process.stderr.write(${JSON.stringify(why)}); process.exit(1)`]
  }
}

async function runJob (job: Job): Promise<JobResult> {
  const pattern = `^(${job.files.map(escapeRegex).join('|')})$`
  const started = Date.now()
  const jobId = `${process.pid}-${++jobsStarted}`
  const marker = `${jobMarkerVariable}=${jobId}`
  // Where the machine allows, the job and all it starts run in a cgroup of their own: its CPU is then exact.
  const cgroup = makeJobCgroup(`cantrip-test-${jobId}`)
  if (cgroup !== undefined) cgroupJobs++
  const bundleDir = bundledJobs ? join(root, '.cache', `test-job-${jobId}`) : undefined
  const uvu: [string, string[]] = bundleDir === undefined
    ? [process.execPath, ['--import', 'tsx', join(root, 'node_modules/uvu/bin.js'), 'test', pattern, '--no-color']]
    : [process.execPath, await bundledArgs(job, bundleDir)]
  const [command, args] = cgroup?.wrap(...uvu) ?? uvu
  const child = spawn(command, args, {
    cwd: root, stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: { ...process.env, [jobMarkerVariable]: jobId }
  })
  running.add(child.pid!)
  let output = ''
  const marks: Mark[] = []
  const headers = new Set(job.files)
  // The last CPU reading of each detached daemon, kept after it ends (its /proc entry goes with it).
  const daemons = new Map<number, number>()
  const jobCpu = (): number | undefined => {
    if (cgroup !== undefined) return cgroup.cpuSeconds()
    const own = cpuSecondsOf(child.pid!)
    if (own === undefined) return undefined
    for (const [pid, cpu] of detachedCpuSeconds(marker)) daemons.set(pid, cpu)
    return own + [...daemons.values()].reduce((n, cpu) => n + cpu, 0)
  }
  // The last CPU reading before the process ended.
  let lastCpu = jobCpu()
  const sampler = setInterval(() => { lastCpu = jobCpu() ?? lastCpu }, cpuSampleMs)
  const take = (chunk: Buffer): void => {
    const text = chunk.toString()
    output += text
    for (const line of text.split('\n')) {
      if (!headers.has(line.trim())) continue
      lastCpu = jobCpu() ?? lastCpu
      marks.push({ file: line.trim(), at: Date.now(), cpu: lastCpu })
    }
  }
  child.stdout.on('data', take)
  child.stderr.on('data', take)
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    try { process.kill(-child.pid!, 'SIGKILL') } catch { /* already gone */ }
  }, jobSecondsMax * 1000)
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>(resolve => { child.on('close', (exitCode, exitSignal) => { resolve([exitCode, exitSignal]) }) })
  clearTimeout(timer)
  clearInterval(sampler)
  running.delete(child.pid!)
  const endedAt = Date.now()
  if (cgroup !== undefined) {
    // A process a test has just killed may take a moment to go: give the cgroup that long to empty by itself.
    for (let i = 0; i < leftoverGraceSteps && cgroup.pids().length > 0; i++) await new Promise(resolve => setTimeout(resolve, leftoverGraceStepMs))
    output += endLeftovers(cgroup.pids(), job)
    for (let i = 0; i < leftoverGraceSteps && cgroup.pids().length > 0; i++) await new Promise(resolve => setTimeout(resolve, leftoverGraceStepMs))
    lastCpu = cgroup.cpuSeconds()
    cgroup.remove()
  }
  if (bundleDir !== undefined) rmSync(bundleDir, { recursive: true, force: true })
  if (timedOut) output += `\nrun-tests: ${job.files.join(', ')}: killed after ${jobSecondsMax} s\n`
  const total = summaryNumber(output, 'Total')
  const passed = summaryNumber(output, 'Passed')
  const skipped = summaryNumber(output, 'Skipped') ?? 0
  if (total === undefined || passed === undefined) output += `\nrun-tests: ${job.files.join(', ')}: no uvu summary (${code !== null ? `exit ${code}` : `killed by ${String(signal)}`})\n`
  return {
    job,
    output,
    // A job that printed no summary crashed before counting: one failure at least.
    total: total ?? Math.max(1, passed ?? 0),
    passed: passed ?? 0,
    skipped,
    ok: code === 0 && !timedOut && total !== undefined && passed === total,
    seconds: (endedAt - started) / 1000,
    cpuSeconds: lastCpu,
    fileSeconds: fileSecondsOf(job, marks, { at: endedAt, cpu: lastCpu })
  }
}

async function main (): Promise<number> {
  const options = parseOptions(process.argv.slice(2))
  const files = testFiles(options.pattern)
  if (files.length === 0) {
    process.stderr.write(`run-tests: no test file matches ${JSON.stringify(options.pattern)}\n`)
    return 1
  }
  const queue = planJobs(files, readTimings(), cores)
  if (options.plan) {
    for (const job of queue) process.stdout.write(`${job.expectedSeconds.toFixed(0).padStart(5)} s ${job.demand.toFixed(2)} cores ${cpuBound(job) ? 'cpu ' : 'wait'} ${job.files.join(' ')}\n`)
    const sleepers = options.sleeperLanes === 0 ? '' : ` + ${options.sleeperLanes} sleeper`
    const predicted = (lanes: number): string => `${lanes} lanes${sleepers} ${simulateRun(queue, lanes, cores, options.sleeperLanes).toFixed(0)} s`
    process.stdout.write(`${queue.length} jobs on ${options.lanes} lanes${sleepers}, ${cores} cores; predicted: ${[options.lanes - 1, options.lanes, options.lanes + 1].filter(n => n >= 1 && n + options.sleeperLanes <= lanesMax).map(predicted).join(', ')}\n`)
    return 0
  }
  const started = Date.now()
  const loadAtStart = loadNow()
  // A chaos run (npm run test:chaos) records its suites' figures in a committed file; the samples in npm test do not.
  const chaosRecording = chaosRecordingWanted(process.env, files) ? startChaosRecording(root, options.pattern, files) : undefined
  // The processes the tests start run the bundles that ship, built from the tree as it is
  // (in a clean clone `npm ci` has just built them: a second build held every lane ~5 s).
  if (distFresh(root)) process.stdout.write('run-tests: dist/ is newer than everything it is built from; not built again\n')
  else await buildDist()
  const results: JobResult[] = []
  /** The jobs running now; a lane with nothing it may start waits for one of them to end. */
  const inFlight = new Map<Job, Promise<unknown>>()
  const nextJob = (): Job | undefined => {
    const index = nextJobIndex(queue, [...inFlight.keys()], cores)
    return index < 0 ? undefined : queue.splice(index, 1)[0]
  }
  /** A sleeper lane takes only jobs that mostly wait, and ends once none is left to start. */
  const nextSleeper = (): Job | undefined => {
    const index = nextSleeperIndex(queue)
    return index < 0 ? undefined : queue.splice(index, 1)[0]
  }
  const lane = async (sleeper: boolean): Promise<void> => {
    while (queue.length > 0) {
      const job = sleeper ? nextSleeper() : nextJob()
      if (job === undefined) {
        if (sleeper) return
        await Promise.race(inFlight.values())
        continue
      }
      const run = runJob(job)
      inFlight.set(job, run.finally(() => { inFlight.delete(job) }))
      const result = await run
      results.push(result)
      process.stdout.write(result.output.endsWith('\n') ? result.output : `${result.output}\n`)
      const cpu = result.cpuSeconds === undefined ? '' : `, ${result.cpuSeconds.toFixed(1)} CPU-s`
      process.stdout.write(`run-tests: ${result.ok ? 'ok' : 'FAILED'} in ${result.seconds.toFixed(1)} s${cpu} (expected ${job.expectedSeconds.toFixed(0)} s at ${job.demand.toFixed(2)} cores): ${job.files.join(' ')}\n\n`)
    }
  }
  await Promise.all([...Array.from({ length: options.lanes }, async () => { await lane(false) }), ...Array.from({ length: options.sleeperLanes }, async () => { await lane(true) })])
  const sum = (pick: (r: JobResult) => number): number => results.reduce((n, r) => n + pick(r), 0)
  const failedJobs = results.filter(r => !r.ok)
  for (const r of failedJobs) process.stdout.write(`run-tests: failed: ${r.job.files.join(' ')}\n`)
  // The CPU every job used (with all it started, where cgroups count it) and the machine's load: a run's time means little without them.
  const cpuSum = sum(r => r.cpuSeconds ?? 0)
  process.stdout.write(`run-tests: ${results.length} jobs used ${cpuSum.toFixed(0)} CPU-s${cgroupsCounted(results) ? ' (cgroups: every descendant counted)' : ' (from /proc: daemons\' own children missed)'}; load average ${loadAtStart} at the start, ${loadNow()} at the end\n`)
  if (chaosRecording !== undefined) process.stdout.write(`run-tests: chaos figures written to ${relative(root, chaosRecording.finish(results.map(r => ({ files: r.job.files, output: r.output, ok: r.ok, fileSeconds: r.fileSeconds })), cpuSum))}\n`)
  process.stdout.write(`\n  Total:     ${sum(r => r.total)}\n  Passed:    ${sum(r => r.passed)}\n  Skipped:   ${sum(r => r.skipped)}\n  Duration:  ${Date.now() - started}ms\n\n`)
  if (options.writeTimings) {
    const timings = { ...readTimings() }
    const tenth = (n: number): number => Math.round(n * 10) / 10
    for (const r of results) {
      for (const [file, t] of r.fileSeconds) timings[file] = { wall: tenth(t.wall), ...(t.cpu === undefined ? {} : { cpu: tenth(t.cpu) }) }
    }
    // One line per file, so a refresh reads as a short diff.
    const lines = Object.entries(timings).sort(([a], [b]) => a.localeCompare(b)).map(([file, t]) => `  ${JSON.stringify(file)}: ${JSON.stringify(t)}`)
    writeFileSync(timingsFile, `{\n${lines.join(',\n')}\n}\n`)
  }
  return failedJobs.length === 0 ? 0 : 1
}

process.exitCode = await main()
