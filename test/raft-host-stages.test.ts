/**
 * RaftHost's `onStage` hook (what CANTRIP_WRITE_TRACE records and bench/write-stages.ts
 * times): one write's steps are reported on each controller in the order they happen, so
 * the bench's stages tile the write's critical path. In the simulator, on the same host
 * that ships.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { CommandResult } from '../runtime/model/model-types.ts'
import type { RaftHostStage } from '../runtime/raft/raft-host.ts'
import type { NodeId } from '../runtime/raft/raft-types.ts'
import { SimControllerGroup } from '../sim/sim-controller-group.ts'
import { Simulation } from '../sim/simulation.ts'

const admin = { kind: 'user', name: 'admin' } as const

interface Step { id: NodeId, stage: RaftHostStage, detail: number }

test('one write reports propose, Ready, appends, synced writes, acknowledgement and applied in order', async () => {
  const steps: Step[] = []
  const g = await SimControllerGroup.create(new Simulation({ seed: 5 }), {
    size: 3,
    hostOptions: id => ({ onStage: (stage, detail) => { steps.push({ id, stage, detail }) } })
  })
  assert.ok(await g.runUntil(() => g.leader() !== undefined, 5_000), 'a leader')
  const leader = g.leader()!
  // Just elected, the leader probes each follower with one append at a time; a warm-up
  // write and a heartbeat round later it replicates as it does under load.
  assert.is((await settle(g, leader.propose({ type: 'add-machine', requestId: 'warm-up', proposer: admin })))?.ok, true)
  await g.runFor(300)
  const first = steps.length
  assert.is((await settle(g, leader.propose({ type: 'add-machine', requestId: 'stages', proposer: admin })))?.ok, true, 'the write applied')

  const write = steps.slice(first)
  const at = (test: (s: Step) => boolean, after = -1): number => write.findIndex((s, i) => i > after && test(s))
  const propose = at(s => s.id === leader.id && s.stage === 'propose')
  const ready = at(s => s.id === leader.id && s.stage === 'ready' && s.detail === 1, propose)
  const appendsOut = at(s => s.id === leader.id && s.stage.startsWith('sent-'), ready)
  const leaderSynced = at(s => s.id === leader.id && s.stage === 'synced' && s.detail === 1, ready)
  const applied = at(s => s.id === leader.id && s.stage === 'applied', ready)
  assert.ok(propose >= 0 && ready > propose, `the leader's Ready with the entry follows the propose: ${JSON.stringify(write.slice(0, 6))}`)
  assert.ok(appendsOut > ready && appendsOut < leaderSynced, 'the appends leave before the leader\'s own write is synced')
  assert.ok(applied > leaderSynced, 'applied only after the leader\'s write is synced')
  assert.is(write[applied]!.detail, leader.appliedIndex, 'applied names the index of the write')

  // The first follower to acknowledge: Ready with the entry, synced, then its acknowledgement sent, all before the leader applies.
  const acknowledged = g.hosts().filter(h => h.id !== leader.id).map(follower => {
    const fReady = at(s => s.id === follower.id && s.stage === 'ready' && s.detail === 1, ready)
    const fSynced = at(s => s.id === follower.id && s.stage === 'synced' && s.detail === 1, fReady)
    const fSent = at(s => s.id === follower.id && s.stage.startsWith('sent-'), fSynced)
    return fReady > ready && fSynced > fReady && fSent > fSynced ? fSent : Infinity
  })
  assert.ok(Math.min(...acknowledged) < applied, 'a follower\'s acknowledgement left after its synced write and before the leader applied')
  assert.ok(write.some(s => s.id === leader.id && s.stage.startsWith('received-')), 'the leader reports receiving the acknowledgement')
  await g.stop()
})

async function settle (g: SimControllerGroup, proposal: Promise<CommandResult>): Promise<CommandResult | undefined> {
  const outcome: { result?: CommandResult } = {}
  void proposal.then(result => { outcome.result = result })
  await g.runUntil(() => outcome.result !== undefined, 1_000, 1)
  return outcome.result
}

test.run()
