import { createHash } from 'node:crypto'
import { runMachineAgentFaults } from '../sim/scenarios/machine-agent-faults.ts'

/**
 * `node --import tsx bench/seed-cost.ts [from] [to] [steps]`: the CPU one machine-agent
 * seed costs (the 6-step seeds of test/sim-machine-agent.test.ts), in this thread, after
 * a few warm-up seeds. Prints CPU-ms per seed, hooks per seed and one digest of every
 * seed's trace hash, so that a change to the hot path can be checked for cost and for an
 * unchanged trace in one run. Add `--cpu-prof` to node for a profile of the same seeds.
 */
const from = Number(process.argv[2] ?? 1)
const to = Number(process.argv[3] ?? 40)
const steps = Number(process.argv[4] ?? 6)
const warmup = 3

for (let seed = 1; seed <= warmup; seed++) await runMachineAgentFaults({ seed: 1_000_000 + seed, steps })
const digest = createHash('sha256')
let hooks = 0
let failures = 0
const started = process.cpuUsage()
for (let seed = from; seed <= to; seed++) {
  const result = await runMachineAgentFaults({ seed, steps })
  digest.update(`${seed}:${result.hash}\n`)
  hooks += result.hooks
  if (result.failure !== undefined) {
    failures++
    console.log(`seed ${seed} failed: ${result.failure.split('\n')[0] ?? ''}`)
  }
}
const used = process.cpuUsage(started)
const seeds = to - from + 1
const cpuMs = (used.user + used.system) / 1000
console.log(`${seeds} seeds, ${steps} steps: ${(cpuMs / seeds).toFixed(1)} CPU-ms a seed, ${(hooks / seeds).toFixed(1)} hooks a seed, ${failures} failed, traces ${digest.digest('hex').slice(0, 16)}`)
