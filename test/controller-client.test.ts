/**
 * Change notices and the machine agent's link to the controllers (ControllerClient) on
 * the simulated network:
 * a committed change reaches the machine's units through its view watch, with the
 * change notice after it and no more than one batched fetch;
 * a notice lost to a partition is made good by the next fetch; notices from anyone but a
 * controller are rejected; a machine agent cannot read another machine's units.
 */
import '../runtime/polyfill.ts'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { changeTopic } from '../actors/controller/change-notices.ts'
import { controllerApiProtocol, type ApplicationStatusReply, type MachineModelReply } from '../actors/controller/controller-api.ts'
import { controllerProposeProtocol } from '../actors/controller/model-replica.ts'
import { ControllerClient } from '../actors/machine/controller-client.ts'
import { firstControllerIndex } from '../actors/machine/view-watch.ts'
import { limits } from '../runtime/limits.ts'
import { entityTag } from '../runtime/model/model-apply.ts'
import { readerOf, recallRequest } from '../runtime/model/model-draft.ts'
import { tableGet } from '../runtime/model/table.ts'
import { remoteStateFor } from '../runtime/model/remote-state-view.ts'
import type { RemoteState } from '../runtime/unit-remote-state.ts'
import { decode, encode } from '../runtime/codec.ts'
import type { Entity, ModelCommand } from '../runtime/model/model-types.ts'
import type { Transport } from '../runtime/transport.ts'
import { SimControllerGroup } from '../sim/sim-controller-group.ts'
import { Simulation } from '../sim/simulation.ts'

const admin = { kind: 'user', name: 'admin' } as const
const modelUuid = 'model-1'
const identify = (peer: string): Entity | undefined => /^machine-\d+$/.test(peer) ? { kind: 'machine', id: peer.slice('machine-'.length) } : undefined

async function setup (): Promise<{ group: SimControllerGroup, submit: (body: Record<string, unknown>) => Promise<void> }> {
  const group = await SimControllerGroup.create(new Simulation({ seed: 3 }), { size: 3, hostOptions: () => ({ agents: { modelUuid, identify } }) })
  assert.ok(await group.runUntil(() => group.leader() !== undefined, 3_000))
  let n = 0
  const submit = async (body: Record<string, unknown>): Promise<void> => {
    let outcome: { ok: boolean, error?: string } | undefined
    group.leaderNode()!.submit({ ...body, requestId: `r${++n}`, proposer: admin } as unknown as ModelCommand).then(r => { outcome = r }, (e: unknown) => { outcome = { ok: false, error: String(e) } })
    assert.ok(await group.runUntil(() => outcome !== undefined, 5_000), 'command answered')
    assert.ok(outcome!.ok, outcome!.error)
  }
  await submit({ type: 'add-machine' })
  await submit({ type: 'add-machine' })
  await submit({ type: 'add-charm', url: 'local:web-0', hash: 'ab'.repeat(8), metadata: { name: 'web', config: { title: { type: 'string', default: 'x' } } } })
  await submit({ type: 'deploy', application: 'web', charm: 'local:web-0', config: {}, constraints: {}, numUnits: 3, placement: ['0', '0', '1'] })
  return { group, submit }
}

/**
 * A machine agent's link as its unit agents use it: the ControllerClient's view, with
 * each unit's remote state projected from it and reported when it changes.
 */
function watchMachine (group: SimControllerGroup, machine: string, onChange: (unit: string, state: RemoteState | undefined) => void, catchUpMs?: number): ControllerClient {
  const client = new ControllerClient({
    transport: group.network.transport(`machine-${machine}`),
    clock: group.sim.clock,
    modelUuid,
    machine,
    controllers: group.ids,
    ...(catchUpMs === undefined ? {} : { catchUpMs })
  })
  const last = new Map<string, string>()
  client.onChange(() => {
    const view = client.model()
    for (const unit of readerOf(view).machine(machine)?.units ?? []) {
      const state = remoteStateFor(view, unit, group.sim.clock.now())
      const encoded = JSON.stringify(state)
      if (last.get(unit) === encoded) continue
      last.set(unit, encoded)
      onChange(unit, state)
    }
  })
  client.start()
  return client
}

