/**
 * The real `ProcessRunner`: hooks, actions and commands as child processes.
 *
 * Each child leads its own process group (`detached: true` makes it call setsid), so a
 * timeout or a kill reaches everything it started, grandchildren included, with one
 * signal to the negative pid. Nothing of the agent's environment leaks in: the child
 * gets exactly `spec.env`. Output is split into lines for the caller and capped: bytes
 * beyond `outputBytesMax` are counted and dropped as they arrive, so a process that
 * prints without end costs no memory.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createReadStream, readdirSync, readFileSync } from 'node:fs'
import { isAbsolute } from 'node:path'
import { InvalidInputError } from '../runtime/errors.ts'
import { limits } from '../runtime/limits.ts'
import type { DetachedProcess, DetachedProcessSpec, ProcessExit, ProcessIdentity, ProcessRunner, ProcessSignal, ProcessSpec, RunningProcess } from '../runtime/process-runner.ts'
import { findProcessesByArgument, identifyProcess, signalProcessGroup, startDetachedProcess } from './detached-processes.ts'

const component = 'child-process-runner'

/** How often a kill looks again for group members still on their way out. */
const groupRecheckMs = 5

/** Node fires timers asked for more than 2^31 - 1 ms after 1 ms. */
const timerDelayMsMax = 2_147_483_647

export interface ChildProcessRunnerOptions {
  /** Grace between SIGTERM and SIGKILL when the timeout kills the group. */
  timeoutKillGraceMs?: number
  /** After the process exits, how long to wait for descendants that still hold its output pipes. */
  outputDrainMs?: number
}

export class ChildProcessRunner implements ProcessRunner {
  readonly #timeoutKillGraceMs: number
  readonly #outputDrainMs: number
  /**
   * Process groups this runner started (each child leads one). A hook's group outlives
   * it while a workload it started in the background runs: a machine reboot kills them
   * all (`killAllGroups`). Groups found empty are dropped as new ones start.
   */
  readonly #groups = new Set<number>()

  constructor (options: ChildProcessRunnerOptions = {}) {
    this.#timeoutKillGraceMs = checkDelay('timeoutKillGraceMs', options.timeoutKillGraceMs ?? limits.processKillGraceMs)
    this.#outputDrainMs = checkDelay('outputDrainMs', options.outputDrainMs ?? limits.processOutputDrainMs)
  }

