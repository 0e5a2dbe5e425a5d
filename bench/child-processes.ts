import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process'
import { readFileSync } from 'node:fs'

/**
 * The processes a bench starts, each killed by its own pid when the bench ends (never by
 * name: the machine is shared). `stop()` sends SIGTERM, then SIGKILL after a bounded wait.
 */
const stopWaitMs = 5_000

export class ChildSet {
  readonly #children = new Set<ChildProcess>()

  start (command: string, args: readonly string[], options: SpawnOptions = {}): ChildProcess {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], ...options })
    this.#children.add(child)
    child.once('exit', () => { this.#children.delete(child) })
    child.stderr?.on('data', () => { /* drained, so a chatty child never blocks on a full pipe */ })
    return child
  }

  /** kill -9 of one child, at once; resolves when it has exited. */
  async killHard (child: ChildProcess): Promise<void> {
    if (exited(child)) return
    const gone = new Promise(resolve => { child.once('exit', resolve) })
    child.kill('SIGKILL')
    await gone
  }

  async stop (child: ChildProcess): Promise<void> {
    if (exited(child)) return
    const gone = new Promise(resolve => { child.once('exit', resolve) })
    child.kill('SIGTERM')
    const timer = setTimeout(() => { child.kill('SIGKILL') }, stopWaitMs)
    await gone
    clearTimeout(timer)
  }

  async stopAll (): Promise<void> {
    await Promise.all([...this.#children].map(async child => { await this.stop(child) }))
  }
}

function exited (child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null
}

/** VmRSS of a live process in bytes (0 when it has gone). */
export function rssBytes (pid: number): number {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find(l => l.startsWith('VmRSS:'))
    return Number(line?.split(/\s+/)[1] ?? 0) * 1024
  } catch {
    return 0
  }
}

/** Clock ticks per second of /proc/PID/stat's CPU times (USER_HZ, 100 on Linux). */
export const userHz = 100

/** CPU time (user + system, all threads) a live process has used, in ms (0 when it has gone). */
export function cpuMs (pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the command name, which may hold spaces: utime and stime are the 14th and 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 1000 / userHz
  } catch {
    return 0
  }
}
