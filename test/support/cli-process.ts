/**
 * The `cantrip` CLI as a child process, for the real-process CLI tests: one run with its
 * own CANTRIP_HOME and plain output (NO_COLOR), bounded in time. E2E_TRACE=1 prints each
 * command with the time it started, to see where a test spends its time.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import * as assert from 'uvu/assert'
import { distProgram } from './dist.ts'
import { killUnitWorkloads } from './processes.ts'

export interface CliRun { status: number, stdout: string, stderr: string }

/** One command's wall-clock bound: generous, since a loaded 2-core machine makes each start slow. */
const cliRunTimeoutMs = 300_000
const t0 = performance.now()

/** `tree`: run the CLI (dist/cantrip.mjs) of another tree (e.g. test/support/stamped-tree.ts) instead of this one. */
export function cantrip (home: string, args: readonly string[], env: Readonly<Record<string, string>> = {}, tree?: string): CliRun {
  if (process.env['E2E_TRACE'] !== undefined) console.error(`${((performance.now() - t0) / 1000).toFixed(1)}s cantrip ${args.join(' ')}`)
  const run = spawnSync(process.execPath, [distProgram('cantrip', tree), ...args], {
    env: { ...process.env, CANTRIP_HOME: home, NO_COLOR: '1', ...env }, encoding: 'utf8', timeout: cliRunTimeoutMs,
    ...(tree === undefined ? {} : { cwd: tree })
  })
  return { status: run.status ?? -1, stdout: run.stdout, stderr: run.stderr }
}

/** The command's stdout; the test fails with its stderr when it exits non-zero. */
export function cantripOk (home: string, ...args: string[]): string {
  const run = cantrip(home, args)
  assert.is(run.status, 0, `cantrip ${args.join(' ')}: ${run.stderr}`)
  return run.stdout
}

/**
 * A test's clean-up: destroys controller "local" in `home` if the test left it running,
 * then kills any workload its machine agents' units left behind (by pid).
 */
export function destroyLeftoverController (home: string, machinesDir: string): void {
  if (!existsSync(join(home, 'controllers', 'local'))) return
  cantrip(home, ['destroy-controller', 'local', '--no-prompt'])
  if (existsSync(machinesDir)) for (const d of readdirSync(machinesDir)) killUnitWorkloads(join(machinesDir, d, 'agent'))
}
