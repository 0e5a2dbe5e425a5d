/**
 * The leader's change notices (actors/controller/change-notices.ts) on a simulated clock:
 * a change goes out limits.changeNoticeDelayMs after it (never inside the apply that made
 * it, where it would race the watch answers), a burst is coalesced into one notice
 * carrying the latest revision, notices are spaced at least the interval apart, the
 * interval grows with the machine agents, and a stopped notifier sends nothing.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { ChangeNotifier, changeTopic, parseChangeNotice } from '../actors/controller/change-notices.ts'
import { limits } from '../runtime/limits.ts'
import type { Transport } from '../runtime/transport.ts'
import { SimClock } from '../sim/sim-clock.ts'

const test = suite('change notices')

function notifier (machines = 0): { clock: SimClock, sent: Array<{ at: number, revision: number }>, notices: ChangeNotifier } {
  const clock = new SimClock()
  const sent: Array<{ at: number, revision: number }> = []
  const transport = {
    publish: async (topic: string, data: Uint8Array) => {
      assert.is(topic, changeTopic('m'))
      sent.push({ at: clock.now(), revision: parseChangeNotice(data)!.revision })
    }
  } as unknown as Transport
  return { clock, sent, notices: new ChangeNotifier({ transport, clock, modelUuid: 'm', noticeIntervalMs: 50, machines: () => machines }) }
}

test('a change is announced the notice delay after it, a burst as one notice, and notices an interval apart', () => {
  const delay = limits.changeNoticeDelayMs
  assert.ok(delay > 50, 'the delay is longer than this interval, so both rules show')
  const { clock, sent, notices } = notifier()
  clock.advance(1_000)
  notices.changed(7)
  assert.equal(sent, [], 'not inside the apply that made the change')
  clock.advance(10)
  notices.changed(8)
  clock.advance(delay - 11)
  assert.equal(sent, [], 'held for the delay')
  clock.advance(1)
  assert.equal(sent, [{ at: 1_000 + delay, revision: 8 }], 'the burst as one notice, the latest revision, the delay after its first change')
  notices.changed(9)
  clock.advance(delay - 1)
  assert.is(sent.length, 1)
  clock.advance(1)
  assert.equal(sent.at(-1), { at: 1_000 + 2 * delay, revision: 9 }, 'the delay again, however quiet the interval')
  assert.is(notices.published, 2)
})

test('the interval grows with the machine agents, up to its maximum', () => {
  const per = limits.changeNoticeIntervalPerMachineMs
  assert.is(notifier(10).notices.intervalMs, Math.max(50, 10 * per))
  assert.is(notifier(100).notices.intervalMs, 100 * per)
  assert.is(notifier(1_000_000).notices.intervalMs, limits.changeNoticeIntervalMaxMs)
  // An interval longer than the delay spaces the notices: the next waits for the interval's end.
  const machines = Math.ceil(2 * limits.changeNoticeDelayMs / per)
  const { clock, sent, notices } = notifier(machines)
  clock.advance(1_000)
  notices.changed(1)
  clock.advance(limits.changeNoticeDelayMs)
  assert.equal(sent.map(s => s.revision), [1])
  notices.changed(2)
  clock.advance(machines * per - 1)
  assert.equal(sent.map(s => s.revision), [1])
  clock.advance(1)
  assert.equal(sent.map(s => s.revision), [1, 2])
  assert.is(sent[1]!.at - sent[0]!.at, machines * per)
})

test('a stopped notifier announces nothing, pending or new', () => {
  const { clock, sent, notices } = notifier()
  clock.advance(1_000)
  notices.changed(1)
  clock.advance(limits.changeNoticeDelayMs)
  notices.changed(2)
  notices.stop()
  clock.advance(10_000)
  notices.changed(3)
  clock.advance(10_000)
  assert.equal(sent.map(s => s.revision), [1])
})

test.run()
