/**
 * Unit tests for the pieces of the Raft core: the log, storage, quorum arithmetic,
 * ReadIndex bookkeeping, configuration history, and RawNode's contract with its host
 * (what a Ready carries and when), its bounds, and its handling of hostile input.
 * Whole-protocol scenarios live in test/testdata/raft/*.txt.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { limits } from '../runtime/limits.ts'
import { applyConfigChange, configChangeProblem } from '../runtime/raft/cluster-config.ts'
import { ConfigHistory } from '../runtime/raft/config-history.ts'
import { Inflights } from '../runtime/raft/inflights.ts'
import { MemoryRaftStorage } from '../runtime/raft/memory-raft-storage.ts'
import { hasQuorum, quorumMatchIndex, voteResult } from '../runtime/raft/quorum.ts'
import { RaftLog } from '../runtime/raft/raft-log.ts'
import type { Entry, Message, Ready } from '../runtime/raft/raft-types.ts'
import { RawNode, type RawNodeOptions } from '../runtime/raft/raw-node.ts'
import { ReadOnly } from '../runtime/raft/read-only.ts'
import { SeededRandom } from '../runtime/random.ts'
import { RaftInteractionEnv } from './support/raft-interaction.ts'

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text)
const entry = (index: number, term: number, data = ''): Entry => ({ index, term, type: 'normal', data: bytes(data) })

function newNode (id: string, storage: MemoryRaftStorage, options: Partial<RawNodeOptions> = {}): RawNode {
  return new RawNode({ id, storage, random: new SeededRandom(1), electionTicks: 10, heartbeatTicks: 1, ...options })
}

/** Handle one Ready the way a host must: persist, (send), apply, advance. */
function handleReady (node: RawNode, storage: MemoryRaftStorage): Ready {
  const ready = node.ready()
  if (ready.snapshot !== undefined) storage.applySnapshot(ready.snapshot)
  storage.append(ready.entries)
  if (ready.hardState !== undefined) storage.setHardState(ready.hardState)
  node.advance()
  return ready
}

/** A cluster in the interaction world with node 1 elected and quiet. */
function clusterWithLeader (size: number, options = ''): RaftInteractionEnv {
  const env = new RaftInteractionEnv()
  const voters = Array.from({ length: size }, (_, i) => i + 1).join(',')
  for (const line of ['log-level silent', `add-nodes ${size} voters=(${voters}) ${options}`, 'campaign 1', 'stabilize']) env.run(line)
  return env
}

function nodeOf (env: RaftInteractionEnv, id: string): RawNode {
  const node = env.nodes.get(id)?.node
  assert.ok(node, `node ${id} is up`)
  return node
}

// ---------------------------------------------------------------------------------
// The log and its storage

test('raft log: a follower keeps matching entries, replaces a conflicting tail, and reports contradictions of committed entries', () => {
  const storage = MemoryRaftStorage.bootstrap(['1'])
  const log = new RaftLog(storage)
  log.append([entry(2, 2, 'a'), entry(3, 2, 'b'), entry(4, 2, 'c')])
  assert.equal(log.maybeAppend(9, 2, 0, []), { kind: 'mismatch' }, 'no entry at 9')
  assert.equal(log.maybeAppend(2, 3, 0, []), { kind: 'mismatch' }, 'term differs at 2')
  const outcome = log.maybeAppend(2, 2, 3, [entry(3, 2, 'b'), entry(4, 3, 'x')])
  assert.equal(outcome.kind, 'appended')
  if (outcome.kind !== 'appended') return
  assert.is(outcome.lastNewIndex, 4)
  assert.equal(outcome.appended.map(e => `${e.index}@${e.term}`), ['4@3'], 'only the conflicting suffix is replaced')
  assert.is(log.committed, 3, 'commit follows the leader, but only as far as this message proves')
  assert.is(log.term(4), 3)
  assert.equal(log.maybeAppend(1, 1, 3, [entry(2, 1)]), { kind: 'contradicts-committed', index: 2 })
  assert.is(log.term(2), 2, 'the committed entry is untouched')
})

test('raft log: findConflictByTerm skips a whole term, and a leader commits only entries of its term (Figure 8)', () => {
  const log = new RaftLog(MemoryRaftStorage.bootstrap(['1']))
  log.append([entry(2, 2), entry(3, 2), entry(4, 4), entry(5, 4), entry(6, 5)])
  assert.equal(log.findConflictByTerm(6, 4), { index: 5, term: 4 })
  assert.equal(log.findConflictByTerm(5, 3), { index: 3, term: 2 })
  assert.equal(log.findConflictByTerm(3, 0), { index: 0, term: 0 }, 'below the first index the term is the RaftSnapshot\'s, 1 > 0')
  assert.not.ok(log.maybeCommit(3, 5), '3@2 on a majority does not commit in term 5')
  assert.is(log.committed, 1)
  assert.ok(log.maybeCommit(6, 5), '6@5 commits, and everything before it with it')
  assert.is(log.committed, 6)
})

