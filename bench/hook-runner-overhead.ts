/**
 * What the hook runner adds around a hook, beyond spawning it: the same trivial hook
 * (`#!/bin/sh` + `exit 0`) run N times
 *   - bare: node's child_process.spawn of the file, waiting for exit;
 *   - process runner: ChildProcessRunner (own process group, env copy, output pipes, timeout);
 *   - hook runner: HookRunner.run (charm checks, locating dispatch/hooks, the §4.2
 *     environment, log wiring) on top of the process runner.
 * Median and p90 of each, and the medians' differences. Run alone with
 * `node --import tsx bench/hook-runner-overhead.ts [runs]`; `npm run bench` includes it.
 */
import { spawn } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ChildProcessRunner } from '../agent/child-process-runner.ts'
import { HookRunner, type UnitHookSetup } from '../agent/uniter/hook-runner.ts'
import { createMemoryLogger } from '../runtime/logger.ts'

export interface HookRunnerOverheadBench {
  runs: number
  bare: { medianMs: number, p90Ms: number }
  processRunner: { medianMs: number, p90Ms: number }
  hookRunner: { medianMs: number, p90Ms: number }
  /** hookRunner median − bare median. */
  overheadMs: number
}

function quantile (values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 1000) / 1000
}

export async function measureHookRunnerOverhead (runs = 200): Promise<HookRunnerOverheadBench> {
  const root = mkdtempSync(join(tmpdir(), 'cantrip-bench-runner-'))
  const charmDir = join(root, 'charm')
  mkdirSync(join(charmDir, 'hooks'), { recursive: true })
  writeFileSync(join(charmDir, 'metadata.yaml'), 'name: b\nsummary: b\ndescription: b\n')
  const hook = join(charmDir, 'hooks', 'install')
  writeFileSync(hook, '#!/bin/sh\nexit 0\n')
  chmodSync(hook, 0o755)
  const setup: UnitHookSetup = {
    unit: 'b/0', charmDir, toolsDir: join(root, 'tools'), socketPath: join(root, 'agent.socket'), modelUuid: 'u', modelName: 'm',
    apiAddresses: [], machineId: '0', principalUnit: '', availabilityZone: '', agentPath: '/usr/bin:/bin', jujuVersion: '3.5.0'
  }
  const processRunner = new ChildProcessRunner()
  const hookRunner = new HookRunner({ runner: processRunner, logger: createMemoryLogger('unit.b/0') })
  const never = new AbortController().signal
  const timed = async (run: () => Promise<unknown>): Promise<number> => {
    const started = performance.now()
    await run()
    return performance.now() - started
  }
  const bare = (): Promise<void> => new Promise((resolve, reject) => {
    const child = spawn(hook, [], { cwd: charmDir, env: { PATH: '/usr/bin:/bin' }, stdio: 'ignore' })
    child.once('error', reject)
    child.once('exit', () => { resolve() })
  })
  const viaProcessRunner = async (): Promise<void> => {
    await processRunner.start({ command: hook, args: [], env: { PATH: '/usr/bin:/bin' }, cwd: charmDir, timeoutMs: 60_000, outputBytesMax: 1024 * 1024 }).exit
  }
  const viaHookRunner = async (): Promise<void> => {
    const outcome = await hookRunner.run(setup, { kind: 'hook', name: 'install', contextId: 'b/0-install' }, never)
    if (outcome.kind !== 'succeeded') throw new Error(`bench hook failed: ${JSON.stringify(outcome)}`)
  }
  try {
    for (let i = 0; i < 20; i++) { await bare(); await viaProcessRunner(); await viaHookRunner() }
    const samples = { bare: [] as number[], processRunner: [] as number[], hookRunner: [] as number[] }
    // Interleaved, so load changes hit all three alike.
    for (let i = 0; i < runs; i++) {
      samples.bare.push(await timed(bare))
      samples.processRunner.push(await timed(viaProcessRunner))
      samples.hookRunner.push(await timed(viaHookRunner))
    }
    const summary = (values: number[]): { medianMs: number, p90Ms: number } => ({ medianMs: quantile(values, 0.5), p90Ms: quantile(values, 0.9) })
    const result = { runs, bare: summary(samples.bare), processRunner: summary(samples.processRunner), hookRunner: summary(samples.hookRunner), overheadMs: 0 }
    result.overheadMs = Math.round((result.hookRunner.medianMs - result.bare.medianMs) * 1000) / 1000
    return result
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await measureHookRunnerOverhead(Number(process.argv[2] ?? 200))
  const path = new URL('./results.json', import.meta.url)
  let results: Record<string, unknown> = {}
  try { results = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown> } catch { /* first run */ }
  results['hookRunnerOverhead'] = result
  await writeFile(path, JSON.stringify(results, null, 2) + '\n')
  process.stdout.write(JSON.stringify(result, null, 2) + '\n')
}
