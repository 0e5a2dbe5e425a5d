/**
 * The model commands of the CLI without processes: bundle parsing and its one-line
 * errors, argument parsing, and each command's action run against a fake connection
 * whose submit() applies to an in-memory model (MemoryController), so deploying a
 * bundle, then scaling, configuring, relating, running actions and removing is checked
 * on the model state.
 */
import '../runtime/polyfill.ts'
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { parse } from 'yaml'
import { charmArchiveHash } from '../agent/charm/charm-archive.ts'
import { parseBundle } from '../agent/cli/bundle.ts'
import { runAction, runResolved } from '../agent/cli/commands/actions.ts'
import { configRequest, runConfig, runExpose } from '../agent/cli/commands/config.ts'
import { chooseCharmUrl, deployRequest, planDeploy, prepareCharm, runDeploy } from '../agent/cli/commands/deploy.ts'
import { runAddMachine, runRemoveMachine } from '../agent/cli/commands/machines.ts'
import { actionParameters, type ModelClient, parseCount, parseDuration, parseKeyValues, untilModel } from '../agent/cli/commands/model-common.ts'
import { runRefresh } from '../agent/cli/commands/refresh.ts'
import { runAttachResource } from '../agent/cli/commands/attach-resource.ts'
import { runResources } from '../agent/cli/commands/resources.ts'
import { runTrust } from '../agent/cli/commands/trust.ts'
import { runIntegrate, runRemoveRelation } from '../agent/cli/commands/relations.ts'
import { runAddUnit, runRemoveApplication, runRemoveUnit } from '../agent/cli/commands/units.ts'
import type { ModelCommand } from '../runtime/model/model-types.ts'
import { tableGet, tableValues } from '../runtime/model/table.ts'
import { MemoryController } from './support/model-controller.ts'

const kvDir = resolve('examples/charms/kv')
const webDir = resolve('examples/charms/web')

class FakeClient implements ModelClient {
  readonly memory = new MemoryController()
  readonly bodies: Array<Record<string, unknown>> = []
  readonly puts: string[] = []
  readonly listeners = new Set<() => void>()
  #n = 0
  async submit (body: Record<string, unknown>): ReturnType<ModelClient['submit']> {
    this.bodies.push(body)
    const result = this.memory.apply({ ...body, requestId: `fake-${this.#n++}`, proposer: { kind: 'user', name: 'admin' } } as unknown as ModelCommand)
    this.changed()
    return result
  }

  async model (): ReturnType<ModelClient['model']> {
    return { ok: true, model: this.memory.context, presence: {}, leader: 'fake', term: 1 }
  }

  async putCharm (bytes: Uint8Array): Promise<string> {
    const hash = charmArchiveHash(bytes)
    this.puts.push(hash)
    return hash
  }

  watch (onChange: () => void): () => void {
    this.listeners.add(onChange)
    return () => { this.listeners.delete(onChange) }
  }

  changed (): void { for (const l of [...this.listeners]) l() }
  types (): unknown[] { return this.bodies.map(b => b['type']) }
}

/** Every temporary directory of this file, removed when its tests end. */
const scratch = mkdtempSync(join(tmpdir(), 'cantrip-cli-commands-'))
test.after(() => { rmSync(scratch, { recursive: true, force: true }) })

function setup (): { client: FakeClient, connect: () => Promise<FakeClient>, lines: string[], out: (s: string) => void } {
  const client = new FakeClient()
  const lines: string[] = []
  return { client, connect: async () => client, lines, out: s => { lines.push(s) } }
}

function writeBundle (text: (rel: (dir: string) => string) => string): string {
  const dir = mkdtempSync(join(scratch, 'bundle-'))
  const file = join(dir, 'bundle.yaml')
  writeFileSync(file, text(d => relative(dir, d)))
  return file
}

async function rejects (promise: Promise<unknown> | (() => unknown), pattern: RegExp): Promise<void> {
  try {
    await (typeof promise === 'function' ? promise() : promise)
  } catch (error) {
    const message = (error as Error).message
    assert.match(message, pattern)
    assert.not.match(message, /\n/)
    return
  }
  assert.unreachable(`expected a failure matching ${String(pattern)}`)
}

const app = (client: FakeClient, name: string) => tableGet(client.memory.context.applications, name)

// ---------------------------------------------------------------------------------
// Pure parts

