import { spawn } from 'node:child_process'
import { cpuMs, rssBytes } from './child-processes.ts'
import type { SimScalePoint } from './sim-scale.ts'

/**
 * The simulator at 10, 100, 1,000 and 10,000 machine agents, each point in a child process
 * (`bench/sim-scale.ts N`, as the lead tunes it) so a point that runs long is ended by pid
 * at its bound and recorded as not finished, with the reason, instead of holding up the run.
 */
export const simPointBoundsMs: Record<number, number> = { 10: 60_000, 100: 120_000, 1000: 180_000, 10000: tenThousandBoundMs() }

/** The 10,000-agent point's bound: 25 min, or CANTRIP_BENCH_SIM10K_S seconds (a shared machine's run may not afford it). */
function tenThousandBoundMs (): number {
  const seconds = Number(process.env['CANTRIP_BENCH_SIM10K_S'] ?? 1_500)
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 1_500_000
}

/**
 * V8's default heap limit (about 4 GB here) is below what 10,000 agents need (one
 * process: 3 controllers' models, their logs and 50,000 unit actors); 16 GB, or
 * CANTRIP_BENCH_SIM_HEAP_MB. Only a point that needs it uses it.
 */
function simPointHeapMb (): number {
  const mb = Number(process.env['CANTRIP_BENCH_SIM_HEAP_MB'] ?? 16_384)
  return Number.isSafeInteger(mb) && mb > 0 ? mb : 16_384
}

/**
 * V8's young generation for a point's process, in MB per semi-space (default 16 here, or
 * CANTRIP_BENCH_SIM_SEMI_MB). A simulated deploy keeps a lot of medium-lived data (messages
 * in flight, views and models between commits): at 1,000 agents 1,581 scavenges promoted
 * most of it, the old space grew to 1.1-1.6 GB between mark-compacts that left 0.3-0.5 GB,
 * and GC was 24 % of the samples. 64 MB lets more of it die young: -4 %, -9 % (1,000 agents)
 * and -4 to -15 % (300) CPU-s in runs side by side, for 50-200 MB more peak RSS.
 * 256 MB: the deploy allocates ~11 GB at 1,000 agents (55 % of it XState's snapshots and
 * macrosteps), so a scavenge came every ~50 simulated ms and what lives a hook's length
 * (10-200 ms) was copied and promoted; scavenges were nearly all of GC. Side by side at
 * 1,000 agents (load 15-22): 64 MB 59.5 / 60.4 CPU-s, 256 MB 56.0 / 56.7 (128 MB 60.8),
 * peak RSS +100-170 MB.
 */
const simPointSemiSpaceMbDefault = 256

function simPointSemiSpaceMb (): number {
  const mb = Number(process.env['CANTRIP_BENCH_SIM_SEMI_MB'] ?? simPointSemiSpaceMbDefault)
  return Number.isSafeInteger(mb) && mb > 0 ? mb : simPointSemiSpaceMbDefault
}

export interface SimPointResult { agents: number, finished: boolean, simToWall: number | null, convergeWallS: number | null, reason?: string, point?: SimScalePoint }

export async function measureSimPoint (agents: number, boundMs = simPointBoundsMs[agents] ?? 120_000): Promise<SimPointResult> {
  return await new Promise(resolve => {
    const child = spawn(process.execPath, [`--max-old-space-size=${simPointHeapMb()}`, `--max-semi-space-size=${simPointSemiSpaceMb()}`, '--import', 'tsx', 'bench/sim-scale.ts', String(agents)], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', chunk => { stdout += String(chunk) })
    child.stderr.on('data', chunk => { stderr = (stderr + String(chunk)).slice(-2_000) })
    let timedOut = false
    // On a shared machine a point can get a small share of a core: the CPU it had by the bound says how far it was.
    let usage = ''
    const timer = setTimeout(() => {
      timedOut = true
      usage = `, after ${Math.round(cpuMs(child.pid!) / 1000)} CPU-s, RSS ${Math.round(rssBytes(child.pid!) / 1e6)} MB`
      child.kill('SIGKILL')
    }, boundMs)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      const notFinished = (reason: string): void => { resolve({ agents, finished: false, simToWall: null, convergeWallS: null, reason }) }
      if (timedOut) return notFinished(`not finished within ${boundMs / 1000} s wall (killed${usage})`)
      if (code !== 0) return notFinished(`exited with ${signal ?? String(code)}: ${stderr.trim().split('\n').pop() ?? ''}`)
      try {
        const point = JSON.parse(stdout.trim().split('\n').pop()!) as SimScalePoint
        const converged = point.outcome === 'converged'
        // One line: the outcome of a crash carries its stack.
        resolve({ agents, finished: converged, simToWall: point.simToWall, convergeWallS: converged ? point.wallSeconds : null, ...(converged ? {} : { reason: point.outcome.split('\n')[0]! }), point })
      } catch {
        notFinished(`expected one JSON line from bench/sim-scale.ts, got ${JSON.stringify(stdout.slice(-200))}`)
      }
    })
  })
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(await measureSimPoint(Number(process.argv[2] ?? 10), Number(process.argv[3] ?? 60_000))))
