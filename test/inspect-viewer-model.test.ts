/**
 * The inspect viewer's pure parts, on streams from real unit actors (the uniter
 * statechart with stubbed side effects, inspected through @statelyai/inspect by
 * test/support/inspect-generator.ts): parsing wire messages, merging logs by time, the
 * state as of any message (time travel, across checkpoints), the hook timeline, the
 * message sequence, the actor tree and the statechart graph.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { relationMachine } from '../actors/relation/relation-machine.ts'
import { unitMachine } from '../actors/unit/unit-machine.ts'
import { actorTree } from '../agent/inspect-viewer/model/actor-tree.ts'
import { checkpointEvery, EventLog, mergeByTime } from '../agent/inspect-viewer/model/event-log.ts'
import { hookTimeline } from '../agent/inspect-viewer/model/hook-timeline.ts'
import { actorKey, parseInspectMessage, type InspectMessage } from '../agent/inspect-viewer/model/inspect-message.ts'
import { eventLabel, messageSequence, sequenceLanes } from '../agent/inspect-viewer/model/message-sequence.ts'
import { activeStates, chartOf, shortValueText, valueText } from '../agent/inspect-viewer/model/statechart-graph.ts'
import { applyMessage, emptyViewState } from '../agent/inspect-viewer/model/view-state.ts'
import { startGeneratedAgent } from './support/inspect-generator.ts'

const test = suite('inspect-viewer-model')

const settle = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))

/** Bounded wait until `holds`. */
async function until (what: string, holds: () => boolean, withinMs = 10_000): Promise<void> {
  const deadline = performance.now() + withinMs
  while (!holds()) {
    if (performance.now() > deadline) assert.unreachable(`${what} within ${withinMs} ms`)
    await settle(10)
  }
}

/** A recorded run of two agents: kv/0 and kv/1 on machine-1, web/0 on machine-2; kv/0's config changes twice, kv/1's until the log is long, web/0..3's config-changed fails. */
async function recordedRun (): Promise<{ one: Array<Record<string, unknown>>, two: Array<Record<string, unknown>> }> {
  const one = await startGeneratedAgent({ agent: 'machine-1', units: ['kv/0', 'kv/1'], hookMs: 1, serve: false })
  const two = await startGeneratedAgent({ agent: 'machine-2', units: ['web/0', 'web/1', 'web/2', 'web/3'], hookMs: 1, serve: false, failing: new Set(['config-changed']) })
  const idle = (recorded: Array<Record<string, unknown>>, name: string): boolean => recorded.some(m =>
    m.type === '@xstate.snapshot' && m.name === name && JSON.stringify((m.snapshot as { value?: unknown }).value).includes('"uniter":"idle"'))
  await until('kv/0 idle', () => idle(one.recorded, 'unit-kv-0'))
  for (const hash of ['c1', 'c2']) {
    const before = one.recorded.length
    one.changeConfig('kv/0', hash)
    await until(`kv/0 idle after config ${hash}`, () => one.recorded.slice(before).some(m => m.type === '@xstate.snapshot' && m.name === 'unit-kv-0' &&
      JSON.stringify((m.snapshot as { value?: unknown }).value).includes('"uniter":"idle"')))
  }
  // kv/1's config changes until the run crosses two of the log's checkpoints (a config
  // change is a few dozen messages; the uniter's persisted steps and its hook lock start
  // no actors of their own, so it takes more changes than it did: at most 60).
  for (let i = 1; i <= 60 && one.recorded.length + two.recorded.length <= checkpointEvery * 2 + 100; i++) {
    const before = one.recorded.length
    one.changeConfig('kv/1', `k${i}`)
    await until(`kv/1 idle after config k${i}`, () => one.recorded.slice(before).some(m => m.type === '@xstate.snapshot' && m.name === 'unit-kv-1' &&
      JSON.stringify((m.snapshot as { value?: unknown }).value).includes('"uniter":"idle"')))
  }
  await until('web/0 in hook error', () => two.recorded.some(m => m.type === '@xstate.snapshot' && m.name === 'unit-web-0' &&
    JSON.stringify((m.snapshot as { value?: unknown }).value).includes('hookError')))
  await one.close()
  await two.close()
  return { one: one.recorded, two: two.recorded }
}

const run = await recordedRun()

function logOf (raws: ReadonlyArray<Record<string, unknown>>): EventLog {
  const log = new EventLog()
  for (const raw of raws) {
    const parsed = parseInspectMessage(raw, { agent: 'unknown', at: 0 })
    if (typeof parsed === 'string') assert.unreachable(parsed)
    else log.append(parsed)
  }
  return log
}

const merged = mergeByTime([run.one as Array<Record<string, unknown> & { at: number }>, run.two as Array<Record<string, unknown> & { at: number }>])
const log = logOf(merged)

