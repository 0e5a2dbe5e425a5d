/**
 * The simulated controllers run cantripd's scheduling (agent/roles/hosted-model.ts): the
 * Raft host's follower apply and leader write, and the held-watch check, are deferred to
 * a zero-delay step of the simulated clock, as cantripd defers them with setImmediate; a
 * crash between a step's scheduling and its turn drops it, as a dying process drops its
 * pending callbacks, and the group still converges on every acknowledged write.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { CommandResult, ModelCommand } from '../runtime/model/model-types.ts'
import { tableKeys } from '../runtime/model/table.ts'
import { SimControllerGroup } from '../sim/sim-controller-group.ts'
import { Simulation } from '../sim/simulation.ts'

const admin = { kind: 'user', name: 'admin' } as const
const addMachine = (requestId: string): ModelCommand => ({ type: 'add-machine', requestId, proposer: admin })

async function settled (g: SimControllerGroup, promise: Promise<CommandResult>): Promise<CommandResult | undefined> {
  let result: CommandResult | undefined
  promise.then(r => { result = r }, () => {})
  await g.runUntil(() => result !== undefined, 2_000, 1)
  return result
}

test('a streaming write path defers follower applies and leader writes to zero-delay steps, as cantripd', async () => {
  const sim = new Simulation({ seed: 5 })
  // commitHoldMs as cantripd's: a commit rides on the next append, so followers' syncing Readies commit entries.
  const g = await SimControllerGroup.create(sim, { size: 3, hostOptions: () => ({ commitHoldMs: 5 }) })
  try {
    assert.ok(await g.runUntil(() => g.leader() !== undefined, 5_000), 'a leader')
    const leader = g.leader()!
    const writes = Array.from({ length: 10 }, (_, i) => leader.propose(addMachine(`w-${i}`)))
    for (const write of writes) assert.is((await settled(g, write))?.ok, true)
    const counts = g.deferrals
    assert.ok(counts.scheduled > 0, 'deferred steps were scheduled')
    assert.is(counts.dropped, 0, 'nothing crashed, nothing dropped')
    assert.ok(await g.runUntil(() => g.hosts().every(h => h.appliedIndex === leader.appliedIndex), 2_000, 1), 'every controller applied every write')
    assert.is(g.deferrals.ran, g.deferrals.scheduled - [0, 1, 2].reduce((n, i) => n + g.deferredPending(i), 0), 'every step not pending ran')
  } finally {
    await g.stop()
  }
})

test('a follower crashed with a deferred step pending drops it, restarts and catches up', async () => {
  const sim = new Simulation({ seed: 7 })
  let crashed: number | undefined
  let droppedAtCrash = 0
  let group: SimControllerGroup | undefined
  const g = await SimControllerGroup.create(sim, {
    size: 3,
    hostOptions: () => ({ commitHoldMs: 5 }),
    onStep: () => {
      const at = group
      if (at === undefined || crashed !== undefined) return
      const leader = at.leader()
      const victim = [0, 1, 2].find(i => at.host(i) !== undefined && at.host(i) !== leader && at.deferredPending(i) > 0)
      if (victim === undefined) return
      const before = at.deferrals.dropped
      at.crash(victim)
      crashed = victim
      droppedAtCrash = at.deferrals.dropped - before
    }
  })
  group = g
  try {
    assert.ok(await g.runUntil(() => g.leader() !== undefined, 5_000), 'a leader')
    const leader = g.leader()!
    for (let i = 0; i < 40 && crashed === undefined; i++) assert.is((await settled(g, leader.propose(addMachine(`w-${i}`))))?.ok, true)
    assert.ok(crashed !== undefined, 'a follower had a deferred step pending at some step')
    assert.ok(droppedAtCrash > 0, 'its crash dropped the pending steps')
    assert.is(g.deferredPending(crashed), 0)
    await g.restart(crashed)
    assert.is((await settled(g, leader.propose(addMachine('after'))))?.ok, true)
    assert.ok(await g.runUntil(() => g.hosts().length === 3 && g.hosts().every(h => h.appliedIndex === leader.appliedIndex), 5_000, 1), 'the restarted follower caught up')
    const machines = tableKeys(leader.state().machines).sort()
    for (const host of g.hosts()) assert.equal(tableKeys(host.state().machines).sort(), machines)
  } finally {
    await g.stop()
  }
})

test.run()