test('a change reaches the units of a machine through its watch, and no notice while it is healthy; a partition is caught up', async () => {
  const { group, submit } = await setup()
  const seen = new Map<string, string>()
  const watcher = watchMachine(group, '0', (unit, state) => { seen.set(unit, state?.configHash ?? 'gone') }, 5_000)
  assert.ok(await group.runUntil(() => seen.size === 2, 1_000), 'the initial view')
  assert.equal([...seen.keys()].sort(), ['web/0', 'web/1'], 'only the units of machine 0')
  const before = seen.get('web/0')!
  // A watch is known to be up once answered: at the end of its first hold at the latest.
  assert.ok(await group.runUntil(() => watcher.watch.healthy, limits.machineWatchHoldMs + 1_000), 'the watch is up')
  const fetches = watcher.counters.fetches
  const notices = watcher.counters.notices
  const published = group.leaderNode()!.noticesPublished
  await submit({ type: 'set-config', application: 'web', config: { title: 'y' } })
  assert.ok(await group.runUntil(() => seen.get('web/0') !== before && seen.get('web/1') !== before, 500), 'the change arrived well before the catch-up')
  // The leader still announces the change, limits.changeNoticeDelayMs after it, but an
  // agent whose watch is healthy does not listen: the watch brought it already.
  assert.ok(await group.runUntil(() => group.leaderNode()!.noticesPublished > published, limits.changeNoticeDelayMs + 500), 'the notice was published')
  await group.runFor(500)
  assert.is(watcher.counters.notices, notices, 'no notice taken while the watch is healthy')
  assert.ok(watcher.counters.fetches - fetches <= 2, `fetches after one change: ${watcher.counters.fetches - fetches}`)

  // Cut off while the next change commits: no notice arrives; the catch-up fetch brings it.
  group.network.isolate('machine-0')
  const mid = seen.get('web/0')!
  await submit({ type: 'set-config', application: 'web', config: { title: 'z' } })
  await group.runFor(1_000)
  assert.is(seen.get('web/0'), mid, 'nothing arrives while isolated')
  group.network.heal()
  assert.ok(await group.runUntil(() => seen.get('web/0') !== mid, 6_000), 'caught up after the partition healed')
  watcher.stop()
  await group.stop()
})

test('a watch held by a controller cut off from its group ends once it has no leader, and the agent moves on to a live one', async () => {
  const { group, submit } = await setup()
  const seen = new Map<string, string>()
  // No periodic catch-up within the test: only the watch (or a notice while it is down) can bring the change.
  const watcher = watchMachine(group, '0', (unit, state) => { seen.set(unit, state?.configHash ?? 'gone') }, 600_000)
  assert.ok(await group.runUntil(() => watcher.watch.healthy && seen.size === 2, limits.machineWatchHoldMs + 1_000), 'the watch is up with the initial view')
  const holder = group.ids[firstControllerIndex('0', group.ids.length)]!
  const others = group.ids.filter(id => id !== holder)
  // The holder keeps its link to the agent and loses the group: it applies nothing more,
  // and the agent, which hears no notice while its watch is healthy, would not know.
  group.network.bridge(others, [holder], 'machine-0')
  assert.ok(await group.runUntil(() => group.leaderNode() !== undefined && group.leaderNode()!.id !== holder, 5_000), 'the others lead without the holder')
  const failures = watcher.watch.counters.failures
  const before = seen.get('web/0')!
  await submit({ type: 'set-config', application: 'web', config: { title: 'cut-off' } })
  const graceMs = limits.machineWatchLeaderlessElectionTimeouts * 10 * 10
  // Well inside the watch's hold (limits.machineWatchHoldMs), which alone would end it otherwise.
  assert.ok(await group.runUntil(() => seen.get('web/0') !== before, 2 * graceMs + limits.machineWatchRetryMs + 1_000), 'the change arrived through another controller')
  assert.ok(watcher.watch.counters.failures > failures, 'the cut-off controller ended the watch')
  assert.ok(await group.runUntil(() => watcher.watch.healthy, 1_000), 'the watch is up again, elsewhere')
  watcher.stop()
  await group.stop()
})