test('bundle: parsed with charm paths relative to the bundle file', () => {
  const bundle = parseBundle('cantrip deploy', [
    'applications:',
    '  kv: {charm: ./charms/kv, num_units: 2, options: {port-base: 9000}, to: ["0"], expose: true}',
    '  web: {charm: ../web, constraints: "mem=1G cores=2"}',
    'machines: {"0": {constraints: cores=4}}',
    'relations: [[web:backend, kv:website]]'
  ].join('\n'), '/tmp/b/bundle.yaml')
  assert.is(bundle.applications[0]!.charm, '/tmp/b/charms/kv')
  assert.is(bundle.applications[1]!.charm, '/tmp/web')
  assert.equal(bundle.applications[0]!.to, ['0'])
  assert.is(bundle.applications[0]!.numUnits, 2)
  assert.is(bundle.applications[1]!.numUnits, undefined)
  assert.equal(bundle.applications[1]!.constraints, { mem: '1G', cores: '2' })
  assert.equal(bundle.machines, [{ id: '0', constraints: { cores: '4' } }])
  assert.equal(bundle.relations, [['web:backend', 'kv:website']])
})

test('bundle: every problem is one line naming the file, the key and what was expected', async () => {
  const bad: Array<[string, RegExp]> = [
    ['applications: {kv: {charm: ./kv, colour: red}}', /^cantrip deploy: b\.yaml: applications\.kv\.colour: expected one of the keys .*, got "colour"$/],
    ['applicaitons: {}', /^cantrip deploy: b\.yaml: applicaitons: expected one of the keys/],
    ['applications: {kv: {charm: ./kv, num_units: two}}', /applications\.kv\.num_units: expected a whole number, got "two"/],
    ['applications: {kv: {charm: ./kv, num_units: -1}}', /applications\.kv\.num_units: expected a whole number, got -1/],
    ['applications: {kv: {num_units: 1}}', /applications\.kv\.charm: expected a local charm directory, got undefined/],
    ['applications: {kv: {charm: ./kv, to: ["3"]}}', /applications\.kv\.to\[0\]: expected a machine declared under machines: \(none are\) or "new", got "3"/],
    ['applications: {kv: {charm: ./kv}}\nrelations: [[kv, web]]', /relations\[0\]\[1\]: expected an application of the bundle \(kv\), got "web"/],
    ['applications: {kv: {charm: ./kv}}\nrelations: [kv]', /relations\[0\]: expected a pair/],
    ['applications: {kv: {charm: ./kv, options: {a: [1]}}}', /applications\.kv\.options\.a: expected a string, number or boolean/],
    ['applications: {kv: {charm: ./kv, expose: yes-please}}', /applications\.kv\.expose: expected true or false/],
    ['applications: [kv]', /b\.yaml: applications: expected a map of at least one application/],
    ['applications: {kv: {charm: ./kv}', /b\.yaml: expected valid YAML/]
  ]
  for (const [text, pattern] of bad) await rejects(() => parseBundle('cantrip deploy', text, 'b.yaml'), pattern)
})

test('arguments: -n, key=value, durations and action parameters', async () => {
  assert.is(parseCount('cantrip add-unit', '3', 1), 3)
  assert.is(parseCount('cantrip add-unit', undefined, 1), 1)
  await rejects(() => parseCount('cantrip add-unit', '0', 1), /^cantrip add-unit: expected -n to be a whole number of at least 1, got "0"$/)
  await rejects(() => parseCount('cantrip add-unit', 'abc', 1), /got "abc"/)
  await rejects(() => parseCount('cantrip add-unit', '1.5', 1), /got "1.5"/)
  assert.equal(parseKeyValues('x', ['a=1', 'b=', 'c=d=e']), [['a', '1'], ['b', ''], ['c', 'd=e']])
  await rejects(() => parseKeyValues('cantrip config', ['novalue']), /^cantrip config: expected key=value, got "novalue"$/)
  await rejects(() => parseKeyValues('cantrip config', ['=v']), /expected key=value, got "=v"/)
  assert.is(parseDuration('x', '--wait', '1m30s'), 90_000)
  assert.is(parseDuration('x', '--wait', '500ms'), 500)
  assert.is(parseDuration('x', '--wait', '2'), 2000)
  await rejects(() => parseDuration('cantrip run', '--wait', 'soon'), /^cantrip run: expected --wait to be a duration like 30s, 1m or 1h, got "soon"$/)
  assert.equal(actionParameters('x', ['key=a', 'n=3', 'flag=true', 'deep.er=x', 'empty=']), { key: 'a', n: 3, flag: true, deep: { er: 'x' }, empty: '' })
  assert.equal(configRequest([], undefined), { kind: 'show' })
  assert.equal(configRequest(['port'], undefined), { kind: 'get', key: 'port' })
  assert.equal(configRequest(['port=1'], 'log-level'), { kind: 'set', pairs: [['port', '1']], reset: ['log-level'] })
  await rejects(() => configRequest(['port', 'a=1'], undefined), /^cantrip config: expected either one key to read or key=value pairs to set/)
})

