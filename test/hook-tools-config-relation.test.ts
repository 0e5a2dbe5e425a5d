/**
 * config-get and the relation tools (juju-semantics §5.3), run through runTool against
 * the in-memory hook context.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { CurrentRelation } from '../agent/hook-tools/hook-context.ts'
import { FakeHookContext, runFake, type FakeHookContextInit, type FakeRelation } from './support/fake-hook-context.ts'

const ok = (stdout: string): { code: number, stdout: string, stderr: string } => ({ code: 0, stdout, stderr: '' })
const fails = (code: 1 | 2, message: string): { code: number, stdout: string, stderr: string } => ({ code, stdout: '', stderr: `ERROR ${message}\n` })

// ---------------------------------------------------------------------------------

const config = suite('config-get')

const configured = (): FakeHookContext => new FakeHookContext({
  config: { title: 'My Blog', port: 8080, debug: false, ratio: 0.25, yes: 'yes', tuning: null }
})

config('no key: the options that are set or defaulted, as sorted YAML (smart and yaml)', async () => {
  const expected = 'debug: false\nport: 8080\nratio: 0.25\ntitle: My Blog\n"yes": "yes"\n'
  assert.equal(await runFake(configured(), 'config-get'), ok(expected))
  assert.equal(await runFake(configured(), 'config-get', ['--format', 'yaml']), ok(expected))
  // config-get, unlike relation-get, gives "-" no meaning: it is just a missing key.
  assert.equal(await runFake(configured(), 'config-get', ['-']), ok(''))
})

config('no key: json', async () => {
  assert.equal(await runFake(configured(), 'config-get', ['--format=json']), ok('{"debug":false,"port":8080,"ratio":0.25,"title":"My Blog","yes":"yes"}\n'))
})

config('--all and -a include options that are null', async () => {
  assert.equal(await runFake(configured(), 'config-get', ['--all']),
    ok('debug: false\nport: 8080\nratio: 0.25\ntitle: My Blog\ntuning: null\n"yes": "yes"\n'))
  assert.equal(await runFake(configured(), 'config-get', ['-a', '--format', 'json']),
    ok('{"debug":false,"port":8080,"ratio":0.25,"title":"My Blog","tuning":null,"yes":"yes"}\n'))
})

config('one key: strings as-is, booleans True/False, numbers as numbers', async () => {
  assert.equal(await runFake(configured(), 'config-get', ['title']), ok('My Blog\n'))
  assert.equal(await runFake(configured(), 'config-get', ['debug']), ok('False\n'))
  assert.equal(await runFake(configured(), 'config-get', ['port']), ok('8080\n'))
  assert.equal(await runFake(configured(), 'config-get', ['ratio']), ok('0.25\n'))
  assert.equal(await runFake(configured(), 'config-get', ['debug', '--format', 'yaml']), ok('false\n'))
  assert.equal(await runFake(configured(), 'config-get', ['debug', '--format', 'json']), ok('false\n'))
  assert.equal(await runFake(configured(), 'config-get', ['title', '--format', 'json']), ok('"My Blog"\n'))
  assert.equal(await runFake(configured(), 'config-get', ['yes', '--format', 'yaml']), ok('"yes"\n'))
})

config('a missing or null key prints nothing (json: null) and exits 0', async () => {
  for (const key of ['missing', 'tuning']) {
    assert.equal(await runFake(configured(), 'config-get', [key]), ok(''))
    assert.equal(await runFake(configured(), 'config-get', [key, '--format', 'yaml']), ok(''))
    assert.equal(await runFake(configured(), 'config-get', [key, '--format', 'json']), ok('null\n'))
  }
})

config('a key with --all, or more than one key, is exit 2', async () => {
  assert.equal(await runFake(configured(), 'config-get', ['--all', 'title']), fails(2, 'cannot use argument --all together with key "title"'))
  assert.equal(await runFake(configured(), 'config-get', ['title', 'port']), fails(2, 'unrecognized args: ["port"]'))
})

// ---------------------------------------------------------------------------------

const dbRelation = (): FakeRelation => ({
  id: 3,
  endpoint: 'db',
  remoteApplication: 'mysql',
  units: ['mysql/1', 'mysql/0'],
  bags: {
    'mysql/0': { host: 'db0.local', password: '12345' },
    'mysql/1': { host: 'db1.local' },
    mysql: { database: 'blog' },
    'wordpress/0': { 'private-address': '10.0.0.1' },
    wordpress: { version: '6' }
  }
})

const cacheRelation = (): FakeRelation => ({ id: 11, endpoint: 'cache', remoteApplication: 'redis', units: [], bags: {} })
const oldRelation = (): FakeRelation => ({ id: 2, endpoint: 'db', remoteApplication: 'postgresql', units: ['postgresql/0'], bags: { 'postgresql/0': { host: 'pg' } } })
const brokenRelation = (): FakeRelation => ({ id: 20, endpoint: 'db', remoteApplication: 'mariadb', units: [], bags: { mariadb: { gone: 'yes' } }, broken: true })

function inHook (relation: Partial<CurrentRelation> | undefined, extra: FakeHookContextInit = {}): FakeHookContext {
  return new FakeHookContext({
    name: relation === undefined ? 'config-changed' : 'db-relation-changed',
    ...(relation === undefined ? {} : { relation: { id: 3, endpoint: 'db', remoteUnit: 'mysql/0', remoteApplication: 'mysql', ...relation } }),
    relations: [dbRelation(), cacheRelation(), oldRelation(), brokenRelation()],
    ...extra
  })
}

const relationGet = suite('relation-get')

relationGet('in a unit-level relation hook the default target is the remote unit', async () => {
  const context = inHook({})
  assert.equal(await runFake(context, 'relation-get'), ok('host: db0.local\npassword: "12345"\n'))
  assert.equal(await runFake(context, 'relation-get', ['-']), ok('host: db0.local\npassword: "12345"\n'))
  assert.equal(await runFake(context, 'relation-get', ['host']), ok('db0.local\n'))
  assert.equal(await runFake(context, 'relation-get', ['password', '--format', 'json']), ok('"12345"\n'))
  assert.equal(await runFake(context, 'relation-get', ['--format', 'json']), ok('{"host":"db0.local","password":"12345"}\n'))
  assert.equal(await runFake(context, 'relation-get', ['--format', 'yaml', 'password']), ok('"12345"\n'))
})

relationGet('without a remote unit (created, broken, app-level changed) the default is the remote application bag', async () => {
  const context = inHook({ remoteUnit: '' })
  assert.equal(await runFake(context, 'relation-get'), ok('database: blog\n'))
  assert.equal(await runFake(context, 'relation-get', ['database']), ok('blog\n'))
})

relationGet('--app without a name reads the hook\'s remote application', async () => {
  assert.equal(await runFake(inHook({}), 'relation-get', ['--app']), ok('database: blog\n'))
  assert.equal(await runFake(inHook({}), 'relation-get', ['--app', 'database', '--format', 'json']), ok('"blog"\n'))
})

relationGet('an explicit unit; with --app a unit name stands for its application', async () => {
  const context = inHook({})
  assert.equal(await runFake(context, 'relation-get', ['host', 'mysql/1']), ok('db1.local\n'))
  assert.equal(await runFake(context, 'relation-get', ['-', 'mysql/1']), ok('host: db1.local\n'))
  assert.equal(await runFake(context, 'relation-get', ['--app', '-', 'mysql']), ok('database: blog\n'))
  assert.equal(await runFake(context, 'relation-get', ['--app', '-', 'mysql/1']), ok('database: blog\n'))
})

relationGet('-r in every spelling selects another relation; defaults still come from the hook', async () => {
  const context = inHook({})
  for (const flag of [['-r', 'db:2'], ['-r', '2'], ['-r=db:2'], ['--relation', 'db:2'], ['--relation=2']]) {
    assert.equal(await runFake(context, 'relation-get', [...flag, 'host', 'postgresql/0']), ok('pg\n'), flag.join(' '))
  }
  // The hook's remote unit is mysql/0, which has no bag in relation 2.
  assert.equal(await runFake(context, 'relation-get', ['-r', '2']), fails(1, 'cannot read settings for unit "mysql/0" in relation "db:2": settings not found'))
})

relationGet('a unit reads its own bag including this hook\'s buffered relation-set', async () => {
  const context = inHook({})
  assert.equal(await runFake(context, 'relation-set', ['extra=1']), ok(''))
  assert.equal(await runFake(context, 'relation-get', ['-', 'wordpress/0']), ok('extra: "1"\nprivate-address: 10.0.0.1\n'))
  assert.equal(context.committedBag(3, 'wordpress/0'), { 'private-address': '10.0.0.1' })
})

relationGet('the leader reads its own application bag; a non-leader is refused (exit 1)', async () => {
  assert.equal(await runFake(inHook({}, { leader: true }), 'relation-get', ['--app', '-', 'wordpress']), ok('version: "6"\n'))
  assert.equal(await runFake(inHook({}, { leader: false }), 'relation-get', ['--app', '-', 'wordpress']), fails(1, 'permission denied'))
})

relationGet('a missing key prints nothing (json: null) and exits 0', async () => {
  const context = inHook({})
  assert.equal(await runFake(context, 'relation-get', ['nope']), ok(''))
  assert.equal(await runFake(context, 'relation-get', ['nope', '--format', 'yaml']), ok(''))
  assert.equal(await runFake(context, 'relation-get', ['nope', '--format', 'json']), ok('null\n'))
})

relationGet('an empty bag prints {} (smart and yaml) or {} (json)', async () => {
  const context = inHook({ id: 11, endpoint: 'cache', remoteUnit: '', remoteApplication: 'redis' })
  context.relationList[1]!.bags = { redis: {} }
  assert.equal(await runFake(context, 'relation-get'), ok('{}\n'))
  assert.equal(await runFake(context, 'relation-get', ['--format', 'json']), ok('{}\n'))
})

relationGet('usage errors are exit 2', async () => {
  assert.equal(await runFake(inHook(undefined), 'relation-get'), fails(2, 'no relation id specified'))
  assert.equal(await runFake(inHook(undefined), 'relation-get', ['-r', 'db:3']), fails(2, 'no unit or application specified'))
  assert.equal(await runFake(inHook({}), 'relation-get', ['-r', 'db:99']), fails(2, 'invalid value "db:99" for flag -r: relation not found'))
  assert.equal(await runFake(inHook({}), 'relation-get', ['-r', 'one']), fails(2, 'invalid value "one" for flag -r: invalid relation id'))
  assert.equal(await runFake(inHook({}), 'relation-get', ['--relation', 'db:x']), fails(2, 'invalid value "db:x" for flag --relation: invalid relation id'))
  assert.equal(await runFake(inHook({}), 'relation-get', ['-', 'mysql']), fails(2, 'expected unit name, got application name "mysql"'))
  assert.equal(await runFake(inHook({}), 'relation-get', ['-', 'Not_A_Unit']), fails(2, 'invalid unit name "Not_A_Unit"'))
  assert.equal(await runFake(inHook({}), 'relation-get', ['--app', '-', 'Bad!']), fails(2, 'invalid application name "Bad!"'))
  assert.equal(await runFake(inHook({}), 'relation-get', ['a', 'mysql/0', 'extra']), fails(2, 'unrecognized args: ["extra"]'))
  assert.equal(await runFake(inHook({}), 'relation-get', ['--bogus']), fails(2, 'flag provided but not defined: --bogus'))
})

relationGet('an unknown unit is a runtime error (exit 1)', async () => {
  assert.equal(await runFake(inHook({}), 'relation-get', ['-', 'mysql/7']), fails(1, 'cannot read settings for unit "mysql/7" in relation "db:3": settings not found'))
})

relationGet('the relation of a -broken hook is still readable though no longer listed', async () => {
  const context = inHook({ id: 20, endpoint: 'db', remoteUnit: '', remoteApplication: 'mariadb' })
  assert.equal(await runFake(context, 'relation-get'), ok('gone: "yes"\n'))
  assert.equal(await runFake(context, 'relation-get', ['-r', 'db:20', 'gone']), ok('yes\n'))
})

// ---------------------------------------------------------------------------------

const relationSet = suite('relation-set')

relationSet('writes the own unit bag, buffered until the hook succeeds', async () => {
  const context = inHook({})
  assert.equal(await runFake(context, 'relation-set', ['host=web0', 'port=80', 'private-address=']), ok(''))
  assert.equal(context.buffered, [{ kind: 'relation-settings', relationId: 3, application: false, changes: { host: 'web0', port: '80', 'private-address': '' } }])
  assert.equal(context.immediate, [])
  assert.equal(context.committedBag(3, 'wordpress/0'), { 'private-address': '10.0.0.1' })
  context.flush()
  assert.equal(context.committedBag(3, 'wordpress/0'), { host: 'web0', port: '80' })
})

relationSet('a failed hook discards the writes', async () => {
  const context = inHook({})
  await runFake(context, 'relation-set', ['host=web0'])
  context.discard()
  assert.equal(await runFake(context, 'relation-get', ['-', 'wordpress/0']), ok('private-address: 10.0.0.1\n'))
  assert.equal(context.committedBag(3, 'wordpress/0'), { 'private-address': '10.0.0.1' })
})

relationSet('values are stored as given: =, spaces, quotes and YAML-looking text', async () => {
  const context = inHook({})
  assert.equal(await runFake(context, 'relation-set', ['a=b=c', 'b=foo: bar', "c='", 'd=true', 'e= spaced ']), ok(''))
  assert.equal(context.buffered[0], { kind: 'relation-settings', relationId: 3, application: false, changes: { a: 'b=c', b: 'foo: bar', c: "'", d: 'true', e: ' spaced ' } })
})

relationSet('-r chooses the relation; with no arguments nothing is written', async () => {
  const context = inHook(undefined)
  assert.equal(await runFake(context, 'relation-set', ['-r', 'cache:11', 'x=1']), ok(''))
  assert.equal(await runFake(context, 'relation-set', ['--relation=3']), ok(''))
  assert.equal(context.buffered, [{ kind: 'relation-settings', relationId: 11, application: false, changes: { x: '1' } }])
})

relationSet('--app writes the application bag for the leader; a non-leader gets exit 1', async () => {
  const leader = inHook({}, { leader: true })
  assert.equal(await runFake(leader, 'relation-set', ['--app', 'version=7']), ok(''))
  assert.equal(leader.buffered, [{ kind: 'relation-settings', relationId: 3, application: true, changes: { version: '7' } }])
  leader.flush()
  assert.equal(leader.committedBag(3, 'wordpress'), { version: '7' })

  const minion = inHook({}, { leader: false })
  assert.equal(await runFake(minion, 'relation-set', ['--app', 'version=7']), fails(1, 'cannot write relation settings'))
  assert.equal(minion.buffered, [])
})

relationSet('--file reads a YAML map relative to the cwd; arguments override it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cantrip-relation-set-'))
  try {
    await writeFile(join(dir, 'settings.yaml'), '# settings\nhost: from-file\nport: 0080\nratio: 1.50\nempty: ~\nquoted: "a: b"\n')
    const context = inHook({})
    assert.equal(await runFake(context, 'relation-set', ['--file', 'settings.yaml', 'host=from-args'], { cwd: dir }), ok(''))
    assert.equal(context.buffered[0], {
      kind: 'relation-settings', relationId: 3, application: false,
      changes: { host: 'from-args', port: '0080', ratio: '1.50', empty: '', quoted: 'a: b' }
    })
    await writeFile(join(dir, 'flow.yaml'), '{\n  foo: bar,\n  spam: eggs\n}')
    assert.equal(await runFake(context, 'relation-set', [`--file=${join(dir, 'flow.yaml')}`], { cwd: '/' }), ok(''))
    assert.equal(context.buffered[1], { kind: 'relation-settings', relationId: 3, application: false, changes: { foo: 'bar', spam: 'eggs' } })
    await writeFile(join(dir, 'empty.yaml'), '')
    assert.equal(await runFake(context, 'relation-set', ['--file', 'empty.yaml'], { cwd: dir }), ok(''))
    assert.is(context.buffered.length, 2)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

relationSet('--file - reads stdin', async () => {
  const context = inHook({})
  assert.equal(await runFake(context, 'relation-set', ['--file', '-'], { stdin: 'a: "1"\nb: two\n' }), ok(''))
  assert.equal(context.buffered[0], { kind: 'relation-settings', relationId: 3, application: false, changes: { a: '1', b: 'two' } })
})

relationSet('bad --file content or a missing file is a runtime error (exit 1)', async () => {
  const context = inHook({})
  assert.equal(await runFake(context, 'relation-set', ['--file', '-'], { stdin: 'haha' }),
    fails(1, 'yaml: unmarshal errors:\n  line 1: cannot unmarshal !!str `haha` into map[string]string'))
  assert.equal(await runFake(context, 'relation-set', ['--file', '-'], { stdin: 'foo=bar ham=eggs good=bad' }),
    fails(1, 'yaml: unmarshal errors:\n  line 1: cannot unmarshal !!str `foo=bar...` into map[string]string'))
  assert.equal(await runFake(context, 'relation-set', ['--file', '-'], { stdin: '[haha]' }),
    fails(1, 'yaml: unmarshal errors:\n  line 1: cannot unmarshal !!seq into map[string]string'))
  assert.equal(await runFake(context, 'relation-set', ['--file', '-'], { stdin: 'a:\n  b: c\n' }),
    fails(1, 'yaml: unmarshal errors:\n  line 2: cannot unmarshal !!map into string'))
  const broken = await runFake(context, 'relation-set', ['--file', '-'], { stdin: 'a: [1\n' })
  assert.is(broken.code, 1)
  assert.match(broken.stderr, /^ERROR yaml: line \d+: /)
  assert.equal(await runFake(context, 'relation-set', ['--file', 'nope.yaml'], { cwd: '/tmp/cantrip-none' }),
    fails(1, 'open /tmp/cantrip-none/nope.yaml: no such file or directory'))
  assert.equal(context.buffered, [])
})

relationSet('--format is accepted, ignored and warned about (as Juju, with no newline)', async () => {
  const context = inHook({})
  assert.equal(await runFake(context, 'relation-set', ['--format', 'json', 'rel=']), { code: 0, stdout: '', stderr: '--format flag deprecated for command "relation-set"' })
  assert.equal(context.buffered[0], { kind: 'relation-settings', relationId: 3, application: false, changes: { rel: '' } })
})

relationSet('usage errors are exit 2 and write nothing', async () => {
  const cases: Array<[FakeHookContext, string[], string]> = [
    [inHook(undefined), ['a=b'], 'no relation id specified'],
    [inHook({}), ['haha'], 'expected "key=value", got "haha"'],
    [inHook({}), ['=haha'], 'expected "key=value", got "=haha"'],
    [inHook({}), ['a=1', 'a=2'], 'key "a" specified more than once'],
    [inHook({}), ['-r', '42', 'a=1'], 'invalid value "42" for flag -r: relation not found'],
    [inHook({}), ['-r', 'ignored:one', 'a=1'], 'invalid value "ignored:one" for flag -r: invalid relation id'],
    [inHook({}), ['--file'], 'flag needs an argument: --file']
  ]
  for (const [context, args, message] of cases) {
    assert.equal(await runFake(context, 'relation-set', args), fails(2, message), args.join(' '))
    assert.equal(context.buffered, [])
  }
})

// ---------------------------------------------------------------------------------

const relationIds = suite('relation-ids')

relationIds('lists endpoint:id for the hook\'s endpoint, sorted as strings, without broken relations', async () => {
  const context = inHook({}, { relations: [dbRelation(), oldRelation(), brokenRelation(), cacheRelation(), { id: 10, endpoint: 'db', remoteApplication: 'x' }] })
  assert.equal(await runFake(context, 'relation-ids'), ok('db:10\ndb:2\ndb:3\n'))
  assert.equal(await runFake(context, 'relation-ids', ['--format', 'json']), ok('["db:10","db:2","db:3"]\n'))
  assert.equal(await runFake(context, 'relation-ids', ['--format', 'yaml']), ok('- db:10\n- db:2\n- db:3\n'))
  assert.equal(await runFake(context, 'relation-ids', ['cache']), ok('cache:11\n'))
})

// Juju's relation-ids.go writes an empty []string: FormatSmart prints nothing, json and yaml `[]`.
relationIds('an endpoint with no relations prints nothing (smart), [] (json, yaml)', async () => {
  const context = inHook(undefined)
  assert.equal(await runFake(context, 'relation-ids', ['website']), ok(''))
  assert.equal(await runFake(context, 'relation-ids', ['website', '--format', 'json']), ok('[]\n'))
  assert.equal(await runFake(context, 'relation-ids', ['website', '--format', 'yaml']), ok('[]\n'))
})

relationIds('outside a relation hook the endpoint is required (exit 2)', async () => {
  assert.equal(await runFake(inHook(undefined), 'relation-ids'), fails(2, 'no endpoint name specified'))
  assert.equal(await runFake(inHook(undefined), 'relation-ids', ['db', 'cache']), fails(2, 'unrecognized args: ["cache"]'))
})

// ---------------------------------------------------------------------------------

const relationList = suite('relation-list')

relationList('the remote units of the hook\'s relation, sorted', async () => {
  const context = inHook({})
  assert.equal(await runFake(context, 'relation-list'), ok('mysql/0\nmysql/1\n'))
  assert.equal(await runFake(context, 'relation-list', ['--format', 'json']), ok('["mysql/0","mysql/1"]\n'))
  assert.equal(await runFake(context, 'relation-list', ['--format', 'yaml']), ok('- mysql/0\n- mysql/1\n'))
})

relationList('-r selects a relation; --app prints the remote application', async () => {
  const context = inHook(undefined)
  assert.equal(await runFake(context, 'relation-list', ['-r', 'db:2']), ok('postgresql/0\n'))
  // Juju's relation-list_test.go "default relation, no members": no output at all.
  assert.equal(await runFake(context, 'relation-list', ['-r', 'cache:11']), ok(''))
  assert.equal(await runFake(context, 'relation-list', ['-r', 'cache:11', '--format', 'yaml']), ok('[]\n'))
  assert.equal(await runFake(context, 'relation-list', ['-r', 'cache:11', '--format', 'json']), ok('[]\n'))
  assert.equal(await runFake(context, 'relation-list', ['-r', '3', '--app']), ok('mysql\n'))
  assert.equal(await runFake(context, 'relation-list', ['-r', '3', '--app', '--format', 'json']), ok('"mysql"\n'))
})

relationList('usage errors are exit 2', async () => {
  assert.equal(await runFake(inHook(undefined), 'relation-list'), fails(2, 'no relation id specified'))
  assert.equal(await runFake(inHook({}), 'relation-list', ['-r', '9']), fails(2, 'invalid value "9" for flag -r: relation not found'))
  assert.equal(await runFake(inHook({}), 'relation-list', ['mysql/0']), fails(2, 'unrecognized args: ["mysql/0"]'))
})

config.run()
relationGet.run()
relationSet.run()
relationIds.run()
relationList.run()
