/**
 * The real side of `ProcessRunner`'s detached processes and process table: spawning an
 * agent that outlives this process, and asking the system (/proc on Linux) about pids.
 * `ChildProcessRunner` delegates here.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import * as fs from 'node:fs'
import type { DetachedExit, DetachedProcess, DetachedProcessSpec, ProcessIdentity, ProcessSignal } from '../runtime/process-runner.ts'

/**
 * Spawned in its own session and process group, output appended to the log file, and
 * unref'd: this process may exit while the agent runs on.
 */
export function startDetachedProcess (spec: DetachedProcessSpec): DetachedProcess {
  let logFd: number
  try {
    logFd = fs.openSync(spec.logFile, 'a', 0o600)
  } catch (error) {
    return notStarted(`cannot open ${JSON.stringify(spec.logFile)}: ${messageOf(error)}`, false)
  }
  let child: ChildProcess
  try {
    child = spawn(spec.command, [...spec.args], { cwd: spec.cwd, env: { ...spec.env }, detached: true, stdio: ['ignore', logFd, logFd] })
  } catch (error) {
    return notStarted(messageOf(error), false)
  } finally {
    fs.closeSync(logFd)
  }
  const exit = new Promise<DetachedExit>(resolve => {
    child.once('error', error => {
      resolve({ kind: 'spawn-failed', reason: error.message, missing: (error as NodeJS.ErrnoException).code === 'ENOENT' })
    })
    child.once('exit', (code, signal) => {
      resolve(signal !== null ? { kind: 'signalled', signal } : { kind: 'exited', exitCode: code ?? -1 })
    })
  })
  child.unref()
  return { pid: child.pid, exit }
}

function notStarted (reason: string, missing: boolean): DetachedProcess {
  return { pid: undefined, exit: Promise.resolve({ kind: 'spawn-failed', reason, missing }) }
}

export function identifyProcess (pid: number): ProcessIdentity | undefined {
  try {
    process.kill(pid, 0)
  } catch {
    // ESRCH: gone. EPERM: a process of another user, so not one of ours.
    return undefined
  }
  const stat = procStat(pid)
  // Without /proc (not Linux) all we know is that the pid is live.
  if (stat === undefined) return fs.existsSync('/proc/self/stat') ? undefined : { pid }
  if (stat.state === 'Z' || stat.state === 'X') return undefined
  return { pid, startTime: stat.startTime }
}

export function signalProcessGroup (pid: number, signal: ProcessSignal): void {
  try {
    process.kill(-pid, signal)
  } catch {
    // Not a group leader after all (an adopted process from an older layout): the process alone.
    try { process.kill(pid, signal) } catch { /* already gone */ }
  }
}

/** Linux only; elsewhere none is found. */
export function findProcessesByArgument (fragment: string): number[] {
  let entries: string[]
  try {
    entries = fs.readdirSync('/proc')
  } catch {
    return []
  }
  const found: number[] = []
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    let cmdline: string
    try {
      cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8')
    } catch {
      continue
    }
    const pid = Number(entry)
    if (cmdline.includes(fragment) && identifyProcess(pid) !== undefined) found.push(pid)
  }
  return found
}

/** `/proc/<pid>/stat` after the command name: state, then field 22 (start time) at index 19. */
function procStat (pid: number): { state: string, startTime: string } | undefined {
  let text: string
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  const state = fields[0]
  const startTime = fields[19]
  return state === undefined || startTime === undefined ? undefined : { state, startTime }
}

function messageOf (error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
