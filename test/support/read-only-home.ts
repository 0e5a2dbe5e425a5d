/**
 * Runs the built CLI with its `CANTRIP_HOME` on a read-only file system: a mount
 * namespace of its own (`unshare -rm`, so no root is needed where user namespaces are
 * allowed) in which the home is bind-mounted over itself read-only. Nothing outside the
 * command's process sees the mount. `readOnlySupported()` says whether this host can.
 */
import { spawnSync } from 'node:child_process'
import { distProgram } from './dist.ts'
import type { CliRun } from './cli-process.ts'

export function readOnlySupported (): boolean {
  return spawnSync('unshare', ['-rm', 'true'], { stdio: 'ignore' }).status === 0
}

export function cantripReadOnly (home: string, args: readonly string[]): CliRun {
  const script = 'mount --bind "$CANTRIP_HOME" "$CANTRIP_HOME" && mount -o remount,ro,bind "$CANTRIP_HOME" "$CANTRIP_HOME" && exec "$@"'
  const run = spawnSync('unshare', ['-rm', 'sh', '-c', script, 'sh', process.execPath, distProgram('cantrip'), ...args], {
    env: { ...process.env, CANTRIP_HOME: home, NO_COLOR: '1' }, encoding: 'utf8', timeout: 120_000
  })
  return { status: run.status ?? -1, stdout: run.stdout, stderr: run.stderr }
}
