/**
 * RaftSnapshots larger than one transport message (1 MiB) and than one codec frame
 * (16 MiB) travel in chunks and are stored in chunks, as the Raft paper's InstallSnapshot
 * RPC (offset, data, done) and etcd's snapshot sender (etcd-io/etcd
 * server/etcdserver/api/rafthttp/snapshot_sender.go, which streams the snapshot apart from
 * the message stream) do; before, such a snapshot was refused at the sender and a follower
 * behind the leader's compaction never caught up. Also the compaction rule of the Raft
 * dissertation §5.1.1: a large snapshot is retaken only once the log has outgrown it.
 */
import '../runtime/polyfill.ts'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { LevelStorage } from '../agent/level-storage.ts'
import { encode } from '../runtime/codec.ts'
import { limits } from '../runtime/limits.ts'
import { DurableRaftStorage, raftSnapshotKey } from '../runtime/raft/durable-raft-storage.ts'
import { RaftHost } from '../runtime/raft/raft-host.ts'
import type { Message, NodeId } from '../runtime/raft/raft-types.ts'
import type { EntryPosition, ReplicatedStateMachine } from '../runtime/raft/replicated-state-machine.ts'
import { SnapshotAssembler } from '../runtime/raft/snapshot-transfer.ts'
import { AgentClock } from '../sim/agent-clock.ts'
import { SimNetwork } from '../sim/sim-network.ts'
import { SimStorage } from '../sim/sim-storage.ts'
import { Simulation } from '../sim/simulation.ts'

const test = suite('raft snapshot transfer')

/** Past both the transport's message limit and the codec's frame. */
const ballastBytes = limits.codecInputBytesMax + 3 * limits.raftSnapshotChunkBytes + 123