test('raft log: persisting a Ready whose entries were overwritten meanwhile keeps the newer ones unstable', () => {
  const storage = MemoryRaftStorage.bootstrap(['1'])
  const log = new RaftLog(storage)
  log.append([entry(2, 2), entry(3, 2)])
  const persisted = log.unstable.entries.slice()
  log.append([entry(3, 3)])
  storage.append(persisted)
  log.unstable.stableTo(3, 2)
  assert.equal(log.unstable.entries.map(e => `${e.index}@${e.term}`), ['2@2', '3@3'], 'the stale Ready counts for nothing; 3@3 is still to be persisted')
  storage.append(log.unstable.entries)
  log.unstable.stableTo(3, 3)
  assert.is(log.unstable.entries.length, 0)
  assert.is(log.term(3), 3)
})

test('memory raft storage: appends replace the tail, compaction needs a RaftSnapshot, reads are size-limited', () => {
  const storage = MemoryRaftStorage.bootstrap(['1', '2', '3'])
  assert.equal([storage.firstIndex(), storage.lastIndex(), storage.term(1)], [2, 1, 1])
  storage.append([entry(2, 2, 'a'), entry(3, 2, 'b'), entry(4, 2, 'c')])
  storage.append([entry(3, 3, 'x')])
  assert.equal(storage.entries(2, 4, 1_000_000).map(e => `${e.index}@${e.term}`), ['2@2', '3@3'])
  assert.is(storage.lastIndex(), 3)
  assert.throws(() => storage.append([entry(9, 3)]), /cannot append at 9/)
  assert.is(storage.entries(2, 4, 0).length, 1, 'at least one entry, however small the budget')
  assert.throws(() => storage.compact(3), /take a RaftSnapshot there first/)
  storage.createSnapshot(3, { voters: ['1', '2', '3'] }, bytes('state'))
  storage.compact(3)
  assert.equal([storage.firstIndex(), storage.term(3)], [4, 3])
  assert.throws(() => storage.entries(3, 4, 10), /outside/)
})

// ---------------------------------------------------------------------------------
// Quorums, reads, configurations

test('quorum: majorities, vote tallies and the quorum-held index', () => {
  const voters = ['1', '2', '3', '4', '5']
  const match: Record<string, number> = { 1: 9, 2: 7, 3: 7, 4: 2, 5: 0 }
  assert.is(quorumMatchIndex(voters, id => match[id]!), 7)
  assert.is(quorumMatchIndex(['1', '2', '3', '4'], id => match[id]!), 7)
  assert.is(voteResult(voters, new Map([['1', true], ['2', true]])), 'pending')
  assert.is(voteResult(voters, new Map([['1', true], ['2', true], ['9', true], ['3', false]])), 'pending', 'a non-voter\'s vote does not count')
  assert.is(voteResult(voters, new Map([['1', true], ['2', true], ['3', true]])), 'won')
  assert.is(voteResult(voters, new Map([['1', true], ['2', false], ['3', false], ['4', false]])), 'lost')
  assert.is(voteResult([], new Map()), 'lost')
  assert.ok(hasQuorum(['1', '2', '3'], id => id !== '3'))
  assert.not.ok(hasQuorum(['1', '2', '3', '4'], id => id === '1' || id === '2'))
})

test('read-only: requests release in order once their context is acknowledged; duplicates and overflow are refused', () => {
  const reads = new ReadOnly(3)
  assert.is(reads.add(5, '1', bytes('a')), 'added')
  assert.is(reads.add(6, '2', bytes('b')), 'added')
  assert.is(reads.add(6, '2', bytes('b')), 'duplicate')
  assert.is(reads.add(7, '1', bytes('c')), 'added')
  assert.is(reads.add(7, '1', bytes('d')), 'full')
  assert.equal([...reads.recordAck('3', bytes('b'))!], ['3'])
  assert.is(reads.recordAck('3', bytes('zz')), undefined)
  assert.equal(reads.release(bytes('b')).map(r => r.index), [5, 6], 'an ack for b also confirms the earlier a')
  assert.equal(reads.lastContext(), bytes('c'))
  reads.reset()
  assert.is(reads.size, 0)
})

test('inflights: a window of sends, freed by acknowledgements', () => {
  const window = new Inflights(3)
  window.add(4)
  window.add(6)
  window.add(9)
  assert.ok(window.full())
  assert.throws(() => window.add(10), /full/)
  window.freeTo(6)
  assert.is(window.count, 1)
  window.freeFirst()
  assert.is(window.count, 0)
})

