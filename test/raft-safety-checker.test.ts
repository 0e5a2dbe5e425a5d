/**
 * The simulator's Raft safety checker follows each persisted log incrementally (the
 * storage says from which index it changed since a version), so these cases drive it
 * over real DurableRaftStorage mirrors with hand-made Readies: it must still see a
 * rewritten entry in the middle of a log, a leader rewriting its own entry, and a log
 * shrinking under a leader, and must not cry wolf over compaction, a RaftSnapshot or
 * a follower's conflicting tail being replaced.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { ModelReplica } from '../actors/controller/model-replica.ts'
import { DurableRaftStorage, persistedLogChangesKept } from '../runtime/raft/durable-raft-storage.ts'
import type { Entry, HardState, Ready, RaftSnapshot } from '../runtime/raft/raft-types.ts'
import { RaftSafetyChecker } from '../sim/invariants/raft-safety.ts'
import { SimStorage } from '../sim/sim-storage.ts'

const ids = ['a', 'b', 'c'] as const

interface FakeNode {
  storage: SimStorage
  durable: DurableRaftStorage
  role: 'leader' | 'follower'
  term: number
  commit: number
}

function entry (index: number, term: number): Entry {
  return { index, term, type: 'normal', data: new Uint8Array([index, term]) }
}

function ready (entries: Entry[], hardState?: HardState, snapshot?: RaftSnapshot): Ready {
  return { entries, ...(hardState === undefined ? {} : { hardState }), ...(snapshot === undefined ? {} : { snapshot }), committedEntries: [], messages: [], readStates: [], mustSync: true }
}

async function group (): Promise<{ nodes: FakeNode[], checker: RaftSafetyChecker }> {
  const nodes: FakeNode[] = []
  for (let i = 0; i < ids.length; i++) {
    const storage = new SimStorage()
    const durable = await DurableRaftStorage.load(storage, { bootstrapVoters: ids })
    nodes.push({ storage, durable, role: 'follower', term: 1, commit: 0 })
  }
  const asControllerNode = (n: FakeNode): ModelReplica => ({
    host: {
      basicStatus: () => ({ role: n.role, term: n.term, commit: n.commit }),
      get role () { return n.role },
      get term () { return n.term },
      persistedLog: () => n.durable
    },
    runsSingularWorkers: () => false
  }) as unknown as ModelReplica
  const checker = new RaftSafetyChecker({
    ids,
    storages: nodes.map(n => n.storage),
    node: i => asControllerNode(nodes[i]!),
    isPaused: () => false
  })
  return { nodes, checker }
}

/** Appends entries of `terms` to every node from index 2 (a founding member's log starts after its RaftSnapshot at 1), checking after each. */
async function commonLog (nodes: FakeNode[], checker: RaftSafetyChecker, terms: number[]): Promise<void> {
  for (let i = 0; i < terms.length; i++) {
    for (const n of nodes) await n.durable.persistReady(ready([entry(i + 2, terms[i]!)], { term: terms[i]!, vote: '', commit: 0 }))
    checker.step()
  }
}

test('the version grows with every change, and the lowest changed index is reported since any version kept', async () => {
  const durable = await DurableRaftStorage.load(new SimStorage(), { bootstrapVoters: ids })
  const v0 = durable.version
  assert.is(durable.lowestIndexChangedSince(v0), Infinity, 'nothing changed')
  await durable.persistReady(ready([entry(2, 1), entry(3, 1), entry(4, 1)]))
  await durable.persistReady(ready([], { term: 1, vote: 'a', commit: 2 }))
  const v2 = durable.version
  assert.is(durable.lowestIndexChangedSince(v0), 2)
  await durable.persistReady(ready([entry(3, 2)]))
  assert.is(durable.lowestIndexChangedSince(v2), 3, 'a replaced tail is reported from its first index')
  assert.is(durable.lowestIndexChangedSince(v0), 2)
  const v3 = durable.version
  await durable.compact(2, { voters: [...ids] }, new Uint8Array())
  assert.is(durable.lowestIndexChangedSince(v3), Infinity, 'compaction is read through firstIndex')
  for (let i = 0; i <= persistedLogChangesKept; i++) await durable.persistReady(ready([], { term: 2, vote: 'a', commit: 2 + (i % 2) }))
  assert.is(durable.lowestIndexChangedSince(v0), 0, 'a reader further behind than the changes kept rereads everything')
})

