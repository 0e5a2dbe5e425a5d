/**
 * The inspection stream of an agent (agent/inspect/): XState's inspect callback turned
 * into `@statelyai/inspect` wire messages with cantrip's fields, received through
 * Stately's own `createWebSocketReceiver`; late joiners get the current actors first;
 * a client that cannot keep up loses the oldest messages and is told how many; values
 * are sanitised; and a real `cantripd --role both --inspect 0 --inspect-log FILE` streams
 * its Raft role, unit and relation actors and logs them as JSONL.
 */
import '../runtime/polyfill.ts'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createWebSocketReceiver, type StatelyInspectionEvent } from '@statelyai/inspect'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { WebSocket } from 'ws'
import { createActor } from 'xstate'
import { relationMachine, type RelationInput } from '../actors/relation/relation-machine.ts'
import { AgentInspection, inspectUrlFile } from '../agent/inspect/agent-inspection.ts'
import type { InspectMessage } from '../agent/inspect/actor-inspection.ts'
import { parseInspectAddress } from '../agent/inspect/inspect-server.ts'
import { redacted, sanitise } from '../agent/inspect/sanitise-snapshot.ts'
import { limits } from '../runtime/limits.ts'
import { CantripdCluster, freePortRun, waitFor } from './support/cantripd-cluster.ts'

type Received = StatelyInspectionEvent & { agent?: string, actorKind?: string, name?: string, replay?: boolean, status?: string, targetRef?: string }

