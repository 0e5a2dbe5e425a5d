/**
 * When a Raft host applies a Ready's committed entries (runtime/raft/apply-timing.ts):
 * while the Ready is written when they are durable already; and, given `deferApply`
 * (cantripd's setImmediate), a follower's acknowledging Ready applies only after its
 * messages have gone, still in log order, bounded, and before anything later applies.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { CommandResult, ModelCommand } from '../runtime/model/model-types.ts'
import type { ModelRaftHost } from '../runtime/model/model-state-machine.ts'
import type { Entry, Ready } from '../runtime/raft/raft-types.ts'
import { ApplyTiming } from '../runtime/raft/apply-timing.ts'
import { limits } from '../runtime/limits.ts'
import { tableKeys } from '../runtime/model/table.ts'
import { SimControllerGroup } from '../sim/sim-controller-group.ts'
import { Simulation } from '../sim/simulation.ts'

const entry = (index: number): Entry => ({ index, term: 2, type: 'normal', data: new Uint8Array([index % 256]) })
const entries = (from: number, to: number): Entry[] => Array.from({ length: to - from + 1 }, (_, i) => entry(from + i))

/** A follower's Ready for an append of `written` that also commits `committed` (commit-hold.ts's shape). */
function appendReady (written: Entry[], committed: Entry[], mustSync = true): Ready {
  return { entries: written, committedEntries: committed, messages: [], readStates: [], mustSync, hardState: { term: 2, vote: 'a', commit: committed.at(-1)?.index ?? 0 } }
}

function timing (defer: boolean): { timing: ApplyTiming, applied: number[], queued: Array<() => void> } {
  const applied: number[] = []
  const queued: Array<() => void> = []
  const t = new ApplyTiming(defer ? run => { queued.push(run) } : undefined, list => { for (const e of list) applied.push(e.index) })
  return { timing: t, applied, queued }
}

test('without deferApply: durable committed entries apply while written, the rest after, at once', () => {
  const { timing: t, applied, queued } = timing(false)
  const ready = appendReady([entry(5)], entries(3, 4))
  assert.equal(t.whileWritten(ready, 'follower', 2).map(e => e.index), [3, 4], 'below the first entry written: applied while written')
  const term = { ...ready, hardState: { term: 3, vote: '', commit: 4 } }
  assert.equal(t.whileWritten(term, 'follower', 2), [], 'a Ready that changes the term waits for its write')
  t.afterWritten(ready, 'follower')
  assert.equal(applied, [3, 4], 'after the write: applied in the call')
  assert.is(queued.length, 0)
})

test('with deferApply: a follower acknowledging an append applies after its messages, in log order', () => {
  const { timing: t, applied, queued } = timing(true)
  const first = appendReady([entry(5)], entries(3, 4))
  assert.equal(t.whileWritten(first, 'follower', 2), [], 'nothing ahead of the acknowledgement')
  t.afterWritten(first, 'follower')
  assert.equal(applied, [], 'deferred past the acknowledgement')
  assert.is(t.waiting, 2)
  const second = appendReady([entry(6)], entries(5, 5))
  t.afterWritten(second, 'follower')
  assert.is(queued.length, 1, 'one deferred run for both')
  // A Ready that is not deferred (here: no sync, a commit alone) applies what waits first.
  t.afterWritten(appendReady([], entries(6, 6), false), 'follower')
  assert.equal(applied, [3, 4, 5, 6], 'what waited went first, in log order')
  queued.shift()!()
  assert.equal(applied, [3, 4, 5, 6], 'the deferred run found nothing left')
  // A leader never defers: its answers to proposers wait on its apply.
  t.afterWritten(appendReady([entry(8)], entries(7, 7)), 'leader')
  assert.equal(applied.at(-1), 7)
  assert.is(queued.length, 0)
  // While-written entries of a later Ready also go after what waits.
  t.afterWritten(appendReady([entry(9)], entries(8, 8)), 'follower')
  const leaderReady = appendReady([entry(11)], entries(9, 10))
  assert.equal(t.whileWritten(leaderReady, 'leader', 2).map(e => e.index), [9, 10])
  assert.equal(applied, [3, 4, 5, 6, 7, 8], 'the waiting entry applied before those handed back')
})

test('bounded: past limits.raftDeferredApplyEntriesMax waiting entries, a Ready applies at once', () => {
  const { timing: t, applied, queued } = timing(true)
  const max = limits.raftDeferredApplyEntriesMax
  t.afterWritten(appendReady([entry(max + 1)], entries(1, max)), 'follower')
  assert.is(t.waiting, max, 'up to the maximum waits')
  t.afterWritten(appendReady([entry(max + 2)], entries(max + 1, max + 1)), 'follower')
  assert.is(t.waiting, 0, 'one more applies everything at once')
  assert.is(applied.length, max + 1)
  assert.ok(applied.every((index, i) => index === i + 1), 'in log order')
  assert.is(queued.length, 1)
})

const admin = { kind: 'user', name: 'admin' } as const
const addMachine = (requestId: string): ModelCommand => ({ type: 'add-machine', requestId, proposer: admin })

async function settled (g: SimControllerGroup, promise: Promise<CommandResult>): Promise<CommandResult | undefined> {
  let result: CommandResult | undefined
  promise.then(r => { result = r }, () => {})
  await g.runUntil(() => result !== undefined, 1_000, 1)
  return result
}

test('a group whose followers defer their apply: every write applies everywhere, reads see it', async () => {
  const sim = new Simulation({ seed: 11 })
  const queued: Array<() => void> = []
  const g = await SimControllerGroup.create(sim, { size: 3, hostOptions: () => ({ commitHoldMs: 5, deferApply: run => { queued.push(run) } }) })
  try {
    assert.ok(await g.runUntil(() => g.leader() !== undefined, 5_000), 'a leader')
    const leader = g.leader()!
    const followers = (): ModelRaftHost[] => g.hosts().filter(h => h !== leader)
    let deferredSeen = 0
    for (let i = 0; i < 10; i++) {
      const result = await settled(g, leader.propose(addMachine(`w-${i}`)))
      assert.ok(result?.ok === true, `write ${i} applied on the leader`)
      if (queued.length > 0 && followers().some(f => f.appliedIndex < leader.appliedIndex - 1)) deferredSeen++
      // What the simulator has no macrotask for: run the deferred applies now and then.
      if (i % 3 === 2) for (const run of queued.splice(0)) run()
    }
    assert.ok(deferredSeen > 0, 'followers held applies back while writes streamed in')
    const read = followers()[0]!.read()
    let machines: number | undefined
    read.then(state => { machines = tableKeys(state.machines).length }, () => {})
    for (let i = 0; i < 200 && machines === undefined; i++) {
      for (const run of queued.splice(0)) run()
      await g.runFor(5)
    }
    assert.ok(machines !== undefined && machines >= 10, `a follower's linearizable read sees every write: ${String(machines)}`)
    for (let i = 0; i < 200 && !followers().every(f => f.appliedIndex === leader.appliedIndex); i++) {
      for (const run of queued.splice(0)) run()
      await g.runFor(5)
    }
    for (const f of followers()) assert.is(f.appliedIndex, leader.appliedIndex, `follower ${f.id} applied everything`)
    for (const f of followers()) assert.equal(tableKeys(f.state().machines).sort(), tableKeys(leader.state().machines).sort())
  } finally {
    await g.stop()
  }
})

test.run()