test('cluster config: one change at a time is validated and applied idempotently', () => {
  const config = { voters: ['1', '2', '3'] }
  assert.is(configChangeProblem(config, { type: 'add-voter', node: '2' }), '"2" is already a voter')
  assert.is(configChangeProblem({ voters: ['1'] }, { type: 'remove-voter', node: '1' }), '"1" is the last voter')
  assert.is(configChangeProblem(config, { type: 'remove-voter', node: '7' }), '"7" is not a voter')
  assert.equal(applyConfigChange(config, { type: 'add-voter', node: '10' }).voters, ['1', '10', '2', '3'])
  assert.is(applyConfigChange(config, { type: 'add-voter', node: '3' }), config)
})

test('config history: an overwritten config entry gives way to the configuration before it', () => {
  const history = new ConfigHistory(1, { voters: ['1', '2', '3'] })
  const change = (index: number, term: number, type: 'add-voter' | 'remove-voter', node: string): Entry =>
    ({ index, term, type: 'config-change', data: new Uint8Array(0), configChange: { type, node } })
  assert.ok(history.onAppend([entry(2, 2), change(3, 2, 'add-voter', '4')]))
  assert.equal(history.current().voters, ['1', '2', '3', '4'])
  assert.is(history.latestIndex(), 3)
  assert.ok(history.onAppend([entry(3, 3)]), 'a new leader overwrote 3')
  assert.equal(history.current().voters, ['1', '2', '3'])
  history.onAppend([change(4, 3, 'remove-voter', '3')])
  history.commitTo(4)
  assert.equal(history.current().voters, ['1', '2'])
  assert.throws(() => history.onAppend([entry(4, 4)]), /rewrite the committed configuration/)
})

// ---------------------------------------------------------------------------------
// RawNode and its host

test('raw node: a vote is recorded in the hard state of the very Ready that carries the grant', () => {
  const storage = MemoryRaftStorage.bootstrap(['1', '2', '3'])
  const node = newNode('1', storage)
  node.step({ type: 'vote', from: '2', to: '1', term: 2, index: 1, logTerm: 1 })
  const ready = handleReady(node, storage)
  assert.equal(ready.hardState, { term: 2, vote: '2', commit: 1 })
  assert.ok(ready.mustSync, 'a vote must be synced before the grant leaves')
  assert.equal(ready.messages.map(m => [m.type, m.to, m.term, m.reject ?? false]), [['vote-response', '2', 2, false]])
  assert.equal(storage.hardState(), { term: 2, vote: '2', commit: 1 })
  node.step({ type: 'vote', from: '3', to: '1', term: 2, index: 1, logTerm: 1 })
  const second = handleReady(node, storage)
  assert.equal(second.messages.map(m => m.reject), [true], 'one vote per term')
  assert.is(second.hardState, undefined)
})

test('raw node: a candidate\'s new term and self-vote are in the Ready with its vote requests', () => {
  const storage = MemoryRaftStorage.bootstrap(['1', '2', '3'])
  const node = newNode('1', storage, { preVote: false })
  node.campaign()
  const ready = handleReady(node, storage)
  assert.equal(ready.hardState, { term: 2, vote: '1', commit: 1 })
  assert.ok(ready.mustSync)
  assert.equal(ready.softState, { leader: '', role: 'candidate' })
  assert.equal(ready.messages.map(m => `${m.type}->${m.to}@${m.term}`), ['vote->2@2', 'vote->3@2'])
})

test('raw node: the host contract: one Ready at a time, and fsync only when term, vote or log changed', () => {
  const storage = MemoryRaftStorage.bootstrap(['1'])
  const node = newNode('1', storage)
  assert.not.ok(node.hasReady())
  node.campaign()
  assert.ok(node.hasReady())
  const ready = node.ready()
  assert.equal(ready.softState, { leader: '1', role: 'leader' }, 'a single voter wins at once')
  assert.not.ok(node.hasReady(), 'nothing new until advance()')
  assert.throws(() => node.ready(), /ready\(\) called again before advance\(\)/)
  storage.append(ready.entries)
  storage.setHardState(ready.hardState!)
  node.advance()
  assert.throws(() => node.advance(), /advance\(\) called without a Ready/)
  assert.equal(ready.committedEntries.map(e => e.index), [2], 'a single voter commits its own entry in the same Ready')
  node.propose(bytes('x'))
  const next = handleReady(node, storage)
  assert.ok(next.mustSync, 'new entries')
  node.tick()
  assert.not.ok(node.hasReady(), 'a lone leader has nobody to heartbeat')
})