async function until (what: string, condition: () => boolean, ms = 10_000): Promise<void> {
  const end = performance.now() + ms
  while (!condition()) {
    if (performance.now() > end) throw new Error(`inspect test: timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

function relationInput (): { input: RelationInput } {
  return {
    input: {
      unit: 'kv/0',
      local: { id: 3, endpoint: 'cluster', remoteApplication: 'kv', peer: true, implicit: false, containerScoped: false, members: {}, applicationMembers: {} },
      remote: undefined,
      unitDying: false,
      leader: true
    }
  }
}

test('sanitise: secrets always redacted, databags and config values unless --inspect-data, everything JSON-safe', () => {
  const value = {
    secret: 'abc', bootstrapData: new Uint8Array(8), nested: { networkKey: 'k' },
    settings: { hostname: 'h', port: 1 }, parameters: { password: 'p' }, charmConfig: { 'port-base': 8000 },
    bytes: new Uint8Array(3), map: new Map([['a', 1]]), set: new Set([1, 2]), fn: () => 1, big: 10n, inf: Infinity
  }
  const safe = sanitise(value, { data: false }) as Record<string, unknown>
  assert.equal(safe.secret, redacted)
  assert.equal(safe.bootstrapData, redacted)
  assert.equal(safe.nested, { networkKey: redacted })
  assert.equal(safe.settings, { hostname: redacted, port: redacted })
  assert.equal(safe.parameters, { password: redacted })
  assert.equal(safe.charmConfig, { 'port-base': redacted })
  assert.equal(safe.bytes, '<3 bytes>')
  assert.equal(safe.map, { a: 1 })
  assert.equal(safe.set, [1, 2])
  assert.not.ok('fn' in safe)
  assert.is(safe.big, '10')
  assert.is(safe.inf, 'Infinity')
  const withData = sanitise(value, { data: true }) as Record<string, unknown>
  assert.equal(withData.settings, { hostname: 'h', port: 1 })
  assert.equal(withData.charmConfig, { 'port-base': 8000 })
  // Even with data: secrets stay behind.
  assert.equal(withData.parameters, { password: redacted })
  assert.equal(withData.secret, redacted)
  const cyclic: Record<string, unknown> = { a: 1 }
  cyclic.self = cyclic
  assert.equal(sanitise(cyclic, { data: false }), { a: 1, self: '<…>' })
  JSON.stringify(sanitise(value, { data: false }))
})

test('--inspect addresses: PORT, HOST:PORT, [V6]:PORT; anything else refused with one line', () => {
  assert.equal(parseInspectAddress('0'), { host: '127.0.0.1', port: 0 })
  assert.equal(parseInspectAddress('localhost:9000'), { host: 'localhost', port: 9000 })
  assert.equal(parseInspectAddress('[::1]:9000'), { host: '::1', port: 9000 })
  for (const bad of ['', 'x', '1:2:3', '70000', 'host:']) {
    assert.throws(() => parseInspectAddress(bad), (e: Error) => /^inspect: expected --inspect \[HOST:\]PORT/.test(e.message) && !e.message.includes('\n'))
  }
})

test('an actor streamed to Stately\'s WebSocket receiver: late joiner gets the actor with its definition, then live events and snapshots', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'inspect-'))
  const inspection = await AgentInspection.start({ agent: 'machine-7', dataDir: dir, address: { host: '127.0.0.1', port: 0 }, data: false })
  const inspect = inspection.inspect('relation', 'kv:cluster kv (kv/0)')!
  const actor = createActor(relationMachine, { ...relationInput(), inspect })
  try {
    assert.match(inspection.url!, /^ws:\/\/127\.0\.0\.1:\d+$/)
    assert.is(readFileSync(join(dir, inspectUrlFile), 'utf8'), inspection.url + '\n')
    actor.start()
    actor.send({ type: 'relation.remoteChanged', remote: undefined, unitDying: false, leader: false })
    // Connects after the actor started: it must still learn about it.
    const received: Received[] = []
    const receiver = createWebSocketReceiver({ server: inspection.url! })
    receiver.subscribe(event => { received.push(event as Received) })
    await until('the current actor', () => received.some(m => m.type === '@xstate.actor'))
    const first = received[0]!
    assert.is(first.type, '@xstate.actor', 'the current actors come first')
    assert.ok(first.type === '@xstate.actor' && first.replay === true)
    if (first.type !== '@xstate.actor') throw new Error('unreachable')
    assert.is(first.agent, 'machine-7')
    assert.is(first.actorKind, 'relation')
    assert.is(first.name, 'kv:cluster kv (kv/0)')
    assert.is(first.sessionId, actor.sessionId)
    const definition = JSON.parse(first.definition!) as { id: string, states: Record<string, unknown> }
    assert.is(definition.id, 'relation')
    assert.ok('classifying' in definition.states && 'violated' in definition.states)
    assert.is(first.snapshot.status, 'active')
    const before = received.length
    actor.send({ type: 'relation.remoteChanged', remote: undefined, unitDying: true, leader: false })
    await until('a live event and snapshot', () => received.slice(before).some(m => m.type === '@xstate.snapshot'))
    const live = received.slice(before)
    const event = live.find(m => m.type === '@xstate.event')
    const snapshot = live.find(m => m.type === '@xstate.snapshot')
    assert.ok(event?.type === '@xstate.event' && event.event.type === 'relation.remoteChanged' && event.sessionId === actor.sessionId && event.targetRef === actor.sessionId)
    assert.ok(snapshot?.type === '@xstate.snapshot' && snapshot.snapshot.status === 'active' && snapshot.status === 'active' && (snapshot.snapshot as { value?: unknown }).value !== undefined)
    assert.ok(live.every(m => m.replay === undefined && m.agent === 'machine-7' && m.actorKind === 'relation'))
    // The hub keeps the actor current with its latest snapshot.
    assert.equal(inspection.hub.currentActors()[0]?.snapshot.context, (snapshot.snapshot as unknown as { context: unknown }).context)
    actor.stop()
    await until('the stopped snapshot', () => received.some(m => m.type === '@xstate.snapshot' && m.snapshot.status === 'stopped'))
    assert.is(inspection.hub.currentActors().length, 0, 'a stopped actor is no longer current')
    // A client joining after it ended still learns of it from the ring: announced, then its end.
    const late: Received[] = []
    createWebSocketReceiver({ server: inspection.url! }).subscribe(event => { late.push(event as Received) })
    await until('the ring', () => late.some(m => m.type === '@xstate.snapshot' && m.snapshot.status === 'stopped'))
    const announced = late.findIndex(m => m.type === '@xstate.actor' && m.sessionId === actor.sessionId)
    assert.ok(announced >= 0 && announced < late.findIndex(m => m.type === '@xstate.snapshot' && m.snapshot.status === 'stopped'))
    assert.ok(late.every(m => m.replay === true))
  } finally {
    actor.stop()
    await inspection.stop()
    rmSync(dir, { recursive: true, force: true })
  }
})

test('bounded: a burst beyond the client queue drops the oldest with one notice; a steady stream is sustained without loss', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'inspect-'))
  const inspection = await AgentInspection.start({ agent: 'controller-x', dataDir: dir, address: { host: '127.0.0.1', port: 0 }, data: false })
  const socket = new WebSocket(inspection.url!)
  try {
    const frames: string[] = []
    socket.on('message', data => { frames.push(String(data)) })
    await new Promise((resolve, reject) => { socket.once('open', resolve); socket.once('error', reject) })
    await until('the server to see the client', () => inspection.server!.clients === 1)
    const message = (i: number): InspectMessage => ({
      type: '@xstate.event', sessionId: 'x:1', rootId: 'x:1', createdAt: String(i), id: null, _version: '0.7.2', agent: 'controller-x', actorKind: 'unit', name: 'unit-kv-0',
      event: { type: 'remote.changed', n: i }, sourceId: undefined, sourceRef: undefined, targetRef: 'x:1'
    })
    // One synchronous burst: nothing is flushed meanwhile.
    const burst = limits.inspectClientQueueMax * 2
    for (let i = 0; i < burst; i++) inspection.hub.publish(message(i))
    const expected = limits.inspectClientInFlightMax + limits.inspectClientQueueMax + 1
    await until('the burst to arrive', () => frames.length >= expected, 30_000)
    const notice = frames.map(f => JSON.parse(f) as { type: string, count?: number }).find(m => m.type === '@cantrip.dropped')
    assert.ok(notice !== undefined, 'a dropped notice')
    assert.is(notice.count, burst - limits.inspectClientInFlightMax - limits.inspectClientQueueMax)
    // The newest survive: the last frame is the burst's last message.
    assert.is((JSON.parse(frames.at(-1)!) as { event: { n: number } }).event.n, burst - 1)

    // Steady: batches a macrotask apart, within the queue; every message arrives.
    frames.length = 0
    const steady = 50_000
    const batch = 1_000
    const started = performance.now()
    for (let i = 0; i < steady; i += batch) {
      for (let j = i; j < i + batch; j++) inspection.hub.publish(message(j))
      await new Promise(resolve => setImmediate(resolve))
    }
    await until('the steady stream', () => frames.length >= steady, 60_000)
    const seconds = (performance.now() - started) / 1000
    assert.is(frames.length, steady)
    assert.ok(frames.every(f => !f.includes('@cantrip.dropped')))
    const bytes = frames.reduce((sum, f) => sum + Buffer.byteLength(f), 0) / frames.length
    console.log(`inspect stream: ${steady} messages in ${seconds.toFixed(2)} s = ${Math.round(steady / seconds)} messages/s to one client, ${Math.round(bytes)} bytes each`)
  } finally {
    socket.terminate()
    await inspection.stop()
    rmSync(dir, { recursive: true, force: true })
  }
})

test('cantripd --role both --inspect 0 --inspect-log: Raft role, unit and relation actors over WebSocket and in the JSONL log', async () => {
  const cluster = new CantripdCluster()
  // Outside the cluster's root, which its close removes.
  const logDir = mkdtempSync(join(tmpdir(), 'inspect-log-'))
  const logFile = join(logDir, 'inspect.jsonl')
  cluster.extraArgs = ['--inspect', '0', '--inspect-log', logFile]
  const received: Received[] = []
  try {
    await cluster.prepare(1, 0, { both: 1 })
    const controller = cluster.controllers[0]!
    cluster.start(controller)
    await waitFor('the inspect line', () => /"event":"inspect"/.test(controller.output), () => controller.output)
    const url = (JSON.parse(controller.output.split('\n').find(l => l.includes('"event":"inspect"'))!) as { url: string }).url
    assert.match(url, /^ws:\/\/127\.0\.0\.1:\d+$/)
    assert.is(readFileSync(join(controller.dir, inspectUrlFile), 'utf8').trim(), url)
    await cluster.connectClient()
    await waitFor('a leader', () => cluster.leader() !== undefined)
    createWebSocketReceiver({ server: url }).subscribe(event => { received.push(event as Received) })
    const charm = await cluster.addCharm(controller, resolve('examples/charms/kv'), 'local:kv-0')
    assert.ok(charm.added?.ok, JSON.stringify(charm.added))
    assert.ok((await cluster.submit({ type: 'add-machine' }))?.ok)
    assert.ok((await cluster.submit({ type: 'deploy', application: 'kv', charm: 'local:kv-0', config: { 'port-base': await freePortRun(2) }, constraints: {}, numUnits: 1, placement: ['0'] }))?.ok)
    const describe = (): string => JSON.stringify([...new Set(received.map(m => `${m.type} ${m.actorKind} ${m.name}`))]) + '\n' + controller.output.slice(-2000)
    await waitFor('the raft, unit and relation actors', () => ['raft', 'unit', 'relation'].every(kind => received.some(m => m.type === '@xstate.actor' && m.actorKind === kind)), describe)
    await waitFor('the unit idle', () => received.some(m => m.type === '@xstate.snapshot' && m.name === 'unit-kv-0' && JSON.stringify((m.snapshot as { value?: unknown }).value).includes('idle')), describe)
    const agent = `machine-0`
    assert.ok(received.every(m => m.agent === agent), describe())
    const actors = received.filter(m => m.type === '@xstate.actor')
    for (const actor of actors) {
      if (actor.type !== '@xstate.actor' || actor.actorKind === 'other') continue
      const definition = JSON.parse(actor.definition!) as { states?: unknown }
      assert.ok(definition.states !== undefined, `${actor.name} has a definition with states`)
    }
    assert.ok(actors.some(m => m.name === 'unit-kv-0'))
    assert.ok(actors.some(m => m.name === 'raft:default'))
    assert.ok(actors.some(m => m.actorKind === 'relation' && m.name === 'kv:cluster kv (kv/0)'), describe())
    assert.ok(received.some(m => m.type === '@xstate.event' && m.name === 'unit-kv-0'))
    // Sanitised: the charm's config values are not on the wire.
    assert.not.match(JSON.stringify(received), /"port-base":\d/)
    await cluster.close()
    const lines = readFileSync(logFile, 'utf8').trim().split('\n').map(l => JSON.parse(l) as InspectMessage & { at: number })
    assert.ok(lines.length >= received.filter(m => m.replay !== true).length, `${lines.length} log lines`)
    assert.ok(lines.every(l => typeof l.at === 'number' && l.agent === agent && ['@xstate.actor', '@xstate.event', '@xstate.snapshot'].includes(l.type)))
    assert.ok(lines.some(l => l.type === '@xstate.actor' && l.actorKind === 'unit'))
    const sizes = new Map<string, number[]>()
    for (const l of lines) sizes.set(l.type, [...sizes.get(l.type) ?? [], Buffer.byteLength(JSON.stringify(l))])
    console.log('inspect log of one unit\'s deploy: ' + [...sizes].map(([type, s]) => `${s.length} ${type} (mean ${Math.round(s.reduce((a, b) => a + b, 0) / s.length)} B, max ${Math.max(...s)} B)`).join(', '))
  } finally {
    await cluster.close()
    rmSync(logDir, { recursive: true, force: true })
  }
})

test.run()
