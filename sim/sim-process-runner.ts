/**
 * Simulated `ProcessRunner`: no process is started. A script decides each outcome
 * from the spec, and the outcome plays out on the `SimClock`: the exit resolves after
 * `durationMs` of simulated time, a hang lasts until a kill or the timeout, and the
 * timeout and kill grace are measured on the same clock. Output lines are delivered,
 * capped exactly as the real runner caps them, when the process ends.
 *
 * Detached processes (machine agents) come from their own script and live in a process
 * table that `identify`, `signalGroup` and `findByArgument` read, and where `crash(pid)`
 * kills one as the kernel's OOM killer would. Their output is appended to their log
 * file in the `SimFileSystem` when they start.
 */
import { assert } from '../runtime/assert.ts'
import { limits } from '../runtime/limits.ts'
import type {
  DetachedExit,
  DetachedProcess,
  DetachedProcessSpec,
  ProcessExit,
  ProcessIdentity,
  ProcessRunner,
  ProcessSignal,
  ProcessSpec,
  RunningProcess
} from '../runtime/process-runner.ts'
import type { SimClock } from './sim-clock.ts'
import type { SimFileSystem } from './sim-file-system.ts'
import { SimDetachedProcess } from './sim-detached-process.ts'

export interface SimProcessOutcome {
  /** Exit code when the process ends by itself; default 0. */
  exitCode?: number
  /** Simulated run time before it ends by itself. */
  durationMs: number
  /** Never ends by itself: only the timeout or a kill stops it. */
  hang?: boolean
  /** Lines written to stdout. */
  output?: string[]
  /** Lines written to stderr. */
  stderr?: string[]
  /** Ends after `durationMs` killed by this signal (an OOM kill, someone else's kill). */
  signal?: string
  /** Survives SIGTERM, so only the SIGKILL after the grace ends it. */
  ignoresSigterm?: boolean
  /** Cannot be started at all, for this reason (a missing hook, no exec bit). */
  spawnFailure?: string
  /** With `spawnFailure`: the executable does not exist (rather than existing but refusing to run). */
  missing?: boolean
}

export type SimProcessScript = (spec: ProcessSpec) => SimProcessOutcome
export type SimDetachedScript = (spec: DetachedProcessSpec) => SimProcessOutcome

export interface SimProcessRunnerOptions {
  /** Grace between SIGTERM and SIGKILL when the timeout kills the group. */
  timeoutKillGraceMs?: number
  /** The pid of the first process; later ones count up. */
  firstPid?: number
  /** Decides each detached process's outcome; without it, detached processes run until killed. */
  detachedScript?: SimDetachedScript
  /** Where detached processes' log files are written; without it their output is dropped. */
  files?: SimFileSystem
}

export class SimProcessRunner implements ProcessRunner {
  readonly #clock: SimClock
  readonly #script: SimProcessScript
  readonly #timeoutKillGraceMs: number
  readonly #detachedScript: SimDetachedScript
  readonly #files: SimFileSystem | undefined
  #nextPid: number
  readonly #running = new Map<number, SimRunningProcess>()
  readonly #detached = new Map<number, SimDetachedProcess>()

  constructor (clock: SimClock, script: SimProcessScript, options: SimProcessRunnerOptions = {}) {
    this.#clock = clock
    this.#script = script
    this.#timeoutKillGraceMs = options.timeoutKillGraceMs ?? limits.processKillGraceMs
    this.#nextPid = options.firstPid ?? 1000
    this.#detachedScript = options.detachedScript ?? (() => ({ durationMs: 0, hang: true }))
    this.#files = options.files
  }

  /** Processes started and not yet ended. */
  get runningCount (): number {
    return this.#running.size
  }