test('an agent whose watch is down listens to the notices, and a notice makes it fetch', async () => {
  const { group, submit } = await setup()
  // Every controller's watch fails for this agent (its requests never get there); fetches still do.
  const inner = group.network.transport('machine-0')
  const transport: Transport = {
    peerId: inner.peerId,
    subscribe: (topic, onMessage) => inner.subscribe(topic, onMessage),
    setTopicValidator: (topic, validator) => { inner.setTopicValidator(topic, validator) },
    publish: async (topic, data) => { await inner.publish(topic, data) },
    handle: (protocol, handler) => { inner.handle(protocol, handler) },
    unhandle: protocol => { inner.unhandle(protocol) },
    request: async (to, protocol, data, options) => {
      if ((decode(data, 'test') as { op?: unknown }).op === 'machine-watch') throw new Error('test: machine-watch dropped')
      return await inner.request(to, protocol, data, options)
    },
    connectedPeers: () => inner.connectedPeers(),
    counters: () => inner.counters(),
    stop: async () => { await inner.stop() }
  }
  const client = new ControllerClient({ transport, clock: group.sim.clock, modelUuid, machine: '0', controllers: group.ids, catchUpMs: 600_000 })
  client.start()
  assert.ok(await group.runUntil(() => client.model().revision > 0, 1_000), 'the first view, fetched')
  await group.runFor(1_000)
  assert.not.ok(client.watch.healthy, 'the watch is down')
  const fetches = client.counters.fetches
  await submit({ type: 'set-config', application: 'web', config: { title: 'noticed' } })
  const target = group.leaderNode()!.host.state().revision
  assert.ok(await group.runUntil(() => client.model().revision >= target, limits.changeNoticeDelayMs + 1_000), 'the change arrived long before the catch-up')
  assert.ok(client.counters.notices > 0, 'by a notice')
  assert.ok(client.counters.fetches > fetches, 'and a fetch')
  client.stop()
  await group.stop()
})

test('a fetch that a controller cannot answer goes on to the next controller at once, not after the retry period', async () => {
  const { group } = await setup()
  // The first controller asked is one that is gone; the view still arrives well inside the 2 s retry period.
  // (Listening for another model's notices: a notice would also start a fetch, from the next controller.)
  // Where machine 0's agent asks first (its id's hash over the four controllers) is the gone one.
  const controllers = [...group.ids]
  controllers.splice(firstControllerIndex('0', group.ids.length + 1), 0, 'c-gone')
  const client = new ControllerClient({ transport: group.network.transport('machine-0'), clock: group.sim.clock, modelUuid: 'no-notices', machine: '0', controllers })
  const started = group.sim.clock.now()
  let fetchedAt: number | undefined
  client.ready().then(() => { fetchedAt = group.sim.clock.now() }, () => {})
  client.start()
  assert.ok(await group.runUntil(() => fetchedAt !== undefined, 1_000, 5), 'the first view within 1 s')
  assert.ok(fetchedAt! - started < 500, `first view after ${fetchedAt! - started} ms`)
  assert.ok(client.counters.fetches >= 2, 'the gone controller was asked first')
  client.stop()
  await group.stop()
})

test('notices from a non-controller are rejected; a machine agent cannot read another machine', async () => {
  const { group } = await setup()
  const watcher = watchMachine(group, '0', () => {})
  await group.runFor(500)
  const notices = watcher.counters.notices
  const intruder = group.network.transport('machine-1')
  await intruder.publish(changeTopic(modelUuid), encode({ v: 1, revision: 10_000 }, 'test'))
  await group.runFor(200)
  assert.is(watcher.counters.notices, notices, 'the forged notice was not delivered')
  assert.ok(group.network.penalty('machine-1') > 0, 'and its sender was penalised')

  let reply: MachineModelReply | undefined
  intruder.request(group.leader()!.id, controllerApiProtocol, encode({ op: 'machine-model', machine: '0' }, 'test'), { timeoutMs: 1_000 })
    .then(bytes => { reply = decode(bytes, 'test') as MachineModelReply }, () => {})
  assert.ok(await group.runUntil(() => reply !== undefined, 2_000))
  assert.equal(reply!.ok, false)
  assert.match(reply!.ok ? '' : reply!.error, /permission denied: peer "machine-1" may not read machine "0"/)
  watcher.stop()
  await group.stop()
})

