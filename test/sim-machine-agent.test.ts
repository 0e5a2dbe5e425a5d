import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { runMachineAgentFaults } from '../sim/scenarios/machine-agent-faults.ts'
import { runSwarm } from '../sim/swarm.ts'

/**
 * The shipped machine agent in the simulator (sim/scenarios/machine-agent-faults.ts):
 * MachineAgent with its deployer and unit hosts, through SimMachineAgent, against one
 * real controller on the simulated network; five units of two related applications,
 * random hook failures that get resolved, kill -9 / SIGTERM / SIGSTOP of the agent at
 * random points, clock drift. `npm test` runs 200 seeds of 6 steps and 30 of them again,
 * plus the pinned seeds below;
 * `npm run test:long` (CANTRIP_LONG=1) 10,000 of 40. CANTRIP_SEED=N replays one seed and
 * prints its failure.
 */
const long = process.env['CANTRIP_LONG'] === '1'
const only = process.env['CANTRIP_SEED']
// The file's budget is what it cost with 170 seeds (~122 CPU-s; the developers' guide: npm test
// only gets faster). 200 fit since views went by difference and unchanged ones stopped being
// built (about 0.45 CPU-s a seed); 500 would take ~240 CPU-s. The cost is now mostly the unit
// actors' own transitions (XState, a child actor per persisted step) and the Raft commits.
const seedCount = long ? 10_000 : 200
/** Seeds that found a bug, each failing before the fix named: run in npm test whatever the sample. */
const pinnedSeeds = [
  230 // a hook busy with hook-tool calls at SIGTERM outlived the simulated process (sim-machine-agent.ts terminate)
]
const steps = long ? 40 : 6

if (only !== undefined) {
  test(`replay seed ${only}`, async () => {
    const result = await runMachineAgentFaults({ seed: Number(only), steps: Number(process.env['CANTRIP_STEPS'] ?? steps) })
    assert.is(result.failure, undefined, result.failure)
  })
} else {
  const hashes = new Map<number, string>()
  test(`machine agent with 5 units under hook failures and agent crashes: ${seedCount} seeds, 0 violations, all converge`, async () => {
    const results = await runSwarm({ fromSeed: 1, toSeed: seedCount, jobs: 2, scenario: { steps } })
    for (const result of results) hashes.set(result.seed, result.hash)
    const failed = results.filter(result => result.failure !== undefined)
    const crashes = results.reduce((sum, result) => sum + result.crashes, 0)
    const hooks = results.reduce((sum, result) => sum + result.hooks, 0)
    assert.is(results.length, seedCount)
    assert.ok(crashes > seedCount / 2, `faults were injected: ${crashes} agent crashes/stops over ${seedCount} seeds`)
    assert.ok(hooks > seedCount * 20, `hooks ran: ${hooks}`)
    assert.is(failed.length, 0, `${failed.length} seeds failed; first:\n${failed[0]?.failure ?? ''}`)
  })

  // The shipped stack costs several times the bare unit actors per seed (about 0.5 CPU-s at
  // 6 steps, most of it the unit actors' own transitions and the real controller's commits): 30 rerun.
  const rerun = 30
  for (const seed of pinnedSeeds) {
    test(`pinned seed ${seed} passes`, async () => {
      const result = await runMachineAgentFaults({ seed, steps })
      assert.is(result.failure, undefined, result.failure)
    })
  }

  test(`determinism: ${rerun} seeds run again give identical trace hashes`, async () => {
    const again = await runSwarm({ fromSeed: 1, toSeed: rerun, jobs: 2, scenario: { steps } })
    const differing = again.filter(result => result.hash !== hashes.get(result.seed)).map(result => result.seed)
    assert.equal(differing, [], `seeds with different hashes: ${differing.join(', ')}`)
    assert.is(new Set(again.map(result => result.hash)).size, rerun, 'different seeds give different runs')
  })

  test('determinism check catches a real Date.now() in an actor', async () => {
    // Hook durations taken from the wall clock stand in for an actor that reads real time.
    const differing: number[] = []
    for (let seed = 1; seed <= 5 && differing.length === 0; seed++) {
      const a = await runMachineAgentFaults({ seed, steps: 3, nondeterministic: true })
      await new Promise(resolve => setTimeout(resolve, 3))
      const b = await runMachineAgentFaults({ seed, steps: 3, nondeterministic: true })
      if (a.hash !== b.hash) differing.push(seed)
    }
    assert.ok(differing.length > 0, 'the same seeds gave the same hashes although time leaked in')
  })
}

test.run()
