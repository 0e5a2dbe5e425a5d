/**
 * The leader's change notices (actors/controller/change-notices.ts) on a simulated clock:
 * the first change after a quiet interval goes out at once, the rest of a burst is
 * coalesced into one notice at the interval's end carrying the latest revision, the
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

test('a change after a quiet interval is announced at once; a burst after it is one notice at the interval\'s end', () => {
  const { clock, sent, notices } = notifier()
  clock.advance(1_000)
  notices.changed(7)
  assert.equal(sent, [{ at: 1_000, revision: 7 }], 'at once')
  clock.advance(10)
  notices.changed(8)
  clock.advance(5)
  notices.changed(9)
  assert.is(sent.length, 1, 'held within the interval')
  clock.advance(35)
  assert.equal(sent, [{ at: 1_000, revision: 7 }, { at: 1_050, revision: 9 }], 'the burst as one notice, the latest revision')
  clock.advance(200)
  notices.changed(10)
  assert.equal(sent.at(-1), { at: 1_250, revision: 10 }, 'quiet again: at once')
  assert.is(notices.published, 3)
})

test('the interval grows with the machine agents, up to its maximum', () => {
  const per = limits.changeNoticeIntervalPerMachineMs
  assert.is(notifier(10).notices.intervalMs, Math.max(50, 10 * per))
  assert.is(notifier(100).notices.intervalMs, 100 * per)
  assert.is(notifier(1_000_000).notices.intervalMs, limits.changeNoticeIntervalMaxMs)
  const { clock, sent, notices } = notifier(100)
  clock.advance(1_000)
  notices.changed(1)
  notices.changed(2)
  clock.advance(100 * per - 1)
  assert.equal(sent.map(s => s.revision), [1])
  clock.advance(1)
  assert.equal(sent.map(s => s.revision), [1, 2])
})

test('a stopped notifier announces nothing, pending or new', () => {
  const { clock, sent, notices } = notifier()
  clock.advance(1_000)
  notices.changed(1)
  notices.changed(2)
  notices.stop()
  clock.advance(1_000)
  notices.changed(3)
  assert.equal(sent.map(s => s.revision), [1])
})

test.run()