test('status-get --application through the client: the leader\'s machine gets every unit\'s status; other machines and non-leaders are refused with one line', async () => {
  const { group } = await setup()
  let claimed: { ok: boolean, error?: string } | undefined
  group.leaderNode()!.submit({ type: 'claim-leadership', application: 'web', unit: 'web/0', now: Math.floor(group.sim.clock.now()), durationMs: 60_000, requestId: 'lease', proposer: { kind: 'unit', name: 'web/0' } } as unknown as ModelCommand)
    .then(r => { claimed = r }, (e: unknown) => { claimed = { ok: false, error: String(e) } })
  assert.ok(await group.runUntil(() => claimed !== undefined, 5_000) && claimed!.ok, claimed?.error)
  const client = (machine: string): ControllerClient => new ControllerClient({ transport: group.network.transport(`machine-${machine}`), clock: group.sim.clock, modelUuid, machine, controllers: group.ids })
  const ask = async (machine: string, unit: string): Promise<ApplicationStatusReply> => {
    let reply: ApplicationStatusReply | undefined
    void client(machine).applicationStatus(unit).then(r => { reply = r })
    assert.ok(await group.runUntil(() => reply !== undefined, 10_000), 'answered')
    return reply!
  }
  const leader = await ask('0', 'web/0')
  assert.ok(leader.ok, leader.ok ? '' : leader.error)
  assert.equal(leader.ok ? [Object.keys(leader.units), leader.application, leader.omitted] : [], [['web/0', 'web/1', 'web/2'], null, 0])
  // web/2 is machine 1's: asking for web/0 from there, or for web/2 (no leader), is refused.
  for (const [machine, unit] of [['1', 'web/0'], ['1', 'web/2'], ['0', 'web/1']] as const) {
    const reply = await ask(machine, unit)
    assert.not.ok(reply.ok)
    assert.match(reply.ok ? '' : reply.error, new RegExp(`^controller api: permission denied: peer "machine-${machine}" may not read the application status for unit "${unit}"$`))
  }
  await group.stop()
})

test('submitting through a controller: callers propose only as themselves (a machine agent also for its units)', async () => {
  const { group } = await setup()
  const forward = async (from: string, body: Record<string, unknown>): Promise<{ ok: boolean, result?: { ok: boolean }, message?: string }> => {
    let reply: { ok: boolean, result?: { ok: boolean }, message?: string } | undefined
    group.network.transport(from).request(group.leader()!.id, controllerProposeProtocol, encode({ requestId: `f-${from}-${JSON.stringify(body).length}`, ...body }, 'test'), { timeoutMs: 2_000 })
      .then(bytes => { reply = decode(bytes, 'test') as typeof reply }, () => {})
    assert.ok(await group.runUntil(() => reply !== undefined, 3_000), 'answered')
    return reply!
  }
  const status = (unit: string, proposer: Entity): Record<string, unknown> => ({ type: 'set-unit-status', unit, status: 'active', message: 'ok', now: 1, proposer })
  const mine = await forward('machine-0', status('web/0', { kind: 'unit', name: 'web/0' }))
  assert.ok(mine.ok && mine.result?.ok === true, JSON.stringify(mine))
  const notMine = await forward('machine-0', status('web/2', { kind: 'unit', name: 'web/2' }))
  assert.not.ok(notMine.ok)
  assert.match(notMine.message ?? '', /permission denied: peer "machine-0" may not propose as \{"kind":"unit","name":"web\/2"\}/)
  const asAdmin = await forward('machine-1', { type: 'add-machine', proposer: admin })
  assert.match(asAdmin.message ?? '', /may not propose as/)
  const stranger = await forward('stranger', { type: 'add-machine', proposer: admin })
  assert.match(stranger.message ?? '', /peer "stranger" is not known to this model/)
  await group.stop()
})

const unitStatus = (unit: string, message: string, requestId: string): ModelCommand =>
  ({ type: 'set-unit-status', unit, status: 'active', message, now: 1, requestId, proposer: { kind: 'unit', name: unit } }) as unknown as ModelCommand
const workloadMessage = (group: SimControllerGroup, unit: string): string | undefined =>
  (tableGet(group.leader()!.state().units, unit) as unknown as { workload?: { message?: string } } | undefined)?.workload?.message

