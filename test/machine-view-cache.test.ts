/**
 * A controller's last views sent to machine agents (actors/controller/machine-view-cache.ts):
 * a fetch naming the view it holds gets `unchanged` while nothing its machine sees has
 * changed — its own units' agent status reports included, since views do not carry them —
 * and otherwise the parts of the view that changed (or the whole view, to an agent that
 * names no view or one not kept); a bad `since` is refused with one line.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { apiOperations, isInvalid } from '../actors/controller/api-operations.ts'
import { MachineViewCache } from '../actors/controller/machine-view-cache.ts'
import { agentStatusNotInView, machineModelView, sameViewContent, sameViewSources } from '../runtime/model/machine-view.ts'
import { readerOf } from '../runtime/model/model-draft.ts'
import { tableGet } from '../runtime/model/table.ts'
import { MemoryController } from './support/model-controller.ts'

/** web/0 deployed; with `started`, its agent has made its first report (which moves its workload: see below). */
function world (started = true): { c: MemoryController, machine: string } {
  const c = new MemoryController()
  c.run('add-charm', { url: 'local:web-0', hash: 'a'.repeat(16), metadata: { name: 'web' } })
  c.run('deploy', { application: 'web', charm: 'local:web-0', config: {}, constraints: {}, numUnits: 1 })
  if (started) c.runAs('web/0', 'set-agent-status', { unit: 'web/0', status: 'executing', message: 'installing charm', now: 4 })
  return { c, machine: readerOf(c.context).unit('web/0')!.machine }
}

// The agent's first report also ends "waiting for machine" with "agent initialising" (Juju's
// uniter init, status-commands.ts): a workload change, so that one is in the view.
test('the first agent report changes the view: its workload leaves "waiting for machine"', () => {
  const { c, machine } = world(false)
  const before = c.context
  c.runAs('web/0', 'set-agent-status', { unit: 'web/0', status: 'executing', message: 'installing charm', now: 4 })
  assert.not.ok(sameViewSources(before, c.context, machine))
  assert.equal(tableGet(machineModelView(c.context, machine).units, 'web/0')!.workload.message, 'agent initialising')
})

test('the view held is answered unchanged until something the machine sees changes', () => {
  const { c, machine } = world()
  const cache = new MachineViewCache()
  const first = cache.answer(c.context, machine, undefined)
  assert.ok('model' in first, 'the first fetch gets the whole view')
  const held = first.model.revision
  c.runAs('web/0', 'set-agent-status', { unit: 'web/0', status: 'executing', message: 'running install hook', now: 5 })
  assert.equal(cache.answer(c.context, machine, held), { ok: true, unchanged: true, revision: c.context.revision, term: 1 },
    'its unit\'s own agent status is not in the view')
  c.runAs('web/0', 'set-unit-status', { unit: 'web/0', status: 'active', message: 'ready', now: 6 })
  const changed = cache.answer(c.context, machine, held)
  assert.ok('changed' in changed, 'a workload status is in the view')
  assert.is(changed.since, held)
  assert.equal(Object.keys(changed.changed).sort(), ['revision', 'term', 'units'], 'only the units table is sent')
  const now = { ...first.model, ...changed.changed }
  assert.ok(sameViewContent(now, machineModelView(c.context, machine)), 'the view held with the changes is the view now')
  assert.is(now.revision, c.context.revision)
  assert.is(tableGet(now.units, 'web/0')!.workload.status, 'active')
  assert.equal(tableGet(now.units, 'web/0')!.agent, agentStatusNotInView)
  assert.ok('unchanged' in cache.answer(c.context, machine, now.revision), 'the new view is the one kept')
  assert.ok('model' in cache.answer(c.context, machine, held), 'an older view gets the whole view again')
})

test('an agent status report is seen to leave the view as it was without building it', () => {
  const { c, machine } = world()
  const before = c.context
  c.runAs('web/0', 'set-agent-status', { unit: 'web/0', status: 'executing', message: 'running install hook', now: 5 })
  assert.ok(sameViewSources(before, c.context, machine), 'only the agent status and its history moved')
  assert.ok(sameViewContent(machineModelView(before, machine), machineModelView(c.context, machine)))
  const reported = c.context
  c.runAs('web/0', 'set-unit-status', { unit: 'web/0', status: 'active', message: 'ready', now: 6 })
  assert.not.ok(sameViewSources(reported, c.context, machine), 'a workload status is in the view')
  const active = c.context
  c.run('add-unit', { application: 'web', numUnits: 1, placement: [machine] })
  assert.not.ok(sameViewSources(active, c.context, machine), 'so is a new unit on the machine')
})

