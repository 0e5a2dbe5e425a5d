/**
 * `run`'s and `show-task`'s default (plain) output of one task, byte for byte, in the cases
 * Juju 3.6 pins in cmd/juju/action/run_test.go (TestRun, TestVerbosity) for
 * cmd/juju/action/common.go printPlainOutput: the charm's results as sorted YAML without
 * the runner's keys, a blank line, stdout, stderr; a failure line first; `Task N STATUS`
 * when there are no results at all; and the exit rule of processOperationResults (only a
 * non-zero return code fails the command).
 */
import '../runtime/polyfill.ts'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { failedTasks } from '../agent/cli/commands/exec.ts'
import { taskDocument } from '../agent/cli/operation-view.ts'
import { plainTaskOutput, plainTasksOutput } from '../agent/cli/task-plain-output.ts'
import type { ActionRecord, ActionStatus } from '../runtime/model/model-types.ts'

function task (status: ActionStatus, results: Record<string, unknown>, message = '', id = '1'): ActionRecord {
  return { id, unit: 'mysql/0', machine: '0', name: 'some-action', parameters: {}, status, results, message, enqueuedAt: 0, completedAt: null }
}

const own = { outcome: 'success', 'result-map': { message: 'hello' } }

test('results set by the charm: sorted YAML and the Println blank line (run_test "output set to action-set data")', () => {
  assert.is(plainTaskOutput(task('completed', { 'result-map': { message: 'hello' }, outcome: 'success' })), 'outcome: success\nresult-map:\n  message: hello\n\n')
})

test('the runner\'s keys leave the YAML; stdout then stderr follow as text (run_test "plain output including stdout, stderr")', () => {
  const results = { ...own, 'return-code': 0, stdout: 'hello', stderr: 'world', 'stdout-encoding': 'utf-8', 'stderr-encoding': 'utf-8' }
  assert.is(plainTaskOutput(task('completed', results)), 'outcome: success\nresult-map:\n  message: hello\n\nhello\nworld\n')
})

test('only stdout: an empty line, then the text without its surrounding newlines (run_test TestVerbosity)', () => {
  assert.is(plainTaskOutput(task('completed', { stdout: 'hello' })), '\nhello\n')
  assert.is(plainTaskOutput(task('completed', { 'return-code': 0, stdout: '\nhi\n\n', stderr: '' })), '\nhi\n')
})

test('a failed action says so first, then its results (run_test "run action which fails with plain output selected")', () => {
  const results = { outcome: 'fail', 'result-map': { message: 'failed :\'(' } }
  assert.is(plainTaskOutput(task('failed', results, 'action failed msg')), 'Action id 1 failed: action failed msg\noutcome: fail\nresult-map:\n  message: failed :\'(\n\n')
  assert.is(plainTaskOutput(task('failed', { 'return-code': 3, stdout: 'partial\n', stderr: 'broken\n' }, 'exit status 3', '7')), 'Action id 7 failed: exit status 3\n\npartial\nbroken\n')
})

test('no results at all: the task\'s id and status', () => {
  assert.is(plainTaskOutput(task('failed', {}, 'no such key', '4')), 'Action id 4 failed: no such key\nTask 4 failed\n\n')
  assert.is(plainTaskOutput(task('running', {}, '', '2')), 'Task 2 running\n\n')
  // Juju leaves out an empty message; Go's Printf of the missing value says <nil>.
  assert.is(plainTaskOutput(task('failed', {}, '', '5')), 'Action id 5 failed: <nil>\nTask 5 failed\n\n')
})

test('several tasks (run on several units): one YAML map by unit of id, message, output and status, keys sorted (common.go printPlainOutput)', () => {
  const ok = { ...task('completed', { value: 'v', 'return-code': 0, stdout: 'said\n' }, '', '2'), unit: 'kv/0' }
  const failed = { ...task('failed', {}, 'no such key', '3'), unit: 'kv/1' }
  assert.is(plainTasksOutput([ok, failed]), 'kv/0:\n  id: "2"\n  output: |\n    value: v\n  status: completed\nkv/1:\n  id: "3"\n  message: no such key\n  output: |\n    Task 3 failed\n  status: failed\n')
})

test('colour only when asked (a terminal): the failure red, results green; the streams plain', () => {
  const painted = plainTaskOutput(task('failed', { 'return-code': 1, stdout: 'out\n', why: 'x' }, 'exit status 1'), true)
  assert.is(painted, '\x1b[31mAction id 1 failed: exit status 1\n\x1b[39m\x1b[31mwhy: x\n\x1b[39m\nout\n')
  assert.is(plainTaskOutput(task('completed', { why: 'x' }), true), '\x1b[32mwhy: x\n\x1b[39m\n')
})

test('only a non-zero return code fails the command, with Juju\'s list (common.go processOperationResults)', () => {
  assert.is(failedTasks([task('failed', { outcome: 'fail' }, 'action-fail called')]), undefined, 'failed by action-fail, process exited 0: exit 0')
  assert.is(failedTasks([task('failed', { 'return-code': 0 }, 'action-fail called')]), undefined)
  assert.is(failedTasks([task('completed', { 'return-code': -1 })]), undefined, 'no return code tracked')
  const one = failedTasks([task('failed', { 'return-code': 3 }, 'exit status 3', '7')])
  assert.is(one?.name, 'TaskFailures')
  assert.is(one?.message, 'the following task failed:\n - id "7" with return code 3\n\nuse \'cantrip show-task\' to inspect the failure')
  const two = failedTasks([task('failed', { 'return-code': 2 }, '', '9'), task('failed', { 'return-code': 1 }, '', '10')])
  assert.is(two?.message, 'the following tasks failed:\n - id "10" with return code 1\n - id "9" with return code 2\n\nuse \'cantrip show-task\' to inspect the failures')
})

test('--format yaml|json: the task\'s document with its results\' keys sorted at every depth, as Go writes a map (run_test "yaml output")', () => {
  const doc = taskDocument(task('completed', { stdout: 'hello', 'result-map': { z: 1, message: 'hello' }, outcome: 'success', 'return-code': 0, stderr: '' }))
  assert.is(JSON.stringify(doc['results']), '{"outcome":"success","result-map":{"message":"hello","z":1},"return-code":0,"stdout":"hello"}')
})

test.run()
