/** The msgpack codec: round trips, no records, and one error class for every bad input. */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { pack } from 'msgpackr'
import { decode, encode } from '../runtime/codec.ts'
import { limits } from '../runtime/limits.ts'
import { SeededRandom } from '../runtime/random.ts'

const test = suite('codec')

const sample = {
  type: 'hook.completed',
  unit: 'web/0',
  revision: 42,
  ok: true,
  ratio: 0.25,
  nothing: null,
  tags: ['a', 'b'],
  nested: { relation: { id: 3, settings: { host: '10.0.0.1' } } },
  signature: new Uint8Array(64).fill(7)
}

function expectInvalid (fn: () => unknown, message: string | RegExp): Error {
  try {
    fn()
  } catch (error) {
    assert.instance(error, Error)
    assert.is((error as Error).name, 'InvalidInputError')
    assert.match((error as Error).message, message)
    return error as Error
  }
  assert.unreachable('expected an InvalidInputError')
  throw new Error('unreachable')
}

test('values round-trip', () => {
  const back = decode(encode(sample), 'test') as typeof sample
  assert.equal({ ...back, signature: new Uint8Array(back.signature) }, sample)
  for (const value of [0, -1, 2 ** 53 - 1, 'text', '', [], {}, null, true, 1.5]) assert.equal(decode(encode(value), 'test'), value)
})

test('encode gives a plain Uint8Array of standard msgpack, no records', () => {
  const bytes = encode({ a: 1, b: 2 })
  assert.is(bytes.constructor, Uint8Array)
  // A map header (msgpackr writes map16 for speed); a record would start with an
  // extension or a record-slot byte (0x40-0x7f) instead.
  assert.ok(bytes[0] === 0x82 || bytes[0] === 0xde, `first byte ${bytes[0]}`)
  // Same shape twice must not switch to a record the second time.
  assert.equal(encode({ a: 1, b: 2 }), bytes)
  assert.equal(bytes, new Uint8Array(pack({ a: 1, b: 2 })))
})

test('bad bytes become one InvalidInputError naming the component, with the cause', () => {
  const error = expectInvalid(() => decode(new Uint8Array(12).fill(0xd9), 'storage'), 'storage: expected a msgpack value, got 12 bytes')
  assert.ok(error.cause instanceof Error)
  expectInvalid(() => decode(new Uint8Array(0), 'transport'), /^transport: /)
  expectInvalid(() => decode(new Uint8Array([1, 2]), 'raft'), 'raft: expected a msgpack value, got 2 bytes')
  expectInvalid(() => decode(new Uint8Array([0x92, 0x01]), 'api'), /^api: /)
  expectInvalid(() => decode('not bytes' as never, 'api'), 'api: expected msgpack bytes')
})

test('input above codecInputBytesMax is refused before decoding', () => {
  const big = new Uint8Array(limits.codecInputBytesMax + 1)
  expectInvalid(() => decode(big, 'gossip'), `gossip: expected a msgpack value of at most ${limits.codecInputBytesMax} bytes`)
})

test('encode refuses what it cannot encode, naming the component', () => {
  expectInvalid(() => encode({ huge: 2n ** 70n }, 'raft'), /^raft: expected a value msgpack can encode/)
  expectInvalid(() => encode('x'.repeat(limits.codecInputBytesMax + 1)), /^codec: expected an encoding of at most/)
})

test('mutated and random input never throws anything but InvalidInputError', () => {
  const random = new SeededRandom(20261122)
  const valid = encode(sample)
  for (let i = 0; i < 3000; i++) {
    const bytes = i % 2 === 0 ? valid.slice() : new Uint8Array(random.int(0, 64)).map(() => random.int(0, 255))
    if (i % 2 === 0) for (let flips = random.int(1, 4); flips > 0; flips--) bytes[random.int(0, bytes.length - 1)] = random.int(0, 255)
    try {
      decode(bytes, 'fuzz')
    } catch (error) {
      assert.is((error as Error).name, 'InvalidInputError', String(error))
      assert.match((error as Error).message, /^fuzz: expected a msgpack value, got \d+ bytes$/)
    }
  }
})

test.run()