test('logs that agree, grow, compact and replace a follower\'s conflicting tail are not reported', async () => {
  const { nodes, checker } = await group()
  await commonLog(nodes, checker, [1, 1, 2, 2, 2])
  // c holds an uncommitted entry of term 3 that the leader of term 4 replaces.
  await nodes[2]!.durable.persistReady(ready([entry(7, 3)], { term: 3, vote: '', commit: 0 }))
  checker.step()
  nodes[0]!.role = 'leader'
  nodes[0]!.term = 4
  for (const n of nodes) await n.durable.persistReady(ready([entry(7, 4), entry(8, 4)], { term: 4, vote: 'a', commit: 6 }))
  nodes[0]!.commit = 8
  checker.step()
  await nodes[0]!.durable.compact(5, { voters: [...ids] }, new Uint8Array())
  checker.step()
  for (const n of nodes) await n.durable.persistReady(ready([entry(9, 4)], { term: 4, vote: 'a', commit: 9 }))
  nodes[0]!.commit = 9
  checker.step()
  assert.equal(checker.violations, [])
})

test('an entry rewritten in the middle of one log breaks log matching, found after many quiet steps', async () => {
  const { nodes, checker } = await group()
  await commonLog(nodes, checker, [1, 1, 1, 2, 2, 2, 2])
  for (let i = 0; i < 5; i++) checker.step()
  // A storage bug's effect, as the checker sees it: b's entry 4 changes term while 5… stay.
  await nodes[1]!.durable.persistReady(ready([entry(4, 2), entry(5, 2), entry(6, 2), entry(7, 2), entry(8, 2)]))
  checker.step()
  assert.ok(checker.violations.some(v => /log matching: a and b agree at 8 but differ at 4/.test(v)), checker.violations.join('; '))
})

test('a leader that rewrites or drops entries of its own log in its term is reported', async () => {
  const { nodes, checker } = await group()
  await commonLog(nodes, checker, [1, 1, 2])
  nodes[0]!.role = 'leader'
  nodes[0]!.term = 2
  checker.step()
  await nodes[0]!.durable.persistReady(ready([entry(4, 3)]))
  checker.step()
  assert.ok(checker.violations.some(v => /leader append-only: a \(term 2\) rewrote entry 4/.test(v)), checker.violations.join('; '))
})

test('a RaftSnapshot installed on a follower makes the checker reread its log, and a later rewrite is still seen', async () => {
  const { nodes, checker } = await group()
  await commonLog(nodes, checker, [1, 1, 1, 1])
  const snapshot: RaftSnapshot = { metadata: { index: 4, term: 1, config: { voters: [...ids] } }, data: new Uint8Array() }
  await nodes[2]!.durable.persistReady(ready([entry(5, 1), entry(6, 1)], { term: 1, vote: '', commit: 4 }, snapshot))
  checker.step()
  assert.equal(checker.violations, [])
  for (const n of nodes.slice(0, 2)) await n.durable.persistReady(ready([entry(6, 1)]))
  checker.step()
  await nodes[2]!.durable.persistReady(ready([entry(5, 2), entry(6, 1)]))
  checker.step()
  assert.ok(checker.violations.some(v => /log matching: a and c agree at 6 but differ at 5/.test(v)), checker.violations.join('; '))
})

test('leader completeness: a leader of a later term missing a committed entry is reported; one still acting in an older term is not', async () => {
  const { nodes, checker } = await group()
  await commonLog(nodes, checker, [1, 1, 2])
  // b and c move on to term 5 and commit an entry of it at 5; a, paused in term 4, lacks it.
  for (const n of nodes.slice(1)) await n.durable.persistReady(ready([entry(5, 5)], { term: 5, vote: 'b', commit: 5 }))
  checker.step()
  await nodes[0]!.durable.persistReady(ready([], { term: 4, vote: 'a', commit: 3 }))
  nodes[0]!.role = 'leader'
  nodes[0]!.term = 4
  checker.step()
  assert.equal(checker.violations, [], 'a stale leader of term 4 need not hold what term 5 committed')
  // The same log leading term 6 breaks the property.
  nodes[0]!.role = 'follower'
  checker.step()
  await nodes[0]!.durable.persistReady(ready([], { term: 6, vote: 'a', commit: 3 }))
  nodes[0]!.role = 'leader'
  nodes[0]!.term = 6
  checker.step()
  assert.ok(checker.violations.some(v => /leader completeness: a leads term 6 with no entry at 5, committed there in term 5/.test(v)), checker.violations.join('; '))
})

test.run()
