/**
 * The `cantrip` CLI as a child process, for the real-process CLI tests: one run with its
 * own CANTRIP_HOME and plain output (NO_COLOR), bounded in time. E2E_TRACE=1 prints each
 * command with the time it started, to see where a test spends its time.
 */
import { spawn, spawnSync } from 'node:child_process'
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
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

/** `cantrip` started in the background (e.g. a `wait-for` that must see what a later command does), bounded as one run. */
export async function cantripInBackground (home: string, args: readonly string[]): Promise<CliRun> {
  const child = spawn(process.execPath, [distProgram('cantrip'), ...args], {
    env: { ...process.env, CANTRIP_HOME: home, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'], timeout: cliRunTimeoutMs
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (text: string) => { stdout += text })
  child.stderr.setEncoding('utf8').on('data', (text: string) => { stderr += text })
  return await new Promise<CliRun>(resolve => {
    child.on('close', status => { resolve({ status: status ?? -1, stdout, stderr }) })
  })
}

/** The command's stdout; the test fails with its stderr when it exits non-zero. */
export function cantripOk (home: string, ...args: string[]): string {
  const run = cantrip(home, args)
  assert.is(run.status, 0, `cantrip ${args.join(' ')}: ${run.stderr}`)
  return run.stdout
}

/**
 * A test's clean-up: destroys controller `controller` (default "local") in `home` if the
 * test left it running, then kills any workload its machine agents' units left behind (by
 * pid). A controller is left only when the test failed before its own destroy-controller,
 * so its directory (agent, unit and workload logs) is copied into `home` first, for
 * removeHome to keep.
 */
export function destroyLeftoverController (home: string, machinesDir: string, controller = 'local'): void {
  const dir = join(home, 'controllers', controller)
  if (!existsSync(dir)) return
  try {
    cpSync(dir, join(home, `leftover-controller-${controller}`), { recursive: true, filter: source => !lstatSync(source).isSocket() })
  } catch (error) {
    process.stderr.write(`cli process: could not copy ${dir}: ${error instanceof Error ? error.message : String(error)}\n`)
  }
  cantrip(home, ['destroy-controller', controller, '--no-prompt'])
  if (existsSync(machinesDir)) for (const d of readdirSync(machinesDir)) killUnitWorkloads(join(machinesDir, d, 'agent'))
}

/** Homes handed to removeHome, removed or kept when this process exits. */
const homesAtExit = new Set<string>()

/**
 * A test's CANTRIP_HOME (or any directory holding one) at its end: removed when this
 * process exits, unless a test of it failed (uvu sets a failing exit code) or
 * CANTRIP_KEEP_LOGS=1; then it is moved under CANTRIP_KEEP_LOGS_DIR (default
 * <tmp>/cantrip-kept-logs) as cantripd-cluster.ts keeps its agents' logs, so the agent
 * and unit logs of a failure under load can be read afterwards. Decided at exit because a
 * test's own `finally` runs before uvu has its verdict. Kill the home's processes first.
 */
export function removeHome (home: string): void {
  if (homesAtExit.size === 0) process.once('exit', settleHomes)
  homesAtExit.add(home)
}

function settleHomes (): void {
  const keep = process.exitCode !== undefined && process.exitCode !== 0 ? 'a test failed; ' : process.env['CANTRIP_KEEP_LOGS'] === '1' ? '' : undefined
  for (const home of homesAtExit) {
    if (!existsSync(home)) continue
    if (keep === undefined) { rmSync(home, { recursive: true, force: true }); continue }
    const kept = join(process.env['CANTRIP_KEEP_LOGS_DIR'] ?? join(tmpdir(), 'cantrip-kept-logs'), `${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}-${basename(home)}`)
    try {
      mkdirSync(join(kept, '..'), { recursive: true })
      moveDir(home, kept)
      process.stderr.write(`cli process: ${keep}CANTRIP_HOME ${home} is kept in ${kept}\n`)
    } catch (error) {
      process.stderr.write(`cli process: could not keep ${home}: ${error instanceof Error ? error.message : String(error)}\n`)
      rmSync(home, { recursive: true, force: true })
    }
  }
}

/** rename, or copy and remove across file systems. */
function moveDir (from: string, to: string): void {
  try {
    renameSync(from, to)
  } catch {
    cpSync(from, to, { recursive: true })
    rmSync(from, { recursive: true, force: true })
  }
}
