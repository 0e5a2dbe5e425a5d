/**
 * RaftHost on simulated controllers: election and replication, a leader crash that
 * loses unsynced writes, and seeded random fault schedules checked for election safety,
 * monotonic terms and durability of acknowledged commands.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { CommandResult } from '../runtime/model/model-types.ts'
import { tableHas } from '../runtime/model/table.ts'
import { DurableRaftStorage, raftLogKey } from '../runtime/raft/durable-raft-storage.ts'
import { limits } from '../runtime/limits.ts'
import type { ModelRaftHost } from '../runtime/model/model-state-machine.ts'
import { SimControllerGroup } from '../sim/sim-controller-group.ts'
import { SimStorage } from '../sim/sim-storage.ts'
import { Simulation } from '../sim/simulation.ts'
import { addCharm, deploy, proposeAcked, settle } from './support/raft-model-commands.ts'

const test = suite('raft host')


function leaders (group: SimControllerGroup): ModelRaftHost[] {
  return group.hosts().filter(host => host.status().role === 'leader')
}

test('durable raft storage reads back what a Ready persisted and drops an overwritten tail', async () => {
  const storage = new SimStorage()
  const durable = await DurableRaftStorage.load(storage, { bootstrapVoters: ['a', 'b'] })
  const entry = (index: number, term: number) => ({ index, term, type: 'normal' as const, data: new Uint8Array([index]) })
  await durable.persistReady({ entries: [entry(2, 2), entry(3, 2), entry(4, 2)], committedEntries: [], messages: [], readStates: [], mustSync: true, hardState: { term: 2, vote: 'a', commit: 2 } })
  await durable.persistReady({ entries: [entry(3, 3)], committedEntries: [], messages: [], readStates: [], mustSync: true, hardState: { term: 3, vote: 'b', commit: 2 } })
  assert.is(durable.lastIndex(), 3)
  assert.is(await storage.get(raftLogKey(4)), undefined)
  const reloaded = await DurableRaftStorage.load(storage)
  assert.equal(reloaded.hardState(), { term: 3, vote: 'b', commit: 2 })
  assert.is(reloaded.lastIndex(), 3)
  assert.is(reloaded.term(3), 3)
  assert.is(reloaded.term(1), 1)
  // An unsynced hard state is lost in a crash; the synced log survives.
  await durable.persistReady({ entries: [], committedEntries: [], messages: [], readStates: [], mustSync: false, hardState: { term: 3, vote: 'b', commit: 3 } })
  storage.crash()
  assert.equal((await DurableRaftStorage.load(storage)).hardState(), { term: 3, vote: 'b', commit: 2 })
})

test('3 controllers elect one leader and replicate 50 deploys', async () => {
  const group = await SimControllerGroup.create(new Simulation({ seed: 1 }), { size: 3 })
  assert.ok(await group.runUntil(() => group.leader() !== undefined, 2000), 'no leader elected')
  assert.is(leaders(group).length, 1)
  assert.is((await proposeAcked(group, addCharm, 2000))?.ok, true)
  for (let i = 0; i < 50; i++) {
    const result = await proposeAcked(group, deploy(`app${i}`), 2000)
    assert.is(result?.ok, true, `deploy app-${i}: ${JSON.stringify(result)}`)
  }
  const target = group.leader()!.state().revision
  assert.ok(await group.runUntil(() => group.hosts().every(host => host.state().revision >= target), 1000))
  const [first, ...rest] = group.hosts().map(host => host.state())
  for (const model of rest) assert.equal(model, first)
  assert.is(leaders(group).length, 1)
  for (let i = 0; i < 50; i++) assert.ok(tableHas(first!.applications, `app${i}`))
  await group.stop()
})

test('followers apply a commit one message after the leader, not at its next heartbeat', async () => {
  // Followers answer machine watches from what they applied: a commit they learnt only
  // from the next heartbeat would put up to a heartbeat interval into every such change.
  // Heartbeats here are 1 s apart, so any apply well within that came from the commit's
  // own broadcast.
  const heartbeatMs = 1_000
  const group = await SimControllerGroup.create(new Simulation({ seed: 3 }), { size: 3, tickMs: 10, electionTicks: 300, heartbeatTicks: heartbeatMs / 10 })
  assert.ok(await group.runUntil(() => group.leader() !== undefined, 20_000), 'no leader elected')
  assert.is((await proposeAcked(group, addCharm, 5_000))?.ok, true)
  const leader = group.leader()!
  const followers = group.hosts().filter(host => host !== leader)
  for (let i = 0; i < 5; i++) {
    const result = await proposeAcked(group, deploy(`app${i}`), 5_000)
    assert.is(result?.ok, true)
    const index = leader.appliedIndex
    const leaderAppliedAt = group.sim.clock.now()
    assert.ok(await group.runUntil(() => followers.every(host => host.appliedIndex >= index), heartbeatMs, 1), `followers applied ${index} within a heartbeat interval`)
    const lagMs = group.sim.clock.now() - leaderAppliedAt
    assert.ok(lagMs < heartbeatMs / 4, `followers applied ${index} ${lagMs} ms after the leader: that waited for a heartbeat (${heartbeatMs} ms)`)
  }
  await group.stop()
})

test(`a leader keeps at most limits.raftProposalGroupsInFlightMax (${limits.raftProposalGroupsInFlightMax}) groups of proposals on their way, then new ones wait`, async () => {
  // The leader is cut off here so nothing commits and every group it appends stays in flight.
  const group = await SimControllerGroup.create(new Simulation({ seed: 3 }), { size: 3, tickMs: 10, electionTicks: 300, heartbeatTicks: 10 })
  assert.ok(await group.runUntil(() => group.leader() !== undefined, 20_000), 'no leader elected')
  assert.is((await proposeAcked(group, addCharm, 5_000))?.ok, true)
  const leader = group.leader()!
  group.isolate(group.hosts().indexOf(leader))
  const proposed: Array<Promise<CommandResult>> = []
  for (let i = 0; i < limits.raftProposalGroupsInFlightMax; i++) {
    const before = leader.persistedLog().lastIndex()
    proposed.push(leader.propose(deploy(`inflight${i}`)))
    assert.ok(await group.runUntil(() => leader.persistedLog().lastIndex() === before + 1, 500, 1), `group ${i + 1} appended while ${i} are on their way`)
  }
  const full = leader.persistedLog().lastIndex()
  proposed.push(leader.propose(deploy('waiting')))
  await group.runFor(500)
  assert.is(leader.persistedLog().lastIndex(), full, 'the next proposal waits in the queue')
  assert.is(leader.appliedIndex < full, true, 'nothing of the groups in flight committed')
  group.heal()
  for (const [i, p] of proposed.entries()) {
    const outcome = await settle(group, p, 10_000)
    assert.ok(outcome.ok && outcome.value.ok, `proposal ${i + 1} of ${proposed.length} applied once the followers were back: ${outcome.ok ? JSON.stringify(outcome.value) : String(outcome.error)}`)
  }
  await group.stop()
})

test('a new leader emerges after the leader crashes and keeps every acknowledged deploy', async () => {
  const group = await SimControllerGroup.create(new Simulation({ seed: 7 }), { size: 3 })
  assert.ok(await group.runUntil(() => group.leader() !== undefined, 2000))
  assert.is((await proposeAcked(group, addCharm, 2000))?.ok, true)
  const acknowledged: string[] = []
  let crashed: number | undefined
  const firstLeader = group.leader()!
  for (let i = 0; i < 30; i++) {
    if (i === 15) {
      crashed = group.ids.indexOf(group.leader()!.id)
      // Leave proposals in flight so the crash lands mid-stream.
      for (let j = 100; j < 105; j++) void group.leader()!.propose(deploy(`app${j}`)).then(() => acknowledged.push(`app${j}`), () => {})
      await group.runFor(3)
      group.crash(crashed)
    }
    const result = await proposeAcked(group, deploy(`app${i}`), 5000)
    if (result?.ok === true) acknowledged.push(`app${i}`)
  }
  const newLeader = group.leader()
  assert.ok(newLeader !== undefined && newLeader.id !== firstLeader.id, 'no new leader')
  await group.restart(crashed!)
  const everywhere = (): boolean => group.hosts().length === 3 &&
    group.hosts().every(host => acknowledged.every(name => tableHas(host.state().applications, name)))
  assert.ok(await group.runUntil(everywhere, 5000), 'acknowledged deploys missing after restart')
  assert.ok(acknowledged.length >= 30)
  await group.stop()
})

const seeds = Number(process.env.RAFT_HOST_SEEDS ?? 25)
const firstSeed = Number(process.env.CANTRIP_SEED ?? 1000)

test(`random faults keep election safety, monotonic terms and acknowledged deploys (${seeds} seeds)`, async () => {
  for (let seed = firstSeed; seed < firstSeed + seeds; seed++) {
    const sim = new Simulation({ seed, replay: `CANTRIP_SEED=${seed} RAFT_HOST_SEEDS=1 node --import tsx test/raft-host.test.ts` })
    const group = await SimControllerGroup.create(sim, { size: 3 })
    const faults = sim.random('faults')
    const leaderOfTerm = new Map<number, string>()
    const lastTerm = group.ids.map(() => 0)
    const acknowledged = new Set<string>()
    const check = (): void => {
      for (let i = 0; i < group.ids.length; i++) {
        const host = group.host(i)
        if (host === undefined) continue
        const status = host.status()
        assert.ok(status.term >= lastTerm[i]!, sim.failure('safety', `${host.id} term went from ${lastTerm[i]!} to ${status.term}`))
        lastTerm[i] = status.term
        if (status.role !== 'leader') continue
        const known = leaderOfTerm.get(status.term)
        assert.ok(known === undefined || known === host.id, sim.failure('safety', `two leaders in term ${status.term}: ${known ?? ''} and ${host.id}`))
        leaderOfTerm.set(status.term, host.id)
      }
    }
    const run = async (ms: number): Promise<void> => {
      for (let t = 0; t < ms; t += 10) {
        await group.runFor(10)
        check()
      }
    }
    await run(300)
    assert.ok((await proposeAcked(group, addCharm, 3000))?.ok, sim.failure('liveness', 'add-charm not acknowledged'))
    let next = 0
    for (let step = 0; step < 12; step++) {
      const roll = faults.next()
      const i = faults.int(0, group.ids.length - 1)
      if (roll < 0.25) group.crash(i)
      else if (roll < 0.5) await group.restart(i)
      else if (roll < 0.65) group.partition([[group.ids[i]!], group.ids.filter((_, j) => j !== i)])
      else if (roll < 0.75) group.isolate(i)
      else group.heal()
      sim.trace(`step ${step} roll ${roll.toFixed(2)} on c${i}`)
      // Proposals go to whoever leads now; only acknowledged ones must survive.
      const leader = group.leader()
      if (leader !== undefined) {
        for (let k = 0; k < 3; k++) {
          const name = `app${next++}`
          leader.propose(deploy(name)).then(result => { if (result.ok) acknowledged.add(name) }, () => {})
        }
      }
      await run(faults.int(50, 400))
    }
    group.heal()
    for (let i = 0; i < group.ids.length; i++) await group.restart(i)
    const converged = (): boolean => group.hosts().length === group.ids.length &&
      group.hosts().every(host => [...acknowledged].every(name => tableHas(host.state().applications, name)))
    let ok = false
    for (let t = 0; t < 10_000 && !ok; t += 10) {
      await run(10)
      ok = converged()
    }
    assert.ok(ok, sim.failure('liveness', `acknowledged deploys not applied everywhere within 10000 ms (${acknowledged.size} acknowledged)`))
    // Once everyone has caught up with the same commit, the models agree exactly.
    const commit = Math.max(...group.hosts().map(host => host.status().commit))
    await group.runUntil(() => group.hosts().every(host => host.state().revision >= commit), 2000)
    const [first, ...rest] = group.hosts().map(host => host.state())
    for (const model of rest) if (model.revision === first!.revision) assert.equal(model, first)
    for (const host of group.hosts()) assert.is(host.status().invalidMessages, 0)
    await group.stop()
  }
})

test.run()
