/**
 * Whether an existing controller entry is alive enough to reuse: at least one of its
 * controller processes runs (by pid, and its command line names the controller's
 * directory, so a reused pid does not count) and the group answers a linearizable read
 * with a leader within `healthTimeoutMs`.
 */
import { readFileSync } from 'node:fs'
import type { ControllerEntry } from '../../agent/cli/cli-home.ts'
import { Connection } from '../../agent/cli/connection.ts'

const healthTimeoutMs = 20_000

function runningFor (pid: number, dir: string): boolean {
  try {
    process.kill(pid, 0)
    if (/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))) return false
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').includes(dir)
  } catch {
    return false
  }
}

/** undefined when healthy, else what is wrong. */
export async function controllerHealth (entry: ControllerEntry): Promise<string | undefined> {
  if (!entry.controllers.some(m => runningFor(m.pid, entry.dir))) {
    return `none of its controller processes runs (pid ${entry.controllers.map(m => m.pid).join(', ')})`
  }
  const connection = await Connection.open(entry)
  let timer: NodeJS.Timeout | undefined
  try {
    const read = connection.model()
    read.catch(() => { /* reported through the race below */ })
    const full = await Promise.race([read, new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => { reject(new Error(`no answer within ${healthTimeoutMs / 1000} s`)) }, healthTimeoutMs)
    })])
    return full.leader === '' ? 'its controllers have no leader' : undefined
  } catch (error) {
    return `its controllers do not answer (${error instanceof Error ? error.message : String(error)})`
  } finally {
    clearTimeout(timer)
    await connection.close()
  }
}