/** A total, and a snapshot that carries it after `ballastBytes` of patterned ballast (checked on restore). */
class Ballast implements ReplicatedStateMachine<number, number, number> {
  #total = 0
  restored = 0
  encodeCommand (amount: number): Uint8Array { return new TextEncoder().encode(String(amount)) }
  apply (data: Uint8Array, _at: EntryPosition): number { this.#total += Number(new TextDecoder().decode(data)); return this.#total }
  skip (_at: EntryPosition): void {}
  snapshot (): Uint8Array {
    const total = new TextEncoder().encode(String(this.#total))
    const data = new Uint8Array(ballastBytes + total.byteLength)
    for (let i = 0; i < ballastBytes; i++) data[i] = i % 251
    data.set(total, ballastBytes)
    return data
  }

  restore (data: Uint8Array): void {
    if (data.length === 0) { this.#total = 0; return }
    assert.ok(data.byteLength > ballastBytes, 'the whole snapshot arrived')
    for (let i = 0; i < ballastBytes; i += 4093) assert.is(data[i], i % 251, `ballast byte ${i}`)
    this.#total = Number(new TextDecoder().decode(data.subarray(ballastBytes)))
    this.restored++
  }

  state (): number { return this.#total }
}

const ids: NodeId[] = ['n0', 'n1', 'n2']

class World {
  readonly sim = new Simulation({ seed: 3 })
  readonly network = new SimNetwork({ clock: this.sim.clock, random: this.sim.random('network') })
  readonly storages = new Map(ids.map(id => [id, new SimStorage()]))
  readonly hosts = new Map<NodeId, RaftHost<number, number, number>>()
  readonly machines = new Map<NodeId, Ballast>()

  async start (id: NodeId): Promise<RaftHost<number, number, number>> {
    const machine = new Ballast()
    const host = await RaftHost.start({
      id, peers: ids, stateMachine: machine, storage: this.storages.get(id)!, transport: this.network.transport(id),
      clock: new AgentClock(this.sim.clock), random: this.sim.random(`raft/${id}`), tickMs: 10, electionTicks: 10, heartbeatTicks: 2, snapshotEveryEntries: 4
    })
    this.hosts.set(id, host)
    this.machines.set(id, machine)
    return host
  }

  crash (id: NodeId): void {
    this.hosts.get(id)!.crash()
    this.network.crash(id)
    this.storages.get(id)!.crash()
    this.hosts.delete(id)
  }

  leader (): RaftHost<number, number, number> | undefined {
    return [...this.hosts.values()].find(host => host.role === 'leader')
  }

  async until (condition: () => boolean, ms: number): Promise<boolean> {
    const clock = this.sim.clock
    const until = clock.now() + ms
    while (!condition()) {
      if (clock.now() >= until) return false
      const due = clock.nextDueAt()
      if (due === undefined || due > until) clock.advanceTo(until)
      else clock.runNext()
      await new Promise(resolve => setImmediate(resolve))
    }
    return true
  }

  async add (amount: number): Promise<number> {
    assert.ok(await this.until(() => this.leader() !== undefined, 5_000), 'a leader')
    let outcome: { value: number } | { error: unknown } | undefined
    this.leader()!.propose(amount).then(value => { outcome = { value } }, (error: unknown) => { outcome = { error } })
    assert.ok(await this.until(() => outcome !== undefined, 5_000), `add ${amount} settled`)
    if ('error' in outcome!) throw outcome.error
    return outcome!.value
  }
}

test('a follower behind the compaction catches up from a RaftSnapshot of over 16 MiB sent in chunks', async () => {
  const world = new World()
  for (const id of ids) await world.start(id)
  assert.is(await world.add(1), 1)
  const follower = ids.find(id => world.hosts.get(id)!.role !== 'leader')!
  world.crash(follower)
  let total = 1
  for (let amount = 2; amount <= 6; amount++) total = await world.add(amount)
  const leader = world.leader()!
  assert.ok(leader.snapshotIndex > 1, 'the leader compacted into a large RaftSnapshot')

  // Stored in chunks: the head holds the metadata, no value is larger than one chunk.
  const storage = world.storages.get(leader.id)!
  const head = storage.durableGet(raftSnapshotKey)!
  assert.ok(head.byteLength < 1024, `the stored head is small (${head.byteLength} bytes)`)
  const reloaded = await DurableRaftStorage.load(storage)
  assert.is(reloaded.snapshot().data.byteLength, leader.persistedLog().snapshot().data.byteLength, 'the chunks read back whole')

  const restarted = await world.start(follower)
  assert.ok(await world.until(() => restarted.state() === total, 20_000), 'the restarted follower caught up')
  assert.is(restarted.snapshotsReceived, 1, 'from the leader\'s RaftSnapshot')
  assert.is(world.machines.get(follower)!.restored, 1)

  // Dissertation §5.1.1: the large snapshot is not retaken after every 4 entries of a few bytes.
  const taken = leader.snapshotIndex
  for (let amount = 7; amount <= 20; amount++) total = await world.add(amount)
  assert.is(leader.snapshotIndex, taken, 'no new RaftSnapshot while the log is far smaller than the last one')
  for (const host of world.hosts.values()) assert.ok(await world.until(() => host.state() === total, 5_000))
  for (const host of world.hosts.values()) await host.stop()
})

test('LevelDB keeps a chunked RaftSnapshot whole, and a smaller one after it drops the extra chunks', async () => {
  const root = mkdtempSync(join(tmpdir(), 'cantrip-snapshot-chunks-'))
  try {
    const storage = await LevelStorage.open(join(root, 'db'))
    const durable = await DurableRaftStorage.load(storage, { bootstrapVoters: ['a'] })
    const entries = [2, 3].map(index => ({ index, term: 1, type: 'normal' as const, data: new Uint8Array([index]) }))
    await durable.persistReady({ entries, committedEntries: [], messages: [], readStates: [], mustSync: true, hardState: { term: 1, vote: 'a', commit: 3 } })
    const big = new Uint8Array(3 * limits.raftSnapshotChunkBytes + 5).map((_, i) => i % 13)
    await durable.compact(2, { voters: ['a'] }, big)
    await storage.close()
    const reopened = await LevelStorage.open(join(root, 'db'))
    const again = await DurableRaftStorage.load(reopened)
    assert.equal(again.snapshot().data, big)
    assert.is(again.snapshot().metadata.index, 2)
    await again.compact(3, { voters: ['a'] }, new Uint8Array([7]))
    const left = await reopened.range({ gte: 'raft/snapshot-data/', lt: 'raft/snapshot-data/~', limit: 100 })
    assert.equal(left, [], 'the chunks of the larger snapshot are gone')
    assert.equal((await DurableRaftStorage.load(reopened)).snapshot().data, new Uint8Array([7]))
    await reopened.close()
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})

function chunkBody (message: Message, offset: number, bytes: number, chunk: Uint8Array): Uint8Array {
  return encode({ message, offset, bytes, chunk })
}

const header: Message = { type: 'snapshot', from: 'n0', to: 'n1', term: 3, snapshot: { metadata: { index: 9, term: 2, config: { voters: ids } }, data: new Uint8Array(0) } }

test('the assembler puts chunks together in order and refuses one that does not follow', () => {
  const size = limits.raftSnapshotChunkBytes
  const data = new Uint8Array(size + 10).map((_, i) => i % 7)
  const assembler = new SnapshotAssembler()
  assert.is(assembler.accept('n0', chunkBody(header, 0, data.byteLength, data.subarray(0, size))), undefined)
  assert.is(assembler.pending, 1)
  const whole = assembler.accept('n0', chunkBody(header, size, data.byteLength, data.subarray(size)))
  assert.equal(whole?.snapshot?.data, data)
  assert.is(whole?.snapshot?.metadata.index, 9)
  assert.is(assembler.pending, 0)

  assert.throws(() => assembler.accept('n0', chunkBody(header, size, data.byteLength, data.subarray(size))),
    (error: Error) => error.message === 'raft snapshot transfer: expected a chunk of RaftSnapshot 3/9/2/524298 from "n0" at offset 0 (no snapshot being assembled), got "offset 524288"')
  assert.throws(() => assembler.accept('n2', chunkBody(header, 0, data.byteLength, data.subarray(0, size))),
    (error: Error) => error.message === 'raft snapshot transfer: expected a snapshot message from "n2", got "snapshot from n0"')
  assert.throws(() => assembler.accept('n0', chunkBody(header, 0, limits.raftSnapshotBytesMax + 1, new Uint8Array(size))),
    (error: Error) => error.message === `raft snapshot transfer: expected a RaftSnapshot of at most ${limits.raftSnapshotBytesMax} bytes, got ${limits.raftSnapshotBytesMax + 1}`)
  assert.throws(() => assembler.accept('n0', chunkBody(header, 0, data.byteLength, data.subarray(0, 5))),
    (error: Error) => error.message === `raft snapshot transfer: expected a chunk of ${size} bytes at offset 0, got 5 bytes`)
})

test('the assembler holds at most raftSnapshotAssembliesMax snapshots at once', () => {
  const assembler = new SnapshotAssembler()
  const senders = Array.from({ length: limits.raftSnapshotAssembliesMax + 1 }, (_, i) => `s${i}`)
  const bytes = limits.raftSnapshotChunkBytes * 2
  for (const from of senders) assembler.accept(from, chunkBody({ ...header, from }, 0, bytes, new Uint8Array(limits.raftSnapshotChunkBytes)))
  assert.is(assembler.pending, limits.raftSnapshotAssembliesMax)
  // The oldest was dropped: its next chunk no longer follows anything.
  assert.throws(() => assembler.accept('s0', chunkBody({ ...header, from: 's0' }, limits.raftSnapshotChunkBytes, bytes, new Uint8Array(limits.raftSnapshotChunkBytes))))
  const last = senders[senders.length - 1]!
  assert.ok(assembler.accept(last, chunkBody({ ...header, from: last }, limits.raftSnapshotChunkBytes, bytes, new Uint8Array(limits.raftSnapshotChunkBytes))) !== undefined)
})

test.run()
