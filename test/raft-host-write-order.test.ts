/**
 * What RaftHost sends and applies while its own disk write is still under way: a leader's
 * appends go out before its log write finishes (its followers write in parallel), but its
 * commit waits for that write; a follower's acknowledgement waits for its write; and a Ready
 * that moves only the commit index writes nothing of its own.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { CommandResult, ModelCommand } from '../runtime/model/model-types.ts'
import { decode } from '../runtime/codec.ts'
import { raftHardStateKey, raftLogPrefix } from '../runtime/raft/durable-raft-storage.ts'
import type { ModelRaftHost } from '../runtime/model/model-state-machine.ts'
import type { Message, NodeId } from '../runtime/raft/raft-types.ts'
import type { StorageOperation, WriteOptions } from '../runtime/storage.ts'
import { SimControllerGroup } from '../sim/sim-controller-group.ts'
import { Simulation } from '../sim/simulation.ts'
import { SimStorageWrapper } from './support/sim-storage-wrapper.ts'
import type { Deferral } from '../runtime/deferral.ts'

const admin = { kind: 'user', name: 'admin' } as const
const addMachine = (requestId: string): ModelCommand => ({ type: 'add-machine', requestId, proposer: admin })

/** A storage whose next batch matching a rule is held until released (the write itself happens then). */
class HoldableStorage extends SimStorageWrapper {
  #rule: ((operations: readonly StorageOperation[], options: WriteOptions) => boolean) | undefined
  #release: (() => void) | undefined
  held = false

  holdNext (rule: (operations: readonly StorageOperation[], options: WriteOptions) => boolean): void {
    this.#rule = rule
  }

  release (): void {
    this.held = false
    this.#release?.()
    this.#release = undefined
  }