test('raw node: non-leaders refuse proposals with a hint; reads go to the leader or are refused', () => {
  const env = clusterWithLeader(3)
  const follower = nodeOf(env, '2')
  assert.equal(follower.propose(bytes('x')), { status: 'not-leader', leader: '1' })
  assert.equal(follower.readIndex(bytes('r')), { status: 'forwarded', leader: '1' })
  assert.equal(follower.readIndex(new Uint8Array(0)), { status: 'invalid', reason: 'context must not be empty' })
  const fresh = newNode('9', new MemoryRaftStorage())
  assert.equal(fresh.readIndex(bytes('r')), { status: 'no-leader' })
  assert.equal(fresh.proposeConfigChange({ type: 'add-voter', node: '9' }), { status: 'not-leader', leader: '' })
  const leader = nodeOf(env, '1')
  assert.equal(leader.propose(new Uint8Array(limits.raftMaxSizePerMessageBytes + 1)),
    { status: 'too-large', bytesMax: limits.raftMaxSizePerMessageBytes })
})

test('raw node: ticksUntilDue names the next tick that acts, and tickIdle is that many quiet ticks at once', () => {
  // A host sleeps until the due tick and takes the quiet ones just before its next input
  // (runtime/raft/tick-schedule.ts): both must agree exactly with ticking one by one.
  const env = clusterWithLeader(3, 'heartbeat=3')
  const leader = nodeOf(env, '1')
  const follower = nodeOf(env, '2')
  const quiet = (node: RawNode, ticks: number): void => {
    for (let i = 0; i < ticks; i++) {
      node.tick()
      assert.not.ok(node.hasReady(), `tick ${i + 1} of ${ticks} did something`)
    }
  }
  const leaderDue = leader.ticksUntilDue()
  assert.is(leaderDue, 3, 'the next heartbeat')
  quiet(leader, leaderDue - 1)
  leader.tick()
  assert.ok(leader.ready().messages.some(m => m.type === 'heartbeat'), 'the due tick heartbeats')
  leader.advance()
  const followerDue = follower.ticksUntilDue()
  assert.ok(followerDue >= 10 && followerDue < 20, `a randomized election timeout away: ${followerDue}`)
  quiet(follower, followerDue - 1)
  follower.tick()
  assert.is(follower.basicStatus().role, 'pre-candidate', 'the due tick campaigns')

  const statusAfter = (idle: boolean, node: string, ticks: number): string => {
    const e = clusterWithLeader(3, 'heartbeat=4')
    const n = nodeOf(e, node)
    if (idle) n.tickIdle(ticks)
    else for (let i = 0; i < ticks; i++) n.tick()
    return JSON.stringify(n.status())
  }
  for (const [node, ticks] of [['1', 3], ['2', 9], ['3', 0]] as const) {
    assert.is(statusAfter(true, node, ticks), statusAfter(false, node, ticks), `node ${node}, ${ticks} ticks`)
  }
  assert.throws(() => { leader.tickIdle(leader.ticksUntilDue()) }, /tickIdle\(\d+\) would pass a due tick/)
  const removed = clusterWithLeader(3)
  removed.run('remove-voter 1 3')
  removed.run('stabilize')
  const outside = nodeOf(removed, '3')
  assert.is(outside.ticksUntilDue(), Infinity, 'a node that may not campaign never has a due tick')
  outside.tickIdle(1_000_000)
  assert.ok(outside.status().electionElapsed <= 20, 'its election counter stops at twice the timeout, as tick() stops it')
})

test('raw node: the same seed and the same inputs give the same Readies', () => {
  const readies = (seed: number): string => {
    const storage = MemoryRaftStorage.bootstrap(['1', '2', '3'])
    const node = newNode('1', storage, { random: new SeededRandom(seed) })
    const seen: string[] = []
    for (let tick = 0; tick < 60; tick++) {
      node.tick()
      if (node.hasReady()) seen.push(`${tick}:${JSON.stringify(handleReady(node, storage), (_, v: unknown) => v instanceof Uint8Array ? [...v] : v)}`)
      if (tick % 7 === 0) node.step({ type: 'pre-vote-response', from: '2', to: '1', term: storage.hardState().term + 1 })
    }
    return seen.join('\n')
  }
  assert.is(readies(42), readies(42))
  assert.is.not(readies(42), readies(43), 'a different seed draws different election timeouts')
  const env1 = new RaftInteractionEnv()
  const env2 = new RaftInteractionEnv()
  for (const line of ['add-nodes 5 voters=(1,2,3,4,5)', 'tick-election 3', 'stabilize', 'propose 3 x', 'stabilize', 'status 3']) {
    assert.is(env1.run(line), env2.run(line), line)
  }
})

// ---------------------------------------------------------------------------------
// Commit propagation

