import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { parseScenario } from '../sim/scenario/parse-scenario.ts'
import { runScenario } from '../sim/scenario/run-scenario.ts'

/**
 * `node --import tsx bench/system-seed-cost.ts [from] [to] [scenario.yaml]`: the CPU one
 * system-swarm seed costs (test/sim-system-swarm.test.ts runs examples/sim/random-faults.yaml),
 * in this thread, after a few warm-up seeds. Prints CPU-ms per seed, hooks per seed and
 * one digest of every seed's trace hash, as bench/seed-cost.ts does for the machine
 * agent, so a change can be checked for cost and for unchanged traces in one run.
 */
const from = Number(process.argv[2] ?? 1)
const to = Number(process.argv[3] ?? 20)
const path = process.argv[4] ?? 'examples/sim/random-faults.yaml'
const scenario = parseScenario(readFileSync(path, 'utf8'), path)
const warmup = 2

for (let seed = 1; seed <= warmup; seed++) await runScenario(scenario, { seed: 1_000_000 + seed })
const digest = createHash('sha256')
let hooks = 0
let failures = 0
const started = process.cpuUsage()
for (let seed = from; seed <= to; seed++) {
  const { result } = await runScenario(scenario, { seed, recordEvents: false })
  digest.update(`${seed}:${result.hash}\n`)
  hooks += result.counts.hooks
  if (result.outcome !== 'pass') {
    failures++
    console.log(`seed ${seed} ${result.outcome}: ${(result.failure ?? '').split('\n')[0] ?? ''}`)
  }
}
const used = process.cpuUsage(started)
const seeds = to - from + 1
const cpuMs = (used.user + used.system) / 1000
console.log(`${seeds} seeds of ${path}: ${(cpuMs / seeds).toFixed(1)} CPU-ms a seed, ${(hooks / seeds).toFixed(1)} hooks a seed, ${failures} failed, traces ${digest.digest('hex').slice(0, 16)}`)
