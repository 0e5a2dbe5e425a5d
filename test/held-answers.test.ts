/**
 * HeldAnswers (runtime/raft/held-answers.ts): a peer's requests wait, oldest first, for
 * this host's next messages to that peer, and each is answered exactly once. The case
 * behind issue 28's extra messages: a leader's commit index arrives while the follower
 * still syncs the append before it. Both requests must then be answered with the two
 * acknowledgements in turn, not the first one empty and the second acknowledgement sent as
 * a request of its own.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { HeldAnswers, noMessages } from '../runtime/raft/held-answers.ts'
import { SimClock } from '../sim/sim-clock.ts'

const bytes = (...values: number[]): Uint8Array => new Uint8Array(values)

function track (promise: Promise<Uint8Array>): { value: Uint8Array | undefined } {
  const box: { value: Uint8Array | undefined } = { value: undefined }
  void promise.then(value => { box.value = value })
  return box
}

const settle = async (): Promise<void> => { for (let i = 0; i < 5; i++) await Promise.resolve() }

test('two requests held while syncing are answered in order, each with an acknowledgement', async () => {
  const clock = new SimClock()
  const held = new HeldAnswers(clock, 300, 8)
  const append = track(held.hold('leader', 0))
  const commitIndex = track(held.hold('leader', 1))
  await settle()
  assert.is(append.value, undefined, 'the first is still held when the second arrives')
  assert.ok(held.answer('leader', () => bytes(1)), 'the acknowledgement of the append rides on an answer')
  held.release(1)
  assert.ok(held.answer('leader', () => bytes(2)), 'the acknowledgement of the commit index rides on the other')
  held.release(2)
  await settle()
  assert.equal(append.value, bytes(1))
  assert.equal(commitIndex.value, bytes(2))
  assert.is(held.answer('leader', () => bytes(3)), false, 'none left: the next message goes as a request')
})

test('release answers empty only the requests stepped before the Ready', async () => {
  const held = new HeldAnswers(new SimClock(), 300, 8)
  const early = track(held.hold('a', 0))
  const late = track(held.hold('a', 1))
  held.release(1)
  await settle()
  assert.is(early.value, noMessages)
  assert.is(late.value, undefined)
  held.release(Infinity)
  await settle()
  assert.is(late.value, noMessages)
})

test('past the per-peer maximum the oldest is answered empty; one held too long is passed over for a younger', async () => {
  const clock = new SimClock()
  const held = new HeldAnswers(clock, 100, 2)
  const first = track(held.hold('a', 0))
  const second = track(held.hold('a', 0))
  clock.advance(150)
  const third = track(held.hold('a', 0))
  await settle()
  assert.is(first.value, noMessages, 'the oldest of three, with room for two')
  assert.ok(held.answer('a', () => bytes(9)), 'the young one carries the messages')
  await settle()
  assert.is(second.value, noMessages, 'held past the hold time: its sender has likely given up')
  assert.equal(third.value, bytes(9))
  const last = track(held.hold('a', 0))
  clock.advance(150)
  assert.is(held.answer('a', () => bytes(7)), false, 'only a stale one held: the caller sends a request')
  await settle()
  assert.is(last.value, noMessages)
})

test.run()
