import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { runMachineAgentFaults, type ScenarioResult } from '../sim/scenarios/machine-agent-faults.ts'
import { runSwarm } from '../sim/swarm.ts'
import { scenarioSwarmWorker } from './support/dist.ts'

/**
 * The shipped machine agent in the simulator (sim/scenarios/machine-agent-faults.ts):
 * MachineAgent with its deployer and unit hosts, through SimMachineAgent, against one
 * real controller on the simulated network; five units of two related applications,
 * random hook failures that get resolved, kill -9 / SIGTERM / SIGSTOP of the agent at
 * random points, clock drift. `npm test` runs 500 seeds of 6 steps, the first 30 of them
 * twice (determinism), plus the pinned seeds below;
 * `npm run test:long` (CANTRIP_LONG=1) 10,000 of 40. CANTRIP_SEED=N replays one seed and
 * prints its failure.
 */
const long = process.env['CANTRIP_LONG'] === '1'
const only = process.env['CANTRIP_SEED']
// The file's budget is what it cost with 200 seeds (113 CPU-s, the test process and its
// workers, on the 2-core machine; npm test only gets faster).
// 240 fit since the uniter's persisted steps stopped being child actors (-9% a seed) and
// the determinism rerun shares the swarm's workers (two fewer loads of the code, ~5 CPU-s).
// A seed costs ~0.4 CPU-s: ~75 hooks, each through the unit actor's XState transitions
// (~30%), the controller's Raft commit and model apply (~25%), the view fetch and the
// codec. 500 seeds would take ~210 CPU-s; it needs a seed several times cheaper.
// Most of a seed is the first deployment itself (5 units, a peer and a provides/requires
// relation: ~70 hooks, many still running when the heal starts), so the cost goes with
// the cost of a hook, not with simulated time (hooks of 250 ms instead of 1 s cost no
// less). Since the agent stays `executing` between queued hooks, as Juju's (one idle per
// rest, not per hook), a seed commits ~25% fewer commands, and the workers load the built
// bundle (dist/scenario-swarm-worker.mjs) rather than tsx: a few per cent a seed and
// ~1 CPU-s a worker, not the 2x that 500 seeds need.
// Where a seed's CPU went (bench/seed-cost.ts under --cpu-prof, seeds 1-40): XState ~23%
// (nearly all the unit actors' transitions: ~8 events and ~30 snapshots a hook), the
// rest of the unit and machine side ~10%, the controller side ~31% (model apply and
// views 13%, msgpackr 10%, Raft 5%, API 3%), GC 7%. One assign per action, no eventless
// `choosing` states, and no deployer reconcile for changes that do not concern it cut
// the snapshots XState builds from 2,850 to 2,180 a seed but the CPU only from 396 to
// 384 ms a seed (tsx, the same 40 seeds side by side, trace digest unchanged); removing
// the unit side entirely would still leave ~65% (and a trial without the parallel
// timers region at all saved nothing measurable), so 500 seeds need the controller's
// cost per command (~200 commands a seed, 45% of them the agent status Juju's uniter
// sets around every hook) cut as well.
// The leader now commits each agent batch as one Raft entry (apply-batch), but 88% of
// the agent's requests carry one command (seeds 1-10: 1,153 of 1,299; the hooks of five
// units rarely end in the same macrotask), so the ~204 commands a seed commits take ~165 entries
// instead of ~204, and the CPU did not move measurably: 369 vs 372 CPU-ms a seed (the
// same 40 seeds, before and after run at the same time, load ~40). Batching pays where
// a machine hosts many units; here the next levers are the unit side's XState work (22%
// self time) and the controller's answers to the held watches (the view cache and
// machine-watches ~10% inclusive, with msgpackr ~10% self overall).
// Measured again for 500 seeds (issue 22; seeds 1-20, load ~20, so the figures are
// shares, not absolute CPU): self time by layer is XState 20%, runtime/model 12%, GC 11%,
// msgpackr 9%, Raft 6%, actors/unit 5%, actors/controller 5%, all of sim/* 9%. Removing
// sim/* and the unit side entirely would make a seed ~1.5x cheaper at most, so the 2.5x
// that 500 seeds need cannot come from the simulator alone. A seed with 0 steps (the
// deployment and heal only) costs 85% of a 6-step one. What did not help (A/B run side by
// side, trace digest unchanged): a larger young generation (--max-semi-space-size 32/64),
// --single-threaded-gc, --maglev. Invoked promise/callback actors cost ~100 us more per
// hook than entry actions in a micro-benchmark, ~2% of a seed, and moving the hook lock
// and hook runs into actions changes when they start (XState starts children after the
// macrostep, runs custom actions inline), so it would move traces for that 2%.
// The unit actor on its own (bench/unit-actor-cost.ts: the shipping actor, effects that
// answer at once, one hook a round) costs ~0.45-0.50 CPU-ms a hook (10 XState snapshots, 8
// microsteps, 2 child actors; 21 snapshots built, 13 of them clones for assigns, spawns
// and stops), so ~75 hooks are ~13% of a seed and ~4% of a system-swarm seed (~30 hooks).
// Measured against it, side by side at load 25-40: the hook lock and hook run as
// entry/exit actions, 0.50 -> 0.40 (-19%, the ~2% of a seed above; not measurable in
// bench/seed-cost.ts at that load, and traces move); two assigns merged into their
// neighbours (2 of the 21 snapshots), nothing measurable.
// 500 seeds (issue 22), measured alone on a near-idle machine (load 3-7, 2026-11-27):
// this file took 59.3 CPU-s with 500 seeds (39.1 with 240 at load ~11), and the tree before that
// session's changes took 59.6 with 500. The figures above were taken at load 20-40 or
// inside a whole `npm test` (72 CPU-s for 240 seeds in test-timings.json), where every
// CPU-second counts double or more; the seed did not get 2.5x cheaper, the estimate was
// inflated. The whole suite's time is the budget this count answers to.
// Measured in the bundled worker (bench/ab-seed-cost.ts, 2026-11-28, load 20-30): a seed
// is ~1,390 steps over ~56 simulated s, ~170 us a step, so the per-step machinery matters
// little here: the checks after each step are under 1% and all of sim/ ~10% self time.
// The unit actors' XState work after each persisted step (persistStep's step.persisted:
// microstep, getAllStateNodes, getAdjList, snapshots) is ~19% of the samples, GC 10-12%,
// msgpackr ~9%. A young generation held large (--max-semi-space-size=32
// --min-semi-space-size=16) gave 302 -> 293 and 302 -> 300 CPU-ms a seed: noise.
const seedCount = long ? 10_000 : 500
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
  /** Each seed's first run, and the seeds run a second time (the first `rerun`), from the one swarm. */
  const firstRuns = new Map<number, ScenarioResult>()
  const secondRuns: ScenarioResult[] = []
  // The first seeds run again in the same workers after the rest (runSwarm's `again`): the
  // determinism check costs those seeds, not a second set of workers loading the code.
  const rerun = 30
  test(`machine agent with 5 units under hook failures and agent crashes: ${seedCount} seeds, 0 violations, all converge`, async () => {
    // The workers load the built bundle (rebuilt first if a source is newer).
    const results = await runSwarm({ fromSeed: 1, toSeed: seedCount, again: rerun, jobs: 2, scenario: { steps }, workerBundle: scenarioSwarmWorker() })
    for (const result of results) {
      if (firstRuns.has(result.seed)) secondRuns.push(result)
      else firstRuns.set(result.seed, result)
    }
    const firsts = [...firstRuns.values()]
    const failed = results.filter(result => result.failure !== undefined)
    const crashes = firsts.reduce((sum, result) => sum + result.crashes, 0)
    const hooks = firsts.reduce((sum, result) => sum + result.hooks, 0)
    assert.is(firsts.length, seedCount)
    assert.is(secondRuns.length, Math.min(rerun, seedCount))
    assert.ok(crashes > seedCount / 2, `faults were injected: ${crashes} agent crashes/stops over ${seedCount} seeds`)
    assert.ok(hooks > seedCount * 20, `hooks ran: ${hooks}`)
    assert.is(failed.length, 0, `${failed.length} seeds failed; first:\n${failed[0]?.failure ?? ''}`)
  })

  for (const seed of pinnedSeeds) {
    test(`pinned seed ${seed} passes`, async () => {
      // Within the sample it ran in the swarm; outside it, here.
      const result = firstRuns.get(seed) ?? await runMachineAgentFaults({ seed, steps })
      assert.is(result.failure, undefined, result.failure)
    })
  }

  test(`determinism: ${rerun} seeds run again give identical trace hashes`, () => {
    assert.is(secondRuns.length, rerun)
    const differing = secondRuns.filter(result => result.hash !== firstRuns.get(result.seed)?.hash).map(result => result.seed)
    assert.equal(differing, [], `seeds with different hashes: ${differing.join(', ')}`)
    assert.is(new Set(secondRuns.map(result => result.hash)).size, rerun, 'different seeds give different runs')
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
