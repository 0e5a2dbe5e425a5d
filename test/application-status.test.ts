/**
 * The controller's answer to a leader's `status-get --application`
 * (runtime/model/application-status.ts): every unit's status while it fits, under the
 * transport's message limit for 5,000 units with typical statuses, capped (and the rest
 * counted) when charms set long messages; refused to a unit that does not hold the lease
 * on the controller's clock or is not on the asking machine. The leader's machine view,
 * meanwhile, stays the size of its own share.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { encode } from '../runtime/codec.ts'
import { limits } from '../runtime/limits.ts'
import { applicationStatusOf, leaderApplicationStatus } from '../runtime/model/application-status.ts'
import { machineModelView } from '../runtime/model/machine-view.ts'
import { readerOf } from '../runtime/model/model-draft.ts'
import { MemoryController } from './support/model-controller.ts'

const test = suite('application-status: the leader\'s status-get --application, from the controller')

const unitsTotal = 5_000

/** One application of `unitsTotal` units, one per machine; web/0 leads from 0 to 60 s. */
function bigApplication (): MemoryController {
  const c = new MemoryController()
  c.run('add-charm', { url: 'local:web-0', hash: 'a'.repeat(16), metadata: { name: 'web' } })
  c.run('deploy', { application: 'web', charm: 'local:web-0', config: {}, constraints: {}, numUnits: limits.modelUnitsPerCommandMax })
  for (let n = limits.modelUnitsPerCommandMax; n < unitsTotal; n += limits.modelUnitsPerCommandMax) {
    c.run('add-unit', { application: 'web', numUnits: limits.modelUnitsPerCommandMax })
  }
  c.runAs('web/0', 'claim-leadership', { application: 'web', unit: 'web/0', now: 0, durationMs: 60_000 })
  return c
}

/** Each unit's workload status: what charms typically say, or `message(i)`. */
function setStatuses (c: MemoryController, message?: (i: number) => string): void {
  for (let i = 0; i < unitsTotal; i++) {
    const unit = `web/${i}`
    const typical = i % 10 === 0 ? ['blocked', 'waiting for the database relation'] : ['active', 'Unit is ready']
    c.runAs(unit, 'set-unit-status', { unit, status: typical[0] as 'active', message: message?.(i) ?? typical[1]!, now: i })
  }
}

const replyBytes = (answer: object): number => encode({ ok: true, ...answer }).length

test('5,000 units with typical statuses: all of them, well under the message limit', () => {
  const c = bigApplication()
  setStatuses(c)
  const machine = readerOf(c.context).unit('web/0')!.machine
  const answer = leaderApplicationStatus(c.context, 'web/0', 1_000, machine)!
  assert.ok(answer !== undefined)
  assert.is(Object.keys(answer.units).length, unitsTotal)
  assert.is(answer.omitted, 0)
  assert.equal(answer.units['web/10'], { status: 'blocked', message: 'waiting for the database relation', data: {} })
  assert.equal(answer.units['web/4999'], { status: 'active', message: 'Unit is ready', data: {} })
  // In the application's order: web/0 … web/4999.
  assert.equal(Object.keys(answer.units).slice(0, 3), ['web/0', 'web/1', 'web/2'])
  const bytes = replyBytes(answer)
  assert.ok(bytes < limits.applicationStatusReplyBytesMax && bytes < limits.transportMessageBytesMax, `${bytes} bytes`)
  console.log(`  application-status of ${unitsTotal} units with typical statuses: ${bytes} bytes (limit ${limits.transportMessageBytesMax})`)
  // The leader's own machine view: its one unit, not the 5,000 (it was ~1.5 MB with five such applications).
  const view = machineModelView(c.context, machine)
  assert.equal(readerOf(view).application('web')!.units, ['web/0'])
  const viewBytes = encode(view).length
  assert.ok(viewBytes < 16 * 1024, `leader's view ${viewBytes} bytes`)
})

test('long messages on every unit: the answer is capped under the limit and says how many units it left off', () => {
  const c = bigApplication()
  const long = 'x'.repeat(1_000)
  setStatuses(c, i => `${long} ${i}`)
  const answer = leaderApplicationStatus(c.context, 'web/0', 1_000)!
  const listed = Object.keys(answer.units).length
  assert.ok(listed > 0 && listed < unitsTotal, `${listed} listed`)
  assert.is(listed + answer.omitted, unitsTotal)
  // The first units, in order; the last listed is whole.
  assert.equal(Object.keys(answer.units).at(-1), `web/${listed - 1}`)
  assert.is(answer.units[`web/${listed - 1}`]!.message, `${long} ${listed - 1}`)
  const bytes = replyBytes(answer)
  assert.ok(bytes <= limits.applicationStatusReplyBytesMax + 64 && bytes < limits.transportMessageBytesMax, `${bytes} bytes`)
  // A smaller cap cuts earlier, by bytes.
  const small = applicationStatusOf(c.context, 'web/0', 10_000)!
  assert.ok(Object.keys(small.units).length < 10 && replyBytes(small) <= 10_000 + 64, `${replyBytes(small)} bytes`)
})

test('refused unless the unit holds the lease on the controller\'s clock and is on the asking machine', () => {
  const c = bigApplication()
  const reader = readerOf(c.context)
  const machine = reader.unit('web/0')!.machine
  assert.ok(leaderApplicationStatus(c.context, 'web/0', 59_999, machine) !== undefined)
  assert.is(leaderApplicationStatus(c.context, 'web/0', 60_000, machine), undefined, 'the lease has run out at the controller')
  assert.is(leaderApplicationStatus(c.context, 'web/1', 1_000, reader.unit('web/1')!.machine), undefined, 'web/1 does not lead')
  assert.is(leaderApplicationStatus(c.context, 'web/0', 1_000, reader.unit('web/1')!.machine), undefined, 'asked by another machine')
  assert.is(leaderApplicationStatus(c.context, 'web/9999', 1_000), undefined, 'no such unit')
})

test.run()