test('deploy: bad input is refused before anything is sent', async () => {
  const { client, connect, out } = setup()
  const empty = mkdtempSync(join(scratch, 'nocharm-'))
  mkdirSync(join(empty, 'hooks'))
  await rejects(runDeploy(connect, empty, undefined, {}, out), /^cantrip deploy: expected a charm directory with metadata\.yaml or charmcraft\.yaml, got ".*"$/)
  await rejects(runDeploy(connect, '/nonexistent/charm', undefined, {}, out), /^cantrip deploy: expected a charm directory, a \.charm file or a bundle \.yaml file/)
  await rejects(runDeploy(connect, kvDir, undefined, { n: '0' }, out), /^cantrip deploy: expected -n to be a whole number of at least 1, got "0"$/)
  await rejects(runDeploy(connect, kvDir, undefined, { n: 'abc' }, out), /got "abc"/)
  await rejects(runDeploy(connect, kvDir, undefined, { config: ['port'] }, out), /^cantrip deploy: expected --config key=value or --config file\.yaml, got "port"$/)
  await rejects(runDeploy(connect, kvDir, undefined, { config: ['colour=red'] }, out), /^cantrip deploy: expected an option of charm "kv" \(log-level, port, port-base\), got "colour"$/)
  await rejects(runDeploy(connect, kvDir, undefined, { config: ['port=abc'] }, out), /^cantrip deploy: expected option "port" of charm "kv" to be an int, got "abc"$/)
  await rejects(runDeploy(connect, kvDir, undefined, { n: '1', to: '0,1' }, out), /expected at most -n \(1\) machines in --to/)
  await rejects(runDeploy(connect, kvDir, 'Bad_Name', {}, out), /expected an application name/)
  const bundle = writeBundle(rel => `applications:\n  kv: {charm: ${rel(kvDir)}, bogus: 1}\n`)
  await rejects(runDeploy(connect, bundle, undefined, {}, out), /bundle\.yaml: applications\.kv\.bogus: expected one of the keys/)
  await rejects(runAddUnit(connect, 'kv', { n: '0' }, out), /^cantrip add-unit: expected -n to be a whole number/)
  await rejects(runRemoveUnit(connect, ['kv'], out), /^cantrip remove-unit: expected a unit name like "web\/0", got "kv"$/)
  await rejects(runAddMachine(connect, 'host', {}, out), /^cantrip add-machine: expected a placement like ssh:user@host or ssh:user@host:port, got "host"$/)
  await rejects(runAddMachine(connect, undefined, { constraints: ['mem'] }, out), /expected --constraints like "mem=4G cores=2", got "mem"/)
  await rejects(runRemoveMachine(connect, ['x'], {}, out), /^cantrip remove-machine: expected a machine id/)
  await rejects(runAction(connect, ['kv/0', 'get', 'key'], {}, out), /^cantrip run: expected key=value, got "key"$/)
  assert.equal(client.bodies, [])
})

test('planDeploy: a charm directory becomes add-charm + deploy with typed config; revisions follow content', async () => {
  const { client } = setup()
  const kv = await prepareCharm(kvDir)
  const plan = planDeploy(deployRequest(kvDir, 'store', { n: '2', to: '0', config: ['port-base=9000', 'log-level=debug'] }), new Map([[kv.dir, kv]]), client.memory.context)
  assert.equal(plan.steps.map(s => s.kind), ['charm', 'submit'])
  assert.is((plan.steps[0] as { url: string }).url, 'local:kv-0')
  assert.equal((plan.steps[1] as { body: unknown }).body, {
    type: 'deploy', application: 'store', charm: 'local:kv-0', config: { 'port-base': 9000, 'log-level': 'debug' }, constraints: {}, numUnits: 2, placement: ['0']
  })
  // The same content keeps its URL; other content under the same name takes the next revision.
  client.memory.run('add-charm', { url: 'local:kv-0', hash: kv.hash, metadata: kv.summary })
  assert.equal(chooseCharmUrl(client.memory.context, kv), { url: 'local:kv-0', exists: true })
  assert.equal(chooseCharmUrl(client.memory.context, { name: 'kv', hash: 'ab'.repeat(32) }), { url: 'local:kv-1', exists: false })
})

// ---------------------------------------------------------------------------------
// The commands against an in-memory model