test('commit broadcast: followers learn a commit from the append the leader sends as it commits, with no tick', () => {
  // A follower serves machine watches from what it applied (actors/controller/machine-watches.ts):
  // if it learnt of commits only from the next heartbeat, every change would wait up to a
  // heartbeat interval there. The leader sends the new commit index the moment it moves
  // (etcd's stepLeader: on MsgAppResp, `if r.maybeCommit() { r.bcastAppend() }`).
  const env = clusterWithLeader(3, 'heartbeat=5')
  const leader = nodeOf(env, '1')
  const proposed = leader.propose(bytes('change'))
  assert.is(proposed.status, 'accepted')
  const index = (proposed as { index: number }).index
  env.run('process-ready 1')
  for (const id of ['2', '3']) env.run(`deliver-msgs ${id}`)
  env.run('process-ready 2 3')
  env.run('deliver-msgs 1')
  assert.is(leader.status().commit, index, 'the leader commits on the acknowledgements')
  env.run('process-ready 1')
  for (const id of ['2', '3']) {
    const carrying = env.network.filter(m => m.to === id && m.from === '1')
    assert.equal(carrying.map(m => [m.type, m.commit, m.entries?.length]), [['append', index, 0]],
      `one empty append carries commit ${index} to ${id}, not a later heartbeat`)
  }
  for (const id of ['2', '3']) {
    env.run(`deliver-msgs ${id}`)
    const follower = nodeOf(env, id)
    assert.is(follower.status().commit, index, `${id} knows the commit without a tick`)
    const ready = follower.ready()
    assert.equal(ready.committedEntries.map(e => e.index), [index], `${id}'s next Ready applies it`)
    assert.is(ready.mustSync, false, 'a commit index alone is not synced (the leader tells it again)')
  }
})

test('commit broadcast: a follower whose acknowledgement the commit did not need learns it in the same broadcast', () => {
  // Of five voters three make a quorum: the two slow ones still get the commit index at
  // once (in the append that also carries them the entry, or an empty one after it).
  const env = clusterWithLeader(5, 'heartbeat=5')
  const leader = nodeOf(env, '1')
  const index = (leader.propose(bytes('change')) as { index: number }).index
  env.run('process-ready 1')
  for (const id of ['2', '3']) env.run(`deliver-msgs ${id}`)
  env.run('process-ready 2 3')
  env.run('deliver-msgs 1')
  env.run('process-ready 1')
  assert.is(leader.status().commit, index)
  for (const id of ['4', '5']) {
    env.run(`deliver-msgs ${id}`)
    env.run(`process-ready ${id}`)
    assert.is(nodeOf(env, id).status().commit, index, `${id} learns the commit with no tick, its own acknowledgement not needed`)
  }
})

// ---------------------------------------------------------------------------------
// Replication limits

test('pipelining: a replicating leader keeps up to maxInflight appends in flight, then waits', () => {
  const env = clusterWithLeader(3, 'max-size=32 max-inflight=3')
  const leader = nodeOf(env, '1')
  for (let i = 0; i < 10; i++) leader.propose(bytes(`e${i}`))
  env.run('process-ready 1')
  const toTwo = env.network.filter(m => m.to === '2' && m.type === 'append')
  assert.is(toTwo.length, 3, 'one entry per message (max-size), three in flight')
  assert.equal(toTwo.map(m => m.entries!.length), [1, 1, 1])
  const progress = leader.status().progress['2']!
  assert.equal([progress.state, progress.inflight, progress.paused], ['replicate', 3, true])
  env.run('deliver-msgs 2 count=1')
  env.run('process-ready 2')
  env.run('deliver-msgs 1 from=2')
  env.run('process-ready 1')
  assert.is(env.network.filter(m => m.to === '2' && m.type === 'append').length, 3, 'one acknowledged, one more sent')
})

test('pipelining: the default window is limits.raftMaxInflightMessages', () => {
  const env = clusterWithLeader(3, 'max-size=32')
  const leader = nodeOf(env, '1')
  for (let i = 0; i < limits.raftMaxInflightMessages + 20; i++) leader.propose(bytes(`e${i}`))
  env.run('process-ready 1')
  assert.is(env.network.filter(m => m.to === '2' && m.type === 'append').length, limits.raftMaxInflightMessages)
  assert.ok(leader.status().progress['2']!.paused)
  env.run('stabilize')
  assert.is(leader.status().commit, leader.status().lastIndex, 'everything commits once acknowledgements flow')
})

test('uncommitted bytes: proposals are refused past the limit until entries commit', () => {
  const env = clusterWithLeader(3, 'max-uncommitted=10')
  env.run('partition 1 | 2 3')
  const leader = nodeOf(env, '1')
  assert.is(leader.propose(bytes('123456')).status, 'accepted')
  assert.is(leader.propose(bytes('7890ab')).status, 'too-much-uncommitted')
  assert.is(leader.propose(new Uint8Array(0)).status, 'accepted', 'empty entries always fit')
  env.run('heal')
  env.run('stabilize')
  assert.is(leader.propose(bytes('7890ab')).status, 'accepted', 'room again once committed and applied')
})

