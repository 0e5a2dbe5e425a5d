/**
 * Fuzzing the wire (issue 12, item 8): every decoder that takes bytes from another process
 * gets random and mutated inputs (100,000 each under `npm run test:chaos`, 2,000 under
 * `npm test`). A decoder either accepts, or refuses with its declared error type and one
 * line naming component, expectation and what arrived; parsers that answer "not a
 * message" with undefined count as refusals. Nothing else may happen, and nothing may
 * take longer than the per-input bound.
 */
import fc from 'fast-check'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { parseChangeNotice } from '../../actors/controller/change-notices.ts'
import { initialLocalState } from '../../actors/unit/local-state.ts'
import { checkLocalState } from '../../actors/unit/unit-state-store.ts'
import { decodeCall, decodeResponse, FrameError as ToolFrameError, FrameReader, InvalidCallError, encodeCall, encodeResult, encodeNeedsStdin } from '../../agent/hook-tools/transport/frames.ts'
import { decodeGossipEnvelope, decodeRequestEnvelope, decodeResponseEnvelope } from '../../agent/mesh/mesh-envelopes.ts'
import { FrameError as ChannelFrameError, FrameReader as ChannelFrameReader } from '../../agent/mesh/channel-frames.ts'
import { decodeBootstrapData } from '../../runtime/bootstrap-data.ts'
import { decode } from '../../runtime/codec.ts'
import { InvalidInputError } from '../../runtime/errors.ts'
import { parseLogBatch } from '../../runtime/logs/log-entry.ts'
import { parsePresenceMessage } from '../../runtime/presence/presence-agent.ts'
import { MemoryRaftStorage } from '../../runtime/raft/memory-raft-storage.ts'
import { RawNode } from '../../runtime/raft/raw-node.ts'
import type { Message } from '../../runtime/raft/raft-types.ts'
import { SeededRandom } from '../../runtime/random.ts'
import { chaosCount, reportFigures } from './support/chaos-scale.ts'
import { accepted, declaredRejection, fuzz, rejected, tallyFigures, type Verdict } from './support/fuzz-harness.ts'
import { wireInputs } from './support/fuzz-inputs.ts'

const count = chaosCount(100_000, 2_000)
const bytes = (text: string): Uint8Array => new TextEncoder().encode(text)
const test = suite('fuzz: wire decoders')
const figures: Record<string, number | string> = {}

/** Runs one decoder's fuzz loop and asserts the figures the issue asks for. */
async function check<T> (name: string, arbitrary: fc.Arbitrary<T>, run: (input: T) => Verdict | Promise<Verdict>): Promise<void> {
  const tally = await fuzz(arbitrary, count, run)
  Object.assign(figures, tallyFigures(name, tally))
  assert.is(tally.inputs, count)
  assert.is(tally.crashes, 0)
  assert.is(tally.hangs, 0)
  // Mutated valid messages must reach past the first check at least sometimes.
  assert.ok(Object.keys(tally.rejected).length > 0, `${name}: no input was refused`)
}

function sync (run: () => unknown, declared: ReadonlyArray<abstract new (...args: never[]) => Error>, options?: { expectedGot?: boolean }): Verdict {
  try {
    return run() === undefined ? rejected('undefined') : accepted
  } catch (error) {
    return declaredRejection(error, declared, options)
  }
}

test('codec: any bytes decode or give one InvalidInputError', async () => {
  await check('codec', wireInputs([{ a: 1, b: [bytes('x')] }]), input => sync(() => { decode(input, 'fuzz'); return true }, [InvalidInputError]))
})

test('mesh envelopes: gossip, request and response', async () => {
  const data = bytes('payload')
  await check('envelope.gossip', wireInputs([{ v: 1, data }]), input => sync(() => decodeGossipEnvelope(input), [InvalidInputError]))
  await check('envelope.request', wireInputs([{ v: 1, protocol: 'cantrip/api/1', data }]), input => sync(() => decodeRequestEnvelope(input), [InvalidInputError]))
  await check('envelope.response', wireInputs([{ v: 1, ok: true, data }, { v: 1, ok: false, error: 'controller api: no' }]), input => sync(() => decodeResponseEnvelope(input), [InvalidInputError]))
})

