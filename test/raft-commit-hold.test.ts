/**
 * A leader's commit-only appends while writes stream in (runtime/raft/commit-hold.ts): held
 * for the next message to the same follower to carry, never longer than the hold, and
 * never for a lone write; followers apply everything either way.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { CommandResult, ModelCommand } from '../runtime/model/model-types.ts'
import type { ModelRaftHost } from '../runtime/model/model-state-machine.ts'
import type { Message, NodeId } from '../runtime/raft/raft-types.ts'
import { CommitHold } from '../runtime/raft/commit-hold.ts'
import { limits } from '../runtime/limits.ts'
import { SimControllerGroup } from '../sim/sim-controller-group.ts'
import { SimClock } from '../sim/sim-clock.ts'
import { Simulation } from '../sim/simulation.ts'

const admin = { kind: 'user', name: 'admin' } as const
const addMachine = (requestId: string): ModelCommand => ({ type: 'add-machine', requestId, proposer: admin })
const holdMs = 5

interface Sent { from: NodeId, at: number, messages: readonly Message[] }

const commitOnly = (message: Message): boolean => message.type === 'append' && (message.entries?.length ?? 0) === 0

async function group (commitHoldMs: number): Promise<{ g: SimControllerGroup, sent: Sent[], leader: ModelRaftHost, now: () => number }> {
  const sent: Sent[] = []
  const sim = new Simulation({ seed: 5 })
  const now = (): number => sim.clock.now()
  const g = await SimControllerGroup.create(sim, {
    size: 3,
    hostOptions: () => ({ commitHoldMs }),
    onRaftSend: (from, messages) => { sent.push({ from, at: now(), messages }) }
  })
  assert.ok(await g.runUntil(() => g.leader() !== undefined, 5_000), 'a leader')
  const leader = g.leader()!
  assert.ok((await settled(g, leader.propose(addMachine('warm-up')))).result?.ok === true, 'the warm-up write applied')
  // Quiet long enough that the next write starts no stream.
  await g.runFor(200)
  return { g, sent, leader, now }
}

async function settled (g: SimControllerGroup, promise: Promise<CommandResult>, ms = 1_000): Promise<{ done: boolean, result?: CommandResult, error?: unknown }> {
  const outcome: { done: boolean, result?: CommandResult, error?: unknown } = { done: false }
  promise.then(result => { outcome.done = true; outcome.result = result }, (error: unknown) => { outcome.done = true; outcome.error = error })
  await g.runUntil(() => outcome.done, ms, 1)
  return outcome
}

/** Sequential writes, each proposed as soon as the one before applied (what one client does). */
async function writeInTurn (g: SimControllerGroup, leader: ModelRaftHost, writes: number, prefix: string): Promise<void> {
  for (let i = 0; i < writes; i++) {
    const outcome = await settled(g, leader.propose(addMachine(`${prefix}-${i}`)))
    assert.ok(outcome.done && outcome.result?.ok === true, `write ${i} applied: ${String(outcome.error)}`)
  }
}

function followersCaughtUp (g: SimControllerGroup, leader: ModelRaftHost): boolean {
  return g.hosts().length === 3 && g.hosts().every(host => host.appliedIndex === leader.appliedIndex)
}

/** Sends from the leader over 20 writes in turn: those of commit-only appends alone, and those carrying one beside other messages. */
async function streamed (commitHoldMs: number): Promise<{ alone: number, carried: number, sends: number }> {
  const { g, sent, leader } = await group(commitHoldMs)
  const before = sent.length
  await writeInTurn(g, leader, 20, 'stream')
  const fromLeader = sent.slice(before).filter(s => s.from === leader.id)
  const alone = fromLeader.filter(s => s.messages.every(commitOnly)).length
  const carried = fromLeader.filter(s => s.messages.some(commitOnly) && s.messages.some(m => !commitOnly(m))).length
  // The last commit waits for no further write: it goes within the hold.
  assert.ok(await g.runUntil(() => followersCaughtUp(g, leader), holdMs + 50, 1), 'followers applied the last write')
  await g.stop()
  return { alone, carried, sends: fromLeader.length }
}

