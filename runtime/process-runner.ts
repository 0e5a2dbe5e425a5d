/**
 * Child processes (hooks, actions, commands) reach pure code only through this
 * contract. Real: `ChildProcessRunner` in agent/ (process groups, timeouts, output
 * caps); simulated: `SimProcessRunner` in sim/ (scripted outcomes on simulated time).
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
}

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

export interface ProcessRunner {
  start (spec: ProcessSpec): RunningProcess
}
