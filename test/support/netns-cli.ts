/**
 * The built CLI run on one of scripts/netns-hosts.ts's hosts (inside its network
 * namespace) with the test's own home; bounded at 5 minutes.
 */
import { spawnSync } from 'node:child_process'
import type { NetnsHost } from '../../scripts/netns-hosts.ts'
import { distProgram } from './dist.ts'

export interface CliRun { status: number, stdout: string, stderr: string }

export function cantripOnHost (home: string, host: NetnsHost, args: readonly string[], env: Readonly<Record<string, string>> = {}): CliRun {
  const run = spawnSync('ip', ['netns', 'exec', host.namespace, process.execPath, distProgram('cantrip'), ...args], {
    env: { ...process.env, ...env, CANTRIP_HOME: home, NO_COLOR: '1' }, encoding: 'utf8', timeout: 300_000
  })
  return { status: run.status ?? -1, stdout: run.stdout, stderr: run.stderr }
}

/**
 * `cantrip status --format json` on `host`, again every few seconds until `holds` does;
 * fails the test naming `what` and the last answer after `withinMs`.
 */
export async function untilHostStatus<S> (home: string, host: NetnsHost, what: string, holds: (s: S) => boolean, withinMs: number): Promise<S> {
  const deadline = Date.now() + withinMs
  let last = ''
  for (;;) {
    const run = cantripOnHost(home, host, ['status', '--format', 'json'])
    if (run.status === 0) {
      const doc = JSON.parse(run.stdout) as S
      if (holds(doc)) return doc
      last = run.stdout
    } else {
      last = run.stderr
    }
    if (Date.now() > deadline) throw new Error(`${what} within ${withinMs / 1000} s; last: ${last.slice(0, 2000)}`)
    await new Promise(resolve => setTimeout(resolve, 2_000))
  }
}