test('deploy a bundle --map-machines existing: its machines are the model\'s of the same ids (Juju\'s deploy flag), one line for anything else', async () => {
  const { client, connect, out } = setup()
  client.memory.run('add-machine', { placement: 'ssh:root@10.0.0.2' })
  client.memory.run('add-machine', { placement: 'ssh:root@10.0.0.3' })
  const bundle = writeBundle(rel => [
    'machines: {"0": {}, "1": {}, "2": {}}',
    'applications:',
    `  kv: {charm: ${rel(kvDir)}, num_units: 2, to: ["0", "1"]}`,
    `  web: {charm: ${rel(webDir)}, num_units: 1, to: ["2"]}`
  ].join('\n') + '\n')
  await runDeploy(connect, bundle, undefined, { mapMachines: 'existing' }, out)
  // Machines 0 and 1 exist (added over ssh); bundle machine 2 does not, so it is added.
  assert.equal(client.types().filter(t => t === 'add-machine'), ['add-machine'])
  assert.equal(['kv/0', 'kv/1', 'web/0'].map(u => tableGet(client.memory.context.units, u)!.machine), ['0', '1', '2'])
  assert.throws(() => deployRequest(bundle, undefined, { mapMachines: '0=1' }), (e: Error) => e.message === 'cantrip deploy: expected --map-machines existing, got "0=1"')
})

test('deploy a bundle, re-run it, then scale, configure, relate, expose and remove', async () => {
  const { client, connect, lines, out } = setup()
  const bundle = writeBundle(rel => [
    'description: kv behind web',
    'machines:',
    '  "0": {constraints: cores=2}',
    'applications:',
    `  kv: {charm: ${rel(kvDir)}, num_units: 2, to: ["0"], options: {port-base: 9000, log-level: debug}}`,
    `  web: {charm: ./${rel(webDir)}, num_units: 1, expose: true}`,
    'relations:',
    '  - [web:backend, kv:website]'
  ].join('\n') + '\n')
  await runDeploy(connect, bundle, undefined, {}, out)
  assert.equal(client.types(), ['add-charm', 'add-charm', 'add-machine', 'deploy', 'deploy', 'integrate', 'expose'])
  assert.is(client.puts.length, 2)
  const kv = app(client, 'kv')!
  assert.is(kv.charm, 'local:kv-0')
  assert.equal(kv.config, { 'log-level': 'debug', 'port-base': 9000 })
  assert.equal(kv.units, ['kv/0', 'kv/1'])
  assert.is(tableGet(client.memory.context.units, 'kv/0')!.machine, '0')
  assert.equal(tableGet(client.memory.context.machines, '0')!.constraints, { cores: '2' })
  assert.is(app(client, 'web')!.exposed, true)
  assert.is(app(client, 'web')!.relations.length, 1)
  assert.ok(lines.includes('Executing changes:'), lines.join('\n'))

  // Re-running changes nothing and fails on nothing.
  const before = client.bodies.length
  lines.length = 0
  await runDeploy(connect, bundle, undefined, {}, out)
  assert.is(client.bodies.length, before, JSON.stringify(client.bodies.slice(before)))
  assert.ok(lines.includes('No changes to apply.'), lines.join('\n'))

  await runAddUnit(connect, 'web', { n: '2' }, out)
  assert.equal(app(client, 'web')!.units, ['web/0', 'web/1', 'web/2'])
  await runConfig(connect, 'kv', ['port=8080', 'trust=true'], 'log-level', out)
  assert.equal(client.bodies.at(-1), { type: 'set-config', application: 'kv', config: { port: 8080, 'log-level': null }, trust: true })
  assert.equal(app(client, 'kv')!.config, { port: 8080, 'port-base': 9000 })
  lines.length = 0
  await runConfig(connect, 'kv', ['port'], undefined, out)
  assert.equal(lines, ['8080'])
  lines.length = 0
  await runConfig(connect, 'kv', [], undefined, out)
  const shown = lines.join('\n')
  assert.match(shown, /^application: kv\n/)
  assert.match(shown, /log-level:\n {4}default: info\n {4}source: default\n {4}type: string\n {4}value: info/)
  assert.match(shown, /port:\n {4}default: 0\n {4}source: user\n {4}type: int\n {4}value: 8080/)
  await rejects(runConfig(connect, 'kv', ['colour=red'], undefined, out), /^cantrip config: expected an option of charm "kv"/)

  await runExpose(connect, 'web', false)
  assert.is(app(client, 'web')!.exposed, false)
  const relationId = tableValues(client.memory.context.relations).find(r => !r.peer)!.id
  await runRemoveRelation(connect, ['kv', 'web'], out)
  assert.equal(client.bodies.at(-1), { type: 'remove-relation', relationId })
  await rejects(runRemoveRelation(connect, ['kv', 'web'], out), /^cantrip remove-relation: expected a relation between kv and web, got "none in the model"$/)
  await runIntegrate(connect, 'kv', 'web', out)
  assert.is(client.bodies.at(-1)!['type'], 'integrate')

  await runRemoveUnit(connect, ['web/2'], out)
  assert.equal(client.bodies.at(-1), { type: 'remove-unit', unit: 'web/2' })
  // No agent runs in this in-memory model: a unit whose agent never started leaves at once.
  assert.is(tableGet(client.memory.context.units, 'web/2'), undefined)
  // The model's refusals come back as one controller line.
  await rejects(runAddUnit(connect, 'nosuch', {}, out), /^controller 0\.1\.0: cannot /)
  await runRemoveApplication(connect, ['web'], out)
  assert.equal(client.bodies.at(-1), { type: 'remove-application', application: 'web' })
  assert.is(app(client, 'web'), undefined)
})

