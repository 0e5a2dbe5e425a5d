/**
 * How scripts/run-tests.ts packs the test files into jobs and the jobs onto the cores: the
 * plan (which files share a uvu process), the admission rule (which job may start now) and
 * a model of a whole run (`simulateRun`) that `--plan` prints, so a change to the numbers
 * below can be judged by its predicted makespan before a 10-minute run measures it.
 *
 * A job's demand is the cores it is expected to keep busy: its CPU seconds over its wall
 * seconds, from test/test-timings.json. Admission packs the cores: jobs that mostly wait
 * (real processes idling between elections, hooks and polls) start whenever a lane is
 * free; a CPU-bound one when the CPU-bound jobs running leave room for it, or none runs.
 */

/** A file's last measured wall seconds and CPU seconds (CPU absent: not measured). */
export interface Timing { wall: number, cpu?: number }
/** `demand`: the cores the job is expected to keep busy. */
export interface Job { files: string[], expectedSeconds: number, demand: number }

/** A file expected to take at least this long gets a uvu process of its own. */
export const soloJobSecondsMin = 15
/**
 * Quick files are packed into jobs of about this many seconds. Every job pays a node,
 * tsx and uvu start (about a CPU-second), so fewer, larger batches cost less CPU; 40 s
 * keeps them shorter than the solo jobs they fill in around.
 */
export const batchJobSecondsTarget = 40
/** Expected duration of a file test-timings.json does not list. */
export const unknownFileSeconds = 5
/** Cores a file test-timings.json does not list (or lists without CPU) is expected to keep busy. */
export const unknownFileDemand = 0.5
/** A job expected to keep at least this many cores busy is CPU-bound: it waits for room on the cores. */
export const cpuBoundDemandMin = 0.6
/** Running jobs may together be expected to use this many times the cores (their demand is measured under load, so a little low). */
export const coresOvercommit = 1.25
/**
 * A uvu process runs its tests on one thread: a job is expected to keep one core busy at
 * most (its agents' bursts aside), whatever a short file's startup-heavy figures say.
 */
export const jobDemandMax = 1
/**
 * The simulator swarms run a worker per core (runSwarm with jobs: 2): each keeps every
 * core busy whatever its measured demand (which contention lowers). The system swarm was
 * missing here, so the plan took it for a 92 s job on 0.6 of a core (its 500 seeds use 82
 * CPU-s inside a whole run) and let CPU-bound jobs start beside it.
 */
export const coreSaturatingFiles = /^sim-(machine-agent|controller-group|provisioning|system-swarm)\.test\.ts$/

/**
 * A file's expected wall and CPU seconds. A swarm's wall is its CPU spread over the cores:
 * its measured wall says more about what else ran beside it (on a busy machine a swarm
 * of 67 CPU-seconds took 161 s) than about the time it takes when it has the cores.
 */
export function expectedOf (timings: Readonly<Record<string, Timing>>, file: string, cores: number): { wall: number, cpu: number } {
  const measured = timings[file]
  const wall = measured?.wall ?? unknownFileSeconds
  if (coreSaturatingFiles.test(file)) {
    const cpu = measured?.cpu ?? wall * cores
    return { wall: cpu / cores, cpu }
  }
  return { wall, cpu: measured?.cpu ?? wall * unknownFileDemand }
}

export function jobOf (files: string[], timings: Readonly<Record<string, Timing>>, cores: number): Job {
  const sum = (pick: (e: { wall: number, cpu: number }) => number): number => files.reduce((n, f) => n + pick(expectedOf(timings, f, cores)), 0)
  const wall = sum(e => e.wall)
  const demandMax = files.some(file => coreSaturatingFiles.test(file)) ? cores : jobDemandMax
  return { files, expectedSeconds: wall, demand: Math.min(demandMax, sum(e => e.cpu) / Math.max(wall, 0.1)) }
}

/** Slow files alone, quick ones in batches of like demand (CPU-bound with CPU-bound); the most core-seconds first. */
export function planJobs (files: readonly string[], timings: Readonly<Record<string, Timing>>, cores: number): Job[] {
  const jobs: Job[] = []
  const quick: string[] = []
  for (const file of files) {
    if (expectedOf(timings, file, cores).wall >= soloJobSecondsMin) jobs.push(jobOf([file], timings, cores))
    else quick.push(file)
  }
  const demandOf = (file: string): number => { const e = expectedOf(timings, file, cores); return e.cpu / Math.max(e.wall, 0.1) }
  quick.sort((a, b) => demandOf(b) - demandOf(a) || a.localeCompare(b))
  let batch: string[] = []
  let batchSeconds = 0
  for (const file of quick) {
    batch.push(file)
    batchSeconds += expectedOf(timings, file, cores).wall
    if (batchSeconds >= batchJobSecondsTarget) {
      jobs.push(jobOf(batch, timings, cores))
      batch = []
      batchSeconds = 0
    }
  }
  if (batch.length > 0) jobs.push(jobOf(batch, timings, cores))
  return jobs.sort((a, b) => coreSecondsOf(b) - coreSecondsOf(a))
}

/**
 * What a job holds: its wall seconds, times its cores where it keeps more than one busy.
 * Jobs start in this order (where admitted), so a swarm (43 s on both cores) starts with
 * the 90-second jobs it overlaps, not at the end where nothing can overlap it: simulateRun
 * predicted 671 s against 688 s by wall alone on 3 lanes, 534 s against 565 s on 4.
 */