test('a machine agent\'s unit agents share round trips: 40 concurrent submits go in one batched request, each with its own result', async () => {
  const { group } = await setup()
  const client = watchMachine(group, '0', () => {})
  const before = { ...client.counters }
  const outcomes = new Map<number, { ok: true, index: number, committed: boolean } | { ok: false, error: string }>()
  for (let i = 0; i < 40; i++) {
    client.submit(unitStatus(i % 2 === 0 ? 'web/0' : 'web/1', `m${i}`, `batch-${i}`))
      .then(r => { outcomes.set(i, { ok: true, index: r.index, committed: r.ok }) }, (e: unknown) => { outcomes.set(i, { ok: false, error: String(e) }) })
  }
  // A unit on another machine, in the same burst: refused on its own, the others commit.
  let forbidden: string | undefined
  client.submit(unitStatus('web/2', 'not mine', 'batch-forbidden')).then(() => { forbidden = 'committed' }, (e: unknown) => { forbidden = String(e) })
  assert.ok(await group.runUntil(() => outcomes.size === 40 && forbidden !== undefined, 5_000), 'every submit answered')
  const requests = client.counters.submitRequests - before.submitRequests
  assert.is(client.counters.commandsSubmitted - before.commandsSubmitted, 41)
  assert.ok(requests <= Math.ceil(41 / limits.apiBatchCommandsMax) + 1, `requests for 41 commands: ${requests}`)
  // The leader commits the batch as Raft entries of at most limits.modelEntryCommandsMax
  // commands (apply-batch), in submission order: here 32 at one index, 8 at the next.
  const indexes: number[] = []
  for (let i = 0; i < 40; i++) {
    const outcome = outcomes.get(i)!
    assert.ok(outcome.ok && outcome.committed, `command ${i}: ${JSON.stringify(outcome)}`)
    if (outcome.ok) indexes.push(outcome.index)
  }
  assert.equal(indexes, [...indexes].sort((a, b) => a - b), 'entries in submission order')
  assert.is(new Set(indexes).size, Math.ceil(40 / limits.modelEntryCommandsMax), 'one entry per limits.modelEntryCommandsMax commands, not one per command')
  assert.is(workloadMessage(group, 'web/0'), 'm38', 'in submission order')
  assert.is(workloadMessage(group, 'web/1'), 'm39')
  assert.match(forbidden!, /permission denied: peer "machine-0" may not propose as \{"kind":"unit","name":"web\/2"\}/)
  assert.is.not(workloadMessage(group, 'web/2'), 'not mine')
  client.stop()
  await group.stop()
})

test('a batch whose reply is lost is sent again with the same request ids, and each command applies once', async () => {
  const { group } = await setup()
  const client = watchMachine(group, '0', () => {})
  await group.runFor(200)
  const leader = group.leader()!.id
  const requests = client.counters.submitRequests
  // The batch commits, but its reply (and everything else to machine-0) is lost for a while.
  group.network.setLoss(1, { from: leader, to: 'machine-0' })
  const results: Array<{ ok: boolean, index: number }> = []
  for (let i = 0; i < 10; i++) client.submit(unitStatus('web/0', `r${i}`, `lost-${i}`)).then(r => { results.push(r) }, (e: unknown) => { results.push({ ok: false, index: -1 }); console.error(e) })
  await group.runFor(1_500)
  const committed = group.leader()!.state().revision
  assert.is(workloadMessage(group, 'web/0'), 'r9', 'the first batch committed')
  group.network.setLoss(0, { from: leader, to: 'machine-0' })
  assert.ok(await group.runUntil(() => results.length === 10, 20_000), 'every submit answered')
  assert.ok(results.every(r => r.ok), JSON.stringify(results))
  assert.is(new Set(results.map(r => r.index)).size, 1, 'the ten committed as one entry (apply-batch)')
  assert.ok(results.every(r => r.index <= committed), 'the retry answered with the first commit\'s results')
  assert.ok(client.counters.submitRequests - requests >= 2, 'the batch was sent again')
  client.stop()
  await group.stop()
})

test('a machine agent holds at most limits.apiBatchQueueMax unanswered commands, then refuses', async () => {
  const { group } = await setup()
  const client = new ControllerClient({ transport: group.network.transport('machine-0'), clock: group.sim.clock, modelUuid, machine: '0', controllers: group.ids })
  for (let i = 0; i < limits.apiBatchQueueMax; i++) client.submit(unitStatus('web/0', 'x', `q-${i}`)).catch(() => {})
  let refused: string | undefined
  await client.submit(unitStatus('web/0', 'x', 'q-over')).catch((e: unknown) => { refused = String(e) })
  assert.match(refused ?? '', /controller client: cannot submit "set-unit-status": 4096 commands already waiting, the maximum is 4096/)
  client.stop()
  await group.stop()
})

