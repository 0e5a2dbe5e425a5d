/**
 * Operations without processes: `enqueue-operation` (what `run` and `exec` send) checked
 * and queued by the model, an exec task's outcome kept by `complete-command`, and the
 * CLI's views of them — `exec`'s plain output, `operations`' table, `show-operation`'s
 * and `show-task`'s documents — in Juju 3.6's shapes (cmd/juju/action/exec.go,
 * common.go printExecOutput/processOperationResults, listoperations.go, showoperation.go).
 * The real-process side is test/cli-exec.test.ts.
 */
import '../runtime/polyfill.ts'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { parse } from 'yaml'
import { checkExec, execUnits, plainExecOutput } from '../agent/cli/commands/exec.ts'
import { actionsOutput, showActionOutput, showApplicationDocument } from '../agent/cli/commands/charm-actions.ts'
import { matchingOperations, operationsTable } from '../agent/cli/commands/operations.ts'
import { plainTaskOutput } from '../agent/cli/task-plain-output.ts'
import { operationDocument, operationsOf, taskDocument } from '../agent/cli/operation-view.ts'
import { reportRunning, reportScheduled, reportWaiting } from '../agent/cli/operation-progress.ts'
import { tableGet } from '../runtime/model/table.ts'
import { MemoryController } from './support/model-controller.ts'

const t0 = Date.UTC(2026, 10, 27, 1, 2, 3)

function model (): MemoryController {
  const c = new MemoryController()
  c.run('add-charm', {
    url: 'local:kv-0', hash: '1'.repeat(16),
    metadata: { name: 'kv', actions: { put: { description: 'store', params: { key: { type: 'string' }, value: { type: 'string', default: 'x' } }, required: ['key'] }, hello: {} } }
  })
  c.run('deploy', { application: 'kv', charm: 'local:kv-0', config: {}, constraints: {}, numUnits: 2 })
  c.runAs('kv/1', 'claim-leadership', { application: 'kv', unit: 'kv/1', now: 1, durationMs: 300_000 })
  return c
}

const ops = suite('operations')

ops('an exec operation: one id for the operation, one task per unit from the same sequence; the unit gets a command, the record its output', () => {
  const c = model()
  const result = c.run('enqueue-operation', { units: ['kv/0', 'kv/1'], task: { kind: 'exec', commands: 'hostname', timeoutMs: 60_000 }, now: t0 })
  assert.is(result.operationId, '1')
  assert.equal(result.tasks, [{ unit: 'kv/0', id: '2' }, { unit: 'kv/1', id: '3' }])
  assert.equal(tableGet(c.context.units, 'kv/0')!.commands, [{ id: '2', commands: 'hostname', timeoutMs: 60_000 }])
  c.runAs('kv/0', 'complete-command', { unit: 'kv/0', commandId: '2', outcome: { exitCode: 0, stdout: 'h0\n', stderr: '' }, now: t0 + 1000 })
  c.runAs('kv/1', 'complete-command', { unit: 'kv/1', commandId: '3', outcome: { exitCode: 3, stdout: '', stderr: 'boom\n' }, now: t0 + 2000 })
  const two = tableGet(c.context.actions, '2')!
  assert.equal([two.name, two.status, two.results, two.operation], ['juju-exec', 'completed', { 'return-code': 0, stdout: 'h0\n', stderr: '' }, '1'])
  assert.equal(taskDocument(two), {
    id: '2', results: { 'return-code': 0, stdout: 'h0\n' }, status: 'completed',
    timing: { enqueued: '2026-11-27 01:02:03 +0000 UTC', completed: '2026-11-27 01:02:04 +0000 UTC' }, unit: 'kv/0'
  })
  assert.equal(tableGet(c.context.units, 'kv/0')!.commands, [])
  // Juju's plain output: each unit's output under its name when there are several.
  assert.is(plainExecOutput([two, tableGet(c.context.actions, '3')!]), 'kv/0:\nh0\n\nkv/1:\nboom\n\n')
  assert.is(plainExecOutput([two]), 'h0\n')
  const [op] = operationsOf(c.context)
  assert.equal([op!.id, op!.status, op!.summary], ['1', 'completed', 'exec hostname'])
  assert.is(operationsTable([op!]), [
    'Id  Status     Started  Finished             Task IDs  Summary',
    ' 1  completed           2026-11-27T01:02:05  2,3       exec hostname'
  ].join('\n'))
})

