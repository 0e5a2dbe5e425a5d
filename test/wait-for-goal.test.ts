/**
 * `cantrip wait-for`'s goal, one wait step per model read, the scopes it queries and the
 * summary it prints (agent/cli/wait-for-goal.ts, wait-for-scopes.ts, wait-for-summary.ts),
 * over a model built with real model commands. Juju's behaviour followed: the default
 * query per kind and the waitFor steps of cmd/juju/waitfor/application.go, unit.go,
 * machine.go, model.go (not found: wait; query true or life dead: done; removed after
 * being seen: an error) and their outputXSummary YAML; the timeout message of strategy.go.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { FullModel } from '../agent/cli/connection.ts'
import { defaultQueries, timedOut, waitForGoal, waitForStep, type WaitForStep } from '../agent/cli/wait-for-goal.ts'
import { waitForTarget, type WaitForKind } from '../agent/cli/wait-for-scopes.ts'
import { summaryLine, summaryYaml } from '../agent/cli/wait-for-summary.ts'
import { readerOf } from '../runtime/model/model-draft.ts'
import type { AgentStatus, WorkloadStatus } from '../runtime/model/model-types.ts'
import { MemoryController } from './support/model-controller.ts'

const at = Date.UTC(2026, 10, 27, 10, 0, 0)

function world (): { c: MemoryController, full: () => FullModel } {
  const c = new MemoryController()
  c.run('add-charm', { url: 'local:tiny-bash-1', hash: 'a'.repeat(16), metadata: { name: 'tiny-bash' } })
  c.run('deploy', { application: 'tiny-bash', charm: 'local:tiny-bash-1', config: {}, constraints: {}, numUnits: 2 })
  return { c, full: () => ({ ok: true, model: c.model(), presence: {}, leader: 'c0', term: 2 }) }
}

function step (full: FullModel, kind: WaitForKind, name: string, flags: { query?: string, status?: string } = {}, seen = false): WaitForStep {
  return waitForStep(kind, name, waitForGoal(kind, flags), waitForTarget(kind, full, name), seen)
}

function settle (c: MemoryController, unit: string, workload: WorkloadStatus, agent: AgentStatus): void {
  const machine = readerOf(c.model()).unit(unit)!.machine
  c.run('set-agent-status', { unit, status: agent, message: '', now: at }, { kind: 'machine', id: machine })
  c.runAs(unit, 'set-unit-status', { unit, status: workload, message: '', now: at })
}

test('Juju\'s default queries per kind (SetFlags in cmd/juju/waitfor/*.go)', () => {
  assert.equal(defaultQueries, {
    application: 'life=="alive" && status=="active"',
    unit: 'life=="alive" && workload-status=="active"',
    machine: 'life=="alive" && status=="started"',
    model: 'life=="alive" && status=="available"'
  })
  assert.equal(waitForGoal('unit', {}), waitForGoal('unit', { query: defaultQueries.unit }))
})

test('application: not found waits, found waits with its status, active is done with the reads; removed after seen fails', () => {
  const { c, full } = world()
  assert.equal(step(full(), 'application', 'other'), { done: false, progress: 'application "other" not found, waiting...' })
  assert.equal(step(full(), 'application', 'tiny-bash', { query: 'status=="active"' }), { done: false, progress: 'application "tiny-bash" found with "waiting", waiting...' })
  settle(c, 'tiny-bash/0', 'active', 'idle')
  settle(c, 'tiny-bash/1', 'active', 'executing')
  const done = step(full(), 'application', 'tiny-bash', { query: 'status=="active"' })
  assert.ok(done.done)
  assert.is(summaryLine('application', 'tiny-bash', done.life), 'Application "tiny-bash" is running')
  assert.is(summaryYaml('application', done.reads), 'properties:\n  status: active\n')
  // Removing: while its units go it is dying, and the wait goes on (Juju waits until the query holds or it is dead).
  c.run('remove-application', { application: 'tiny-bash' })
  assert.is(waitForTarget('application', full(), 'tiny-bash')!.life, 'dying')
  assert.not.ok(step(full(), 'application', 'tiny-bash', { query: 'status=="blocked"' }, true).done)
  // Gone after it was seen: Juju's "application empty removed" error; never seen: still waiting.
  c.run('deploy', { application: 'empty', charm: 'local:tiny-bash-1', config: {}, constraints: {}, numUnits: 0 })
  assert.not.ok(step(full(), 'application', 'empty').done)
  c.run('remove-application', { application: 'empty' })
  assert.throws(() => step(full(), 'application', 'empty', {}, true), /^cantrip wait-for: application "empty" removed$/)
  assert.equal(step(full(), 'application', 'empty'), { done: false, progress: 'application "empty" not found, waiting...' })
})

test('unit: workload and agent status as status shows them; the summary lists what the query read', () => {
  const { c, full } = world()
  const query = 'workload-status=="active" && agent-status=="idle"'
  assert.equal(step(full(), 'unit', 'tiny-bash/0', { query }), { done: false, progress: 'unit "tiny-bash/0" found, waiting...' })
  settle(c, 'tiny-bash/0', 'active', 'idle')
  const done = step(full(), 'unit', 'tiny-bash/0', { query })
  assert.ok(done.done)
  assert.is(summaryLine('unit', 'tiny-bash/0', done.life), 'unit "tiny-bash/0" is running')
  assert.is(summaryYaml('unit', done.reads), 'properties:\n  agent-status: idle\n  workload-status: active\n')
  const names = Object.keys(waitForTarget('unit', full(), 'tiny-bash/0')!.scope.values).sort()
  assert.equal(names, ['agent-status', 'application', 'base', 'charm-url', 'life', 'machine-id', 'machines', 'name', 'principal', 'private-address', 'public-address', 'subordinate', 'workload-message', 'workload-status'])
})

test('model: forEach over every unit; the summary nests each unit\'s reads under units', () => {
  const { c, full } = world()
  const query = 'forEach(units, unit => unit.workload-status == "active")'
  assert.equal(step(full(), 'model', 'default', { query }), { done: false, progress: 'model "default" found, waiting...' })
  settle(c, 'tiny-bash/0', 'active', 'idle')
  assert.not.ok(step(full(), 'model', 'default', { query }).done, 'tiny-bash/1 is not active yet')
  settle(c, 'tiny-bash/1', 'active', 'idle')
  const done = step(full(), 'model', 'default', { query })
  assert.ok(done.done)
  assert.is(summaryLine('model', 'default', done.life), 'Model "default" is running')
  assert.is(summaryYaml('model', done.reads), 'properties: {}\nunits:\n  tiny-bash/0:\n    workload-status: active\n  tiny-bash/1:\n    workload-status: active\n')
  assert.ok(step(full(), 'model', 'default').done, 'the default: alive and available')
  assert.ok(step(full(), 'model', 'default', { query: 'forEach(applications, app => app.status == "active")' }).done)
})

test('machine: status is the agent\'s; --status also matches the instance status; --status missing waits for it to go', () => {
  const { c, full } = world()
  assert.not.ok(step(full(), 'machine', '0').done)
  c.run('set-machine-status', { machine: '0', instanceStatus: 'provisioning error', message: 'no room', now: at }, { kind: 'controller', id: 'c' })
  assert.ok(step(full(), 'machine', '0', { status: 'provisioning error' }).done)
  c.run('set-machine-status', { machine: '0', instanceStatus: 'running', message: 'i-0', now: at }, { kind: 'controller', id: 'c' })
  c.run('set-machine-status', { machine: '0', agentStatus: 'started', message: '', now: at }, { kind: 'machine', id: '0' })
  const done = step(full(), 'machine', '0')
  assert.ok(done.done)
  assert.is(summaryYaml('machine', done.reads), 'properties:\n  life: alive\n  status: started\n')
  assert.equal(step(full(), 'machine', '0', { status: 'missing' }), { done: false, progress: 'machine "0" found, waiting...' })
  assert.ok(step(full(), 'machine', '9', { status: 'missing' }).done)
})

test('--status is shorthand for the status query; with --query it is refused; a bad query is refused before any read', () => {
  assert.equal(waitForGoal('application', { status: 'blocked' }), waitForGoal('application', { query: 'status=="blocked"' }))
  assert.equal(waitForGoal('unit', { status: 'error' }), waitForGoal('unit', { query: 'workload-status=="error"' }))
  assert.throws(() => waitForGoal('unit', { status: 'active', query: 'life=="alive"' }), /^cantrip wait-for: expected --query or --status, not both, got "--status active"$/)
  assert.throws(() => waitForGoal('unit', { status: 'a"b' }), /^cantrip wait-for: expected a status like active, blocked or started for --status, got "a\\"b"$/)
  assert.throws(() => waitForGoal('unit', { query: 'status==' }), /^cantrip wait-for: cannot parse query at column 9/)
  assert.is(timedOut('tiny-bash').message, 'timed out waiting for "tiny-bash" to reach goal state')
})

test.run()