test('every recorded message parses; definitions arrive as strings and are parsed to objects', () => {
  assert.ok(merged.length > checkpointEvery * 2, `a run long enough to cross checkpoints: ${merged.length} messages`)
  const actor = log.messages.find(m => m.type === '@xstate.actor' && m.actorKind === 'unit')
  assert.ok(actor !== undefined && actor.type === '@xstate.actor')
  assert.is((actor.definition as { id?: string }).id, 'unit')
})

test('parse: Stately createdAt becomes at, sourceRef/targetRef are accepted, and anything else is refused with a reason', () => {
  const parsed = parseInspectMessage({ type: '@xstate.event', targetRef: 'x:1', sourceRef: 'x:0', event: { type: 'go' }, createdAt: '1700000000123' }, { agent: 'machine-5', at: 1 })
  assert.equal(typeof parsed === 'object' && parsed.type === '@xstate.event' ? [parsed.agent, parsed.at, parsed.sessionId, parsed.sourceId] : parsed, ['machine-5', 1700000000123, 'x:1', 'x:0'])
  const dropped = parseInspectMessage({ type: '@cantrip.dropped', count: 7, agent: 'controller-0' }, { agent: 'x', at: 5 })
  assert.equal(dropped, { type: '@cantrip.dropped', agent: 'controller-0', at: 5, count: 7 })
  assert.match(String(parseInspectMessage({ type: 'nope', sessionId: 'x:0' }, { agent: 'a', at: 0 })), /expected @xstate.actor.*got "nope"/)
  assert.match(String(parseInspectMessage({ type: '@xstate.snapshot' }, { agent: 'a', at: 0 })), /expected a sessionId/)
  assert.match(String(parseInspectMessage([1], { agent: 'a', at: 0 })), /expected an inspection message object/)
})

test('mergeByTime: ordered by time, ties kept in log then line order', () => {
  const a = [{ at: 1, id: 'a1' }, { at: 3, id: 'a3' }, { at: 3, id: 'a3b' }]
  const b = [{ at: 0, id: 'b0' }, { at: 3, id: 'b3' }, { at: 9, id: 'b9' }]
  assert.equal(mergeByTime([a, b]).map(m => m.id), ['b0', 'a1', 'a3', 'a3b', 'b3', 'b9'])
  for (let i = 1; i < merged.length; i++) assert.ok((merged[i]!.at as number) >= (merged[i - 1]!.at as number))
})

test('stateAt(k) equals folding messages 0..k from scratch, for every k (checkpoints included)', () => {
  const scratch = emptyViewState()
  const signature = (state: ReturnType<typeof emptyViewState>): string =>
    JSON.stringify([...state.actors.values()].map(a => [a.key, a.snapshot.value, a.snapshot.status, a.lastEvent]))
  // Out of order on purpose: going back must not depend on where the cursor was.
  const order = [...log.messages.keys()].sort((x, y) => (x * 7919) % log.length - (y * 7919) % log.length)
  const expected = new Map<number, string>()
  log.messages.forEach((message, k) => { applyMessage(scratch, message); expected.set(k, signature(scratch)) })
  for (const k of order) assert.is(signature(log.stateAt(k)), expected.get(k)!, `state after message ${k}`)
  assert.is(signature(log.stateAt(log.length - 1)), signature(log.latest))
  assert.is(log.stateAt(-1).actors.size, 0)
})

test('stepping back shows the earlier state: kv/0 before its config change is idle with the old config', () => {
  const kv0 = [...log.latest.actors.values()].find(a => a.name === 'unit-kv-0')!
  const lastConfigHash = (k: number): unknown => ((log.stateAt(k).actors.get(kv0.key)?.snapshot.context as { remote?: { configHash?: string } } | undefined)?.remote?.configHash)
  const changed = log.messages.findIndex(m => m.type === '@xstate.event' && actorKey(m.agent, m.sessionId) === kv0.key && m.event.type === 'remote.changed')
  assert.ok(changed > 0)
  assert.is(lastConfigHash(changed - 1), 'c0')
  assert.is(lastConfigHash(log.length - 1), 'c2')
})

test('hook timeline: install, start, config-changed … in order, results from the unit; a failing hook shows error', () => {
  const kv0 = [...log.latest.actors.values()].find(a => a.name === 'unit-kv-0')!
  const runs = hookTimeline(log.messages, kv0.key)
  const names = runs.map(r => r.hook)
  assert.ok(names.indexOf('install') >= 0 && names.indexOf('install') < names.indexOf('start'), `install before start: ${names.join(', ')}`)
  assert.is(names.filter(n => n === 'config-changed').length, 3, `config-changed at install and after each of two changes: ${names.join(', ')}`)
  assert.ok(runs.every(r => r.result === 'ok' && r.end !== undefined && r.end >= r.start), JSON.stringify(runs))
  assert.ok(names.includes('peers-relation-created'), names.join(', '))
  // Cut at the second config change's snapshot: that run is still running.
  const second = runs.filter(r => r.hook === 'config-changed')[1]!
  const cut = hookTimeline(log.messages, kv0.key, second.startIndex)
  assert.is(cut.at(-1)!.result, 'running')
  const web0 = [...log.latest.actors.values()].find(a => a.name === 'unit-web-0')!
  const webRuns = hookTimeline(log.messages, web0.key)
  assert.is(webRuns.at(-1)!.hook, 'config-changed')
  assert.is(webRuns.at(-1)!.result, 'error')
})