test('streaming writes: a commit rides on the next append instead of a send of its own', async () => {
  const without = await streamed(0)
  const held = await streamed(holdMs)
  // Without holding, each of the 20 commits is a send of its own to each of two followers.
  assert.ok(without.alone >= 40, `without holding: ${without.alone} commit-only sends`)
  assert.ok(held.alone * 2 <= without.alone, `holding: ${held.alone} commit-only sends, ${without.alone} without`)
  assert.ok(held.carried >= 20, `commits carried with the next message: ${held.carried}`)
  assert.ok(held.sends < without.sends, `sends in all: ${held.sends} held, ${without.sends} without`)
})

test('a lone write: its commit goes to the followers at once, as without holding', async () => {
  const { g, sent, leader, now } = await group(holdMs)
  const before = sent.length
  const outcome = await settled(g, leader.propose(addMachine('lone')))
  assert.ok(outcome.done && outcome.result?.ok === true)
  const appliedAt = now()
  const commits = sent.slice(before).filter(s => s.from === leader.id && s.messages.every(commitOnly) && s.messages.some(m => (m.commit ?? 0) >= leader.appliedIndex))
  assert.is(commits.length, 2, 'one commit-only append to each follower')
  for (const commit of commits) assert.ok(commit.at <= appliedAt, `sent by the time the leader applied (${commit.at} > ${appliedAt})`)
  await g.stop()
})

test('held until the next write is due, at most the hold: a held commit goes on its deadline when nothing else does', () => {
  const clock = new SimClock()
  const hold = new CommitHold(clock, holdMs, limits.raftCommitHoldStreamGapMsMax)
  const due: Array<{ at: number, messages: Message[] }> = []
  const onDue = (_peer: NodeId, messages: Message[]): void => { due.push({ at: clock.now(), messages }) }
  const commit = (commit: number): Message => ({ type: 'append', from: 'a', to: 'b', term: 2, index: 10, logTerm: 2, entries: [], commit })
  // Not streaming yet: one group appended.
  hold.appended()
  assert.equal(hold.take('b', [commit(10)], true, onDue).length, 1, 'one write is no stream: sent at once')
  clock.advance(3)
  hold.appended()
  assert.equal(hold.take('b', [commit(11)], true, onDue), [], 'two groups 3 ms apart: held')
  clock.advance(2)
  assert.equal(hold.take('b', [commit(12)], true, onDue), [], 'a second commit joins the first')
  assert.equal(hold.take('c', [commit(12)], false, onDue).length, 1, 'a follower or candidate holds nothing')
  clock.advance(1)
  assert.equal(due.map(d => d.messages.map(m => m.commit)), [[11, 12]], 'both went in order when the next write was due, 3 ms after the first was held')
  assert.is(due[0]!.at, 6)
  // Writes further apart than the hold: held for the hold only.
  clock.advance(holdMs * 2)
  hold.appended()
  assert.equal(hold.take('b', [commit(13)], true, onDue), [])
  clock.advance(holdMs)
  assert.is(due.length, 2)
  assert.is(due[1]!.at - due[0]!.at, holdMs * 3, 'held for the hold, not the gap')
  // Taken by the next message before the deadline: sent with it, first, and the timer is off.
  hold.appended()
  assert.equal(hold.take('b', [commit(14)], true, onDue), [])
  const next: Message = { type: 'heartbeat', from: 'a', to: 'b', term: 2, commit: 14 }
  assert.equal(hold.take('b', [next], true, onDue).map(m => m.type), ['append', 'heartbeat'])
  clock.advance(holdMs * 2)
  assert.is(due.length, 2, 'nothing went twice')
  assert.is(hold.size, 0)
  // Bounded: past the per-peer maximum, everything held goes at once.
  hold.appended()
  for (let i = 0; i < limits.raftCommitHoldMessagesPerPeerMax; i++) assert.equal(hold.take('b', [commit(20 + i)], true, onDue), [])
  assert.is(hold.take('b', [commit(99)], true, onDue).length, limits.raftCommitHoldMessagesPerPeerMax + 1)
  // Far apart: no stream, nothing held.
  clock.advance(limits.raftCommitHoldStreamGapMsMax + 1)
  hold.appended()
  assert.equal(hold.take('b', [commit(100)], true, onDue).length, 1)
  hold.clear()
})

test.run()