test('uncommitted bytes: the default limit is limits.raftMaxUncommittedEntriesBytes', () => {
  const env = clusterWithLeader(3)
  env.run('partition 1 | 2 3')
  const leader = nodeOf(env, '1')
  const chunk = new Uint8Array(limits.raftMaxSizePerMessageBytes)
  const fits = limits.raftMaxUncommittedEntriesBytes / chunk.byteLength
  for (let i = 0; i < fits; i++) assert.is(leader.propose(chunk).status, 'accepted')
  assert.is(leader.propose(chunk).status, 'too-much-uncommitted')
})

test('ready: at most limits.raftEntriesPerReadyMax committed entries, and limits.raftCommittedBytesPerReadyMax bytes, per Ready', () => {
  const storage = MemoryRaftStorage.bootstrap(['1'])
  const node = newNode('1', storage)
  node.campaign()
  handleReady(node, storage)
  for (let i = 0; i < limits.raftEntriesPerReadyMax + 100; i++) node.propose(bytes(`e${i}`))
  const first = handleReady(node, storage)
  assert.is(first.entries.length, limits.raftEntriesPerReadyMax + 100)
  assert.is(first.committedEntries.length, limits.raftEntriesPerReadyMax)
  assert.is(handleReady(node, storage).committedEntries.length, 100)
  const chunk = new Uint8Array(limits.raftMaxSizePerMessageBytes)
  const count = limits.raftCommittedBytesPerReadyMax / chunk.byteLength + 2
  for (let i = 0; i < count; i++) node.propose(chunk)
  const big = handleReady(node, storage)
  assert.ok(big.committedEntries.length < count, `${big.committedEntries.length} of ${count} entries fit the byte budget`)
  assert.ok(big.committedEntries.length > 0)
})

test('ready: outgoing messages beyond limits.raftMessagesPerReadyMax are dropped and counted', () => {
  const storage = MemoryRaftStorage.bootstrap(['1', '2', '3'])
  const node = newNode('2', storage)
  for (let i = 0; i <= limits.raftMessagesPerReadyMax; i++) node.step({ type: 'heartbeat', from: '1', to: '2', term: 1, commit: 1 })
  assert.is(node.status().droppedMessages, 1)
  assert.is(node.ready().messages.length, limits.raftMessagesPerReadyMax)
})

test('read index: a leader holds at most limits.raftPendingReadIndexMax reads', () => {
  const env = clusterWithLeader(3)
  const leader = nodeOf(env, '1')
  for (let i = 0; i < limits.raftPendingReadIndexMax; i++) assert.is(leader.readIndex(bytes(`r${i}`)).status, 'accepted')
  assert.equal(leader.readIndex(bytes('one-more')), { status: 'too-many-pending', pendingMax: limits.raftPendingReadIndexMax })
  assert.equal(leader.readIndex(bytes('r0')).status, 'too-many-pending')
  env.run('stabilize')
  assert.is(leader.readIndex(bytes('r0')).status, 'accepted', 'answered reads free their slots')
})

// ---------------------------------------------------------------------------------
// Hostile and impossible input

test('unsafe integers: messages with unsafe or malformed numbers are dropped and counted, not obeyed', () => {
  const storage = MemoryRaftStorage.bootstrap(['1', '2', '3'])
  const node = newNode('1', storage)
  const bad: unknown[] = [
    { type: 'heartbeat', from: '2', to: '1', term: 2 ** 53, commit: 1 },
    { type: 'heartbeat', from: '2', to: '1', term: Number.MAX_SAFE_INTEGER, commit: 1 },
    { type: 'vote', from: '2', to: '1', term: 5, index: Number.NaN, logTerm: 1 },
    { type: 'append', from: '2', to: '1', term: 3, index: 1, logTerm: 1, commit: Infinity, entries: [] },
    { type: 'append', from: '2', to: '1', term: 3, index: 1, logTerm: 1, commit: 1, entries: [entry(3, 3)] },
    { type: 'append', from: '2', to: '1', term: 3, index: 1, logTerm: 1, commit: 1, entries: [entry(2, 4)] },
    { type: 'append', from: '2', to: '1', term: -1, index: 1, logTerm: 1, commit: 1, entries: [] },
    { type: 'heartbeat', from: '2', to: '7', term: 3, commit: 1 },
    { type: 'snapshot', from: '2', to: '1', term: 3, snapshot: { metadata: { index: 2 ** 60, term: 1, config: { voters: [] } }, data: new Uint8Array(0) } },
    { type: 'propose', from: '2', to: '1', term: 3, entries: [] },
    { type: 'gossip', from: '2', to: '1', term: 3 },
    null
  ]
  for (const message of bad) node.step(message as Message)
  const status = node.status()
  assert.is(status.invalidMessages, bad.length)
  assert.equal([status.term, status.role, status.commit], [1, 'follower', 1], 'nothing changed')
})