test('request channel frames: any chunking of any bytes reads whole frames or gives one FrameError', async () => {
  const seeds = [Uint8Array.from([9, 0, 0, 0, 0, 1, 0, 0, 0, 2, 3, 4, 5]), Uint8Array.from([5, 0, 0, 0, 1, 7, 0, 0, 0]), Uint8Array.from([0, 0, 0, 0])]
  const frame = fc.tuple(fc.nat(4), fc.uint8Array({ maxLength: 40 })).map(([kind, body]) => Uint8Array.from([body.length + 5, 0, 0, 0, kind, 1, 0, 0, 0, ...body]))
  const frames = fc.tuple(fc.oneof(fc.uint8Array({ maxLength: 64 }), fc.constantFrom(...seeds), frame), fc.array(fc.nat(), { maxLength: 4 }))
  await check('channel-frames', frames, ([stream, cuts]) => {
    const points = [...new Set(cuts.map(cut => stream.length === 0 ? 0 : cut % stream.length))].sort((a, b) => a - b)
    const reader = new ChannelFrameReader(32)
    try {
      let from = 0
      let read = 0
      for (const point of [...points, stream.length]) {
        read += reader.push(stream.subarray(from, point)).length
        from = point
      }
      return read > 0 && !reader.partial ? accepted : rejected('no whole frame')
    } catch (error) {
      return declaredRejection(error, [ChannelFrameError])
    }
  })
})

test('gossip messages: change notices, log batches, presence', async () => {
  await check('gossip.change-notice', wireInputs([{ v: 1, revision: 7 }]), input => sync(() => parseChangeNotice(input), []))
  const record = { entity: 'unit-web-0', time: 1, level: 'info', module: 'unit.web/0.juju-log', message: 'hello', seq: 0 }
  await check('gossip.log-batch', wireInputs([{ v: 1, records: [record, { ...record, seq: 1, entity: 'machine-0' }] }]), input => sync(() => parseLogBatch(input), []))
  const heartbeat = { v: 1, kind: 'heartbeat', sender: 'peer-a', role: 'machine', incarnation: 3, digest: [{ id: 'peer-b', incarnation: 1, state: 'suspect' }], version: '0.1.0' }
  await check('gossip.presence', wireInputs([heartbeat, { v: 1, kind: 'leave', sender: 'peer-a', role: 'controller', incarnation: 4 }]),
    input => sync(() => parsePresenceMessage(decode(input, 'presence')), [InvalidInputError]))
})

test('raft messages: any batch from a peer is stepped or dropped, never thrown', async () => {
  const entry = { index: 6, term: 2, type: 'normal', data: bytes('cmd') }
  const seeds = [
    { batch: [{ type: 'append', from: '2', to: '1', term: 2, index: 5, logTerm: 1, commit: 5, entries: [entry] }] },
    { batch: [{ type: 'vote', from: '3', to: '1', term: 4, index: 9, logTerm: 3 }, { type: 'heartbeat', from: '2', to: '1', term: 2, commit: 1 }] },
    { batch: [{ type: 'snapshot', from: '2', to: '1', term: 2, snapshot: { metadata: { index: 9, term: 2, config: { voters: ['1', '2', '3'] } }, data: bytes('s') } }] }
  ]
  await check('raft.messages', wireInputs(seeds), input => {
    const node = new RawNode({ id: '1', storage: MemoryRaftStorage.bootstrap(['1', '2', '3']), random: new SeededRandom(1), electionTicks: 10, heartbeatTicks: 1 })
    let value: unknown
    try {
      value = decode(input, 'raft')
    } catch (error) {
      return declaredRejection(error, [InvalidInputError])
    }
    const batch = typeof value === 'object' && value !== null && Array.isArray((value as { batch?: unknown }).batch) ? (value as { batch: unknown[] }).batch : Array.isArray(value) ? value : undefined
    if (batch === undefined) return rejected('not-a-list')
    const before = node.status().commit
    for (const message of batch) node.step(message as Message)
    if (node.hasReady()) node.ready()
    return node.status().commit >= before ? accepted : rejected('regressed')
  })
})

