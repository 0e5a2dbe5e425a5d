import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * Whether a process with this pid still runs (signal 0 checks without sending anything).
 * A zombie — exited, not yet reaped, as detached processes whose parent is gone can stay
 * in a container without an init that reaps — does not count.
 */
export function processAlive (pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return false
  }
}

/**
 * Kills a process group with SIGKILL, by its leader's pid. Anything but a real pid throws:
 * `process.kill(-0)` signals the caller's own group and `-1` every process it may signal,
 * so a pid misread from a file (an empty one reads as 0) must never reach the kill.
 * Returns false when the group was already gone.
 */
export function killProcessGroup (pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 1) throw new Error(`killProcessGroup: expected a process group leader's pid (an integer above 1), got ${String(pid)}`)
  try {
    process.kill(-pid, 'SIGKILL')
    return true
  } catch {
    return false
  }
}

/**
 * Kills whatever the charms of a machine's units left running, by the pid files in the
 * state dir of each unit under `<dataDir>/agents`: workloads outlive their agents (as in
 * Juju), so a test ends them here, by pid, never by name.
 */
export function killUnitWorkloads (dataDir: string): void {
  for (const pid of unitWorkloadPids(dataDir)) try { process.kill(pid, 'SIGKILL') } catch { /* already gone */ }
}

/** The pids the units of an agent's data directory recorded for their workloads (`state/*.pid`). */
export function unitWorkloadPids (dataDir: string): number[] {
  const agents = join(dataDir, 'agents')
  if (!existsSync(agents)) return []
  const pids: number[] = []
  for (const unit of readdirSync(agents)) {
    const state = join(agents, unit, 'state')
    if (!existsSync(state)) continue
    for (const file of readdirSync(state).filter(name => name.endsWith('.pid'))) {
      const pid = Number(readFileSync(join(state, file), 'utf8').trim())
      if (Number.isSafeInteger(pid) && pid > 1) pids.push(pid)
    }
  }
  return pids
}