test('add-machine, remove-machine, resolved and refresh', async () => {
  const { client, connect, lines, out } = setup()
  await runAddMachine(connect, undefined, { n: '2', constraints: ['mem=4G cores=2'] }, out)
  await runAddMachine(connect, 'ssh:ubuntu@10.0.0.5', {}, out)
  assert.equal(lines, ['created machine 0', 'created machine 1', 'created machine 2'])
  assert.equal(tableGet(client.memory.context.machines, '1')!.constraints, { mem: '4G', cores: '2' })
  assert.is(tableGet(client.memory.context.machines, '2')!.placement, 'ssh:ubuntu@10.0.0.5')
  await runDeploy(connect, kvDir, undefined, { to: '0' }, out)
  await rejects(runRemoveMachine(connect, ['0'], {}, out), /^controller 0\.1\.0: cannot .*remove them first or force it/)
  await runRemoveMachine(connect, ['1'], {}, out)
  assert.is(tableGet(client.memory.context.machines, '1')!.life, 'dying')
  await runResolved(connect, 'kv/0', { retry: false })
  assert.is(tableGet(client.memory.context.units, 'kv/0')!.resolvedMode, 'no-hooks')
  await runResolved(connect, 'kv/0', {})
  assert.is(tableGet(client.memory.context.units, 'kv/0')!.resolvedMode, 'retry-hooks')

  // refresh to changed content: a new revision; the same content again is nothing to do.
  const copy = mkdtempSync(join(scratch, 'kv2-'))
  const { cpSync } = await import('node:fs')
  cpSync(kvDir, copy, { recursive: true })
  writeFileSync(join(copy, 'README.md'), 'changed\n')
  lines.length = 0
  await runRefresh(connect, 'kv', { path: copy }, out)
  assert.is(app(client, 'kv')!.charm, 'local:kv-1')
  assert.equal(client.bodies.slice(-2).map(b => b['type']), ['add-charm', 'refresh'])
  await runRefresh(connect, 'kv', { path: copy }, out)
  assert.match(lines.at(-1)!, /Already running charm local:kv-1/)
  assert.equal(tableValues(client.memory.context.charms).map(c => c.url).sort(), ['local:kv-0', 'local:kv-1'])
})

test('run: enqueues, waits on change notices and prints the task as Juju 3.6 does; only a non-zero return code fails it', async () => {
  const { client, connect, lines, out } = setup()
  await runDeploy(connect, kvDir, undefined, {}, out)
  const machine = tableGet(client.memory.context.units, 'kv/0')!.machine
  const completeNext = (status: 'completed' | 'failed', results: Record<string, unknown>, message?: string): void => {
    const before = client.bodies.length
    const tick = setInterval(() => {
      const enqueued = client.bodies.slice(before).find(b => b['type'] === 'enqueue-operation')
      if (enqueued === undefined) return
      clearInterval(tick)
      const id = tableGet(client.memory.context.units, 'kv/0')!.actions.at(-1)!
      client.memory.run('complete-action', { unit: 'kv/0', actionId: id, status, results, ...(message === undefined ? {} : { message }) }, { kind: 'machine', id: machine })
      client.changed()
    }, 5)
  }
  lines.length = 0
  completeNext('completed', { value: 'v1' })
  // cmd/juju/action/common.go: plain output by default, the whole task under --format yaml.
  await runAction(connect, ['kv/0', 'get', 'key=a'], { wait: '5s' }, out)
  assert.equal(lines, ['value: v1\n\n'])
  // One operation of one task, as Juju 3's run (operations.ts); the time is the client's.
  const { now, ...sent } = client.bodies.at(-1)!
  assert.equal(sent, { type: 'enqueue-operation', units: ['kv/0'], task: { kind: 'action', name: 'get', parameters: { key: 'a' } } })
  assert.type(now, 'number')
  lines.length = 0
  completeNext('completed', { value: 'v2', 'return-code': 0 })
  await runAction(connect, ['kv/0', 'get', 'key=a'], { format: 'yaml' }, out)
  const doc = parse(lines[0]!) as Record<string, { id: string, results: unknown, status: string, unit: string }>
  assert.equal(Object.keys(doc), ['kv/0'])
  assert.equal([doc['kv/0']!.results, doc['kv/0']!.status, doc['kv/0']!.unit], [{ value: 'v2', 'return-code': 0 }, 'completed', 'kv/0'])
  // Failed without a process return code (action-fail, or no process): said, and exit 0 (run_test.go).
  lines.length = 0
  completeNext('failed', {}, 'no such key')
  await runAction(connect, ['kv/0', 'get', 'key=b'], {}, out)
  assert.match(lines[0]!, /^Action id (\d+) failed: no such key\nTask \1 failed\n\n$/)
  completeNext('failed', { 'return-code': 1 }, 'exit status 1')
  const failure = await runAction(connect, ['kv/0', 'get', 'key=b'], {}, out).then(() => undefined, (error: unknown) => error as Error)
  assert.is(failure?.name, 'TaskFailures')
  assert.match(failure?.message ?? '', /^the following task failed:\n - id "\d+" with return code 1\n\nuse 'cantrip show-task' to inspect the failure$/)
  await rejects(runAction(connect, ['kv/0', 'get', 'key=c'], { wait: '50ms' }, out), /^cantrip run: timed out waiting for results from: unit kv\/0$/)
  await rejects(runAction(connect, ['kv/0', 'get', 'key=c'], { format: 'tabular' }, out), /^cantrip run: expected --format plain, yaml or json, got "tabular"$/)
  await rejects(runAction(connect, ['kv/0', 'nosuch'], {}, out), /^controller 0\.1\.0: cannot .*defines no action "nosuch"/)
})

