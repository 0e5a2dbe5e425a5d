/**
 * The built CLI run on one of scripts/netns-hosts.ts's hosts (inside its network
 * namespace) with the test's own home; bounded at 5 minutes.
 */
import { spawnSync } from 'node:child_process'
import type { NetnsHost } from '../../scripts/netns-hosts.ts'
import { distProgram } from './dist.ts'

export interface CliRun { status: number, stdout: string, stderr: string }

export function cantripOnHost (home: string, host: NetnsHost, args: readonly string[]): CliRun {
  const run = spawnSync('ip', ['netns', 'exec', host.namespace, process.execPath, distProgram('cantrip'), ...args], {
    env: { ...process.env, CANTRIP_HOME: home, NO_COLOR: '1' }, encoding: 'utf8', timeout: 300_000
  })
  return { status: run.status ?? -1, stdout: run.stdout, stderr: run.stderr }
}