ops('a command killed at its timeout fails its task, with Juju\'s message', () => {
  const c = model()
  c.run('enqueue-operation', { units: ['kv/0'], task: { kind: 'exec', commands: 'sleep 100', timeoutMs: 1000 } })
  c.runAs('kv/0', 'complete-command', { unit: 'kv/0', commandId: '2', outcome: { exitCode: 1, stdout: '', stderr: '', timedOut: true } })
  assert.equal([tableGet(c.context.actions, '2')!.status, tableGet(c.context.actions, '2')!.message], ['failed', 'command timed out'])
})

ops('run: parameters checked against the action\'s schema before anything is queued; defaults filled in', () => {
  const c = model()
  const missing = c.apply({ type: 'enqueue-operation', requestId: 'r1', proposer: { kind: 'user', name: 'admin' }, units: ['kv/0'], task: { kind: 'action', name: 'put', parameters: {} } })
  assert.equal(missing, { ok: false, index: missing.index, error: 'controller: cannot run action "put": validation failed: (root) : "key" property is missing and required, given {}' })
  const unknown = c.apply({ type: 'enqueue-operation', requestId: 'r2', proposer: { kind: 'user', name: 'admin' }, units: ['kv/0'], task: { kind: 'action', name: 'hello', parameters: { x: 1 } } })
  assert.ok(!unknown.ok && /additional property "x" is not allowed/.test(unknown.error), JSON.stringify(unknown))
  assert.is(c.context.actions.size, 0, 'nothing was queued')
  assert.equal(tableGet(c.context.units, 'kv/0')!.actions, [])
  assert.is(c.context.counters.task, 1, 'no id was spent')
  const ok = c.run('enqueue-operation', { units: ['kv/0'], task: { kind: 'action', name: 'put', parameters: { key: 'a' } }, now: t0 })
  assert.equal(tableGet(c.context.actions, ok.tasks![0]!.id)!.parameters, { key: 'a', value: 'x' })
  assert.equal(tableGet(c.context.units, 'kv/0')!.actions, ['2'])
  const doc = operationDocument(operationsOf(c.context)[0]!)
  assert.equal(doc, {
    summary: 'put run on unit-kv-0', status: 'pending', action: { name: 'put', parameters: { key: 'a', value: 'x' } },
    timing: { enqueued: '2026-11-27 01:02:03 +0000 UTC' }, tasks: { 2: { host: 'kv/0', status: 'pending', timing: { enqueued: '2026-11-27 01:02:03 +0000 UTC' } } }
  })
  c.runAs('kv/0', 'complete-action', { unit: 'kv/0', actionId: '2', status: 'failed', message: 'exit status 1', results: { 'return-code': 1, stdout: 'partial\n' } })
  // show-task's plain output is run's (cmd/juju/action/common.go printPlainOutput): no own results, a blank line, then stdout.
  assert.is(plainTaskOutput(tableGet(c.context.actions, '2')!), 'Action id 2 failed: exit status 1\n\npartial\n')
})

