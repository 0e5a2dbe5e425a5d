/**
 * A follower whose leader's connection closes campaigns at once (runtime/raft/raft.ts,
 * connectionClosed) instead of waiting out an election timeout of silence, as ZooKeeper's
 * followers look for a new leader when the leader's socket breaks. In the simulator a
 * crashed controller's connections close at its peers and a paused or partitioned one
 * closes nothing (sim/sim-network.ts), so these scenarios run the shipping host and core
 * on both kinds of failure, and on a close that was not a death.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { tableHas } from '../runtime/model/table.ts'
import { SimControllerGroup } from '../sim/sim-controller-group.ts'
import { Simulation } from '../sim/simulation.ts'
import { addCharm, deploy, proposeAcked } from './support/raft-model-commands.ts'

const test = suite('raft leader close')

/** The agents' timing (sim/system/system-world.ts agentRaftTiming): 600-1200 ms election timeouts. */
const timing = { tickMs: 100, electionTicks: 6, heartbeatTicks: 1 } as const
const electionTimeoutMs = timing.tickMs * timing.electionTicks
const seeds = [1, 2, 3, 4, 5]

async function startGroup (seed: number): Promise<SimControllerGroup> {
  const group = await SimControllerGroup.create(new Simulation({ seed }), { size: 3, ...timing })
  assert.ok(await group.runUntil(() => group.leader() !== undefined, 20_000, 20), `seed ${seed}: no leader within 20 s`)
  // Settled: every follower has heard the leader and holds its lease.
  await group.runFor(2_000)
  return group
}

/** Simulated ms until a leader other than `old` leads a higher term (bounded by `ms`). */
async function msUntilNewLeader (group: SimControllerGroup, oldId: string, oldTerm: number, ms: number): Promise<number> {
  const from = group.sim.clock.now()
  const elected = await group.runUntil(() => {
    const leader = group.leader()
    return leader !== undefined && leader.id !== oldId && leader.status().term > oldTerm
  }, ms, 5)
  assert.ok(elected, `no new leader within ${ms} ms`)
  return group.sim.clock.now() - from
}

test('a new leader within a fraction of the election timeout after the leader crashes (3 controllers, leader crash)', async () => {
  for (const seed of seeds) {
    const group = await startGroup(seed)
    try {
      const old = group.leader()!
      const oldTerm = old.status().term
      group.crash(group.indexOf(old.id))
      const ms = await msUntilNewLeader(group, old.id, oldTerm, 10 * electionTimeoutMs)
      // Without the close the survivors hold their lease on the dead leader for at least
      // (electionTicks - heartbeatTicks) ticks after its last heartbeat, then campaign.
      assert.ok(ms < electionTimeoutMs / 2, `seed ${seed}: new leader ${ms} ms after the crash, not within half the ${electionTimeoutMs} ms election timeout`)
      assert.is(group.leader()!.status().term, oldTerm + 1, `seed ${seed}: one election, no split vote`)
    } finally {
      await group.stop()
    }
  }
})

test('a paused leader closes nothing: the survivors wait out the election timeout (3 controllers, leader pause)', async () => {
  for (const seed of seeds) {
    const group = await startGroup(seed)
    try {
      const old = group.leader()!
      const oldTerm = old.status().term
      const index = group.indexOf(old.id)
      group.pause(index)
      const ms = await msUntilNewLeader(group, old.id, oldTerm, 10 * electionTimeoutMs)
      assert.ok(ms >= (timing.electionTicks - timing.heartbeatTicks) * timing.tickMs,
        `seed ${seed}: new leader ${ms} ms after the pause: a campaign started before the lease on a silent leader ran out`)
      group.resume(index)
      const rejoined = await group.runUntil(() => group.hosts().every(host => host.status().term === group.leader()?.status().term && host.leader === group.leader()?.id), 5_000, 10)
      assert.ok(rejoined, `seed ${seed}: the resumed controller did not follow the new leader`)
    } finally {
      await group.stop()
    }
  }
})

test('a connection reset with a live leader costs at most one term each, and no write is lost or applied twice (3 controllers)', async () => {
  for (const seed of seeds) {
    const group = await startGroup(seed)
    try {
      assert.is((await proposeAcked(group, addCharm, 5_000))?.ok, true)
      const startTerm = group.leader()!.status().term
      const acknowledged: string[] = []
      const resets = 4
      for (let round = 0; round < resets; round++) {
        const leader = group.leader()!
        const followers = group.hosts().filter(host => host !== leader)
        // Round 0 and 2: one follower's connection resets (its peers keep the lease: no new term);
        // rounds 1 and 3: both at once (a majority campaigns: at most one new term).
        const reset = round % 2 === 0 ? followers.slice(0, 1) : followers
        for (const follower of reset) group.network.resetConnection(leader.id, follower.id)
        for (let i = 0; i < 5; i++) {
          const name = `app${round}n${i}`
          const result = await proposeAcked(group, deploy(name), 10_000)
          assert.is(result?.ok, true, `seed ${seed}: deploy ${name}: ${JSON.stringify(result)}`)
          acknowledged.push(name)
        }
        await group.runFor(2_000)
      }
      const endTerm = group.leader()!.status().term
      assert.ok(endTerm - startTerm <= resets / 2, `seed ${seed}: ${endTerm - startTerm} new terms after ${resets / 2} resets seen by a majority and ${resets / 2} by one follower`)
      const target = group.leader()!.state().revision
      assert.ok(await group.runUntil(() => group.hosts().every(host => host.state().revision >= target), 5_000, 10), `seed ${seed}: replicas did not catch up`)
      for (const host of group.hosts()) {
        const model = host.state()
        for (const name of acknowledged) assert.ok(tableHas(model.applications, name), `seed ${seed}: ${host.id} lost acknowledged deploy ${name}`)
        // Each deploy adds one application with one unit: a deploy applied twice would add a second unit.
        assert.is(model.applications.size, acknowledged.length, `seed ${seed}: ${host.id} holds applications nobody deployed`)
        assert.is(model.units.size, acknowledged.length, `seed ${seed}: ${host.id} holds ${model.units.size} units for ${acknowledged.length} deploys of one unit`)
      }
      const [first, ...rest] = group.hosts().map(host => host.state())
      for (const model of rest) assert.equal(model, first, `seed ${seed}: replicas differ`)
    } finally {
      await group.stop()
    }
  }
})

test.run()
