/**
 * Stopping a process the client started (a controller, a machine agent, a workload) by
 * pid, never by name: SIGTERM, then SIGKILL after a grace. Only a process the caller
 * recognises as its own (`owned`, usually its command line naming the controller's
 * directory) is signalled, so a pid reused by something else is left alone.
 */
import { readFileSync } from 'node:fs'

/** How long a process may take to end after SIGTERM before it gets SIGKILL. */
export const stopGraceMs = 10_000
/** How often a stopping process is looked at. */
const stopPollMs = 100

export function processCmdline (pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')
  } catch {
    return ''
  }
}

/** Whether `pid` runs with `dir` as one of its arguments (a recycled pid is another program's); false once it is gone. */
export function processRunsFrom (pid: number, dir: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(dir)
  } catch {
    return false
  }
}

/** Running and not a zombie. */
export function processAlive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ')
  } catch {
    return false
  }
}

/** SIGTERM (the group, for an agent), then SIGKILL after the grace; only a process `owned` says is ours. */
export async function stopOwnedProcess (pid: number, owned: (pid: number) => boolean, group: boolean): Promise<void> {
  if (pid <= 1 || !processAlive(pid) || !owned(pid)) return
  const signal = (name: NodeJS.Signals): void => {
    try { process.kill(group ? -pid : pid, name) } catch { /* gone */ }
  }
  signal('SIGTERM')
  const until = Date.now() + stopGraceMs
  while (processAlive(pid) && Date.now() < until) await new Promise(resolve => setTimeout(resolve, stopPollMs))
  if (processAlive(pid)) signal('SIGKILL')
}