ops('the task lifecycle (Juju 3: pending → running → completed|failed): start-task marks it running with its Started time, shown by operations, show-operation and show-task', () => {
  // Juju: apiserver/facades/agent/uniter ActionBegin/ActionFinish; cmd/juju/action/listoperations.go (Started column), showtask.go timing.
  const c = model()
  c.run('enqueue-operation', { units: ['kv/0', 'kv/1'], task: { kind: 'exec', commands: 'hostname', timeoutMs: 60_000 }, now: t0 })
  assert.is(operationsOf(c.context)[0]!.status, 'pending')
  c.runAs('kv/0', 'start-task', { unit: 'kv/0', taskId: '2', now: t0 + 1000 })
  const running = tableGet(c.context.actions, '2')!
  assert.equal([running.status, running.startedAtMs], ['running', t0 + 1000])
  assert.is(plainTaskOutput(running), 'Task 2 running\n\n')
  let [op] = operationsOf(c.context)
  assert.equal([op!.status, op!.startedAtMs, op!.completedAtMs], ['running', t0 + 1000, undefined])
  assert.is(operationsTable([op!]), [
    'Id  Status   Started              Finished  Task IDs  Summary',
    ' 1  running  2026-11-27T01:02:04            2,3       exec hostname'
  ].join('\n'))
  // A repeat (the agent resumed after a restart) keeps the first start.
  c.runAs('kv/0', 'start-task', { unit: 'kv/0', taskId: '2', now: t0 + 5000 })
  assert.is(tableGet(c.context.actions, '2')!.startedAtMs, t0 + 1000)
  // Another unit's task, or none at all, is refused in one line.
  const other = c.apply({ type: 'start-task', requestId: 's1', proposer: { kind: 'unit', name: 'kv/0' }, unit: 'kv/0', taskId: '3' })
  assert.equal(other, { ok: false, index: other.index, error: 'controller: cannot start task "3" on "kv/0": unit "kv/0" has no task "3"' })
  c.runAs('kv/0', 'complete-command', { unit: 'kv/0', commandId: '2', outcome: { exitCode: 0, stdout: 'h0\n', stderr: '' }, now: t0 + 2000 })
  c.runAs('kv/1', 'start-task', { unit: 'kv/1', taskId: '3', now: t0 + 1500 })
  c.runAs('kv/1', 'complete-command', { unit: 'kv/1', commandId: '3', outcome: { exitCode: 0, stdout: 'h1\n', stderr: '' }, now: t0 + 3000 })
  assert.equal(taskDocument(tableGet(c.context.actions, '2')!).timing, {
    completed: '2026-11-27 01:02:05 +0000 UTC', enqueued: '2026-11-27 01:02:03 +0000 UTC', started: '2026-11-27 01:02:04 +0000 UTC'
  })
  ;[op] = operationsOf(c.context)
  assert.equal([op!.status, op!.startedAtMs, op!.completedAtMs], ['completed', t0 + 1000, t0 + 3000])
  assert.equal(operationDocument(op!)['timing'], { enqueued: '2026-11-27 01:02:03 +0000 UTC', started: '2026-11-27 01:02:04 +0000 UTC', completed: '2026-11-27 01:02:06 +0000 UTC' })
  // Finished: a late start changes nothing.
  c.runAs('kv/1', 'start-task', { unit: 'kv/1', taskId: '3', now: t0 + 9000 })
  assert.equal([tableGet(c.context.actions, '3')!.status, tableGet(c.context.actions, '3')!.startedAtMs], ['completed', t0 + 1500])
  // An action completes from running too.
  c.run('enqueue-operation', { units: ['kv/0'], task: { kind: 'action', name: 'hello', parameters: {} }, now: t0 })
  c.runAs('kv/0', 'start-task', { unit: 'kv/0', taskId: '5', now: t0 + 100 })
  c.runAs('kv/0', 'complete-action', { unit: 'kv/0', actionId: '5', status: 'completed', results: {}, now: t0 + 200 })
  assert.is(tableGet(c.context.actions, '5')!.status, 'completed')
})

ops('run and exec --background: Juju\'s "Scheduled operation" lines and hints; waiting, run\'s progress lines (cmd/juju/action/common.go)', () => {
  const lines: string[] = []
  const out: string[] = []
  reportScheduled('1', [{ unit: 'kv/0', id: '2' }], text => out.push(text), text => lines.push(text))
  assert.equal(lines, ['Scheduled operation 1 with task 2', 'Check operation status with \'cantrip show-operation 1\'', 'Check task status with \'cantrip show-task 2\''])
  assert.equal(out, [])
  lines.length = 0
  reportScheduled('4', [{ unit: 'kv/0', id: '5' }, { unit: 'kv/1', id: '6' }], text => out.push(text), text => lines.push(text))
  assert.equal(lines, ['Scheduled operation 4 with 2 tasks', 'Check operation status with \'cantrip show-operation 4\'', 'Check task status with \'cantrip show-task <id>\''])
  assert.equal(out, ['kv/0:\n  id: "5"\nkv/1:\n  id: "6"'])
  lines.length = 0
  reportRunning('1', [{ unit: 'kv/0', id: '2' }], text => lines.push(text))
  reportWaiting({ unit: 'kv/0', id: '2' }, text => lines.push(text))
  assert.equal(lines, ['Running operation 1 with 1 task', '  - task 2 on unit-kv-0', '', 'Waiting for task 2...'])
  assert.throws(() => checkExec(['true'], { unit: ['kv/0'], background: true, wait: '1m' }), /cantrip exec: expected --background or --wait, not both, got "--wait 1m"/)
})

