/**
 * The hook tools Juju 3.5 has that the ops framework calls — goal-state, credential-get,
 * relation-model-get, resource-get — and the Juju 3 view of ports in opened-ports: exact
 * output bytes and exit codes of each (the tool commands against a FakeHookContext), and
 * the model-side answers behind them (runtime/model/goal-state.ts, resource records,
 * agent/uniter/unit-resources.ts).
 *
 * Juju sources followed: internal/worker/uniter/runner/jujuc/goal-state.go and
 * goal-state_test.go (the yaml and json documents below are its fixtures),
 * credential-get.go, relation-model-get.go and relation-model-get_test.go,
 * resource-get.go and resource-get_test.go, opened-ports.go; runner/context/ports.go
 * (pending changes merged); apiserver/facades/agent/uniter/uniter.go (GoalStates);
 * canonical/operator test/integration/test_hookcmds.py for what ops asserts against Juju.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHash } from 'node:crypto'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { unitResourcePath } from '../agent/uniter/unit-resources.ts'
import { goalStateOf } from '../runtime/model/goal-state.ts'
import { readerOf } from '../runtime/model/model-draft.ts'
import type { CharmSummaryInput } from '../runtime/model/model-types.ts'
import { FakeHookContext, runFake } from './support/fake-hook-context.ts'
import { MemoryController } from './support/model-controller.ts'

const ok = (stdout: string): { code: number, stdout: string, stderr: string } => ({ code: 0, stdout, stderr: '' })
const fails = (code: 1 | 2, message: string): { code: number, stdout: string, stderr: string } => ({ code, stdout: '', stderr: `ERROR ${message}\n` })

// ---------------------------------------------------------------------------------

const goal = suite('goal-state')
const since = Date.UTC(2200, 10, 5, 15, 29, 12)
const active = { status: 'active', since }
const juju = (): FakeHookContext => new FakeHookContext({
  goalState: { units: { 'mysql/0': active }, relations: { db: { 'mysql/0': active }, server: { 'wordpress/0': active } } }
})
const yamlDoc = 'units:\n  mysql/0:\n    status: active\n    since: 2200-11-05 15:29:12Z\nrelations:\n  db:\n    mysql/0:\n      status: active\n      since: 2200-11-05 15:29:12Z\n  server:\n    wordpress/0:\n      status: active\n      since: 2200-11-05 15:29:12Z\n'
const jsonDoc = '{"units":{"mysql/0":{"status":"active","since":"2200-11-05 15:29:12Z"}},"relations":{"db":{"mysql/0":{"status":"active","since":"2200-11-05 15:29:12Z"}},"server":{"wordpress/0":{"status":"active","since":"2200-11-05 15:29:12Z"}}}}\n'

goal('yaml by default and with --format yaml, json with --format json: Juju\'s fixtures byte for byte', async () => {
  assert.equal(await runFake(juju(), 'goal-state'), ok(yamlDoc))
  assert.equal(await runFake(juju(), 'goal-state', ['--format', 'yaml']), ok(yamlDoc))
  assert.equal(await runFake(juju(), 'goal-state', ['--format=json']), ok(jsonDoc))
})

goal('-o writes the document to a file and nothing to stdout', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'goal-state-'))
  try {
    assert.equal(await runFake(juju(), 'goal-state', ['--format', 'json', '-o', 'out'], { cwd: dir }), ok(''))
    assert.is(readFileSync(join(dir, 'out'), 'utf8'), jsonDoc)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

goal('an empty goal state still prints both keys', async () => {
  assert.equal(await runFake(new FakeHookContext(), 'goal-state'), ok('units: {}\nrelations: {}\n'))
  assert.equal(await runFake(new FakeHookContext(), 'goal-state', ['--format', 'json']), ok('{"units":{},"relations":{}}\n'))
})

goal('bad input: arguments, smart format, unknown flags are usage errors (exit 2)', async () => {
  assert.equal(await runFake(juju(), 'goal-state', ['extra']), fails(2, 'unrecognized args: ["extra"]'))
  assert.equal(await runFake(juju(), 'goal-state', ['--format', 'smart']), fails(2, 'invalid value "smart" for flag --format: unknown format "smart"'))
  assert.equal(await runFake(juju(), 'goal-state', ['--all']), fails(2, 'flag provided but not defined: --all'))
})

// ---------------------------------------------------------------------------------

const model = suite('goal-state: what the model intends (uniter facade GoalStates)')

const web: CharmSummaryInput = { name: 'web', requires: { db: 'mysql' }, peers: { cluster: 'web-peers' } }
const mysql: CharmSummaryInput = { name: 'mysql', provides: { db: 'mysql' } }
const logs: CharmSummaryInput = { name: 'logs', subordinate: true, requires: { host: { interface: 'juju-info', scope: 'container' } } }

function world (): MemoryController {
  const c = new MemoryController()
  c.run('add-charm', { url: 'local:web-0', hash: 'a'.repeat(16), metadata: web })
  c.run('add-charm', { url: 'local:mysql-0', hash: 'b'.repeat(16), metadata: mysql })
  c.run('add-charm', { url: 'local:logs-0', hash: 'c'.repeat(16), metadata: logs })
  c.run('deploy', { application: 'web', charm: 'local:web-0', config: {}, constraints: {}, numUnits: 2 })
  c.run('deploy', { application: 'mysql', charm: 'local:mysql-0', config: {}, constraints: {}, numUnits: 1 })
  return c
}

model('units of the application with their workload status; peers are not relations; a new relation is joining', () => {
  const c = world()
  c.runAs('web/0', 'set-unit-status', { unit: 'web/0', status: 'active', message: '', now: 5_000 })
  assert.equal(goalStateOf(c.context, 'web/0', 9_000), {
    units: { 'web/0': { status: 'active', since: 5_000 }, 'web/1': { status: 'waiting', since: 9_000 } },
    relations: {}
  })
  const db = c.run('integrate', { a: 'web:db', b: 'mysql:db' }).relationId!
  assert.equal(goalStateOf(c.context, 'web/1', 9_000)!.relations, {
    db: { mysql: { status: 'joining', since: 9_000 }, 'mysql/0': { status: 'waiting', since: 9_000 } }
  })
  c.runAs('mysql/0', 'enter-scope', { unit: 'mysql/0', relationId: db })
  assert.equal(goalStateOf(c.context, 'mysql/0', 9_000)!.relations.db!['web'], { status: 'joined', since: 9_000 })
  assert.is(goalStateOf(c.context, 'nobody/0', 0), undefined)
})

model('a dying unit says dying; a hook error says error; subordinates follow their principal', () => {
  const c = world()
  c.run('deploy', { application: 'logs', charm: 'local:logs-0', config: {}, constraints: {}, numUnits: 0 })
  c.run('integrate', { a: 'logs:host', b: 'web:juju-info' })
  c.runAs('web/0', 'set-agent-status', { unit: 'web/0', status: 'error', message: 'hook failed: "install"', data: { hook: 'install' }, now: 7 })
  c.run('remove-unit', { unit: 'web/1' })
  const state = goalStateOf(c.context, 'web/0', 1)!
  assert.equal(state.units['web/0'], { status: 'error', since: 7 })
  assert.is(state.units['web/1']?.status ?? 'gone', readerOf(c.context).unit('web/1') === undefined ? 'gone' : 'dying')
  // web/0's own subordinate is listed; web/1's is not (its principal is not the asker).
  assert.equal(Object.keys(state.relations), ['juju-info'])
  assert.equal(state.relations['juju-info'], { logs: { status: 'joining', since: 1 }, 'logs/0': { status: 'waiting', since: 1 } })
  // Juju's quirk, kept: a subordinate lists none of its own application's units.
  assert.equal(goalStateOf(c.context, 'logs/0', 1)!.units, {})
})

// ---------------------------------------------------------------------------------

const credential = suite('credential-get')
const cloud = { type: 'local', name: 'local', region: 'localhost', credential: { authType: 'empty', attributes: {} }, isControllerCloud: true }

credential('smart and yaml print the CloudSpec struct as yaml.v2 does (lower-cased field names, every field)', async () => {
  const doc = 'type: local\nname: local\nregion: localhost\nendpoint: ""\nidentityendpoint: ""\nstorageendpoint: ""\ncredential:\n  authtype: empty\n  attributes: {}\n  redacted: []\ncacertificates: []\nskiptlsverify: false\niscontrollercloud: true\n'
  assert.equal(await runFake(new FakeHookContext({ cloudSpec: cloud }), 'credential-get'), ok(doc))
  assert.equal(await runFake(new FakeHookContext({ cloudSpec: cloud }), 'credential-get', ['--format', 'yaml']), ok(doc))
})

credential('json uses the struct\'s json tags, omitempty fields left out (what ops parses)', async () => {
  assert.equal(await runFake(new FakeHookContext({ cloudSpec: cloud }), 'credential-get', ['--format=json']),
    ok('{"type":"local","name":"local","region":"localhost","credential":{"auth-type":"empty"},"is-controller-cloud":true}\n'))
})

credential('without trust: Juju\'s refusal, exit 1', async () => {
  assert.equal(await runFake(new FakeHookContext(), 'credential-get', ['--format=json']), fails(1, 'cannot access cloud credentials: permission denied'))
})

credential('bad input is exit 2', async () => {
  assert.equal(await runFake(new FakeHookContext({ cloudSpec: cloud }), 'credential-get', ['x']), fails(2, 'unrecognized args: ["x"]'))
  assert.equal(await runFake(new FakeHookContext({ cloudSpec: cloud }), 'credential-get', ['--format', 'xml']), fails(2, 'invalid value "xml" for flag --format: unknown format "xml"'))
})

// ---------------------------------------------------------------------------------

const relationModel = suite('relation-model-get')
const peer = { id: 0, endpoint: 'peer', remoteApplication: 'wordpress' }
const inPeerHook = (): FakeHookContext => new FakeHookContext({ relations: [peer], relation: { id: 0, endpoint: 'peer', remoteUnit: 'wordpress/1', remoteApplication: 'wordpress' } })

relationModel('the model uuid as a one-field struct: smart/yaml and json (Juju\'s fixtures)', async () => {
  assert.equal(await runFake(inPeerHook(), 'relation-model-get'), ok('uuid: deadbeef-0bad-400d-8000-4b1d0d06f00d\n'))
  assert.equal(await runFake(inPeerHook(), 'relation-model-get', ['--format', 'json']), ok('{"uuid":"deadbeef-0bad-400d-8000-4b1d0d06f00d"}\n'))
  // ops passes `--format=json -r endpoint:id`.
  assert.equal(await runFake(new FakeHookContext({ relations: [peer] }), 'relation-model-get', ['--format=json', '-r', 'peer:0']), ok('{"uuid":"deadbeef-0bad-400d-8000-4b1d0d06f00d"}\n'))
})

relationModel('no relation, a bad or unknown -r, extra arguments: exit 2 with Juju\'s lines', async () => {
  assert.equal(await runFake(new FakeHookContext({ relations: [peer] }), 'relation-model-get'), fails(2, 'no relation id specified'))
  assert.equal(await runFake(inPeerHook(), 'relation-model-get', ['-r', 'one']), fails(2, 'invalid value "one" for flag -r: invalid relation id'))
  assert.equal(await runFake(inPeerHook(), 'relation-model-get', ['-r', 'ignored:2']), fails(2, 'invalid value "ignored:2" for flag -r: relation not found'))
  assert.equal(await runFake(inPeerHook(), 'relation-model-get', ['x']), fails(2, 'unrecognized args: ["x"]'))
})

// ---------------------------------------------------------------------------------

const resource = suite('resource-get')
const spam = (): FakeHookContext => new FakeHookContext({ resources: { spam: '/var/lib/juju/agents/unit-foo-1/resources/spam/a-file.tgz' } })

resource('prints the path with no newline (Juju\'s TestRun)', async () => {
  assert.equal(await runFake(spam(), 'resource-get', ['spam']), ok('/var/lib/juju/agents/unit-foo-1/resources/spam/a-file.tgz'))
})

resource('a failure is "could not download resource: …", exit 1', async () => {
  assert.equal(await runFake(spam(), 'resource-get', ['eggs']), fails(1, 'could not download resource: resource "eggs" not found'))
})

resource('no name, two names, any flag: exit 2', async () => {
  assert.equal(await runFake(spam(), 'resource-get'), fails(2, 'missing required resource name'))
  assert.equal(await runFake(spam(), 'resource-get', ['spam', 'eggs']), fails(2, 'unrecognized args: ["eggs"]'))
  assert.equal(await runFake(spam(), 'resource-get', ['--format', 'json', 'spam']), fails(2, 'flag provided but not defined: --format'))
})

resource('the unit\'s copy: fetched by hash, kept while current, refetched after attach; Juju\'s errors', async () => {
  const c = new MemoryController()
  const content = new TextEncoder().encode('hello from the resource')
  const hash = createHash('sha256').update(content).digest('hex')
  c.run('add-charm', { url: 'local:r-0', hash: 'd'.repeat(16), metadata: { name: 'r', resources: { 'test-file': { type: 'file', filename: 'test-file.txt' }, other: { type: 'file', filename: 'o.bin' } } } })
  c.run('deploy', { application: 'r', charm: 'local:r-0', config: {}, constraints: {}, numUnits: 1, resources: { 'test-file': { hash, size: content.byteLength } } })
  const dir = mkdtempSync(join(tmpdir(), 'unit-resources-'))
  const store = new Map([[hash, content]])
  let fetches = 0
  const source = (): Parameters<typeof unitResourcePath>[0] => ({ model: c.context, application: 'r', dir, fetch: async h => { fetches++; return store.get(h) } })
  try {
    const path = await unitResourcePath(source(), 'test-file')
    assert.is(path, join(dir, 'test-file', 'test-file.txt'))
    assert.is(readFileSync(path, 'utf8'), 'hello from the resource')
    await unitResourcePath(source(), 'test-file')
    assert.is(fetches, 1, 'a current copy is not fetched again')
    const next = new TextEncoder().encode('second revision')
    const nextHash = createHash('sha256').update(next).digest('hex')
    store.set(nextHash, next)
    const before = readerOf(c.context).application('r')!.charmModifiedVersion
    assert.equal(c.run('attach-resource', { application: 'r', resource: 'test-file', hash: nextHash, size: next.byteLength }).revision, 2)
    assert.is(readerOf(c.context).application('r')!.charmModifiedVersion, before + 1, 'attaching fires upgrade-charm')
    assert.is(readFileSync(await unitResourcePath(source(), 'test-file'), 'utf8'), 'second revision')
    await rejects(unitResourcePath(source(), 'other'), 'getting resource from charmhub: resource "other" not found')
    await rejects(unitResourcePath(source(), 'nope'), 'resource "nope" not found')
    writeFileSync(path, 'tampered')
    store.delete(nextHash)
    await rejects(unitResourcePath(source(), 'test-file'), `resource "test-file" revision 2: content ${nextHash.slice(0, 16)} is in no controller's store`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

resource('the model refuses undeclared resources and bad content addresses', () => {
  const c = new MemoryController()
  c.run('add-charm', { url: 'local:r-0', hash: 'd'.repeat(16), metadata: { name: 'r', resources: { f: { type: 'file', filename: 'f' }, img: { type: 'oci-image' } } } })
  const refused = (fields: Record<string, unknown>): string => {
    try {
      c.run('deploy', { application: 'r', charm: 'local:r-0', config: {}, constraints: {}, numUnits: 0, ...fields })
      return 'applied'
    } catch (error) {
      return (error as Error).message
    }
  }
  assert.match(refused({ resources: { g: { hash: 'e'.repeat(64), size: 1 } } }), 'charm "local:r-0" has no resource "g"')
  assert.match(refused({ resources: { img: { hash: 'e'.repeat(64), size: 1 } } }), 'is an oci-image, not a file')
  assert.match(refused({ resources: { f: { hash: 'E'.repeat(64), size: 1 } } }), 'hash must be a sha256 hex digest')
  assert.match(refused({ resources: { f: { hash: 'e'.repeat(64), size: -1 } } }), 'size must be a whole number of bytes')
})

async function rejects (promise: Promise<unknown>, message: string): Promise<void> {
  try {
    await promise
  } catch (error) {
    assert.is((error as Error).message, message)
    return
  }
  assert.unreachable(`expected a rejection: ${message}`)
}

// ---------------------------------------------------------------------------------

const ports = suite('opened-ports: a hook sees its own pending changes (Juju 3)')

ports('ops\' test_ports_open_close_cycle: open tcp, open udp, close tcp, close udp', async () => {
  const context = new FakeHookContext({ ports: [{ protocol: 'tcp', from: 22, to: 22, endpoints: ['*'] }] })
  const seen = async (): Promise<string> => (await runFake(context, 'opened-ports', ['--format=json'])).stdout
  assert.is(await seen(), '["22/tcp"]\n')
  await runFake(context, 'open-port', ['9988/tcp'])
  assert.is(await seen(), '["22/tcp","9988/tcp"]\n')
  await runFake(context, 'open-port', ['9988/udp'])
  assert.is(await seen(), '["22/tcp","9988/tcp","9988/udp"]\n')
  await runFake(context, 'close-port', ['9988/tcp'])
  assert.is(await seen(), '["22/tcp","9988/udp"]\n')
  await runFake(context, 'close-port', ['9988/udp'])
  assert.is(await seen(), '["22/tcp"]\n')
})

ports('ops\' test_ports_endpoint_scoped: --endpoints shows the endpoint of a pending open', async () => {
  const context = new FakeHookContext({ ports: [{ protocol: 'tcp', from: 80, to: 80, endpoints: ['*'] }] })
  await runFake(context, 'open-port', ['--endpoints', 'peer', '7766/tcp'])
  assert.equal(await runFake(context, 'opened-ports', ['--endpoints', '--format=json']), ok('["80/tcp (*)","7766/tcp (peer)"]\n'))
  assert.equal(await runFake(context, 'opened-ports', ['--endpoints']), ok('80/tcp (*)\n7766/tcp (peer)\n'))
  // Closing for one endpoint leaves an opening for all endpoints alone (Juju's per-endpoint pairs).
  await runFake(context, 'close-port', ['--endpoints', 'peer', '80/tcp'])
  await runFake(context, 'close-port', ['--endpoints', 'peer', '7766/tcp'])
  assert.equal(await runFake(context, 'opened-ports', ['--endpoints']), ok('80/tcp (*)\n'))
  context.discard()
  assert.equal(await runFake(context, 'opened-ports', ['--endpoints']), ok('80/tcp (*)\n'), 'a failed hook\'s changes are gone')
})

ports('bad input: arguments and unknown flags are exit 2', async () => {
  assert.equal(await runFake(new FakeHookContext(), 'opened-ports', ['80']), fails(2, 'unrecognized args: ["80"]'))
  assert.equal(await runFake(new FakeHookContext(), 'opened-ports', ['--all']), fails(2, 'flag provided but not defined: --all'))
})

// ---------------------------------------------------------------------------------

const storageAdd = suite('storage-add as ops calls it')

storageAdd('`storage-add data=1` asks for one more instance; bad directives are exit 2', async () => {
  const context = new FakeHookContext()
  assert.equal(await runFake(context, 'storage-add', ['data=1']), ok(''))
  assert.equal(await runFake(context, 'storage-add', ['logs']), ok(''))
  assert.equal(context.storageAdds, { data: 1, logs: 1 })
  assert.equal(await runFake(context, 'storage-add'), fails(2, 'storage add requires a storage directive'))
  assert.is((await runFake(context, 'storage-add', ['data=x'])).code, 2)
})

goal.run()
model.run()
credential.run()
relationModel.run()
resource.run()
ports.run()
storageAdd.run()
