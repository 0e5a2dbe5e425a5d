/**
 * runTool and what every tool shares (juju-semantics §5.2): the gnuflag-style parser,
 * exit codes and ERROR lines, --help, the smart/yaml/json formatter and -o.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { HookToolError } from '../agent/hook-tools/hook-context.ts'
import { parseArgs } from '../agent/hook-tools/commands/args.ts'
import { formatValue } from '../agent/hook-tools/commands/format.ts'
import { hookToolNames as clientToolNames } from '../agent/hook-tools/client/hook-tool-names.ts'
import { hookToolNames } from '../agent/hook-tools/commands/index.ts'
import { runTool } from '../agent/hook-tools/run-tool.ts'
import { rejects } from './support/rejects.ts'
import { FakeHookContext, runFake } from './support/fake-hook-context.ts'

const dbRelation = { id: 3, endpoint: 'db', remoteApplication: 'mysql', units: ['mysql/0'], bags: { 'mysql/0': { host: 'db.local' } } }

const run = suite('runTool: exit codes, errors and help')

run('the catalogue is §5.3 plus the Juju 3.5 tools ops calls (secrets included), and the client links them all', () => {
  assert.equal(hookToolNames, [
    'action-fail', 'action-get', 'action-log', 'action-set', 'application-version-set',
    'close-port', 'config-get', 'credential-get', 'goal-state', 'is-leader', 'juju-log', 'juju-reboot', 'leader-get', 'leader-set',
    'network-get', 'open-port', 'opened-ports', 'relation-get', 'relation-ids', 'relation-list', 'relation-model-get',
    'relation-set', 'resource-get', 'secret-add', 'secret-get', 'secret-grant', 'secret-ids', 'secret-info-get',
    'secret-remove', 'secret-revoke', 'secret-set', 'state-delete', 'state-get', 'state-set', 'status-get', 'status-set',
    'storage-add', 'storage-get', 'storage-list', 'unit-get'
  ])
  assert.equal([...clientToolNames].sort(), hookToolNames)
})

run('an unknown tool is exit 1 with an ERROR line', async () => {
  assert.equal(await runFake(new FakeHookContext(), 'no-such-tool'), { code: 1, stdout: '', stderr: 'ERROR unknown command: no-such-tool\n' })
})

run('--help and -h print usage on stdout, exit 0, and run nothing', async () => {
  const context = new FakeHookContext({ leader: true })
  for (const flag of ['--help', '-h']) {
    const result = await runFake(context, 'leader-set', ['a=b', flag])
    assert.is(result.code, 0)
    assert.is(result.stderr, '')
    assert.match(result.stdout, /^Usage: leader-set <key>=<value> \[\.\.\.\]\n/)
    assert.match(result.stdout, /Summary:\nWrite application leadership settings\./)
  }
  const help = await runFake(context, 'relation-get', ['--help'])
  assert.match(help.stdout, /^Usage: relation-get \[options\] \[<key> \[<unit id>\]\]/)
  assert.match(help.stdout, /-r, --relation <id>\n {4}Specify a relation by id/)
  assert.match(help.stdout, /--app {2}\(= false\)/)
  assert.equal(context.immediate, [])
})

run('a HookToolError from the context keeps its code and message', async () => {
  const context = new FakeHookContext()
  context.unitAddress = async () => { throw new HookToolError(2, 'made-up usage problem') }
  assert.equal(await runFake(context, 'unit-get', ['public-address']), { code: 2, stdout: '', stderr: 'ERROR made-up usage problem\n' })
})

run('any other thrown error is exit 1 with its message', async () => {
  const context = new FakeHookContext()
  context.unitAddress = async () => { throw new Error('controller unreachable') }
  assert.equal(await runFake(context, 'unit-get', ['private-address']), { code: 1, stdout: '', stderr: 'ERROR controller unreachable\n' })
})

run('output written before a failure is kept, and the ERROR line follows stderr so far', async () => {
  const context = new FakeHookContext({ relation: { id: 3, endpoint: 'db', remoteUnit: 'mysql/0', remoteApplication: 'mysql' }, relations: [dbRelation] })
  const result = await runFake(context, 'relation-set', ['--format', 'json', '--app', 'a=b'])
  assert.equal(result, { code: 1, stdout: '', stderr: '--format flag deprecated for command "relation-set"ERROR cannot write relation settings\n' })
})

run('--file - without stdin asks for it before doing anything, then runs with it', async () => {
  const context = new FakeHookContext({ relation: { id: 3, endpoint: 'db', remoteUnit: 'mysql/0', remoteApplication: 'mysql' }, relations: [dbRelation] })
  const first = await runTool(context, 'relation-set', ['--file', '-', 'b=2'], { cwd: '/' })
  assert.equal(first, { needsStdin: true })
  assert.equal(context.buffered, [])
  const second = await runTool(context, 'relation-set', ['--file', '-', 'b=2'], { cwd: '/', stdin: new TextEncoder().encode('a: 1\nb: 1\n') })
  assert.equal(second, { code: 0, stdout: '', stderr: '' })
  assert.equal(context.buffered, [{ kind: 'relation-settings', relationId: 3, application: false, changes: { a: '1', b: '2' } }])
})

const flags = suite('hook tools: gnuflag-style parsing')

const defs = {
  relation: { names: ['r', 'relation'], value: 'id', usage: '' },
  app: { names: ['app'], usage: '' },
  all: { names: ['a', 'all'], usage: '' },
  output: { names: ['o', 'output'], value: 'file', usage: '' }
}

flags('every spelling of a value flag is accepted', async () => {
  for (const args of [['-r', 'db:1'], ['-r=db:1'], ['-rdb:1'], ['--relation', 'db:1'], ['--relation=db:1']]) {
    const parsed = await parseArgs(defs, args)
    assert.is(parsed.string('relation'), 'db:1', args.join(' '))
    assert.equal(parsed.args, [])
  }
})

flags('booleans: present, clustered, and --flag=value', async () => {
  assert.ok((await parseArgs(defs, ['--app'])).bool('app'))
  assert.not.ok((await parseArgs(defs, [])).bool('app'))
  assert.not.ok((await parseArgs(defs, ['--app=false'])).bool('app'))
  const clustered = await parseArgs(defs, ['-ao', 'out.yaml'])
  assert.ok(clustered.bool('all'))
  assert.is(clustered.string('output'), 'out.yaml')
  const error = await rejects(parseArgs(defs, ['--app=maybe']), 'HookToolError') as HookToolError
  assert.is(error.code, 2)
  assert.is(error.message, 'invalid value "maybe" for flag --app: strconv.ParseBool: parsing "maybe": invalid syntax')
})

flags('flags may follow positional arguments; -- ends them; a lone - is positional', async () => {
  const parsed = await parseArgs(defs, ['key', '-r', '1', 'unit/0', '--', '-a', '--app'])
  assert.equal(parsed.args, ['key', 'unit/0', '-a', '--app'])
  assert.is(parsed.string('relation'), '1')
  assert.not.ok(parsed.bool('all'))
  assert.equal((await parseArgs(defs, ['-', 'x'])).args, ['-', 'x'])
})

flags('the last of a repeated flag wins', async () => {
  assert.is((await parseArgs(defs, ['-r', '1', '--relation', '2'])).string('relation'), '2')
})

flags('an unknown flag, a missing value and an empty long flag are usage errors', async () => {
  const cases: Array<[string[], string]> = [
    [['-x'], 'flag provided but not defined: -x'],
    [['--bogus'], 'flag provided but not defined: --bogus'],
    [['--bogus=1'], 'flag provided but not defined: --bogus'],
    [['-az'], 'flag provided but not defined: -z'],
    [['-r'], 'flag needs an argument: -r'],
    [['--relation'], 'flag needs an argument: --relation'],
    [['--=x'], 'empty flag in argument "--=x"']
  ]
  for (const [args, message] of cases) {
    const error = await rejects(parseArgs(defs, args), 'HookToolError') as HookToolError
    assert.is(error.code, 2, args.join(' '))
    assert.is(error.message, message)
  }
})

flags('through runTool the same problems are exit 2 with ERROR lines', async () => {
  const context = new FakeHookContext()
  assert.equal(await runFake(context, 'config-get', ['-x']), { code: 2, stdout: '', stderr: 'ERROR flag provided but not defined: -x\n' })
  assert.equal(await runFake(context, 'config-get', ['--output']), { code: 2, stdout: '', stderr: 'ERROR flag needs an argument: --output\n' })
  assert.equal(await runFake(context, 'config-get', ['a', 'b', 'c']), { code: 2, stdout: '', stderr: 'ERROR unrecognized args: ["b" "c"]\n' })
  assert.equal(await runFake(context, 'is-leader', ['x\ty']), { code: 2, stdout: '', stderr: 'ERROR unrecognized args: ["x\\ty"]\n' })
  assert.equal(context.calls, [])
})

const format = suite('hook tools: output formats (§5.2)')

format('smart: strings, lists, booleans, numbers and maps', () => {
  assert.is(formatValue('smart', 'hello'), 'hello\n')
  assert.is(formatValue('smart', 'two\nlines\n'), 'two\nlines\n\n')
  assert.is(formatValue('smart', ''), '')
  assert.is(formatValue('smart', null), '')
  assert.is(formatValue('smart', undefined), '')
  assert.is(formatValue('smart', ['a', 'b']), 'a\nb\n')
  // juju/cmd FormatSmart joins the list and writes nothing for "" (juju's relation-list_test.go).
  assert.is(formatValue('smart', []), '')
  assert.is(formatValue('yaml', []), '[]\n')
  assert.is(formatValue('json', []), '[]\n')
  assert.is(formatValue('smart', true), 'True\n')
  assert.is(formatValue('smart', false), 'False\n')
  assert.is(formatValue('smart', 42), '42\n')
  assert.is(formatValue('smart', 1.5), '1.5\n')
  assert.is(formatValue('smart', 1e21 + 0.5), '1000000000000000000000\n')
  assert.is(formatValue('smart', 2.5e-7), '0.00000025\n')
  assert.is(formatValue('smart', { b: '2', a: 'x' }), 'a: x\nb: "2"\n')
  assert.is(formatValue('smart', {}), '{}\n')
})

format('yaml: sorted keys, YAML 1.1 quoting, unindented sequences, nothing for nil', () => {
  assert.is(formatValue('yaml', null), '')
  assert.is(formatValue('yaml', 'hello'), 'hello\n')
  assert.is(formatValue('yaml', ''), '""\n')
  assert.is(formatValue('yaml', true), 'true\n')
  assert.is(formatValue('yaml', ['a', 'b']), '- a\n- b\n')
  assert.is(formatValue('yaml', { z: ['x'], a: { on: 'yes', n: '' } }), 'a:\n  "n": ""\n  "on": "yes"\nz:\n- x\n')
  assert.is(formatValue('yaml', new Map([['z', 1], ['a', 2]])), 'z: 1\na: 2\n')
  assert.is(formatValue('yaml', { text: 'one\ntwo' }), 'text: |-\n  one\n  two\n')
})

format('json: one document per line, Go key order and HTML escaping, null for nil', () => {
  assert.is(formatValue('json', null), 'null\n')
  assert.is(formatValue('json', undefined), 'null\n')
  assert.is(formatValue('json', ''), '""\n')
  assert.is(formatValue('json', { b: 1, a: [true, null] }), '{"a":[true,null],"b":1}\n')
  assert.is(formatValue('json', new Map([['z', 1], ['a', 2]])), '{"z":1,"a":2}\n')
  assert.is(formatValue('json', '<a&b>'), '"\\u003ca\\u0026b\\u003e"\n')
})

format('a bad --format is exit 2 and names the format', async () => {
  const context = new FakeHookContext()
  assert.equal(await runFake(context, 'is-leader', ['--format', 'xml']), {
    code: 2, stdout: '', stderr: 'ERROR invalid value "xml" for flag --format: unknown format "xml"\n'
  })
  assert.equal(await runFake(context, 'is-leader', ['--format=toml']), {
    code: 2, stdout: '', stderr: 'ERROR invalid value "toml" for flag --format: unknown format "toml"\n'
  })
})

format('-o and --output write the output to a file relative to the cwd instead of stdout', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cantrip-hook-tools-'))
  try {
    const context = new FakeHookContext({ config: { name: 'blog', port: 80 } })
    assert.equal(await runFake(context, 'config-get', ['-o', 'config.yaml'], { cwd: dir }), { code: 0, stdout: '', stderr: '' })
    assert.is(await readFile(join(dir, 'config.yaml'), 'utf8'), 'name: blog\nport: 80\n')
    assert.equal(await runFake(context, 'config-get', ['--output=port.json', '--format', 'json', 'port'], { cwd: dir }), { code: 0, stdout: '', stderr: '' })
    assert.is(await readFile(join(dir, 'port.json'), 'utf8'), '80\n')
    // Nothing to print still creates the file, as juju/cmd does.
    assert.equal(await runFake(context, 'config-get', ['missing', '-o', join(dir, 'empty')], { cwd: '/' }), { code: 0, stdout: '', stderr: '' })
    assert.is(await readFile(join(dir, 'empty'), 'utf8'), '')
    const failed = await runFake(context, 'config-get', ['-o', 'no/such/dir/x'], { cwd: dir })
    assert.equal(failed, { code: 1, stdout: '', stderr: `ERROR open ${join(dir, 'no/such/dir/x')}: no such file or directory\n` })
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

run.run()
flags.run()
format.run()
