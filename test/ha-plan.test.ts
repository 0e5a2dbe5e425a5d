/**
 * What `enable-ha` decides before it changes anything, as Juju's EnableHA
 * (juju/juju state/enableha.go): members that answer are maintained, those that are down
 * removed, and new ones added up to the size asked for (default: the group's own, at
 * least 3); fewer than the group has is refused, as is a group without a quorum; the
 * output lines are Juju's (cmd/juju/commands/enableha.go formatSimple).
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { haPlanLines, planHa, type PlannedMember } from '../agent/cli/ha-plan.ts'

const m = (name: string, up = true): PlannedMember => ({ name, peer: `peer-${name}`, up })

test('grow a group of one to 3 (the default), or to 5', () => {
  assert.equal(planHa('local', [m('c0')], undefined), { wanted: 3, maintain: [m('c0')], remove: [], add: 2 })
  assert.equal(planHa('local', [m('c0'), m('c1'), m('c2')], '5').add, 2)
})

test('replace a member that is down; a plain enable-ha keeps the group\'s size', () => {
  const plan = planHa('local', [m('c0'), m('c1'), m('c2', false)], undefined)
  assert.equal(plan, { wanted: 3, maintain: [m('c0'), m('c1')], remove: [m('c2', false)], add: 1 })
  assert.equal(planHa('local', [m('c0'), m('c1'), m('c2', false)], '3'), plan, 'enable-ha -n 3 replaces it too (it used to refuse: "expected -n above the 3 members")')
  assert.is(planHa('local', [m('c0'), m('c1', false), m('c2'), m('c3'), m('c4', false)], undefined).add, 2, 'a group of 5 stays 5')
})

test('nothing to do when every member answers', () => {
  assert.equal(planHa('local', [m('c0'), m('c1'), m('c2')], '3'), { wanted: 3, maintain: [m('c0'), m('c1'), m('c2')], remove: [], add: 0 })
})

test('refusals, one line each', () => {
  const three = [m('c0'), m('c1'), m('c2')]
  assert.throws(() => planHa('local', three, '1'), (e: Error) => e.message === 'cantrip enable-ha: expected -n of at least the 3 members controller "local" has (enable-ha never removes a working member), got "1"')
  assert.throws(() => planHa('local', three, '4'), (e: Error) => e.message === 'cantrip enable-ha: expected -n as an odd number from 1 to 7, got "4"')
  assert.throws(() => planHa('local', [m('c0'), m('c1', false), m('c2', false)], undefined),
    (e: Error) => e.message === 'cantrip enable-ha: cannot replace members of controller "local": 1 of 3 controllers reachable, 2 needed to commit; bring one back with "cantrip start-agent c1"')
})

test('Juju\'s output lines, empty lists left out', () => {
  assert.is(haPlanLines(['c0', 'c1'], ['c3'], ['c2']), 'maintaining controllers: c0, c1\nadding controllers: c3\nremoving controllers: c2')
  assert.is(haPlanLines(['c0'], [], []), 'maintaining controllers: c0')
})

test.run()
