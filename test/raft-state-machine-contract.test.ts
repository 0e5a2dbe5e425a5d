/**
 * The replicated state-machine contract is opaque: RaftHost replicates a counter that
 * knows nothing of the model, on the simulator's transport, storage and clocks, through
 * log compaction, a crash that loses unsynced writes and a RaftSnapshot sent to the
 * restarted node. And runtime/raft imports nothing from runtime/model (issue 22).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { RaftHost } from '../runtime/raft/raft-host.ts'
import type { NodeId } from '../runtime/raft/raft-types.ts'
import type { EntryPosition, ReplicatedStateMachine } from '../runtime/raft/replicated-state-machine.ts'
import { AgentClock } from '../sim/agent-clock.ts'
import { SimNetwork } from '../sim/sim-network.ts'
import { SimStorage } from '../sim/sim-storage.ts'
import { Simulation } from '../sim/simulation.ts'

const test = suite('replicated state machine')

interface CounterState { total: number, applied: number, positions: EntryPosition[] }

/** Adds whole numbers; commands and snapshots are decimal text, nothing the host could read. */
class Counter implements ReplicatedStateMachine<number, number, CounterState> {
  #total = 0
  #applied = 0
  #positions: EntryPosition[] = []

  encodeCommand (amount: number): Uint8Array {
    return new TextEncoder().encode(`+${amount}`)
  }

  apply (data: Uint8Array, at: EntryPosition): number {
    this.#total += Number(new TextDecoder().decode(data).slice(1))
    this.#moveTo(at)
    return this.#total
  }

  skip (at: EntryPosition): void {
    this.#moveTo(at)
  }

  snapshot (): Uint8Array {
    return new TextEncoder().encode(`${this.#total}@${this.#applied}`)
  }

  restore (data: Uint8Array): void {
    const [total, applied] = data.length === 0 ? [0, 0] : new TextDecoder().decode(data).split('@').map(Number)
    this.#total = total!
    this.#applied = applied!
    this.#positions = []
  }

  state (): CounterState {
    return { total: this.#total, applied: this.#applied, positions: [...this.#positions] }
  }

  #moveTo (at: EntryPosition): void {
    assert.ok(at.index > this.#applied, `entry ${at.index} applied after ${this.#applied}`)
    this.#applied = at.index
    this.#positions.push(at)
  }
}

type CounterHost = RaftHost<number, number, CounterState>

const ids: NodeId[] = ['n0', 'n1', 'n2']

/** Three counter hosts on one simulation; `run` advances it one timer at a time. */
class World {
  readonly sim = new Simulation({ seed: 7 })
  readonly network = new SimNetwork({ clock: this.sim.clock, random: this.sim.random('network') })
  readonly storages = new Map(ids.map(id => [id, new SimStorage()]))
  readonly hosts = new Map<NodeId, CounterHost>()

  async start (id: NodeId): Promise<CounterHost> {
    const host = await RaftHost.start({
      id,
      peers: ids,
      stateMachine: new Counter(),
      storage: this.storages.get(id)!,
      transport: this.network.transport(id),
      clock: new AgentClock(this.sim.clock),
      random: this.sim.random(`raft/${id}`),
      tickMs: 10,
      electionTicks: 10,
      heartbeatTicks: 2,
      snapshotEveryEntries: 4
    })
    this.hosts.set(id, host)
    return host
  }

  crash (id: NodeId): void {
    this.hosts.get(id)!.crash()
    this.network.crash(id)
    this.storages.get(id)!.crash()
    this.hosts.delete(id)
  }

  leader (): CounterHost | undefined {
    return [...this.hosts.values()].find(host => host.role === 'leader')
  }

  async run (ms: number): Promise<void> {
    const clock = this.sim.clock
    const until = clock.now() + ms
    for (let due = clock.nextDueAt(); due !== undefined && due <= until; due = clock.nextDueAt()) {
      clock.runNext()
      await new Promise(resolve => setImmediate(resolve))
    }
    clock.advanceTo(until)
  }

  async until (condition: () => boolean, ms: number): Promise<boolean> {
    for (let waited = 0; !condition(); waited += 10) {
      if (waited >= ms) return false
      await this.run(10)
    }
    return true
  }

  /** Resolves `promise` by driving the simulation; fails the test if it does not settle in `ms`. */
  async settle<T> (promise: Promise<T>, ms: number): Promise<T> {
    let outcome: { value: T } | { error: unknown } | undefined
    promise.then(value => { outcome = { value } }, (error: unknown) => { outcome = { error } })
    assert.ok(await this.until(() => outcome !== undefined, ms), 'settled in time')
    if ('error' in outcome!) throw outcome.error
    return outcome!.value
  }

  async add (amount: number): Promise<number> {
    assert.ok(await this.until(() => this.leader() !== undefined, 2_000), 'a leader')
    return await this.settle(this.leader()!.propose(amount), 2_000)
  }
}

test('a counter replicates through RaftHost: results, reads, compaction, a crash and a RaftSnapshot', async () => {
  const world = new World()
  for (const id of ids) await world.start(id)
  let expected = 0
  for (let amount = 1; amount <= 6; amount++) {
    expected += amount
    assert.is(await world.add(amount), expected, 'propose resolves with the result apply returned')
  }
  const follower = ids.find(id => world.hosts.get(id)!.role !== 'leader')!
  const read = await world.settle(world.hosts.get(follower)!.read(), 2_000)
  assert.is(read.total, expected, 'a linearizable read on a follower sees every acknowledged add')

  world.crash(follower)
  for (let amount = 10; amount <= 15; amount++) {
    expected += amount
    assert.is(await world.add(amount), expected)
  }
  const leader = world.leader()!
  assert.ok(leader.snapshotIndex > 1, 'the leader compacted its log into a RaftSnapshot of the counter')
  assert.ok(leader.persistedLog().firstIndex() > 2, 'entries before the RaftSnapshot are gone')

  const restarted = await world.start(follower)
  assert.ok(await world.until(() => restarted.state().total === expected, 3_000), 'the restarted node caught up')
  assert.ok(restarted.snapshotsReceived >= 1, 'it caught up from the leader\'s RaftSnapshot')
  for (const host of world.hosts.values()) {
    assert.is(host.state().total, expected)
    assert.is(host.state().applied, host.appliedIndex, 'every committed entry, commands or not, reached the machine')
  }
  const tail = leader.state().positions
  for (let i = 1; i < tail.length; i++) assert.is(tail[i]!.index, tail[i - 1]!.index + 1, 'entries apply in log order, none skipped')
  for (const host of world.hosts.values()) await host.stop()
})

test('runtime/raft imports nothing from runtime/model', () => {
  const dir = new URL('../runtime/raft/', import.meta.url)
  const offenders: string[] = []
  for (const name of readdirSync(dir).filter(file => file.endsWith('.ts'))) {
    const text = readFileSync(new URL(name, dir), 'utf8')
    for (const match of text.matchAll(/from\s+'([^']+)'/g)) {
      if (match[1]!.includes('/model/')) offenders.push(`${name}: ${match[1]!}`)
    }
  }
  assert.equal(offenders, [])
})

test.run()
