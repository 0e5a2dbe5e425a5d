import { runMachineAgentFaults } from '../sim/scenarios/machine-agent-faults.ts'

/**
 * How much faster than real time the simulator runs the 5-unit machine-agent world
 * (issue 3's target: at least 1,000×). One thread, seeds run back to back, the first
 * few discarded as JIT warm-up.
 */
export interface SimSpeed {
  seeds: number
  steps: number
  simulatedSeconds: number
  wallSeconds: number
  simToWall: number
  hooksPerWallSecond: number
  failures: number
}

export async function measureSimSpeed (seeds = 40, steps = 40, warmup = 3): Promise<SimSpeed> {
  for (let seed = 1; seed <= warmup; seed++) await runMachineAgentFaults({ seed: 1_000_000 + seed, steps })
  let simulatedMs = 0
  let hooks = 0
  let failures = 0
  const started = performance.now()
  for (let seed = 1; seed <= seeds; seed++) {
    const result = await runMachineAgentFaults({ seed, steps })
    simulatedMs += result.simulatedMs
    hooks += result.hooks
    if (result.failure !== undefined) failures++
  }
  const wallMs = performance.now() - started
  return {
    seeds,
    steps,
    simulatedSeconds: Math.round(simulatedMs / 1000),
    wallSeconds: Number((wallMs / 1000).toFixed(2)),
    simToWall: Math.round(simulatedMs / wallMs),
    hooksPerWallSecond: Math.round(hooks / (wallMs / 1000)),
    failures
  }
}