  /** Detached processes still running, by pid. */
  detachedPids (): number[] {
    return [...this.#detached.keys()].sort((a, b) => a - b)
  }

  /** Kills a detached process as something outside the provider would (an OOM kill, a crash). */
  crash (pid: number, signal = 'SIGKILL'): boolean {
    const process = this.#detached.get(pid)
    if (process === undefined) return false
    process.end({ kind: 'signalled', signal })
    return true
  }

  startDetached (spec: DetachedProcessSpec): DetachedProcess {
    const outcome = this.#detachedScript(spec)
    assert(Number.isFinite(outcome.durationMs) && outcome.durationMs >= 0,
      `sim-process-runner: detached script gave a durationMs of ${String(outcome.durationMs)} for ${JSON.stringify(spec.command)}`)
    const failed = (reason: string, missing: boolean): DetachedProcess =>
      ({ pid: undefined, exit: Promise.resolve<DetachedExit>({ kind: 'spawn-failed', reason, missing }) })
    try {
      this.#files?.appendFile(spec.logFile, '', 0o600)
    } catch (error) {
      return failed(`cannot open ${JSON.stringify(spec.logFile)}: ${error instanceof Error ? error.message : String(error)}`, false)
    }
    if (outcome.spawnFailure !== undefined) return failed(outcome.spawnFailure, outcome.missing ?? false)
    const lines = [...outcome.output ?? [], ...outcome.stderr ?? []]
    if (lines.length > 0) this.#files?.appendFile(spec.logFile, lines.map(line => `${line}\n`).join(''), 0o600)
    const pid = this.#nextPid++
    const process = new SimDetachedProcess(pid, spec, outcome, this.#clock, () => this.#detached.delete(pid))
    this.#detached.set(pid, process)
    return { pid, exit: process.exit }
  }

  identify (pid: number): ProcessIdentity | undefined {
    const detached = this.#detached.get(pid)
    if (detached !== undefined) return { pid, startTime: detached.startTime }
    return this.#running.has(pid) ? { pid } : undefined
  }

  signalGroup (pid: number, signal: ProcessSignal): void {
    this.#detached.get(pid)?.receive(signal)
    this.#running.get(pid)?.receive(signal)
  }

  findByArgument (fragment: string): number[] {
    return [...this.#detached.values()].filter(process => process.commandLine.includes(fragment)).map(process => process.pid)
  }

  start (spec: ProcessSpec): RunningProcess {
    assert(Number.isFinite(spec.timeoutMs) && spec.timeoutMs > 0, `sim-process-runner: timeout must be > 0, got ${String(spec.timeoutMs)}`)
    assert(Number.isSafeInteger(spec.outputBytesMax) && spec.outputBytesMax >= 0 && spec.outputBytesMax <= limits.processOutputBytesMax,
      `sim-process-runner: output cap out of range, got ${String(spec.outputBytesMax)}`)
    const outcome = this.#script(spec)
    assert(Number.isFinite(outcome.durationMs) && outcome.durationMs >= 0,
      `sim-process-runner: script gave a durationMs of ${String(outcome.durationMs)} for ${JSON.stringify(spec.command)}`)
    if (outcome.spawnFailure !== undefined) {
      return { pid: undefined, exit: Promise.resolve({ kind: 'spawn-failed', reason: outcome.spawnFailure, missing: outcome.missing ?? false }), kill () {} }
    }
    const pid = this.#nextPid++
    const process = new SimRunningProcess(pid, spec, outcome, this.#clock, this.#timeoutKillGraceMs, () => this.#running.delete(pid))
    this.#running.set(pid, process)
    return process
  }
}

/** How a process ended, before its output accounting is added. */
type Ending = { kind: 'exited', exitCode: number } | { kind: 'signalled', signal: string } | { kind: 'timed-out' }

class SimRunningProcess implements RunningProcess {
  readonly pid: number
  readonly exit: Promise<ProcessExit>
  readonly #spec: ProcessSpec
  readonly #outcome: SimProcessOutcome
  readonly #clock: SimClock
  readonly #timeoutKillGraceMs: number
  readonly #onEnded: () => void
  #resolve!: (exit: ProcessExit) => void
  #ended = false
  /** Set once a SIGTERM has been sent: why, so the exit can say so. */
  #terminating: 'timeout' | 'kill' | undefined
  readonly #timers = new Set<unknown>()

  constructor (pid: number, spec: ProcessSpec, outcome: SimProcessOutcome, clock: SimClock, timeoutKillGraceMs: number, onEnded: () => void) {
    this.pid = pid
    this.#spec = spec
    this.#outcome = outcome
    this.#clock = clock
    this.#timeoutKillGraceMs = timeoutKillGraceMs
    this.#onEnded = onEnded
    this.exit = new Promise(resolve => { this.#resolve = resolve })
    // The natural end is scheduled before the timeout, so a process that finishes at
    // exactly its timeout counts as finished.
    if (outcome.hang !== true) {
      this.#after(outcome.durationMs, () => {
        if (outcome.signal !== undefined) this.#end({ kind: 'signalled', signal: outcome.signal })
        else this.#end({ kind: 'exited', exitCode: outcome.exitCode ?? 0 })
      })
    }
    this.#after(spec.timeoutMs, () => { this.#terminate('timeout', this.#timeoutKillGraceMs) })
  }

  kill (graceMs: number): void {
    assert(Number.isFinite(graceMs) && graceMs >= 0, `sim-process-runner: kill grace must be >= 0, got ${String(graceMs)}`)
    this.#terminate('kill', graceMs)
  }

  /** A signal from `signalGroup`: SIGTERM ends it unless it ignores SIGTERM; SIGKILL always. */
  receive (signal: ProcessSignal): void {
    if (signal === 'SIGKILL' || this.#outcome.ignoresSigterm !== true) this.#end({ kind: 'signalled', signal })
  }

  #terminate (reason: 'timeout' | 'kill', graceMs: number): void {
    if (this.#ended || this.#terminating !== undefined) return
    this.#terminating = reason
    const result = (signal: string): Ending =>
      reason === 'timeout' ? { kind: 'timed-out' } : { kind: 'signalled', signal }
    if (this.#outcome.ignoresSigterm === true) this.#after(graceMs, () => { this.#end(result('SIGKILL')) })
    else this.#end(result('SIGTERM'))
  }

  #after (delayMs: number, callback: () => void): void {
    const handle = this.#clock.setTimeout(() => {
      this.#timers.delete(handle)
      callback()
    }, delayMs)
    this.#timers.add(handle)
  }

  #end (result: Ending): void {
    if (this.#ended) return
    this.#ended = true
    for (const handle of this.#timers) this.#clock.clearTimeout(handle)
    this.#timers.clear()
    this.#onEnded()
    const output = this.#deliverOutput()
    this.#resolve({ ...result, ...output })
  }

  /** Byte accounting as in the real runner: every line costs its UTF-8 bytes plus a newline. */
  #deliverOutput (): { outputBytes: number, outputTruncated: boolean } {
    const encoder = new TextEncoder()
    const decoder = new TextDecoder()
    const max = this.#spec.outputBytesMax
    let outputBytes = 0
    let kept = 0
    const streams = [['stdout', this.#outcome.output ?? []], ['stderr', this.#outcome.stderr ?? []]] as const
    for (const [stream, lines] of streams) {
      for (const line of lines) {
        const bytes = encoder.encode(line + '\n')
        outputBytes += bytes.length
        const room = max - kept
        if (room <= 0) continue
        const keptBytes = bytes.length <= room ? bytes.subarray(0, bytes.length - 1) : bytes.subarray(0, room)
        kept += Math.min(bytes.length, room)
        this.#spec.onOutput?.(stream, decoder.decode(keptBytes))
      }
    }
    return { outputBytes, outputTruncated: outputBytes > max }
  }
}