test('message sequence: events with source and target up to the cursor, newest last, filtered by keep', () => {
  const all = messageSequence(log.messages, log.length - 1, 10_000)
  assert.ok(all.length > 0)
  for (let i = 1; i < all.length; i++) assert.ok(all[i]!.index > all[i - 1]!.index)
  const half = Math.floor(log.length / 2)
  assert.ok(messageSequence(log.messages, half, 10_000).every(s => s.index <= half))
  assert.is(messageSequence(log.messages, log.length - 1, 5).length, 5)
  const state = log.latest
  const kinds = (key: string): string | undefined => state.actors.get(key)?.kind
  const between = messageSequence(log.messages, log.length - 1, 10_000, (from, to) => from !== to && kinds(from) !== 'other' && kinds(to) !== 'other')
  assert.ok(between.some(s => s.event === 'relation.remoteChanged'), 'the unit tells its relation actor about remote changes')
  assert.ok(between.every(s => kinds(s.from) !== 'other'))
  const lanes = sequenceLanes(between, state)
  assert.ok(lanes.some(l => l.label === 'machine-1/unit-kv-0') && lanes.some(l => l.label === 'machine-1/relation-1'), JSON.stringify(lanes))
  assert.is(eventLabel('xstate.done.actor.0.unit.running.uniter.loading'), 'done: loading')
})

test('actor tree: agent → units → relations, XState helper actors hidden', () => {
  const tree = actorTree(log.latest)
  assert.equal(tree.map(n => n.label), ['machine-1', 'machine-2'])
  assert.equal(tree[0]!.children.map(n => n.label), ['unit-kv-0', 'unit-kv-1'])
  assert.equal(tree[0]!.children[0]!.children.map(n => `${n.kind}:${n.label}`), ['relation:relation-1'])
  assert.equal(tree[1]!.children.map(n => n.label), ['unit-web-0', 'unit-web-1', 'unit-web-2', 'unit-web-3'])
  // A machine actor in the agent takes the units under it.
  const state = log.stateAt(log.length - 1)
  const withMachine = { ...state, actors: new Map(state.actors) }
  withMachine.actors.set('machine-1 m', { ...[...state.actors.values()][0]!, key: 'machine-1 m', agent: 'machine-1', sessionId: 'm', parentKey: undefined, kind: 'machine', name: 'machine-1' })
  const nested = actorTree(withMachine)
  assert.equal(nested[0]!.children.map(n => n.label), ['machine-1'])
  assert.equal(nested[0]!.children[0]!.children.map(n => n.label), ['unit-kv-0', 'unit-kv-1'])
})

test('statechart graph: toJSON and config definitions give the same states; active states from a value', () => {
  const fromJson = chartOf(JSON.parse(JSON.stringify(unitMachine.toJSON())))!
  const fromConfig = chartOf(JSON.parse(JSON.stringify(unitMachine.config)))!
  assert.equal([...fromJson.states.keys()].sort(), [...fromConfig.states.keys()].sort())
  assert.ok(fromJson.states.has('unit.running.uniter.idle'))
  const idleOut = fromJson.transitions.filter(t => t.source === 'unit.running.uniter.idle').map(t => t.target)
  assert.ok(idleOut.includes('unit.running.uniter.resolving'), JSON.stringify(idleOut))
  const configIdleOut = fromConfig.transitions.filter(t => t.source === 'unit.running.uniter.idle').map(t => t.target)
  assert.ok(configIdleOut.includes('unit.running.uniter.resolving'), JSON.stringify(configIdleOut))
  const relation = chartOf(JSON.parse(JSON.stringify(relationMachine.toJSON())))!
  assert.ok(relation.transitions.some(t => t.label === 'relation.remoteChanged' && t.target === 'relation.classifying'))
  const value = { running: { uniter: 'idle', timers: { updateStatus: 'ticking', hookRetry: 'disarmed' } } }
  const active = activeStates('unit', value)
  assert.ok(['unit', 'unit.running', 'unit.running.uniter.idle', 'unit.running.timers.hookRetry.disarmed'].every(id => active.has(id)))
  assert.not.ok(active.has('unit.running.uniter.resolving'))
  assert.is(valueText(value), 'running.uniter.idle, running.timers.updateStatus.ticking, running.timers.hookRetry.disarmed')
  assert.is(shortValueText({ running: { timers: { hookRetry: 'disarmed', updateStatus: 'ticking' }, uniter: 'idle' } }, unitMachine.toJSON()),
    'uniter.idle · updateStatus.ticking · hookRetry.disarmed')
})

test.run()
