/**
 * A CPU-accounting cgroup per test job, where the machine lets the runner make one: the
 * job's uvu process enters it before it runs anything, and everything it starts stays in
 * it, detached or not (cgroups follow fork, not the parent link). So the job's CPU is
 * every descendant's: the controllers and machine agents `bootstrap` leaves to init, the
 * machine agents a killed controller orphaned, their hooks and workloads, the CLI runs.
 * Reading /proc (run-tests.ts's fallback) misses a daemon's children that outlive it and
 * anything that ends between two samples without being waited for.
 *
 * Also, whatever is left in the cgroup when the job's process has ended was leaked by a
 * test: the runner names and kills it (by pid) rather than let it burn the next job's CPU.
 *
 * cgroup v1 (`cpuacct` mounted at /sys/fs/cgroup/cpuacct) and v2 (a `cpu.stat` with
 * usage_usec) are both read; anything else (no cgroupfs, not writable) gives no cgroup and
 * the runner falls back to /proc.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync } from 'node:fs'
import { join } from 'node:path'

export interface JobCgroup {
  /** The command and arguments that run `command args` inside the cgroup (same pid: the shell execs). */
  wrap: (command: string, args: readonly string[]) => [string, string[]]
  /** CPU seconds used so far by everything that ever ran in the cgroup. */
  cpuSeconds: () => number
  /** Pids still in the cgroup. */
  pids: () => number[]
  /** Removes the cgroup (after its processes are gone); best effort. */
  remove: () => void
}

interface Flavour { dir: string, usageSeconds: (dir: string) => number }

/** The cgroup the runner itself is in, for `controller` (v1) or the unified one (v2): jobs' cgroups nest below it. */
function ownCgroupPath (controller: string): string | undefined {
  try {
    for (const line of readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
      const [, controllers, path] = line.split(':')
      if (controllers === undefined || path === undefined) continue
      if (controllers.split(',').includes(controller) || (controller === '' && controllers === '')) return path
    }
  } catch { /* no /proc */ }
  return undefined
}

function flavour (): Flavour | undefined {
  const v1 = ownCgroupPath('cpuacct')
  if (v1 !== undefined && existsSync(join('/sys/fs/cgroup/cpuacct', v1, 'cpuacct.usage'))) {
    return { dir: join('/sys/fs/cgroup/cpuacct', v1), usageSeconds: dir => Number(readFileSync(join(dir, 'cpuacct.usage'), 'utf8')) / 1e9 }
  }
  const v2 = ownCgroupPath('')
  if (v2 !== undefined && existsSync(join('/sys/fs/cgroup', v2, 'cpu.stat'))) {
    return {
      dir: join('/sys/fs/cgroup', v2),
      usageSeconds: dir => Number(/^usage_usec (\d+)/m.exec(readFileSync(join(dir, 'cpu.stat'), 'utf8'))?.[1] ?? 0) / 1e6
    }
  }
  return undefined
}

/** A new cgroup named `name` below the runner's own, or undefined where none can be made. */
export function makeJobCgroup (name: string): JobCgroup | undefined {
  if (process.env['CANTRIP_TEST_NO_CGROUP'] !== undefined) return undefined
  const found = flavour()
  if (found === undefined) return undefined
  const dir = join(found.dir, name)
  try {
    mkdirSync(dir)
    found.usageSeconds(dir)
  } catch {
    return undefined
  }
  const procs = join(dir, 'cgroup.procs')
  return {
    wrap: (command, args) => ['/bin/sh', ['-c', 'echo $$ 2>/dev/null > "$0"; exec "$@"', procs, command, ...args]],
    cpuSeconds: () => { try { return found.usageSeconds(dir) } catch { return 0 } },
    pids: () => { try { return readFileSync(procs, 'utf8').split('\n').filter(line => line !== '').map(Number) } catch { return [] } },
    remove: () => { try { rmdirSync(dir) } catch { /* still busy, or gone */ } }
  }
}