ops('an operation is refused whole: an unknown unit, a unit named twice, a dying unit, nothing given', () => {
  const c = model()
  const refused = (units: string[]): string => {
    const r = c.apply({ type: 'enqueue-operation', requestId: `x${units.join()}`, proposer: { kind: 'user', name: 'admin' }, units, task: { kind: 'exec', commands: 'true' } })
    assert.ok(!r.ok)
    return r.ok ? '' : r.error
  }
  assert.match(refused(['kv/0', 'kv/9']), /unit "kv\/9" not found/)
  assert.match(refused(['kv/0', 'kv/0']), /a unit is named twice/)
  assert.match(refused([]), /no units given/)
  c.runAs('kv/0', 'set-agent-status', { unit: 'kv/0', status: 'idle', message: '', now: 1 })
  c.run('remove-unit', { unit: 'kv/0' })
  assert.match(refused(['kv/0']), /unit "kv\/0" is dying/)
  assert.is(c.context.actions.size, 0)
  const unit = c.apply({ type: 'enqueue-operation', requestId: 'u', proposer: { kind: 'unit', name: 'kv/1' }, units: ['kv/1'], task: { kind: 'exec', commands: 'true' } })
  assert.ok(!unit.ok, 'only admins queue operations')
})

ops('exec targets: checked before anything is sent (Juju\'s Init), then resolved from the model (app/leader too)', () => {
  const c = model()
  assert.throws(() => checkExec(['true'], {}), /cantrip exec: expected a target: --all, --machine, --application or --unit, got "none"/)
  assert.throws(() => checkExec(['true'], { all: true, unit: ['kv/0'] }), /expected --all alone/)
  assert.throws(() => checkExec(['true'], { unit: ['kv'] }), /expected --unit to name units like "web\/0" or "web\/leader", got "kv"/)
  assert.throws(() => checkExec(['true'], { unit: ['kv/0'], format: 'xml' }), /expected --format plain, yaml or json, got "xml"/)
  assert.throws(() => checkExec([], { unit: ['kv/0'] }), /expected commands to run/)
  assert.equal(checkExec(['true'], { unit: ['kv/0'], wait: '30s' }), { waitMs: 30_000, format: 'plain' })
  assert.equal(execUnits(c.context, { application: ['kv'] }), ['kv/0', 'kv/1'])
  assert.equal(execUnits(c.context, { unit: ['kv/leader'] }), ['kv/1'])
  assert.equal(execUnits(c.context, { all: true }), ['kv/0', 'kv/1'])
  assert.throws(() => execUnits(c.context, { application: ['nope'] }), /cantrip exec: application "nope" not found/)
})

ops('operations filters keep an operation when one of its tasks matches', () => {
  const c = model()
  c.run('enqueue-operation', { units: ['kv/0'], task: { kind: 'exec', commands: 'true' } })
  c.run('enqueue-operation', { units: ['kv/1'], task: { kind: 'action', name: 'hello', parameters: {} } })
  const all = operationsOf(c.context)
  assert.equal(matchingOperations(all, { actions: ['juju-exec'] }).map(o => o.id), ['1'])
  assert.equal(matchingOperations(all, { units: ['kv/1'] }).map(o => o.id), ['3'])
  assert.equal(matchingOperations(all, { status: ['completed'] }), [])
  const yaml = parse(operationsTable(all).split('\n').length === 3 ? 'ok: true' : 'ok: false') as { ok: boolean }
  assert.ok(yaml.ok)
})

ops('actions, show-action and show-application read the charm and application from the model (cmd/juju/action/list.go, show.go; cmd/juju/application/show.go)', () => {
  const c = model()
  assert.is(actionsOutput(c.context, 'kv', {}), 'Action  Description\nhello\nput     store')
  assert.equal(parse(actionsOutput(c.context, 'kv', { format: 'yaml' })), { hello: '', put: 'store' })
  const schema = parse(actionsOutput(c.context, 'kv', { schema: true })) as Record<string, { required: string[], properties: Record<string, unknown> }>
  assert.equal([schema['put']!.required, Object.keys(schema['put']!.properties)], [['key'], ['key', 'value']])
  assert.is(showActionOutput(c.context, 'kv', 'put'), 'store\n\nArguments\nkey:\n  type: string\nvalue:\n  type: string\n  default: x')
  assert.throws(() => showActionOutput(c.context, 'kv', 'nope'), /cantrip show-action: unknown action "nope"/)
  assert.equal(showApplicationDocument(c.context, 'kv'), { charm: 'kv', principal: true, exposed: false, remote: false, life: 'alive', 'endpoint-bindings': { '': 'alpha' } })
  assert.throws(() => showApplicationDocument(c.context, 'web'), /cantrip show-application: application "web" not found/)
})

ops.run()