  override async batch (operations: readonly StorageOperation[], options: WriteOptions): Promise<void> {
    if (this.#rule?.(operations, options) === true) {
      this.#rule = undefined
      this.held = true
      await new Promise<void>(resolve => { this.#release = resolve })
    }
    await this.inner.batch(operations, options)
  }
}

const writesLogEntry = (operations: readonly StorageOperation[]): boolean => operations.some(op => op.type === 'put' && op.key.startsWith(raftLogPrefix))

interface Sent { from: NodeId, message: Message }

async function group (sendTimeoutMs?: number, deferLeaderWrite?: Deferral): Promise<{ g: SimControllerGroup, stores: Map<NodeId, HoldableStorage>, sent: Sent[], leader: ModelRaftHost }> {
  const stores = new Map<NodeId, HoldableStorage>()
  const sent: Sent[] = []
  const g = await SimControllerGroup.create(new Simulation({ seed: 3 }), {
    size: 3,
    hostOptions: id => {
      const store = new HoldableStorage()
      stores.set(id, store)
      return { storage: store, ...(sendTimeoutMs === undefined ? {} : { sendTimeoutMs }), ...(deferLeaderWrite === undefined ? {} : { deferLeaderWrite }) }
    },
    onRaftSend: (from, messages) => { for (const message of messages) sent.push({ from, message }) }
  })
  assert.ok(await g.runUntil(() => g.leader() !== undefined, 5_000), 'a leader')
  const leader = g.leader()!
  const warm = await settled(g, leader.propose(addMachine('warm-up')))
  assert.ok(warm.done && warm.result?.ok === true, 'the warm-up write applied')
  return { g, stores, sent, leader }
}

/** Tracks a proposal's outcome as the group runs. */
async function settled (g: SimControllerGroup, promise: Promise<CommandResult>, ms = 1_000): Promise<{ done: boolean, result?: CommandResult, error?: unknown }> {
  const outcome: { done: boolean, result?: CommandResult, error?: unknown } = { done: false }
  promise.then(result => { outcome.done = true; outcome.result = result }, (error: unknown) => { outcome.done = true; outcome.error = error })
  await g.runUntil(() => outcome.done, ms, 1)
  return outcome
}

test('a leader sends its appends while its own log write is under way, but does not commit before that write', async () => {
  const { g, stores, sent, leader } = await group()
  const store = stores.get(leader.id)!
  store.holdNext((operations, options) => options.sync && writesLogEntry(operations))
  const before = sent.length
  const outcome = { done: false }
  const proposal = leader.propose(addMachine('held-at-leader'))
  proposal.then(() => { outcome.done = true }, () => { outcome.done = true })
  assert.ok(await g.runUntil(() => store.held, 100, 1), 'the leader\'s write is held')
  await g.runFor(20)
  const appends = sent.slice(before).filter(s => s.from === leader.id && s.message.type === 'append' && (s.message.entries?.length ?? 0) > 0)
  assert.is(appends.length >= 2, true, `appends to both followers while the leader's write is held: ${appends.length}`)
  const acks = sent.slice(before).filter(s => s.from !== leader.id && s.message.type === 'append-response' && s.message.reject !== true)
  assert.is(acks.length >= 2, true, 'both followers acknowledged')
  assert.is(outcome.done, false, 'not answered before the leader\'s own write finished')
  store.release()
  const after = await settled(g, proposal)
  assert.ok(after.done && after.result?.ok === true, `applied once the write finished: ${String(after.error)}`)
  await g.stop()
})

test('a leader given deferLeaderWrite starts its own write only when the deferral runs, after its appends went out, and commits only after that write', async () => {
  // The deferral is in the test's hands: a start waits here until the test runs it.
  const starts: Array<() => void> = []
  let deferring = false
  const { g, stores, sent, leader } = await group(undefined, start => { if (deferring) starts.push(start); else start() })
  const store = stores.get(leader.id)!
  let leaderLogWrites = 0
  store.holdNext((operations, options) => { if (options.sync && writesLogEntry(operations)) leaderLogWrites++; return false })
  deferring = true
  const before = sent.length
  const outcome = { done: false }
  const proposal = leader.propose(addMachine('deferred-at-leader'))
  proposal.then(() => { outcome.done = true }, () => { outcome.done = true })
  assert.ok(await g.runUntil(() => starts.length > 0, 100, 1), 'the leader deferred a write')
  await g.runFor(20)
  const appends = sent.slice(before).filter(s => s.from === leader.id && s.message.type === 'append' && (s.message.entries?.length ?? 0) > 0)
  assert.is(appends.length >= 2, true, `appends to both followers before the leader's write started: ${appends.length}`)
  const acks = sent.slice(before).filter(s => s.from !== leader.id && s.message.type === 'append-response' && s.message.reject !== true)
  assert.is(acks.length >= 2, true, 'both followers acknowledged')
  assert.is(leaderLogWrites, 0, 'the leader\'s log write has not started')
  assert.is(outcome.done, false, 'not answered before the leader\'s own write started and finished')
  deferring = false
  // Only the leader's one Ready with entries waits; whatever else it writes runs at once.
  assert.is(starts.length, 1, 'one deferred write')
  starts.shift()!()
  const after = await settled(g, proposal)
  assert.ok(after.done && after.result?.ok === true, `applied once the write finished: ${String(after.error)}`)
  assert.is(leaderLogWrites, 1, 'the leader wrote the entry when the deferral ran')
  await g.stop()
})

test('a follower acknowledges an append only after its write of it finished', async () => {
  const { g, stores, sent, leader } = await group()
  const follower = g.ids.find(id => id !== leader.id)!
  const store = stores.get(follower)!
  store.holdNext((operations, options) => options.sync && writesLogEntry(operations))
  const before = sent.length
  const proposal = leader.propose(addMachine('held-at-follower'))
  assert.ok(await g.runUntil(() => store.held, 100, 1), 'the follower\'s write is held')
  await g.runFor(20)
  const lastIndex = leader.status().lastIndex
  const acked = (): boolean => sent.slice(before).some(s => s.from === follower && s.message.type === 'append-response' && s.message.reject !== true && (s.message.index ?? 0) >= lastIndex)
  assert.is(acked(), false, 'no acknowledgement while the write is held')
  store.release()
  assert.ok(await g.runUntil(acked, 100, 1), 'acknowledged after the write')
  assert.ok((await settled(g, proposal)).result?.ok === true)
  await g.stop()
})

test('a Ready that only moves the commit index writes nothing: the commit index goes with the next batch and at a graceful stop', async () => {
  // The commit index is volatile state (Raft thesis §3.8): a restart learns it again from
  // the leader, so a Ready that moves nothing else costs no write of its own (issue 28),
  // and its entries are applied and answered without waiting on any disk.
  const { g, stores, leader } = await group()
  const store = stores.get(leader.id)!
  store.holdNext((operations, options) => !options.sync && !writesLogEntry(operations))
  const outcome = await settled(g, leader.propose(addMachine('commit-only')), 200)
  assert.ok(outcome.done && outcome.result?.ok === true, `answered: ${String(outcome.error)}`)
  await g.runFor(50)
  assert.is(store.held, false, 'no write of the commit index alone, on the leader')
  for (const id of g.ids) assert.is(stores.get(id)!.held, false)
  const stored = async (id: NodeId): Promise<number> => (decode((await stores.get(id)!.get(raftHardStateKey))!, 'test') as { commit: number }).commit
  const applied = leader.appliedIndex
  assert.ok(await stored(leader.id) < applied, 'the latest commit index is not on disk yet')
  // The next entry's synced batch carries the commit index as it was before that entry.
  const next = await settled(g, leader.propose(addMachine('next')), 200)
  assert.ok(next.done && next.result?.ok === true)
  assert.ok(await stored(leader.id) >= applied, `written with the next entry: ${await stored(leader.id)} < ${applied}`)
  // A graceful stop writes the latest.
  const last = leader.appliedIndex
  await g.stop()
  assert.is(await stored(leader.id), last, 'written at the graceful stop')
})

test('an idle follower answers the leader\'s heartbeats on the leader\'s own requests, sending none of its own', async () => {
  const { g, sent, leader } = await group()
  const followers = g.ids.filter(id => id !== leader.id)
  const requestsSent = (id: string): number => g.network.transport(id).counters().requestsSent
  const before = followers.map(requestsSent)
  const from = sent.length
  await g.runFor(2_000)
  const answers = sent.slice(from).filter(s => s.from !== leader.id && s.message.type === 'heartbeat-response')
  assert.ok(answers.length >= 2 * 10, `both followers answered heartbeats: ${answers.length}`)
  assert.equal(followers.map(requestsSent), before, 'every answer rode on the leader\'s request')
  assert.is(leader.status().role, 'leader', 'the leader heard its followers and kept leading')
  await g.stop()
})

/** A synced write of a vote this controller casts for another (not its own candidacy). */
const votesForAnother = (id: NodeId) => (operations: readonly StorageOperation[], options: WriteOptions): boolean => options.sync && operations.some(op => {
  if (op.type !== 'put' || op.key !== raftHardStateKey) return false
  const vote = (decode(op.value, 'test') as { vote?: string }).vote
  return vote !== undefined && vote !== '' && vote !== id
})

test('a voter whose synced write outlasts the candidate\'s request sends its vote as a request of its own', async () => {
  // The answer a held request carries is read only while its sender waits (the send
  // timeout, here 40 ms). A vote whose write took longer went onto an answer the candidate
  // had given up on, and the election was lost for a term; held past half the timeout,
  // the vote now travels on its own request and the candidate wins the term it started.
  const sendTimeoutMs = 40
  const { g, stores, leader } = await group(sendTimeoutMs)
  const survivors = g.ids.filter(id => id !== leader.id)
  for (const id of survivors) stores.get(id)!.holdNext(votesForAnother(id))
  const requestsSent = (id: string): number => g.network.transport(id).counters().requestsSent
  g.crash(g.indexOf(leader.id))
  const voter = (): NodeId | undefined => survivors.find(id => stores.get(id)!.held)
  assert.ok(await g.runUntil(() => voter() !== undefined, 5_000, 1), 'a survivor\'s vote is held')
  const v = voter()!
  const candidate = survivors.find(id => id !== v)!
  const campaignTerm = g.host(g.indexOf(candidate))!.status().term
  await g.runFor(sendTimeoutMs + 20)
  const before = requestsSent(v)
  stores.get(v)!.release()
  assert.ok(await g.runUntil(() => g.leader() !== undefined, 1_000, 1), 'a new leader')
  assert.is(g.leader()!.id, candidate, 'the candidate won')
  assert.is(g.leader()!.status().term, campaignTerm, 'in the term it campaigned in, with the held vote')
  assert.ok(requestsSent(v) > before, 'the vote went as the voter\'s own request')
  await g.stop()
})

test.run()