export function coreSecondsOf (job: Job): number {
  return job.expectedSeconds * Math.max(1, job.demand)
}

export function cpuBound (job: Job): boolean {
  return job.demand >= cpuBoundDemandMin
}

/**
 * The index in `queue` (most core-seconds first) of the job to start now, or -1 when none may: a
 * waiting job whenever a lane is free; a CPU-bound one only while the CPU-bound jobs
 * running leave room for it on the cores (or none runs). Holding the waiting jobs too
 * (by all the demand running) predicted 3-7 % longer runs in simulateRun, since their
 * waits overlap CPU whatever their demand says.
 */
export function nextJobIndex (queue: readonly Job[], running: readonly Job[], cores: number): number {
  const cpuJobs = running.filter(cpuBound)
  const busy = cpuJobs.reduce((n, job) => n + job.demand, 0)
  return queue.findIndex(job => !cpuBound(job) || cpuJobs.length === 0 || busy + job.demand <= cores * coresOvercommit)
}

/**
 * A sleeper lane (off unless asked for: CANTRIP_TEST_SLEEPER_LANES or --sleeper-lanes)
 * runs only jobs expected to keep at most this much of a core busy: the real-process
 * files that mostly wait on timeouts (the 15 s healthy watch of cantripd-unit-status,
 * the local provider's start checks, a stalled disk), which otherwise hold one of the
 * lanes while the cores idle. In simulateRun on the 43 jobs of a quiet 418 s run, one
 * sleeper lane beside 3 lanes predicts 390 s against 426 s; not measured on a quiet machine.
 */
export const sleeperDemandMax = 0.25

/** The index in `queue` of the job a sleeper lane may start now (the first, so the longest, that mostly waits), or -1. */
export function nextSleeperIndex (queue: readonly Job[]): number {
  return queue.findIndex(job => job.demand <= sleeperDemandMax)
}

/**
 * The predicted wall seconds of a run of `jobs` on `lanes` lanes and `cores` cores, by
 * the same admission rule, with `sleeperLanes` more lanes for the jobs that mostly wait.
 * While the jobs running want more than the cores, each one's CPU share of its time is
 * slowed by one factor (cpuShareRate) chosen so that together they burn exactly the
 * cores; its waiting share is not slowed. A model for choosing the numbers above, not a
 * measurement.
 */
export function simulateRun (jobs: readonly Job[], lanes: number, cores: number, sleeperLanes = 0): number {
  const queue = [...jobs]
  /** Running jobs, the share of each one done, and whether a sleeper lane runs it. */
  const running: Array<{ job: Job, done: number, sleeper: boolean }> = []
  let now = 0
  for (;;) {
    while (running.filter(r => !r.sleeper).length < lanes && queue.length > 0) {
      const index = nextJobIndex(queue, running.map(r => r.job), cores)
      if (index < 0) break
      running.push({ job: queue.splice(index, 1)[0]!, done: 0, sleeper: false })
    }
    while (running.filter(r => r.sleeper).length < sleeperLanes) {
      const index = nextSleeperIndex(queue)
      if (index < 0) break
      running.push({ job: queue.splice(index, 1)[0]!, done: 0, sleeper: true })
    }
    if (running.length === 0) return now
    const rate = cpuShareRate(running.map(r => r.job.demand), cores)
    /** Seconds per whole job at the current sharing of the cores. */
    const secondsOf = (job: Job): number => Math.max(job.expectedSeconds, 0.01) * ((1 - Math.min(1, job.demand)) + Math.min(1, job.demand) / rate)
    const step = Math.min(...running.map(r => (1 - r.done) * secondsOf(r.job)))
    now += step
    for (const r of running) r.done += step / secondsOf(r.job)
    for (let i = running.length - 1; i >= 0; i--) if (running[i]!.done >= 1 - 1e-9) running.splice(i, 1)
  }
}

/** Bisection steps for cpuShareRate: 2^-40 of the rate, far below a second of any run. */
const rateSearchSteps = 40

/**
 * The speed (0..1] at which jobs wanting `demands` cores each get through their CPU on
 * `cores` cores: 1 while they want no more than the cores, else the r at which they
 * together burn exactly the cores. A job of demand d spends f = min(1, d) of its time on
 * CPU (a swarm all of it, on d cores) and the rest waiting, which is not slowed: its time
 * becomes (1 - f) + f / r and it burns d·r / ((1 - f)·r + f) cores. Slowing every CPU
 * share by the demand over the cores (as this model did before) let jobs that mostly
 * wait burn more than the cores: four 0.55-core jobs of 100 s finished in 105.5 s, where
 * their 220 CPU-s need 110 s of 2 cores.
 */
export function cpuShareRate (demands: readonly number[], cores: number): number {
  if (demands.reduce((n, d) => n + d, 0) <= cores) return 1
  const burnt = (r: number): number => demands.reduce((n, d) => {
    const f = Math.min(1, d)
    return n + (d <= 0 ? 0 : d * r / ((1 - f) * r + f))
  }, 0)
  let low = 0
  let high = 1
  for (let i = 0; i < rateSearchSteps; i++) {
    const mid = (low + high) / 2
    if (burnt(mid) > cores) high = mid
    else low = mid
  }
  return (low + high) / 2
}