test('run on several units, app/leader, --params and --string-args: one operation, Juju\'s multi-task plain output', async () => {
  const { client, connect, lines, out } = setup()
  await runDeploy(connect, kvDir, undefined, { n: '2' }, out)
  const machineOf = (unit: string): string => tableGet(client.memory.context.units, unit)!.machine!
  // Completes every task of the next operation: kv/0 with results, kv/1 failed by action-fail.
  const completeNext = (): void => {
    const before = client.bodies.length
    const tick = setInterval(() => {
      if (!client.bodies.slice(before).some(b => b['type'] === 'enqueue-operation')) return
      clearInterval(tick)
      for (const unit of ['kv/0', 'kv/1']) {
        const id = tableGet(client.memory.context.units, unit)!.actions.at(-1)
        if (id === undefined || tableGet(client.memory.context.actions, id)!.status !== 'pending') continue
        const done = unit === 'kv/0'
          ? { unit, actionId: id, status: 'completed' as const, results: { value: 'v', 'return-code': 0 } }
          : { unit, actionId: id, status: 'failed' as const, results: {}, message: 'no such key' }
        client.memory.run('complete-action', done, { kind: 'machine', id: machineOf(unit) })
      }
      client.changed()
    }, 5)
  }
  // cmd/juju/action/run.go Init: units first, all of one application; then the action.
  await rejects(runAction(connect, ['get', 'key=a'], {}, out), /^cantrip run: expected a unit like "kv\/0" or "kv\/leader" before the action, got "get key=a"$/)
  await rejects(runAction(connect, ['kv/0', 'kv/1'], {}, out), /^cantrip run: expected an action name after the units, got "kv\/0 kv\/1"$/)
  await rejects(runAction(connect, ['kv/0', 'web/1', 'get'], {}, out), /^cantrip run: expected units of one application \(all units must be of the same application\), got "kv, web"$/)
  await rejects(runAction(connect, ['kv/0', 'Bad!', 'x=1'], {}, out), /^cantrip run: expected a unit like "kv\/0" or "kv\/leader", or an action name, got "Bad!"$/)
  await rejects(runAction(connect, ['kv/9', 'get'], {}, out), /^cantrip run: unit "kv\/9" not found$/)
  await rejects(runAction(connect, ['kv/leader', 'get'], {}, out), /^cantrip run: application "kv" has no leader$/)
  await rejects(runAction(connect, ['kv/0', 'get'], { paramsFile: join(scratch, 'none.yaml') }, out), /^cantrip run: expected --params to name a readable YAML file, got ".*none\.yaml \(ENOENT\)"$/)
  const listFile = join(scratch, 'list-params.yaml')
  writeFileSync(listFile, '- a\n- b\n')
  await rejects(runAction(connect, ['kv/0', 'get'], { paramsFile: listFile }, out), /^cantrip run: expected --params to hold a YAML map with string keys \(.*\), got an array of 2$/)
  assert.is(client.bodies.filter(b => b['type'] === 'enqueue-operation').length, 0, 'nothing queued for bad input')

  // --params under key=value arguments, which win; values are YAML 1.1 as Juju's yaml.v2
  // reads them (`yes` is true, which put's schema refuses), unless --string-args.
  const paramsFile = join(scratch, 'params.yaml')
  writeFileSync(paramsFile, 'key: from-file\nvalue: from-file\n')
  await rejects(runAction(connect, ['kv/0', 'kv/1', 'put', 'value=yes'], { paramsFile, wait: '5s' }, out), /validation failed: \(root\)\.value : must be of type string, given true$/)
  lines.length = 0
  completeNext()
  await runAction(connect, ['kv/0', 'kv/1', 'put', 'value=yes'], { paramsFile, stringArgs: true, wait: '5s' }, out)
  const sent = client.bodies.filter(b => b['type'] === 'enqueue-operation').at(-1)!
  assert.equal([sent['units'], (sent['task'] as { parameters: unknown }).parameters], [['kv/0', 'kv/1'], { key: 'from-file', value: 'yes' }])
  assert.equal(actionParameters('x', ['a.b=2', 'on=on'], { base: { a: { c: 1 }, on: 'x' } }), { a: { c: 1, b: 2 }, on: true })
  // Several tasks: one YAML map by unit (common.go printPlainOutput), no streams.
  const doc = parse(lines.join('')) as Record<string, Record<string, string>>
  assert.equal(Object.keys(doc), ['kv/0', 'kv/1'])
  assert.equal(Object.keys(doc['kv/1']!), ['id', 'message', 'output', 'status'])
  assert.equal([doc['kv/0']!['output'], doc['kv/0']!['status']], ['value: v\n', 'completed'])
  assert.equal([doc['kv/1']!['message'], doc['kv/1']!['output'], doc['kv/1']!['status']], ['no such key', `Task ${doc['kv/1']!['id']} failed\n`, 'failed'])

  // kv/leader is the lease holder's unit, resolved before anything is queued.
  client.memory.run('claim-leadership', { application: 'kv', unit: 'kv/1', now: Date.now(), durationMs: 60_000 }, { kind: 'machine', id: machineOf('kv/1') })
  lines.length = 0
  completeNext()
  await runAction(connect, ['kv/leader', 'get', 'key=a'], { wait: '5s' }, out)
  assert.equal(client.bodies.filter(b => b['type'] === 'enqueue-operation').at(-1)!['units'], ['kv/1'])
  assert.match(lines[0]!, /^Action id \d+ failed: no such key\n/)
})

