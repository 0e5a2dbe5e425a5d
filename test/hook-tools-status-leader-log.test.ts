/**
 * status-set, status-get, is-leader, leader-get, leader-set, juju-log and
 * application-version-set (juju-semantics §5.3). All of their writes are immediate
 * (§4.3): they show in the fake's `immediate` list and never in `buffered`.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { FakeHookContext, runFake } from './support/fake-hook-context.ts'

const ok = (stdout: string): { code: number, stdout: string, stderr: string } => ({ code: 0, stdout, stderr: '' })
const fails = (code: 1 | 2, message: string): { code: number, stdout: string, stderr: string } => ({ code, stdout: '', stderr: `ERROR ${message}\n` })

const statusSet = suite('status-set')

statusSet('sets the unit status at once, with or without a message', async () => {
  const context = new FakeHookContext()
  assert.equal(await runFake(context, 'status-set', ['maintenance', 'installing packages']), ok(''))
  assert.equal(await runFake(context, 'status-set', ['active']), ok(''))
  assert.equal(context.immediate, [
    { kind: 'status', status: 'maintenance', message: 'installing packages', application: false },
    { kind: 'status', status: 'active', message: '', application: false }
  ])
  assert.equal(context.buffered, [])
  assert.equal(context.unitStatus, { status: 'active', message: '', data: {} })
})

statusSet('every settable status is accepted; setting the same status twice records both', async () => {
  const context = new FakeHookContext()
  for (const status of ['maintenance', 'blocked', 'waiting', 'active', 'active']) {
    assert.equal(await runFake(context, 'status-set', [status, 'msg']), ok(''))
  }
  assert.is(context.immediate.length, 5)
})

statusSet('--application sets the application status for the leader', async () => {
  const context = new FakeHookContext({ leader: true })
  assert.equal(await runFake(context, 'status-set', ['--application', 'blocked', 'need a database']), ok(''))
  assert.equal(context.immediate, [{ kind: 'status', status: 'blocked', message: 'need a database', application: true }])
  assert.equal(context.applicationStatusInfo, { status: 'blocked', message: 'need a database', data: {} })
})

statusSet('--application by a non-leader is exit 1', async () => {
  const context = new FakeHookContext({ leader: false })
  assert.equal(await runFake(context, 'status-set', ['--application', 'active']), fails(1, 'this unit is not the leader'))
  assert.equal(context.immediate, [])
})

statusSet('other statuses, no status and extra arguments are exit 2', async () => {
  const context = new FakeHookContext()
  for (const status of ['error', 'unknown', 'terminated', 'Active']) {
    assert.equal(await runFake(context, 'status-set', [status]), fails(2, `invalid status "${status}", expected one of [maintenance blocked waiting active]`))
  }
  assert.equal(await runFake(context, 'status-set'), fails(2, 'invalid args, require <status> [message]'))
  assert.equal(await runFake(context, 'status-set', ['active', 'one', 'two']), fails(2, 'unrecognized args: ["two"]'))
  assert.equal(await runFake(context, 'status-set', ['--format', 'json', 'active']), fails(2, 'flag provided but not defined: --format'))
  assert.equal(context.immediate, [])
})

// ---------------------------------------------------------------------------------

const statusGet = suite('status-get')

const withStatus = (leader = false): FakeHookContext => new FakeHookContext({
  leader,
  status: { status: 'active', message: 'ready', data: { port: 80 } },
  applicationStatus: { status: 'waiting', message: 'scaling', data: {} },
  unitStatuses: {
    'wordpress/0': { status: 'active', message: 'ready', data: {} },
    'wordpress/1': { status: 'maintenance', message: 'installing', data: {} }
  }
})

statusGet('smart prints just the status word', async () => {
  assert.equal(await runFake(withStatus(), 'status-get'), ok('active\n'))
})

statusGet('yaml and json without --include-data print {status}', async () => {
  assert.equal(await runFake(withStatus(), 'status-get', ['--format', 'yaml']), ok('status: active\n'))
  assert.equal(await runFake(withStatus(), 'status-get', ['--format', 'json']), ok('{"status":"active"}\n'))
})

statusGet('--include-data adds message and status-data in every format', async () => {
  assert.equal(await runFake(withStatus(), 'status-get', ['--include-data']), ok('message: ready\nstatus: active\nstatus-data:\n  port: 80\n'))
  assert.equal(await runFake(withStatus(), 'status-get', ['--include-data', '--format', 'yaml']), ok('message: ready\nstatus: active\nstatus-data:\n  port: 80\n'))
  assert.equal(await runFake(withStatus(), 'status-get', ['--include-data', '--format=json']), ok('{"message":"ready","status":"active","status-data":{"port":80}}\n'))
})

statusGet('--application (leader) prints the application status, and its units in yaml/json', async () => {
  assert.equal(await runFake(withStatus(true), 'status-get', ['--application']), ok('waiting\n'))
  assert.equal(await runFake(withStatus(true), 'status-get', ['--application', '--format', 'json']),
    ok('{"application-status":{"status":"waiting","units":{"wordpress/0":{"status":"active"},"wordpress/1":{"status":"maintenance"}}}}\n'))
  assert.equal(await runFake(withStatus(true), 'status-get', ['--application', '--include-data']), ok([
    'application-status:',
    '  message: scaling',
    '  status: waiting',
    '  status-data: {}',
    '  units:',
    '    wordpress/0:',
    '      message: ready',
    '      status: active',
    '      status-data: {}',
    '    wordpress/1:',
    '      message: installing',
    '      status: maintenance',
    '      status-data: {}',
    ''
  ].join('\n')))
})

statusGet('--application by a non-leader is exit 1', async () => {
  assert.equal(await runFake(withStatus(false), 'status-get', ['--application']), fails(1, 'finding application status: this unit is not the leader'))
})

statusGet('a status set earlier in the hook is what status-get reads', async () => {
  const context = withStatus()
  await runFake(context, 'status-set', ['blocked', 'no db'])
  assert.equal(await runFake(context, 'status-get', ['--include-data', '--format', 'json']), ok('{"message":"no db","status":"blocked","status-data":{}}\n'))
})

statusGet('arguments are exit 2', async () => {
  assert.equal(await runFake(withStatus(), 'status-get', ['active']), fails(2, 'unrecognized args: ["active"]'))
})

// ---------------------------------------------------------------------------------

const leadership = suite('is-leader, leader-get, leader-set')

leadership('is-leader: True/False in smart, true/false in yaml and json', async () => {
  assert.equal(await runFake(new FakeHookContext({ leader: true }), 'is-leader'), ok('True\n'))
  assert.equal(await runFake(new FakeHookContext({ leader: false }), 'is-leader'), ok('False\n'))
  assert.equal(await runFake(new FakeHookContext({ leader: true }), 'is-leader', ['--format', 'json']), ok('true\n'))
  assert.equal(await runFake(new FakeHookContext({ leader: false }), 'is-leader', ['--format', 'yaml']), ok('false\n'))
  assert.equal(await runFake(new FakeHookContext(), 'is-leader', ['x']), fails(2, 'unrecognized args: ["x"]'))
})

const leaderBag = (leader: boolean): FakeHookContext => new FakeHookContext({ leader, leaderSettings: { 'cluster-address': '10.0.0.9', token: 's3cret' } })

leadership('leader-get: whole map (no key or -), one key, all formats', async () => {
  for (const args of [[], ['-']]) {
    assert.equal(await runFake(leaderBag(false), 'leader-get', args), ok('cluster-address: 10.0.0.9\ntoken: s3cret\n'))
  }
  assert.equal(await runFake(leaderBag(false), 'leader-get', ['--format', 'json']), ok('{"cluster-address":"10.0.0.9","token":"s3cret"}\n'))
  assert.equal(await runFake(leaderBag(false), 'leader-get', ['token']), ok('s3cret\n'))
  assert.equal(await runFake(leaderBag(false), 'leader-get', ['token', '--format', 'yaml']), ok('s3cret\n'))
  assert.equal(await runFake(leaderBag(false), 'leader-get', ['token', '--format', 'json']), ok('"s3cret"\n'))
})

leadership('leader-get: a missing key prints nothing (json: null), exit 0', async () => {
  assert.equal(await runFake(leaderBag(false), 'leader-get', ['nope']), ok(''))
  assert.equal(await runFake(leaderBag(false), 'leader-get', ['nope', '--format', 'yaml']), ok(''))
  assert.equal(await runFake(leaderBag(false), 'leader-get', ['nope', '--format', 'json']), ok('null\n'))
  assert.equal(await runFake(new FakeHookContext(), 'leader-get'), ok('{}\n'))
})

leadership('leader-get: a key with = or extra arguments is exit 2', async () => {
  assert.equal(await runFake(leaderBag(false), 'leader-get', ['a=b']), fails(2, 'invalid key "a=b"'))
  assert.equal(await runFake(leaderBag(false), 'leader-get', ['a', 'b']), fails(2, 'unrecognized args: ["b"]'))
})

leadership('leader-set: the leader writes at once; k= deletes', async () => {
  const context = leaderBag(true)
  assert.equal(await runFake(context, 'leader-set', ['token=', 'new=1', 'url=http://x/?a=b']), ok(''))
  assert.equal(context.immediate, [{ kind: 'leader-settings', changes: { token: '', new: '1', url: 'http://x/?a=b' } }])
  assert.equal(context.buffered, [])
  assert.equal(context.leaderBag, { 'cluster-address': '10.0.0.9', new: '1', url: 'http://x/?a=b' })
  assert.equal(await runFake(context, 'leader-get', ['new']), ok('1\n'))
})

leadership('leader-set: a non-leader is refused with Juju\'s message (exit 1)', async () => {
  const context = leaderBag(false)
  assert.equal(await runFake(context, 'leader-set', ['a=b']), fails(1, 'cannot write leadership settings: cannot write settings: not the leader'))
  assert.equal(await runFake(context, 'leader-set'), fails(1, 'cannot write leadership settings: cannot write settings: not the leader'))
  assert.equal(context.immediate, [])
})

leadership('leader-set: malformed or repeated pairs are exit 2 before leadership is checked', async () => {
  const context = leaderBag(false)
  assert.equal(await runFake(context, 'leader-set', ['novalue']), fails(2, 'expected "key=value", got "novalue"'))
  assert.equal(await runFake(context, 'leader-set', ['a=1', 'a=2']), fails(2, 'key "a" specified more than once'))
  assert.equal(await runFake(context, 'leader-set', ['-r', '1']), fails(2, 'flag provided but not defined: -r'))
  assert.not.ok(context.calls.includes('isLeader'))
})

// ---------------------------------------------------------------------------------

const jujuLog = suite('juju-log')

jujuLog('logs the joined message at INFO, at once', async () => {
  const context = new FakeHookContext()
  assert.equal(await runFake(context, 'juju-log', ['hello', 'there', 'world']), ok(''))
  assert.equal(context.immediate, [{ kind: 'log', level: 'INFO', message: 'hello there world' }])
  assert.equal(context.buffered, [])
})

jujuLog('-l, --log-level and --debug choose the level; levels are case-insensitive', async () => {
  const context = new FakeHookContext()
  await runFake(context, 'juju-log', ['-l', 'WARNING', 'a'])
  await runFake(context, 'juju-log', ['--log-level=error', 'b'])
  await runFake(context, 'juju-log', ['--log-level', 'warn', 'c'])
  await runFake(context, 'juju-log', ['--debug', 'd'])
  await runFake(context, 'juju-log', ['-l', 'ERROR', '--debug', 'e'])
  await runFake(context, 'juju-log', ['f', '-l', 'trace'])
  await runFake(context, 'juju-log', ['-lCRITICAL', 'g'])
  assert.equal(context.logs, [
    { level: 'WARNING', message: 'a' },
    { level: 'ERROR', message: 'b' },
    { level: 'WARNING', message: 'c' },
    { level: 'DEBUG', message: 'd' },
    { level: 'DEBUG', message: 'e' },
    { level: 'TRACE', message: 'f' },
    { level: 'CRITICAL', message: 'g' }
  ])
})

jujuLog('an unknown level warns about itself and logs the message at INFO (exit 0)', async () => {
  const context = new FakeHookContext()
  assert.equal(await runFake(context, 'juju-log', ['-l', 'LOUD', 'message']), ok(''))
  assert.equal(context.logs, [
    { level: 'WARNING', message: 'Specified log level of "LOUD" is not valid' },
    { level: 'INFO', message: 'message' }
  ])
})

jujuLog('relation hooks prefix the message with <endpoint>:<id>', async () => {
  const context = new FakeHookContext({ relation: { id: 7, endpoint: 'db', remoteUnit: 'mysql/0', remoteApplication: 'mysql' } })
  await runFake(context, 'juju-log', ['joined'])
  assert.equal(context.logs, [{ level: 'INFO', message: 'db:7: joined' }])
})

jujuLog('-- lets a message start with a dash; --format is accepted with a warning', async () => {
  const context = new FakeHookContext()
  assert.equal(await runFake(context, 'juju-log', ['--', '-v', 'is verbose']), ok(''))
  assert.equal(await runFake(context, 'juju-log', ['--format', 'json', 'x']), { code: 0, stdout: '', stderr: '--format flag deprecated for command "juju-log"' })
  assert.equal(context.logs, [{ level: 'INFO', message: '-v is verbose' }, { level: 'INFO', message: 'x' }])
})

jujuLog('no message or an unknown flag is exit 2', async () => {
  const context = new FakeHookContext()
  assert.equal(await runFake(context, 'juju-log'), fails(2, 'no message specified'))
  assert.equal(await runFake(context, 'juju-log', ['-l', 'DEBUG']), fails(2, 'no message specified'))
  assert.equal(await runFake(context, 'juju-log', ['-x', 'message']), fails(2, 'flag provided but not defined: -x'))
  assert.equal(await runFake(context, 'juju-log', ['message', '-l']), fails(2, 'flag needs an argument: -l'))
  assert.equal(context.logs, [])
})

// ---------------------------------------------------------------------------------

const version = suite('application-version-set')

version('sets the workload version at once', async () => {
  const context = new FakeHookContext()
  assert.equal(await runFake(context, 'application-version-set', ['5.4.2-ubuntu1']), ok(''))
  assert.is(context.workloadVersion, '5.4.2-ubuntu1')
  assert.equal(context.immediate, [{ kind: 'application-version', version: '5.4.2-ubuntu1' }])
  assert.equal(context.buffered, [])
})

version('an empty version is allowed; none or two is exit 2', async () => {
  const context = new FakeHookContext()
  assert.equal(await runFake(context, 'application-version-set', ['']), ok(''))
  assert.equal(await runFake(context, 'application-version-set'), fails(2, 'no version specified'))
  assert.equal(await runFake(context, 'application-version-set', ['1', '2']), fails(2, 'unrecognized args: ["2"]'))
})

statusSet.run()
statusGet.run()
leadership.run()
jujuLog.run()
version.run()
