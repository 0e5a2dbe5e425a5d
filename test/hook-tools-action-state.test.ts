/**
 * action-get, action-set, action-fail, action-log (immediate; actions only) and
 * state-get, state-set, state-delete (set/delete buffered) (juju-semantics §4.3, §5.3).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { outputDepthMax } from '../agent/hook-tools/commands/format.ts'
import { runTool } from '../agent/hook-tools/run-tool.ts'
import { FakeHookContext, runFake } from './support/fake-hook-context.ts'

const ok = (stdout: string): { code: number, stdout: string, stderr: string } => ({ code: 0, stdout, stderr: '' })
const fails = (code: 1 | 2, message: string): { code: number, stdout: string, stderr: string } => ({ code, stdout: '', stderr: `ERROR ${message}\n` })

const inAction = (params: Record<string, unknown> = {}): FakeHookContext =>
  new FakeHookContext({ action: { name: 'backup', id: '42', params } })

const actionGet = suite('action-get')

const backupParams = { target: 's3://bucket', compress: true, retries: 3, outfile: { name: 'dump.sql', size: { max: '10G' } }, tags: ['a', 'b'] }

actionGet('no key prints all params (smart/yaml as YAML, json)', async () => {
  const yaml = 'compress: true\noutfile:\n  name: dump.sql\n  size:\n    max: 10G\nretries: 3\ntags:\n- a\n- b\ntarget: s3://bucket\n'
  assert.equal(await runFake(inAction(backupParams), 'action-get'), ok(yaml))
  assert.equal(await runFake(inAction(backupParams), 'action-get', ['--format', 'yaml']), ok(yaml))
  assert.equal(await runFake(inAction(backupParams), 'action-get', ['--format', 'json']),
    ok('{"compress":true,"outfile":{"name":"dump.sql","size":{"max":"10G"}},"retries":3,"tags":["a","b"],"target":"s3://bucket"}\n'))
})

actionGet('no params prints an empty map', async () => {
  assert.equal(await runFake(inAction(), 'action-get'), ok('{}\n'))
  assert.equal(await runFake(inAction(), 'action-get', ['--format', 'json']), ok('{}\n'))
})

actionGet('a key, and dotted keys into nested maps', async () => {
  const context = inAction(backupParams)
  assert.equal(await runFake(context, 'action-get', ['target']), ok('s3://bucket\n'))
  assert.equal(await runFake(context, 'action-get', ['compress']), ok('True\n'))
  assert.equal(await runFake(context, 'action-get', ['retries']), ok('3\n'))
  assert.equal(await runFake(context, 'action-get', ['tags']), ok('a\nb\n'))
  assert.equal(await runFake(context, 'action-get', ['outfile.size.max']), ok('10G\n'))
  assert.equal(await runFake(context, 'action-get', ['outfile.size']), ok('max: 10G\n'))
  assert.equal(await runFake(context, 'action-get', ['outfile.size', '--format', 'json']), ok('{"max":"10G"}\n'))
  assert.equal(await runFake(context, 'action-get', ['compress', '--format', 'json']), ok('true\n'))
})

actionGet('a missing key or path prints nothing (json: null), exit 0', async () => {
  const context = inAction(backupParams)
  for (const key of ['nope', 'outfile.nope', 'target.deeper', 'tags.0', 'outfile.size.max.more']) {
    assert.equal(await runFake(context, 'action-get', [key]), ok(''), key)
    assert.equal(await runFake(context, 'action-get', [key, '--format', 'yaml']), ok(''), key)
    assert.equal(await runFake(context, 'action-get', [key, '--format', 'json']), ok('null\n'), key)
  }
})

actionGet('params nested deeper than outputDepthMax are refused (exit 1), not recursed into', async () => {
  const nest = (levels: number): Record<string, unknown> => {
    let value: Record<string, unknown> = { leaf: 'x' }
    for (let i = 0; i < levels; i++) value = { n: value }
    return value
  }
  assert.is((await runFake(inAction(nest(outputDepthMax - 1)), 'action-get', ['--format', 'json'])).code, 0)
  const message = `cannot format output: value nested deeper than ${outputDepthMax} levels`
  for (const format of ['smart', 'yaml', 'json']) {
    assert.equal(await runFake(inAction(nest(outputDepthMax)), 'action-get', ['--format', format]), fails(1, message), format)
  }
})

actionGet('extra arguments are exit 2; outside an action it is exit 1', async () => {
  assert.equal(await runFake(inAction(backupParams), 'action-get', ['a', 'b']), fails(2, 'unrecognized args: ["b"]'))
  assert.equal(await runFake(new FakeHookContext(), 'action-get', ['a', 'b']), fails(2, 'unrecognized args: ["b"]'))
  assert.equal(await runFake(new FakeHookContext(), 'action-get'), fails(1, 'not running an action'))
  assert.equal(await runFake(new FakeHookContext({ kind: 'command', name: 'juju-exec' }), 'action-get', ['x']), fails(1, 'not running an action'))
})

// ---------------------------------------------------------------------------------

const actionSet = suite('action-set')

actionSet('dotted keys build nested maps; results are recorded at once', async () => {
  const context = inAction()
  assert.equal(await runFake(context, 'action-set', ['outfile.size=10G', 'foo.bar=2', 'foo.baz.val=3']), ok(''))
  assert.equal(await runFake(context, 'action-set', ['foo.bar.zab=4', 'foo.baz=1', 'plain=x=y']), ok(''))
  assert.equal(context.actionResults, { outfile: { size: '10G' }, foo: { bar: { zab: '4' }, baz: '1' }, plain: 'x=y' })
  assert.equal(context.immediate, [
    { kind: 'action-results', results: { outfile: { size: '10G' }, foo: { bar: '2', baz: { val: '3' } } } },
    { kind: 'action-results', results: { foo: { bar: { zab: '4' }, baz: '1' }, plain: 'x=y' } }
  ])
  assert.equal(context.buffered, [])
})

actionSet('within one call, later arguments win, a map replacing a value and back', async () => {
  const context = inAction()
  assert.equal(await runFake(context, 'action-set', ['a=1', 'a.b=2', 'c.d=3', 'c=4', 'e=', 'k-1=v']), ok(''))
  assert.equal(context.actionResults, { a: { b: '2' }, c: '4', e: '', 'k-1': 'v' })
})

actionSet('bad keys, reserved keys and missing = are exit 2 and set nothing', async () => {
  const context = inAction()
  const keyRule = 'must start and end with lowercase alphanumeric, and contain only lowercase alphanumeric, hyphens and periods'
  const cases: Array<[string[], string]> = [
    [['novalue'], 'argument "novalue" must be of the form key...=value'],
    [['Foo=1'], `key "Foo" ${keyRule}`],
    [['foo_bar=1'], `key "foo_bar" ${keyRule}`],
    [['-foo=1'], 'flag provided but not defined: -f'],
    [['foo-=1'], `key "foo-" ${keyRule}`],
    [['a..b=1'], `key "" ${keyRule}`],
    [['=1'], `key "" ${keyRule}`],
    [['ok=1', 'stdout=x'], 'cannot set reserved action key "stdout"'],
    [['stderr=x'], 'cannot set reserved action key "stderr"'],
    [['result.stdout-encoding=x'], 'cannot set reserved action key "stdout-encoding"'],
    [['stderr-encoding=x'], 'cannot set reserved action key "stderr-encoding"']
  ]
  for (const [args, message] of cases) assert.equal(await runFake(context, 'action-set', args), fails(2, message), args.join(' '))
  assert.equal(context.actionResults, {})
  assert.equal(context.immediate, [])
})

actionSet('outside an action: bad arguments are still exit 2, good ones exit 1', async () => {
  const context = new FakeHookContext()
  assert.equal(await runFake(context, 'action-set', ['Bad=1']), fails(2, 'key "Bad" must start and end with lowercase alphanumeric, and contain only lowercase alphanumeric, hyphens and periods'))
  assert.equal(await runFake(context, 'action-set', ['good=1']), fails(1, 'not running an action'))
  // With nothing to set Juju never reaches the context, so it succeeds anywhere.
  assert.equal(await runFake(context, 'action-set'), ok(''))
})

// ---------------------------------------------------------------------------------

const actionFail = suite('action-fail and action-log')

actionFail('action-fail records the message at once, or Juju\'s default', async () => {
  const context = inAction()
  assert.equal(await runFake(context, 'action-fail', ['unable to contact remote service']), ok(''))
  assert.is(context.actionFailure, 'unable to contact remote service')
  assert.equal(await runFake(context, 'action-fail'), ok(''))
  assert.is(context.actionFailure, 'action failed without reason given, check action for errors')
  assert.equal(context.immediate, [
    { kind: 'action-fail', message: 'unable to contact remote service' },
    { kind: 'action-fail', message: 'action failed without reason given, check action for errors' }
  ])
})

actionFail('action-fail: two messages are exit 2; outside an action exit 1', async () => {
  assert.equal(await runFake(inAction(), 'action-fail', ['a', 'b']), fails(2, 'unrecognized args: ["b"]'))
  assert.equal(await runFake(new FakeHookContext(), 'action-fail'), fails(1, 'not running an action'))
  assert.equal(await runFake(new FakeHookContext(), 'action-fail', ['why']), fails(1, 'not running an action'))
})

actionFail('action-log records the joined message at once', async () => {
  const context = inAction()
  assert.equal(await runFake(context, 'action-log', ['50%', 'done']), ok(''))
  assert.equal(context.actionMessages, ['50% done'])
  assert.equal(context.immediate, [{ kind: 'action-log', message: '50% done' }])
})

actionFail('action-log: no message is exit 2; outside an action exit 1', async () => {
  assert.equal(await runFake(inAction(), 'action-log'), fails(2, 'no message specified'))
  assert.equal(await runFake(new FakeHookContext(), 'action-log'), fails(2, 'no message specified'))
  assert.equal(await runFake(new FakeHookContext(), 'action-log', ['progress']), fails(1, 'not running an action'))
})

actionFail('hook tools work in actions too', async () => {
  const context = new FakeHookContext({ action: { name: 'backup', id: '1', params: {} }, config: { port: 80 } })
  assert.equal(await runFake(context, 'config-get', ['port']), ok('80\n'))
  assert.equal(await runFake(context, 'status-set', ['maintenance', 'backing up']), ok(''))
})

// ---------------------------------------------------------------------------------

const state = suite('state-get, state-set, state-delete')

const withState = (): FakeHookContext => new FakeHookContext({ charmState: { installed: 'yes', version: '2' } })

state('state-get: whole map (no key or -), one key, all formats', async () => {
  for (const args of [[], ['-']]) assert.equal(await runFake(withState(), 'state-get', args), ok('installed: "yes"\nversion: "2"\n'))
  assert.equal(await runFake(withState(), 'state-get', ['--format', 'json']), ok('{"installed":"yes","version":"2"}\n'))
  assert.equal(await runFake(withState(), 'state-get', ['version']), ok('2\n'))
  assert.equal(await runFake(withState(), 'state-get', ['version', '--format', 'yaml']), ok('"2"\n'))
  assert.equal(await runFake(withState(), 'state-get', ['version', '--format', 'json']), ok('"2"\n'))
  assert.equal(await runFake(new FakeHookContext(), 'state-get'), ok('{}\n'))
})

state('state-get: a missing key prints nothing (json: "", as Juju); --strict makes it exit 1', async () => {
  assert.equal(await runFake(withState(), 'state-get', ['nope']), ok(''))
  assert.equal(await runFake(withState(), 'state-get', ['nope', '--format', 'json']), ok('""\n'))
  assert.equal(await runFake(withState(), 'state-get', ['nope', '--format', 'yaml']), ok('""\n'))
  assert.equal(await runFake(withState(), 'state-get', ['--strict', 'nope']), fails(1, '"nope" not found'))
  assert.equal(await runFake(withState(), 'state-get', ['--strict', 'version']), ok('2\n'))
  assert.equal(await runFake(withState(), 'state-get', ['a', 'b']), fails(2, 'unrecognized args: ["b"]'))
})

state('state-set and state-delete are buffered; state-get sees them at once', async () => {
  const context = withState()
  assert.equal(await runFake(context, 'state-set', ['version=3', 'new=x']), ok(''))
  assert.equal(await runFake(context, 'state-delete', ['installed']), ok(''))
  assert.equal(await runFake(context, 'state-get'), ok('new: x\nversion: "3"\n'))
  assert.equal(context.buffered, [
    { kind: 'state-set', changes: { version: '3', new: 'x' } },
    { kind: 'state-delete', keys: ['installed'] }
  ])
  assert.equal(context.immediate, [])
  assert.equal(context.committedState, { installed: 'yes', version: '2' })
  context.flush()
  assert.equal(context.committedState, { version: '3', new: 'x' })
})

state('a failed hook discards state changes', async () => {
  const context = withState()
  await runFake(context, 'state-set', ['version=9'])
  context.discard()
  assert.equal(await runFake(context, 'state-get', ['version']), ok('2\n'))
})

state('state-set: k= deletes; no arguments do nothing', async () => {
  const context = withState()
  assert.equal(await runFake(context, 'state-set', ['installed=']), ok(''))
  assert.equal(await runFake(context, 'state-get'), ok('version: "2"\n'))
  assert.equal(await runFake(context, 'state-set'), ok(''))
  assert.equal(context.buffered, [{ kind: 'state-set', changes: { installed: '' } }])
})

state('state-set --file, relative or stdin, overridden by arguments', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cantrip-state-set-'))
  try {
    await writeFile(join(dir, 'state.yaml'), 'a: one\nb: two\n')
    const context = withState()
    assert.equal(await runFake(context, 'state-set', ['--file', 'state.yaml', 'b=2'], { cwd: dir }), ok(''))
    assert.equal(context.buffered, [{ kind: 'state-set', changes: { a: 'one', b: '2' } }])
    const stdin = withState()
    assert.equal(await runTool(stdin, 'state-set', ['--file=-'], { cwd: dir }), { needsStdin: true })
    assert.equal(await runFake(stdin, 'state-set', ['--file=-'], { stdin: 'c: 3\n' }), ok(''))
    assert.equal(stdin.buffered, [{ kind: 'state-set', changes: { c: '3' } }])
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

state('state-set usage errors are exit 2; a bad file is exit 1', async () => {
  const context = withState()
  assert.equal(await runFake(context, 'state-set', ['x']), fails(2, 'expected "key=value", got "x"'))
  assert.equal(await runFake(context, 'state-set', ['x=1', 'x=2']), fails(2, 'key "x" specified more than once'))
  assert.equal(await runFake(context, 'state-set', ['--file', 'missing.yaml'], { cwd: '/nonexistent' }), fails(1, 'open /nonexistent/missing.yaml: no such file or directory'))
  assert.equal(await runFake(context, 'state-set', ['--file', '-'], { stdin: '- a\n' }), fails(1, 'yaml: unmarshal errors:\n  line 1: cannot unmarshal !!seq into map[string]string'))
  assert.equal(context.buffered, [])
})

state('state-delete: no key does nothing; two keys are exit 2', async () => {
  const context = withState()
  assert.equal(await runFake(context, 'state-delete'), ok(''))
  assert.equal(await runFake(context, 'state-delete', ['a', 'b']), fails(2, 'unrecognized args: ["b"]'))
  assert.equal(await runFake(context, 'state-delete', ['missing']), ok(''))
  assert.equal(context.buffered, [{ kind: 'state-delete', keys: ['missing'] }])
})

actionGet.run()
actionSet.run()
actionFail.run()
state.run()