test('deploy --resource, attach-resource and trust (what is sent, and bad input refused before it is)', async () => {
  const { client, connect, out } = setup()
  const dir = mkdtempSync(join(scratch, 'res-'))
  mkdirSync(join(dir, 'charm'))
  writeFileSync(join(dir, 'charm', 'metadata.yaml'), 'name: res\nsummary: s\ndescription: d\nresources:\n  test-file:\n    type: file\n    filename: test-file.txt\n  image:\n    type: oci-image\n')
  writeFileSync(join(dir, 'a.txt'), 'first')
  writeFileSync(join(dir, 'b.txt'), 'second!')
  const charm = join(dir, 'charm')
  await rejects(runDeploy(connect, charm, undefined, { resource: ['test-file'] }, out), /^cantrip deploy: expected --resource NAME=PATH, got "test-file"$/)
  await rejects(runDeploy(connect, charm, undefined, { resource: [`test-file=${join(dir, 'none.txt')}`] }, out), /^cantrip deploy: expected a readable file for resource "test-file", got ".*none\.txt"$/)
  await rejects(runDeploy(connect, charm, undefined, { resource: [`other=${join(dir, 'a.txt')}`] }, out), /^cantrip deploy: expected a resource charm "res" declares \(image, test-file\), got "other"$/)
  await rejects(runDeploy(connect, charm, undefined, { resource: [`image=${join(dir, 'a.txt')}`] }, out), /^cantrip deploy: expected a file resource; "image" of charm "res" is an oci-image, got "image"$/)
  assert.is(client.bodies.length, 0, 'nothing sent for bad input')
  await runDeploy(connect, charm, undefined, { resource: [`test-file=${join(dir, 'a.txt')}`] }, out)
  const first = charmArchiveHash(new TextEncoder().encode('first'))
  assert.ok(client.puts.includes(first), 'the file went into the store')
  assert.equal((client.bodies.at(-1) as { resources?: unknown }).resources, { 'test-file': { hash: first, size: 5 } })
  assert.equal(app(client, 'res')!.resources, { 'test-file': { revision: 1, hash: first, size: 5 } })

  await runAttachResource(connect, 'res', [`test-file=${join(dir, 'b.txt')}`], out)
  const second = charmArchiveHash(new TextEncoder().encode('second!'))
  assert.equal(client.bodies.at(-1), { type: 'attach-resource', application: 'res', resource: 'test-file', hash: second, size: 7 })
  assert.equal(app(client, 'res')!.resources, { 'test-file': { revision: 2, hash: second, size: 7 } })
  assert.is(app(client, 'res')!.charmModifiedVersion, 1, 'units run upgrade-charm')
  await rejects(runAttachResource(connect, 'res', [`nope=${join(dir, 'b.txt')}`], out), /^cantrip attach-resource: expected a resource charm "res" declares \(image, test-file\), got "nope"$/)
  await rejects(runAttachResource(connect, 'nosuch', [`test-file=${join(dir, 'b.txt')}`], out), /^cantrip attach-resource: expected an application in the model, got "nosuch"$/)

  // What is attached, as Juju's `juju resources`: every declared resource, tabular, yaml, json, per unit.
  const shown = async (options: { format?: string, details?: boolean }): Promise<string> => {
    const printed: string[] = []
    await runResources(connect, 'res', options, s => { printed.push(s) })
    assert.is(printed.length, 1)
    return printed[0]!
  }
  assert.is(await shown({}), [
    'Resource   Supplied by  Revision',
    'image      upload       -',
    'test-file  upload       2'
  ].join('\n'))
  const expected = { applicationId: 'res', name: 'test-file', type: 'file', path: 'test-file.txt', revision: '2', fingerprint: second, size: 7, origin: 'upload', used: true }
  const image = { applicationId: 'res', name: 'image', type: 'oci-image', path: '', revision: '-', fingerprint: '', size: 0, origin: 'upload', used: false }
  assert.equal(parse(await shown({ format: 'yaml' })), { resources: [image, expected] })
  assert.equal(JSON.parse(await shown({ format: 'json' })), { resources: [image, expected] })
  assert.is(await shown({ details: true }), [
    'Unit   Resource   Revision  Expected',
    'res/0  image      unknown   -',
    'res/0  test-file  unknown   2'
  ].join('\n'), 'the unit deploy added: what it fetched is not recorded')
  await runAddUnit(connect, 'res', { n: '1' }, out)
  assert.is(await shown({ details: true }), [
    'Unit   Resource   Revision  Expected',
    'res/0  image      unknown   -',
    'res/0  test-file  unknown   2',
    'res/1  image      unknown   -',
    'res/1  test-file  unknown   2'
  ].join('\n'))
  assert.equal(JSON.parse(await shown({ details: true, format: 'json' })).resources.map((r: { unitID: string, expected: { name: string } }) => `${r.unitID} ${r.expected.name}`), ['res/0 image', 'res/0 test-file', 'res/1 image', 'res/1 test-file'])
  const sent = client.bodies.length
  await rejects(runResources(connect, 'nosuch', {}, out), /^cantrip resources: expected an application in the model, got "nosuch"$/)
  await rejects(runResources(connect, 'Bad_Name', {}, out), /^cantrip resources: expected an application name like "web", got "Bad_Name"$/)
  await rejects(runResources(connect, 'res', { format: 'xml' }, out), /^cantrip resources: expected --format tabular, yaml, json, got "xml"$/)
  assert.is(client.bodies.length, sent, 'nothing sent for a listing')
  const plain = setup()
  await runDeploy(plain.connect, kvDir, undefined, {}, plain.out)
  const none: string[] = []
  await runResources(plain.connect, 'kv', {}, s => { none.push(s) })
  assert.equal(none, ['No resources to display.'], 'a charm that declares none: Juju\'s line')

  assert.is(app(client, 'res')!.trust, false)
  await runTrust(connect, 'res', {}, out)
  assert.equal(client.bodies.at(-1), { type: 'set-config', application: 'res', config: {}, trust: true })
  assert.is(app(client, 'res')!.trust, true)
  await runTrust(connect, 'res', { remove: true }, out)
  assert.is(app(client, 'res')!.trust, false)
  await rejects(runTrust(connect, 'nosuch', {}, out), /^cantrip trust: expected an application in the model, got "nosuch"$/)
})


test('untilModel looks again without a change notice, soon after it starts (a notice lost while the subscription joins)', async () => {
  // A client whose notices never arrive: the gossip mesh a new connection subscribes to
  // takes a heartbeat or two to join, and `cantrip exec` once waited its full 30 s
  // fallback for a task done within that time (test/cli-model-config.test.ts, after juju-reboot --now).
  const client = new FakeClient()
  let reads = 0
  const counting: ModelClient = { submit: client.submit.bind(client), putCharm: client.putCharm.bind(client), watch: () => () => {}, model: async () => { reads++; return await client.model() } }
  // Re-read after 1 s and 2 s more (limits.cliModelRecheckMsMin, doubling), then at the deadline:
  // at least three reads in 3.5 s where a 30 s fallback made two (the first, and one at the deadline).
  assert.is(await untilModel(counting, () => false, 3_500), false)
  assert.ok(reads >= 3, `${reads} reads of the model in 3.5 s without a notice`)
})

test.run()