  start (spec: ProcessSpec): RunningProcess {
    if (!(Number.isFinite(spec.timeoutMs) && spec.timeoutMs > 0 && spec.timeoutMs <= timerDelayMsMax)) {
      throw new InvalidInputError(component, `a timeout from 1 to ${timerDelayMsMax} ms`, spec.timeoutMs)
    }
    if (!(Number.isSafeInteger(spec.outputBytesMax) && spec.outputBytesMax >= 0 && spec.outputBytesMax <= limits.processOutputBytesMax)) {
      throw new InvalidInputError(component, `an output cap from 0 to ${limits.processOutputBytesMax} bytes`, spec.outputBytesMax)
    }
    if (!isAbsolute(spec.command)) {
      return notStarted(`cannot start ${JSON.stringify(spec.command)}: command must be an absolute path`)
    }
    let child: ChildProcess
    try {
      child = spawn(spec.command, [...spec.args], {
        cwd: spec.cwd,
        // A copy, so nothing added to the object later reaches the child; never process.env.
        env: { ...spec.env },
        detached: true,
        shell: false,
        stdio: [spec.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe']
      })
    } catch (error) {
      // Invalid arguments (e.g. a NUL byte in an env value) throw synchronously.
      return notStarted(`cannot start ${JSON.stringify(spec.command)}: ${messageOf(error)}`)
    }
    feedStdin(child, spec)
    if (child.pid !== undefined) this.#track(child.pid)
    return new RunningChild(child, spec, this.#timeoutKillGraceMs, this.#outputDrainMs)
  }

  /** SIGKILL to every group this runner started that still has a member (a machine reboot). */
  killAllGroups (): void {
    for (const pgid of this.#groups) {
      try {
        process.kill(-pgid, 'SIGKILL')
      } catch { /* the group is gone */ }
    }
    this.#groups.clear()
  }

  #track (pgid: number): void {
    if (this.#groups.size >= limits.processGroupsTrackedMax) {
      for (const old of this.#groups) if (!groupAlive(old)) this.#groups.delete(old)
    }
    // Still full of live groups: forget the oldest rather than grow without bound.
    if (this.#groups.size >= limits.processGroupsTrackedMax) this.#groups.delete(this.#groups.values().next().value!)
    this.#groups.add(pgid)
  }

  startDetached (spec: DetachedProcessSpec): DetachedProcess {
    return startDetachedProcess(spec)
  }

  identify (pid: number): ProcessIdentity | undefined {
    return identifyProcess(pid)
  }

  signalGroup (pid: number, signal: ProcessSignal): void {
    signalProcessGroup(pid, signal)
  }

  findByArgument (fragment: string): number[] {
    return findProcessesByArgument(fragment)
  }
}

type StreamName = 'stdout' | 'stderr'

class RunningChild implements RunningProcess {
  readonly pid: number | undefined
  readonly exit: Promise<ProcessExit>

  readonly #child: ChildProcess
  readonly #spec: ProcessSpec
  readonly #timeoutKillGraceMs: number
  readonly #outputDrainMs: number
  #resolveExit!: (exit: ProcessExit) => void
  #settled = false

  #outputBytes = 0
  #keptBytes = 0
  #truncated = false
  /** The unfinished last line of each stream, within the kept bytes. */
  readonly #partial: Record<StreamName, Buffer[]> = { stdout: [], stderr: [] }

  #leaderExit: { code: number | null, signal: NodeJS.Signals | null } | undefined
  #timedOut = false
  #terminating = false
  #killRequested = false
  #lastSignalSent: NodeJS.Signals | undefined
  #timeoutTimer: NodeJS.Timeout | undefined
  /** Armed while a SIGTERM's grace runs; SIGKILL when it fires. */
  #killTimer: NodeJS.Timeout | undefined
  #drainTimer: NodeJS.Timeout | undefined
  /** Both output pipes have closed (or been given up on). */
  #closed = false
  /** While killing: look again shortly for members that are still exiting. */
  #recheckTimer: NodeJS.Timeout | undefined

  constructor (child: ChildProcess, spec: ProcessSpec, timeoutKillGraceMs: number, outputDrainMs: number) {
    this.#child = child
    this.#spec = spec
    this.#timeoutKillGraceMs = timeoutKillGraceMs
    this.#outputDrainMs = outputDrainMs
    this.pid = child.pid
    this.exit = new Promise(resolve => { this.#resolveExit = resolve })

    child.on('error', error => {
      // Spawn failures (ENOENT, EACCES, a missing cwd) arrive here with no pid. Later
      // errors concern child.kill and child.send, which this runner does not use.
      if (this.pid === undefined) this.#settle({ kind: 'spawn-failed', reason: spawnFailure(spec, error), missing: (error as NodeJS.ErrnoException).code === 'ENOENT' })
    })
    if (this.pid === undefined) return

    for (const name of ['stdout', 'stderr'] as const) {
      const stream = child[name]
      if (stream === null) continue
      stream.on('data', (chunk: Buffer) => { this.#onData(name, chunk) })
      // A read error only ends our view of the output; the exit still comes from the child.
      stream.on('error', () => {})
    }
    child.on('exit', (code, signal) => { this.#onLeaderExit(code, signal) })
    child.on('close', () => {
      this.#closed = true
      this.#finish()
    })

    this.#timeoutTimer = setTimeout(() => { this.#onTimeout() }, spec.timeoutMs)
    this.#timeoutTimer.unref()
  }

  kill (graceMs: number): void {
    if (this.#settled || this.pid === undefined) return
    this.#killRequested = true
    this.#terminate(checkDelay('graceMs', graceMs))
  }

  #onTimeout (): void {
    this.#timeoutTimer = undefined
    // A kill already under way decides the outcome; the timeout adds nothing.
    if (this.#settled || this.#leaderExit !== undefined || this.#killRequested) return
    this.#timedOut = true
    this.#terminate(this.#timeoutKillGraceMs)
  }

  /**
   * SIGTERM to the group now, SIGKILL after the grace; a second request changes nothing.
   * The exit is held until the group is gone or has had its SIGKILL, so whoever waits
   * for it (the hook lock) knows no process of the old hook runs on.
   */
  #terminate (graceMs: number): void {
    if (this.#terminating) return
    this.#terminating = true
    this.#signalGroup('SIGTERM')
    // Not unref'd: someone is waiting for this exit, and the wait is bounded by the grace.
    this.#killTimer = setTimeout(() => {
      this.#killTimer = undefined
      this.#signalGroup('SIGKILL')
      if (this.#leaderExit === undefined) return
      if (this.#closed) this.#finish()
      // A process that left the group (setsid) may still hold the pipes.
      else this.#armDrain()
    }, graceMs)
  }

  #signalGroup (signal: NodeJS.Signals): void {
    if (this.pid === undefined) return
    this.#lastSignalSent = signal
    try {
      process.kill(-this.pid, signal)
    } catch {
      // ESRCH: every member is gone already, which is what we wanted.
    }
  }

  /** Whether any member of the group still runs (zombies do not count). */
  #groupHasMembers (): boolean {
    if (this.pid === undefined) return false
    try {
      process.kill(-this.pid, 0)
    } catch {
      return false
    }
    return groupHasRunningMember(this.pid)
  }

  #onData (stream: StreamName, chunk: Buffer): void {
    this.#outputBytes += chunk.length
    const room = this.#spec.outputBytesMax - this.#keptBytes
    if (room <= 0) {
      if (chunk.length > 0) this.#truncated = true
      return
    }
    let kept = chunk
    if (chunk.length > room) {
      kept = chunk.subarray(0, room)
      this.#truncated = true
    }
    this.#keptBytes += kept.length
    this.#splitLines(stream, kept)
    // No more bytes will be kept, so unfinished lines can never complete: hand them over now.
    if (this.#truncated) {
      this.#flushPartial('stdout')
      this.#flushPartial('stderr')
    }
  }

  #splitLines (stream: StreamName, bytes: Buffer): void {
    let start = 0
    for (let newline = bytes.indexOf(10, start); newline !== -1; newline = bytes.indexOf(10, start)) {
      const pieces = this.#partial[stream]
      pieces.push(bytes.subarray(start, newline))
      this.#partial[stream] = []
      this.#emit(stream, pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces))
      start = newline + 1
    }
    // Copy the tail: a view would pin the whole 64 KiB read chunk until the line ends.
    if (start < bytes.length) this.#partial[stream].push(Buffer.from(bytes.subarray(start)))
  }

  #flushPartial (stream: StreamName): void {
    const pieces = this.#partial[stream]
    if (pieces.length === 0) return
    this.#partial[stream] = []
    this.#emit(stream, Buffer.concat(pieces))
  }

  #emit (stream: StreamName, line: Buffer): void {
    this.#spec.onOutput?.(stream, line.toString('utf8'))
  }

  #onLeaderExit (code: number | null, signal: NodeJS.Signals | null): void {
    this.#leaderExit = { code, signal }
    if (this.#timeoutTimer !== undefined) clearTimeout(this.#timeoutTimer)
    this.#timeoutTimer = undefined
    // While a kill's grace runs, the SIGKILL will end the pipe holders; wait for it.
    if (this.#killTimer === undefined) this.#armDrain()
  }

  /**
   * 'close' waits for every holder of the output pipes. A daemon started by the
   * process may keep them open for ever; past the drain time we stop reading.
   */
  #armDrain (): void {
    if (this.#drainTimer !== undefined) return
    this.#drainTimer = setTimeout(() => {
      this.#drainTimer = undefined
      this.#child.stdout?.destroy()
      this.#child.stderr?.destroy()
      this.#closed = true
      this.#finish()
    }, this.#outputDrainMs)
    this.#drainTimer.unref()
  }

  #finish (): void {
    if (this.#settled) return
    const leader = this.#leaderExit
    if (leader === undefined) return
    if (this.#killTimer !== undefined) {
      // A member is still there: one ignoring SIGTERM (the SIGKILL at the end of the
      // grace comes back here), or one that closed its pipes and is still exiting.
      if (this.#groupHasMembers()) {
        this.#recheckTimer ??= setTimeout(() => {
          this.#recheckTimer = undefined
          this.#finish()
        }, groupRecheckMs).unref()
        return
      }
      clearTimeout(this.#killTimer)
      this.#killTimer = undefined
    }
    if (this.#drainTimer !== undefined) clearTimeout(this.#drainTimer)
    this.#drainTimer = undefined
    this.#flushPartial('stdout')
    this.#flushPartial('stderr')
    const output = { outputBytes: this.#outputBytes, outputTruncated: this.#truncated }
    if (this.#timedOut) {
      this.#settle({ kind: 'timed-out', ...output })
    } else if (this.#killRequested) {
      const signal = leader.signal ?? this.#lastSignalSent ?? 'SIGTERM'
      this.#settle({ kind: 'signalled', signal, ...output })
    } else if (leader.signal !== null) {
      this.#settle({ kind: 'signalled', signal: leader.signal, ...output })
    } else {
      this.#settle({ kind: 'exited', exitCode: leader.code ?? -1, ...output })
    }
  }

  #settle (exit: ProcessExit): void {
    if (this.#settled) return
    this.#settled = true
    if (this.#timeoutTimer !== undefined) clearTimeout(this.#timeoutTimer)
    this.#timeoutTimer = undefined
    if (this.#recheckTimer !== undefined) clearTimeout(this.#recheckTimer)
    this.#recheckTimer = undefined
    this.#resolveExit(exit)
  }
}

function groupAlive (pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
  } catch {
    return false
  }
  return groupHasRunningMember(pgid)
}

/**
 * Scans /proc for a process of the group that is not a zombie. Where PID 1 does not
 * reap orphans (many containers), killed grandchildren stay zombies for ever and
 * `kill(-pgid, 0)` keeps succeeding. Without /proc, any member counts as running.
 */
function groupHasRunningMember (pgid: number): boolean {
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return true
  }
  for (const entry of entries) {
    if (!/^[0-9]+$/.test(entry)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
    } catch {
      continue
    }
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true
  }
  return false
}

/**
 * Bytes are written and stdin closed; a file is streamed without passing through memory
 * whole. A child that exits before reading it all breaks the pipe: its exit says why.
 */
function feedStdin (child: ChildProcess, spec: ProcessSpec): void {
  const stdin = child.stdin
  if (stdin === null || spec.stdin === undefined) return
  stdin.on('error', () => {})
  if ('bytes' in spec.stdin) {
    stdin.end(spec.stdin.bytes)
    return
  }
  const file = createReadStream(spec.stdin.file)
  file.once('error', () => { stdin.end() })
  file.pipe(stdin)
}

function notStarted (reason: string, missing = false): RunningProcess {
  return { pid: undefined, exit: Promise.resolve({ kind: 'spawn-failed', reason, missing }), kill () {} }
}

function spawnFailure (spec: ProcessSpec, error: Error): string {
  const code = (error as NodeJS.ErrnoException).code
  // Node reports a missing cwd as the command being missing; name both.
  return `cannot start ${JSON.stringify(spec.command)} in ${JSON.stringify(spec.cwd)}: ${code ?? error.message}`
}

function checkDelay (what: string, ms: number): number {
  if (!(Number.isFinite(ms) && ms >= 0 && ms <= timerDelayMsMax)) {
    throw new InvalidInputError(component, `${what} from 0 to ${timerDelayMsMax} ms`, ms)
  }
  return ms
}

function messageOf (error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