test('unsafe integers: a term that would pass Number.MAX_SAFE_INTEGER stops the node with an assertion', () => {
  const storage = MemoryRaftStorage.bootstrap(['1', '2', '3'])
  storage.setHardState({ term: Number.MAX_SAFE_INTEGER, vote: '', commit: 1 })
  const node = newNode('1', storage)
  assert.throws(() => node.campaign(), /raft term must be a safe integer/)
})

test('impossible input: a stale append cannot rewrite committed entries, and a commit beyond the log is dropped and counted', () => {
  const env = clusterWithLeader(3)
  const follower = nodeOf(env, '2')
  const term = follower.status().term
  // An append starting below the commit index is old news: answered with the commit
  // index, its entries ignored (they could only contradict committed ones).
  follower.step({ type: 'append', from: '1', to: '2', term, index: 1, logTerm: 1, commit: 1, entries: [entry(2, 1, 'forged')] })
  follower.step({ type: 'heartbeat', from: '1', to: '2', term, commit: 99 })
  assert.is(follower.status().invalidMessages, 1, 'the heartbeat')
  assert.equal([follower.status().commit, follower.status().lastIndex], [2, 2])
  assert.equal(follower.ready().messages.map(m => [m.type, m.index]), [['append-response', 2]])
})

// ---------------------------------------------------------------------------------
// Recovery paths

test('restart: term, vote, commit and the configuration (replayed from config entries) come back from storage', () => {
  const env = clusterWithLeader(3)
  env.run('add-nodes 1')
  env.run('add-voter 1 4')
  env.run('stabilize')
  const before = nodeOf(env, '2').status()
  env.run('crash 2')
  env.run('restart 2')
  const after = nodeOf(env, '2').status()
  assert.equal([after.term, after.vote, after.commit, after.applied, after.config.voters],
    [before.term, before.vote, before.commit, before.applied, ['1', '2', '3', '4']])
  assert.is(after.role, 'follower')
})

test('snapshot: a RaftSnapshot reported failed, or never acknowledged, is sent again', () => {
  const env = clusterWithLeader(3, 'snapshot-timeout=5')
  const leader = nodeOf(env, '1')
  const progressOf3 = (): { state: string, paused: boolean } => leader.status().progress['3']!
  /** One round trip between 1 and 3; true once a RaftSnapshot is on its way. */
  const roundTrip = (): boolean => {
    for (const line of ['process-ready 1', 'deliver-msgs 3', 'process-ready 3', 'deliver-msgs 1', 'process-ready 1']) env.run(line)
    return env.network.some(m => m.type === 'snapshot')
  }
  const untilSnapshotSent = (): void => {
    for (let i = 0; i < 5 && !roundTrip(); i++) env.run('tick-heartbeat 1')
    assert.ok(env.network.some(m => m.type === 'snapshot'), 'a RaftSnapshot was sent')
  }
  env.run('crash 3')
  env.run('propose 1 a')
  env.run('stabilize 1 2')
  env.run('compact 1 3')
  env.run('restart 3')
  untilSnapshotSent()
  assert.is(progressOf3().state, 'snapshot')

  env.run('drop-msgs type=snapshot')
  env.run('report-snapshot 1 3 failed')
  assert.equal(progressOf3(), { ...progressOf3(), state: 'probe', paused: true }, 'waits for a heartbeat before retrying')
  env.run('tick-heartbeat 1')
  untilSnapshotSent()

  env.run('drop-msgs type=snapshot')
  for (let i = 0; i < 5; i++) env.run('tick 1')
  assert.is(progressOf3().state, 'probe', 'given up on after the timeout')
  env.run('tick-heartbeat 1')
  env.run('stabilize 1 2 3')
  assert.is(progressOf3().state, 'replicate', 'sent a third time, and it arrived')
  assert.is(nodeOf(env, '3').status().commit, leader.status().commit)
})

test('leader transfer: proposals wait while it runs, and it is abandoned after an election timeout', () => {
  const env = clusterWithLeader(3)
  env.run('partition 1 2 | 3')
  const leader = nodeOf(env, '1')
  leader.propose(bytes('x'))
  assert.equal(leader.transferLeadership('3'), { status: 'accepted', to: '3' })
  assert.equal(leader.propose(bytes('y')), { status: 'transferring-leadership', to: '3' })
  assert.is(leader.transferLeadership('9').status, 'invalid')
  for (let i = 0; i < 10; i++) leader.tick()
  assert.is(leader.status().leadTransferee, '')
  assert.is(leader.propose(bytes('y')).status, 'accepted')
})



