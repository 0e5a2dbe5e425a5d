/**
 * Child processes (hooks, actions, commands) reach pure code only through this
 * contract, and so do the processes a provider leaves running (a machine's agent).
 * Real: `ChildProcessRunner` in agent/ (process groups, timeouts, output caps, /proc);
 * simulated: `SimProcessRunner` in sim/ (scripted outcomes on simulated time, a
 * process table the simulator can crash processes in).
 */
export interface ProcessSpec {
  /** Absolute path of the executable; run directly, no shell. */
  command: string
  args: readonly string[]
  /** The whole environment: nothing is inherited beyond it. */
  env: Readonly<Record<string, string>>
  cwd: string
  /** Kill the whole process group after this long. */
  timeoutMs: number
  /** Bytes of stdout + stderr kept; the rest is counted and dropped. */
  outputBytesMax: number
  onOutput?: (stream: 'stdout' | 'stderr', line: string) => void
  /** What the process reads on stdin (default: nothing, stdin is closed). */
  stdin?: ProcessInput
}

/** Bytes given here, or a file's contents streamed from disk (an archive too big to hold). */
export type ProcessInput =
  | { readonly bytes: Uint8Array }
  | { readonly file: string }

export type ProcessExit =
  | { kind: 'exited', exitCode: number, outputBytes: number, outputTruncated: boolean }
  /** Killed by a signal we did not send as a timeout (e.g. agent shutdown). */
  | { kind: 'signalled', signal: string, outputBytes: number, outputTruncated: boolean }
  | { kind: 'timed-out', outputBytes: number, outputTruncated: boolean }
  /** Could not be started; `missing` when the executable does not exist (a hook the charm lacks). */
  | { kind: 'spawn-failed', reason: string, missing: boolean }

export interface RunningProcess {
  readonly pid: number | undefined
  readonly exit: Promise<ProcessExit>
  /** Terminate the whole process group: SIGTERM, then SIGKILL after `graceMs`. */
  kill (graceMs: number): void
}

/**
 * A process meant to outlive whoever started it (a machine's agent, as an instance
 * outlives a cloud API client): it leads its own process group, has no timeout, and its
 * output goes to a file rather than a pipe, which would break when the starter dies.
 */
export interface DetachedProcessSpec {
  /** Absolute path of the executable; run directly, no shell. */
  command: string
  args: readonly string[]
  /** The whole environment: nothing is inherited beyond it. */
  env: Readonly<Record<string, string>>
  cwd: string
  /** stdout and stderr are appended here; a new file is made with mode 0600. */
  logFile: string
}

/** How a detached process ended, while its starter still watched. */
export type DetachedExit =
  | { kind: 'exited', exitCode: number }
  | { kind: 'signalled', signal: string }
  | { kind: 'spawn-failed', reason: string, missing: boolean }

export interface DetachedProcess {
  /** Undefined when it could not be started; `exit` then says why. */
  readonly pid: number | undefined
  /** Settles when it ends, if it ends while this runner's process lives; nothing waits for it. */
  readonly exit: Promise<DetachedExit>
}

/**
 * A live process as the system knows it. `startTime` (where the system tells it: /proc
 * on Linux) tells a process from a later one that was given the same pid.
 */
export interface ProcessIdentity {
  readonly pid: number
  readonly startTime?: string
}

export type ProcessSignal = 'SIGTERM' | 'SIGKILL'

export interface ProcessRunner {
  start (spec: ProcessSpec): RunningProcess
  startDetached (spec: DetachedProcessSpec): DetachedProcess
  /** The live process with this pid, or undefined: none, a zombie, or another user's. */
  identify (pid: number): ProcessIdentity | undefined
  /** Signals the process group `pid` leads, or the process alone if it leads none; a gone one is not an error. */
  signalGroup (pid: number, signal: ProcessSignal): void
  /** Live processes whose command line contains `fragment` (an instance directory), by pid. */
  findByArgument (fragment: string): number[]
}