test('reproducer: a raft message whose type or term is a bigint or an object without toString is dropped, not thrown', () => {
  // Found by the raft fuzz: messageProblem quoted the type with JSON.stringify (a BigInt
  // from an int64 threw) and the term with String() (a map with a "toString" key threw).
  const node = new RawNode({ id: '1', storage: MemoryRaftStorage.bootstrap(['1', '2', '3']), random: new SeededRandom(1), electionTicks: 10, heartbeatTicks: 1 })
  const bigintType = decode(Uint8Array.from([0x84, 0xa4, ...bytes('type'), 0xd3, 0, 0, 0, 0, 0, 0, 0, 0, 0xa4, ...bytes('from'), 0xa1, ...bytes('2'), 0xa2, ...bytes('to'), 0xa1, ...bytes('1'), 0xa4, ...bytes('term'), 2]), 'raft')
  assert.is(typeof (bigintType as { type: unknown }).type, 'bigint')
  const before = node.status()
  node.step(bigintType as Message)
  node.step({ type: 'heartbeat', from: '2', to: '1', term: { toString: 1 } } as unknown as Message)
  node.step({ type: 'append', from: '2', to: '1', term: 2, index: 0, logTerm: 0, commit: 0, entries: [{ index: 1, term: 2, type: 10n, data: bytes('x') }] } as unknown as Message)
  const after = node.status()
  assert.is(after.invalidMessages - before.invalidMessages, 3, 'each one dropped and counted as invalid')
  assert.equal({ ...after, invalidMessages: before.invalidMessages }, before, 'nothing else changed')
})

test('bootstrap data and persisted unit state', async () => {
  const boot = { version: 1, modelUuid: 'm-1', machineId: '0', secret: 'ab'.repeat(16), networkKey: bytes('key'), controllers: [{ peerId: '12D3KooW', addresses: ['/ip4/127.0.0.1/tcp/1'] }] }
  await check('bootstrap-data', wireInputs([boot]), input => sync(() => decodeBootstrapData(input), [InvalidInputError]))
  const state = initialLocalState() as unknown as Record<string, unknown>
  const running = { ...state, installed: true, operation: { kind: 'run-hook', step: 'pending', hook: { kind: 'config-changed' } } }
  await check('unit-state', wireInputs([state, running]), input => sync(() => checkLocalState('web/0', decode(input, 'unit state')), [InvalidInputError]))
})

test('hook tool frames: calls, results and the frame reader', async () => {
  const body = (frame: Uint8Array): Uint8Array => frame.subarray(12)
  const call = encodeCall({ contextId: 'ctx-1', cwd: '/tmp', tool: 'relation-get', args: ['-r', '3', 'host'], stdin: bytes('in') })
  const result = encodeResult({ code: 0, stdout: bytes('out'), stderr: new Uint8Array(0) })
  const mutated = (seeds: Uint8Array[]): fc.Arbitrary<Uint8Array> => fc.oneof(fc.uint8Array({ maxLength: 128 }), wireInputs([{}]).chain(() => fc.constantFrom(...seeds)), fc.tuple(fc.constantFrom(...seeds), fc.nat(), fc.nat(255)).map(([seed, at, value]) => {
    const copy = seed.slice()
    if (copy.length > 0) copy[at % copy.length] = value
    return copy
  }), fc.tuple(fc.constantFrom(...seeds), fc.nat()).map(([seed, at]) => seed.subarray(0, seed.length === 0 ? 0 : at % seed.length)))
  await check('hook-frames.call', mutated([body(call)]), input => sync(() => decodeCall(input), [ToolFrameError, InvalidCallError], { expectedGot: false }))
  await check('hook-frames.reader', mutated([call, result, encodeNeedsStdin()]), input => sync(() => {
    const direction = input[5] === 1 ? 'toServer' : 'toClient'
    const frames = new FrameReader(direction).push(input)
    for (const frame of frames) if (direction === 'toClient') decodeResponse(frame)
    return frames.length > 0 ? true : undefined
  }, [ToolFrameError], { expectedGot: false }))
})

test.after(() => {
  reportFigures('fuzz-wire', figures)
})

test.run()