test('a model-config change is answered with the config alone, and the view kept still follows every later change', () => {
  const { c, machine } = world()
  const cache = new MachineViewCache()
  const first = cache.answer(c.context, machine, undefined)
  assert.ok('model' in first)
  let view = first.model
  const step = (): ReturnType<MachineViewCache['answer']> => {
    const reply = cache.answer(c.context, machine, view.revision)
    if ('changed' in reply) view = { ...view, ...reply.changed }
    if ('model' in reply) view = reply.model
    assert.ok(sameViewContent(view, machineModelView(c.context, machine)), 'the view held is the one a fetch builds')
    return reply
  }
  c.run('set-model-config', { config: { 'update-status-hook-interval': '6m' } })
  const changed = step()
  assert.ok('changed' in changed)
  assert.equal(Object.keys(changed.changed).sort(), ['config', 'revision', 'term'])
  assert.is(changed.changed.config, c.context.config, 'the model\'s own config object, as a built view holds')
  // The same value again: a new config object with the same content changes nothing.
  c.run('set-model-config', { config: { 'update-status-hook-interval': '6m' } })
  assert.ok('unchanged' in step())
  // The keys the view read are still known: a change of its unit names its machine, and reaches it.
  const before = c.context
  c.runAs('web/0', 'set-unit-status', { unit: 'web/0', status: 'active', message: 'ready', now: 6 })
  const affected = cache.affected(before, c.context)
  assert.ok(affected !== 'all' && affected.has(machine), 'the footprint kept names the machine')
  const unit = step()
  assert.ok('changed' in unit && Object.keys(unit.changed).includes('units'))
  c.run('add-machine', {})
  assert.ok('unchanged' in step(), 'another machine is not in the view')
})

// Any machine's change replaces the machines table: the records the view read, not the
// tables, say whether it changed, or a busy model proves almost no view unchanged.
test('another machine\'s change leaves the view held unchanged without building it', () => {
  const { c, machine } = world()
  c.run('add-machine', {})
  const other = String(c.context.counters.machine - 1)
  assert.is.not(other, machine)
  const cache = new MachineViewCache()
  const first = cache.answer(c.context, machine, undefined)
  assert.ok('model' in first)
  const before = c.context
  c.run('set-machine-status', { machine: other, instanceStatus: 'running', message: 'running', now: 7 }, { kind: 'controller', id: '0' })
  assert.is.not(c.context.machines, before.machines, 'the machines table moved')
  assert.ok(sameViewSources(before, c.context, machine), 'no record the view read moved')
  assert.equal(cache.answer(c.context, machine, first.model.revision), { ok: true, unchanged: true, revision: c.context.revision, term: 1 })
  const mine = c.context
  c.run('set-machine-status', { machine, instanceStatus: 'running', message: 'running', now: 8 }, { kind: 'controller', id: '0' })
  assert.not.ok(sameViewSources(mine, c.context, machine), 'its own machine record is read')
})

test('a view kept at another revision, or by another cache, is never taken for the one held', () => {
  const { c, machine } = world()
  const cache = new MachineViewCache()
  const first = cache.answer(c.context, machine, undefined)
  assert.ok('model' in first)
  assert.ok('model' in cache.answer(c.context, machine, first.model.revision - 1))
  assert.ok('model' in new MachineViewCache().answer(c.context, machine, first.model.revision), 'a restarted controller knows no view')
})

test('the least recently asked machine is forgotten beyond the bound', () => {
  const { c, machine } = world()
  const cache = new MachineViewCache(1)
  const first = cache.answer(c.context, machine, undefined)
  assert.ok('model' in first)
  cache.answer(c.context, 'other', undefined)
  assert.ok('model' in cache.answer(c.context, machine, first.model.revision))
})

test('machine-model: a since that is not a revision is refused with one line', () => {
  const parse = apiOperations['machine-model'].parse
  assert.equal(parse({ op: 'machine-model', machine: '0', since: 7 }, 'machine-0'), { op: 'machine-model', machine: '0', since: 7 })
  assert.equal(parse({ op: 'machine-model', machine: '0' }, 'machine-0'), { op: 'machine-model', machine: '0' })
  const bad = parse({ op: 'machine-model', machine: '0', since: 'x' }, 'machine-0')
  assert.ok(isInvalid(bad))
  assert.is(bad.invalid, 'controller api: expected "since" to be a revision (an integer >= 0), got "x"')
  assert.ok(isInvalid(parse({ op: 'machine-model', machine: '0', since: -1 }, 'machine-0')))
})

test.run()