test('a batched propose request: each command authorised on its own; an oversized or malformed batch, or one sent to a follower, is refused whole', async () => {
  const { group } = await setup()
  type Reply = { ok: boolean, results?: Array<{ ok: boolean, result?: { ok: boolean }, name?: string, message?: string }>, name?: string, message?: string, leader?: string }
  const send = async (to: string, body: unknown): Promise<Reply> => {
    let reply: Reply | undefined
    group.network.transport('machine-0').request(to, controllerProposeProtocol, encode(body, 'test'), { timeoutMs: 2_000 })
      .then(bytes => { reply = decode(bytes, 'test') as Reply }, () => {})
    assert.ok(await group.runUntil(() => reply !== undefined, 3_000), 'answered')
    return reply!
  }
  const leader = group.leader()!.id
  const mixed = await send(leader, { batch: [unitStatus('web/0', 'mine', 'b1'), unitStatus('web/2', 'not mine', 'b2')] })
  assert.ok(mixed.ok, JSON.stringify(mixed))
  assert.is(mixed.results?.length, 2)
  assert.ok(mixed.results![0]!.ok && mixed.results![0]!.result?.ok === true, JSON.stringify(mixed.results![0]))
  assert.is(mixed.results![1]!.ok, false)
  assert.is(mixed.results![1]!.name, 'PermissionDeniedError')
  assert.match(mixed.results![1]!.message ?? '', /may not propose as \{"kind":"unit","name":"web\/2"\}/)
  assert.is(workloadMessage(group, 'web/0'), 'mine')
  assert.is.not(workloadMessage(group, 'web/2'), 'not mine')

  const oversized = Array.from({ length: limits.apiBatchCommandsMax + 1 }, (_, i) => unitStatus('web/0', 'too many', `over-${i}`))
  const tooMany = await send(leader, { batch: oversized })
  assert.not.ok(tooMany.ok)
  assert.is(tooMany.name, 'InvalidBatchError')
  assert.match(tooMany.message ?? '', /cannot accept batch from peer "machine-0": 65 commands exceed the maximum of 64/)
  for (const [body, why] of [[{ batch: 'x' }, /"batch" is not a list/], [{ batch: [] }, /the batch is empty/], [{ batch: [unitStatus('web/0', 'bad', 'bad-1'), 7] }, /entry 1 is not a command map/]] as const) {
    const reply = await send(leader, body)
    assert.not.ok(reply.ok)
    assert.match(reply.message ?? '', why)
  }
  await group.runFor(200)
  const remembered = (requestId: string): boolean => recallRequest(group.leader()!.state().requests, `${entityTag({ kind: 'unit', name: 'web/0' })} ${requestId}`) !== undefined
  assert.ok(remembered('b1'), 'a committed request is remembered')
  for (const requestId of [...oversized.map(c => c.requestId), 'bad-1']) assert.not.ok(remembered(requestId), `${requestId} of a refused batch committed`)
  assert.is(workloadMessage(group, 'web/0'), 'mine')

  const follower = group.ids.find(id => id !== leader)!
  const elsewhere = await send(follower, { batch: [unitStatus('web/0', 'via follower', 'f1')] })
  assert.not.ok(elsewhere.ok)
  assert.is(elsewhere.name, 'NotLeaderError')
  assert.is(elsewhere.leader, leader, 'with the leader to re-target')

  // The single form still works.
  const single = await send(leader, unitStatus('web/1', 'single', 's1'))
  assert.ok(single.ok && (single as { result?: { ok: boolean } }).result?.ok === true, JSON.stringify(single))
  assert.is(workloadMessage(group, 'web/1'), 'single')
  await group.stop()
})


test('a fetch no controller answers is asked again with twice the bound each round, up to limits.machineFetchTimeoutMaxMs', async () => {
  const { group } = await setup()
  // A starved host answers late rather than never: abandoning each read at the request
  // timeout and asking anew left 50 starting agents without a first view for minutes.
  const transport = group.network.transport('machine-0')
  const bounds: number[] = []
  const request = transport.request.bind(transport)
  transport.request = async (peer, protocol, data, options) => {
    if (protocol === controllerApiProtocol) bounds.push(options.timeoutMs!)
    return await request(peer, protocol, data, options)
  }
  const client = new ControllerClient({ transport, clock: group.sim.clock, modelUuid: 'no-notices', machine: '0', controllers: ['c-gone-1', 'c-gone-2'] })
  client.start()
  await group.runFor(30_000)
  assert.equal(bounds.slice(0, 10), [2_000, 2_000, 4_000, 4_000, 8_000, 8_000, limits.machineFetchTimeoutMaxMs, limits.machineFetchTimeoutMaxMs, limits.machineFetchTimeoutMaxMs, limits.machineFetchTimeoutMaxMs])
  client.stop()
  await group.stop()
})

test.run()
