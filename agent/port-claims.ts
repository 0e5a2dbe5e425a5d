import { closeSync, mkdirSync, openSync, readdirSync, unlinkSync, writeSync } from 'node:fs'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import { identifyProcess } from './detached-processes.ts'

/**
 * Claims on TCP ports between the processes of this host that pick a port now and bind it
 * later (two test suites side by side, a CLI starting controllers, a test deploying a
 * workload): one empty-ish file `<port>-<pid>` per claim in a directory of this user under
 * the OS temp dir. A claim lasts until its owner exits: removed at exit, and a file whose
 * owner is dead counts for nothing (the next picker that meets it removes it), so a killed
 * suite never leaks ports.
 *
 * Mutual exclusion without a lock: a claimant writes its own file first and only then
 * looks for another live owner's file of the same port. If it finds one, it withdraws. Two
 * claimants that race may both withdraw; they can never both keep the port.
 */

/** The directory of this user's claims (per user: another user's files are not ours to remove). */
export function portClaimsDir (): string {
  return join(tmpdir(), `cantrip-port-claims-${userUid()}`)
}

function userUid (): string {
  try {
    return String(userInfo().uid)
  } catch {
    return 'unknown'
  }
}

/** Files this process wrote, removed when it exits. */
const ownClaims = new Set<string>()
let exitHookSet = false

/**
 * Claims `port` for this process in `dir`; false when it is claimed already, by another
 * live process or by this one for an earlier pick. When the directory cannot be used the
 * claim is granted (the caller then relies on the port being free alone).
 */
export function claimPort (port: number, dir = portClaimsDir()): boolean {
  const own = join(dir, `${port}-${process.pid}`)
  if (ownClaims.has(own)) return false
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    closeSync(writeClaim(own))
  } catch (error) {
    // A file of our own pid is a dead earlier process's (pids are reused): it is ours now.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return true
  }
  ownClaims.add(own)
  setExitHook()
  if (otherLiveOwner(port, dir)) {
    releasePort(port, dir)
    return false
  }
  return true
}

function writeClaim (path: string): number {
  const fd = openSync(path, 'wx', 0o600)
  writeSync(fd, `${process.pid}\n`)
  return fd
}

/** Withdraws this process's claim on `port` (a port it found taken, or no longer needs). */
export function releasePort (port: number, dir = portClaimsDir()): void {
  const own = join(dir, `${port}-${process.pid}`)
  ownClaims.delete(own)
  removeQuietly(own)
}

/** Whether a process other than this one, still alive, claims `port`; dead owners' files go. */
function otherLiveOwner (port: number, dir: string): boolean {
  const prefix = `${port}-`
  let found = false
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(prefix)) continue
    const pid = Number(name.slice(prefix.length))
    if (!Number.isSafeInteger(pid) || pid === process.pid) continue
    if (ownerAlive(pid)) found = true
    else removeQuietly(join(dir, name))
  }
  return found
}

/** A claim's owner counts while it runs as one of this user's processes (detached-processes.ts: not gone, not a zombie). */
function ownerAlive (pid: number): boolean {
  return identifyProcess(pid) !== undefined
}

/** The ports claimed in `dir` by live processes other than this one (for tests and diagnosis). */
export function livePortClaims (dir = portClaimsDir()): Array<{ port: number, pid: number }> {
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return []
  }
  return names.flatMap(name => {
    const match = /^(\d+)-(\d+)$/.exec(name)
    if (match === null) return []
    const [port, pid] = [Number(match[1]), Number(match[2])]
    return pid !== process.pid && ownerAlive(pid) ? [{ port, pid }] : []
  })
}

function removeQuietly (path: string): void {
  try { unlinkSync(path) } catch { /* gone already */ }
}

function setExitHook (): void {
  if (exitHookSet) return
  exitHookSet = true
  process.once('exit', () => { for (const path of ownClaims) removeQuietly(path) })
}
