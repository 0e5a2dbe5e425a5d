/** SimClock beyond the Clock contract: advance windows, runNext, bounds, XState timing. */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createActor, createMachine } from 'xstate'
import { SimClock } from '../sim/sim-clock.ts'

const test = suite('sim clock')

test('time stands still until it is advanced', () => {
  const clock = new SimClock({ startMs: 500 })
  let fired = false
  clock.setTimeout(() => { fired = true }, 0)
  assert.is(clock.now(), 500)
  assert.is(fired, false)
  assert.is(clock.advance(0), 1)
  assert.is(fired, true)
  assert.is(clock.now(), 500)
})

test('advance fires due timers in order, each at its own due time', () => {
  const clock = new SimClock()
  const seen: Array<[string, number]> = []
  clock.setTimeout(() => seen.push(['b', clock.now()]), 20)
  clock.setTimeout(() => seen.push(['a', clock.now()]), 10)
  clock.setTimeout(() => seen.push(['b2', clock.now()]), 20)
  clock.setTimeout(() => seen.push(['late', clock.now()]), 31)
  assert.is(clock.advance(30), 3)
  assert.equal(seen, [['a', 10], ['b', 20], ['b2', 20]])
  assert.is(clock.now(), 30)
  assert.is(clock.pendingCount, 1)
  assert.is(clock.nextDueAt(), 31)
})

test('timers scheduled during advance fire if they fall inside the window', () => {
  const clock = new SimClock()
  const seen: Array<[string, number]> = []
  clock.setTimeout(() => {
    seen.push(['outer', clock.now()])
    clock.setTimeout(() => seen.push(['inside', clock.now()]), 5)
    clock.setTimeout(() => seen.push(['now', clock.now()]), 0)
    clock.setTimeout(() => seen.push(['outside', clock.now()]), 50)
  }, 10)
  clock.setTimeout(() => seen.push(['same time, scheduled earlier', clock.now()]), 10)
  clock.advance(20)
  assert.equal(seen, [['outer', 10], ['same time, scheduled earlier', 10], ['now', 10], ['inside', 15]])
  assert.is(clock.nextDueAt(), 60)
})

test('runNext jumps to the next timer and reports when none is left', () => {
  const clock = new SimClock()
  const seen: number[] = []
  clock.setTimeout(() => seen.push(clock.now()), 1000)
  const cleared = clock.setTimeout(() => seen.push(-1), 10)
  clock.clearTimeout(cleared)
  assert.is(clock.nextDueAt(), 1000)
  assert.is(clock.runNext(), true)
  assert.equal(seen, [1000])
  assert.is(clock.now(), 1000)
  assert.is(clock.runNext(), false)
  assert.is(clock.nextDueAt(), undefined)
})

test('pendingCount ignores cleared timers, even after heavy churn', () => {
  const clock = new SimClock()
  let fired = 0
  const handles: unknown[] = []
  for (let i = 0; i < 10_000; i++) handles.push(clock.setTimeout(() => { fired++ }, i % 100))
  for (let i = 0; i < 10_000; i++) if (i % 10 !== 0) clock.clearTimeout(handles[i])
  assert.is(clock.pendingCount, 1000)
  clock.advance(100)
  assert.is(fired, 1000)
  assert.is(clock.pendingCount, 0)
})

test('a timer loop that never lets time pass hits the bound', () => {
  const clock = new SimClock({ timersPerAdvanceMax: 100 })
  const loop = (): void => { clock.setTimeout(loop, 0) }
  clock.setTimeout(loop, 0)
  assert.throws(() => clock.advance(10), (error: Error) => error.name === 'AssertionFailedError' && /more than 100 timers/.test(error.message))
})

test('advance from inside a timer callback is refused', () => {
  const clock = new SimClock()
  let caught: unknown
  clock.setTimeout(() => {
    try { clock.advance(1) } catch (error) { caught = error }
  }, 1)
  clock.advance(5)
  assert.instance(caught, Error)
  assert.match((caught as Error).message, 'inside a timer callback')
})

test('an error thrown by a callback leaves the clock consistent', () => {
  const clock = new SimClock()
  clock.setTimeout(() => { throw new Error('boom') }, 10)
  let later = false
  clock.setTimeout(() => { later = true }, 20)
  assert.throws(() => clock.advance(30), /boom/)
  assert.is(clock.now(), 10)
  clock.advance(20)
  assert.is(later, true)
  assert.is(clock.now(), 30)
})

test('advanceTo moves to an absolute time and never backwards', () => {
  const clock = new SimClock({ startMs: 100 })
  clock.advanceTo(250)
  assert.is(clock.now(), 250)
  assert.throws(() => clock.advanceTo(200), /cannot move/)
})

test('XState fires an after transition exactly at its deadline on the sim clock', () => {
  const machine = createMachine({
    id: 'hook',
    initial: 'running',
    states: {
      running: { after: { 5000: { target: 'timedOut' } }, on: { done: 'finished' } },
      timedOut: {},
      finished: {}
    }
  })
  const clock = new SimClock()
  const actor = createActor(machine, { clock }).start()
  assert.is(clock.pendingCount, 1)
  clock.advance(4999)
  assert.is(actor.getSnapshot().value, 'running')
  clock.advance(1)
  assert.is(actor.getSnapshot().value, 'timedOut')
  assert.is(clock.now(), 5000)
  actor.stop()
})

test('XState cancels the delayed transition when the state is left early', () => {
  const machine = createMachine({
    initial: 'running',
    states: {
      running: { after: { 5000: 'timedOut' }, on: { done: 'finished' } },
      timedOut: {},
      finished: { after: { 100: 'running' } }
    }
  })
  const clock = new SimClock()
  const actor = createActor(machine, { clock }).start()
  clock.advance(2000)
  actor.send({ type: 'done' })
  assert.is(actor.getSnapshot().value, 'finished')
  clock.advance(100)
  assert.is(actor.getSnapshot().value, 'running')
  // The first 5000 ms timer was cancelled; the new one counts from 2100.
  clock.advance(4999)
  assert.is(actor.getSnapshot().value, 'running')
  clock.advance(1)
  assert.is(actor.getSnapshot().value, 'timedOut')
  assert.is(clock.now(), 7100)
  actor.stop()
})

test.run()