// ---------------------------------------------------------------------------------
// Election backoff (issue 28: no leader for minutes on a starved machine)

test('election backoff: each candidacy that times out doubles the election timeout range, up to the cap; hearing a leader undoes it', () => {
  const env = new RaftInteractionEnv()
  for (const line of ['log-level silent', 'add-nodes 3 voters=(1,2,3)']) env.run(line)
  const node = nodeOf(env, '1')
  const electionTicks = 10
  // Node 1 passes PreVote and runs, but its vote requests never arrive: its grants would
  // come back after its timeout, as on a machine whose round trip outlasts it.
  const candidacyTimesOut = (): void => {
    for (const line of ['tick-election 1', 'process-ready 1', 'deliver-msgs 2 3', 'process-ready 2 3', 'deliver-msgs 1', 'process-ready 1']) env.run(line)
    assert.is(node.status().role, 'candidate')
    for (const line of ['drop-msgs 2 3', 'tick-election 1']) env.run(line)
    assert.is(node.status().role, 'pre-candidate', 'the candidacy timed out')
  }
  const range = (): number => Math.log2(node.status().electionTimeoutTicks / electionTicks)
  for (let doublings = 1; doublings <= limits.raftElectionBackoffDoublingsMax + 1; doublings++) {
    candidacyTimesOut()
    const expected = Math.min(doublings, limits.raftElectionBackoffDoublingsMax)
    // Drawn from [electionTicks, 2 * electionTicks) * 2^expected.
    assert.ok(range() >= expected && range() < expected + 1, `after ${doublings} timed-out candidacies: timeout ${node.status().electionTimeoutTicks} ticks`)
  }
  // An election completes (node 1's own pending campaign may win it); then node 2 leads,
  // and node 1 hears of it.
  for (const line of ['drop-msgs 1 2 3', 'campaign 2', 'stabilize']) env.run(line)
  if (node.status().role === 'leader') for (const line of ['transfer-leadership 1 2', 'stabilize']) env.run(line)
  assert.is(node.status().leader, '2')
  assert.is(node.status().role, 'follower')
  assert.ok(node.status().electionTimeoutTicks < 2 * electionTicks, `back to the configured range: ${node.status().electionTimeoutTicks} ticks`)
})

test('election backoff: none without PreVote, where a lagging candidate restarts every timer and a backed-off node would never go first', () => {
  const env = new RaftInteractionEnv()
  for (const line of ['log-level silent', 'add-nodes 3 voters=(1,2,3) prevote=false', 'campaign 1', 'process-ready 1', 'drop-msgs 2 3', 'tick-election 1']) env.run(line)
  const status = nodeOf(env, '1').status()
  assert.is(status.role, 'candidate')
  assert.ok(status.electionTimeoutTicks < 20, `timeout ${status.electionTimeoutTicks} ticks`)
})

// ---------------------------------------------------------------------------------
// A closed connection to the leader

test('connection closed: only a follower of that leader campaigns, after a random fraction of a heartbeat', () => {
  const env = clusterWithLeader(3, 'heartbeat=4')
  env.run('stabilize')
  assert.is(nodeOf(env, '1').connectionClosed('2'), undefined, 'a leader ignores a follower\'s close')
  assert.is(nodeOf(env, '2').connectionClosed('3'), undefined, 'a follower ignores a close that is not its leader\'s')
  assert.is(nodeOf(env, '2').status().leader, '1')
  const delays: number[] = []
  for (let i = 0; i < 50; i++) {
    const delay = nodeOf(env, '2').connectionClosed('1')
    assert.ok(delay !== undefined && delay >= 0 && delay < 4, `delay ${String(delay)} ticks is within [0, heartbeatTicks)`)
    delays.push(delay)
    assert.is(nodeOf(env, '2').status().leader, '', 'the lease on the leader is given up')
    assert.is(nodeOf(env, '2').connectionClosed('1'), undefined, 'a second close of the same leader asks for nothing more')
    env.run('tick-heartbeat 1')
    env.run('stabilize')
    nodeOf(env, '2').campaignAfterClose()
    assert.is(nodeOf(env, '2').status().role, 'follower', 'a heartbeat before the delay passed cancels the campaign')
    assert.is(nodeOf(env, '2').status().leader, '1')
  }
  assert.ok(new Set(delays).size > 40, 'the delays are drawn, not fixed')
  nodeOf(env, '2').connectionClosed('1')
  nodeOf(env, '2').campaignAfterClose()
  assert.is(nodeOf(env, '2').status().role, 'pre-candidate', 'with no leader heard since, the delay passing starts PreVote')
  assert.is(nodeOf(env, '2').status().term, nodeOf(env, '1').status().term, 'PreVote moves no term')
  assert.equal(env.violations, [])
})

test.run()
