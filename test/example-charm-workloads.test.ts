/**
 * The example charms under examples/charms: their Node workloads run directly (hook
 * integration is tested elsewhere), and static checks on every hook and metadata file.
 *
 * Workloads listen on 127.0.0.1 with port 0 and report the port they got in their log
 * line, so no test guesses a free port for a listener. Every process started here is
 * killed by pid in a finally block (and again after the suite, should one slip).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { parse } from 'yaml'
import { freeLoopbackPort } from '../agent/free-port.ts'

const test = suite('example charm workloads')
const charmsDir = fileURLToPath(new URL('../examples/charms/', import.meta.url))
const charmNames = ['kv', 'web', 'logship', 'cluster'] as const
const kvServer = join(charmsDir, 'kv', 'workload', 'kv-server.mjs')
const kvClient = join(charmsDir, 'kv', 'workload', 'kv-client.mjs')
const webProxy = join(charmsDir, 'web', 'workload', 'web-proxy.mjs')
const shipper = join(charmsDir, 'logship', 'workload', 'shipper.mjs')
const root = realpathSync(mkdtempSync(join(tmpdir(), 'cantrip-example-charms-')))
const started = new Set<Workload>()

test.after(() => {
  for (const workload of started) workload.kill()
  rmSync(root, { recursive: true, force: true })
})

const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))

async function waitFor<T> (what: string, probe: () => T | undefined | Promise<T | undefined>, withinMs = 5000): Promise<T> {
  const deadline = performance.now() + withinMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}

/** A workload process with its output collected. */
class Workload {
  readonly child: ChildProcess
  output = ''
  exited = false

  constructor (script: string, configFile: string) {
    this.child = spawn(process.execPath, [script, configFile], { stdio: ['ignore', 'pipe', 'pipe'] })
    this.child.stdout?.on('data', (chunk: Buffer) => { this.output += chunk.toString() })
    this.child.stderr?.on('data', (chunk: Buffer) => { this.output += chunk.toString() })
    this.child.on('exit', () => { this.exited = true })
    started.add(this)
  }

  get pid (): number {
    const pid = this.child.pid
    if (pid === undefined) throw new Error('workload did not start')
    return pid
  }

  /** The port from the workload's "listening on host:port" log line. */
  async port (): Promise<number> {
    return await waitFor(`a listening workload (output: ${this.output})`, () => {
      if (this.exited) throw new Error(`workload exited: ${this.output}`)
      const match = /listening on [^\s]+:(\d+)/.exec(this.output)
      return match?.[1] === undefined ? undefined : Number(match[1])
    })
  }

  signal (signal: NodeJS.Signals): void {
    process.kill(this.pid, signal)
  }

  kill (): void {
    started.delete(this)
    if (this.exited || this.child.pid === undefined) return
    try { process.kill(this.child.pid, 'SIGKILL') } catch { /* gone already */ }
  }

  async stopped (): Promise<void> {
    await waitFor('the workload to exit', () => this.exited ? true : undefined)
    started.delete(this)
  }
}

function writeConfig (path: string, config: Record<string, string | number>): void {
  writeFileSync(path, Object.entries(config).map(([key, value]) => `${key}=${value}\n`).join(''))
}

interface Reply { status: number, body: string, headers: Headers }

async function http (url: string, init: RequestInit = {}): Promise<Reply> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(5000) })
  return { status: res.status, body: await res.text(), headers: res.headers }
}

/** A port nothing listens on: free a moment ago, and claimed so no other suite on this host binds it (agent/free-port.ts). */
const closedPort = freeLoopbackPort

function freshDir (name: string): string {
  const dir = join(root, name)
  mkdirSync(dir, { recursive: true })
  return dir
}

/** Starts a kv-server on 127.0.0.1; returns it with its base URL. */
async function startKv (dir: string, unit: string, token: string): Promise<{ kv: Workload, url: string, configFile: string }> {
  const configFile = join(dir, 'kv-server.conf')
  writeConfig(configFile, {
    host: '127.0.0.1',
    port: 0,
    unit,
    'data-file': join(dir, 'kv-data.json'),
    'peers-file': join(dir, 'peers'),
    token,
    'log-level': 'info'
  })
  const kv = new Workload(kvServer, configFile)
  return { kv, url: `http://127.0.0.1:${await kv.port()}`, configFile }
}

// ---------------------------------------------------------------------------- kv

test('kv-server: GET/PUT/404, token check, health with peers, data survives a restart', async () => {
  const dir = freshDir('kv-basic')
  writeFileSync(join(dir, 'peers'), 'kv/1 10.0.0.2:18001\nkv/2 10.0.0.3:18002\n')
  let { kv, url, configFile } = await startKv(dir, 'kv/0', 'secret-1')
  try {
    assert.is((await http(`${url}/kv/missing`)).status, 404)

    assert.is((await http(`${url}/kv/a`, { method: 'PUT', body: 'x' })).status, 403, 'no token')
    assert.is((await http(`${url}/kv/a`, { method: 'PUT', body: 'x', headers: { 'x-token': 'wrong' } })).status, 403, 'wrong token')
    const put = await http(`${url}/kv/a%20b`, { method: 'PUT', body: 'hello = world\n', headers: { 'x-token': 'secret-1' } })
    assert.is(put.status, 204)
    const got = await http(`${url}/kv/a%20b`)
    assert.is(got.status, 200)
    assert.is(got.body, 'hello = world\n')

    const health = await http(`${url}/health`)
    assert.is(health.status, 200)
    const report = JSON.parse(health.body) as { status: string, unit: string, peers: unknown[], keys: number }
    assert.is(report.status, 'ok')
    assert.is(report.unit, 'kv/0')
    assert.equal(report.peers, [{ unit: 'kv/1', address: '10.0.0.2:18001' }, { unit: 'kv/2', address: '10.0.0.3:18002' }])
    assert.is(report.keys, 1)

    // The peers file is read on every /health: the charm only rewrites it.
    writeFileSync(join(dir, 'peers'), '')
    assert.equal((JSON.parse((await http(`${url}/health`)).body) as { peers: unknown[] }).peers, [])

    // Atomic writes leave exactly the data file, no temporaries.
    assert.equal(JSON.parse(readFileSync(join(dir, 'kv-data.json'), 'utf8')), { 'a b': 'hello = world\n' })
    assert.equal(readdirSync(dir).filter(name => name.includes('.tmp')), [])

    kv.signal('SIGTERM')
    await kv.stopped()
    ;({ kv, url, configFile } = await startKv(dir, 'kv/0', 'secret-1'))
    assert.is((await http(`${url}/kv/a%20b`)).body, 'hello = world\n', 'value survives a restart')
    assert.ok(existsSync(configFile))
  } finally {
    kv.kill()
  }
})

test('kv-server: no token yet refuses writes; SIGHUP picks up a new token', async () => {
  const dir = freshDir('kv-token')
  const { kv, url, configFile } = await startKv(dir, 'kv/3', '')
  try {
    assert.is((await http(`${url}/kv/k`, { method: 'PUT', body: 'v', headers: { 'x-token': '' } })).status, 503)

    // What leader-settings-changed does: rewrite the config, send SIGHUP.
    const config = readFileSync(configFile, 'utf8').replace(/^token=.*$/m, 'token=shared')
    writeFileSync(configFile, config)
    kv.signal('SIGHUP')
    await waitFor('the reload', () => kv.output.includes('config reloaded') ? true : undefined)
    assert.is((await http(`${url}/kv/k`, { method: 'PUT', body: 'v', headers: { 'x-token': 'shared' } })).status, 204)
    assert.is((await http(`${url}/kv/k`)).body, 'v')
  } finally {
    kv.kill()
  }
})

test('kv-client: health, get, put with $KV_TOKEN, exit 3 for a missing key', async () => {
  const dir = freshDir('kv-client')
  const { kv, url } = await startKv(dir, 'kv/0', 'tok')
  try {
    const run = (args: string[], env: Record<string, string> = {}): { status: number | null, stdout: string } => {
      // The server is a separate process, so a synchronous spawn cannot starve it.
      const result = spawnSync(process.execPath, [kvClient, url, ...args], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 10_000 })
      return { status: result.status, stdout: result.stdout }
    }
    assert.is(run(['health']).status, 0)
    assert.is(run(['get', 'nope']).status, 3)
    assert.is(run(['put', 'k', 'v'], { KV_TOKEN: 'bad' }).status, 1)
    assert.is(run(['put', 'k', 'v=1'], { KV_TOKEN: 'tok' }).status, 0)
    assert.equal(run(['get', 'k']), { status: 0, stdout: 'v=1' })
  } finally {
    kv.kill()
  }
})

// ---------------------------------------------------------------------------- web

test('web-proxy: round-robin over two kv servers, backends file re-read per request', async () => {
  const dir = freshDir('web')
  const a = await startKv(freshDir('web/kv-a'), 'kv/0', 'tok')
  const b = await startKv(freshDir('web/kv-b'), 'kv/1', 'tok')
  const backendsFile = join(dir, 'backends')
  const configFile = join(dir, 'web-proxy.conf')
  let proxy: Workload | undefined
  try {
    const hostPort = (url: string): string => url.replace('http://', '')
    writeFileSync(backendsFile, `${hostPort(a.url)}\n${hostPort(b.url)}\n`)
    writeConfig(configFile, { host: '127.0.0.1', port: 0, unit: 'web/0', 'backends-file': backendsFile, 'log-level': 'info' })
    proxy = new Workload(webProxy, configFile)
    const url = `http://127.0.0.1:${await proxy.port()}`

    const listed = JSON.parse((await http(`${url}/backends`)).body) as { backends: string[] }
    assert.equal(listed.backends, [hostPort(a.url), hostPort(b.url)])

    const units: string[] = []
    for (let i = 0; i < 4; i++) {
      const reply = await http(`${url}/health`)
      assert.is(reply.status, 200)
      units.push((JSON.parse(reply.body) as { unit: string }).unit)
    }
    assert.equal(units, ['kv/0', 'kv/1', 'kv/0', 'kv/1'], 'requests alternate between the backends')

    // PUT goes through with its body and X-Token; the next two GETs hit both stores.
    const put = await http(`${url}/kv/x`, { method: 'PUT', body: 'via-proxy', headers: { 'x-token': 'tok' } })
    assert.is(put.status, 204)
    const wrote = put.headers.get('x-backend')
    assert.is(wrote, hostPort(a.url))
    const first = await http(`${url}/kv/x`)
    const second = await http(`${url}/kv/x`)
    assert.equal([first.status, first.headers.get('x-backend'), first.body], [404, hostPort(b.url), 'no such key\n'])
    assert.equal([second.status, second.headers.get('x-backend'), second.body], [200, hostPort(a.url), 'via-proxy'])

    // Rewritten file, no signal: the next request already sees it.
    writeFileSync(backendsFile, `${hostPort(b.url)}\n`)
    for (let i = 0; i < 3; i++) {
      assert.is((await http(`${url}/health`)).headers.get('x-backend'), hostPort(b.url))
    }

    // A backend that refuses connections is skipped.
    writeFileSync(backendsFile, `127.0.0.1:${await closedPort()}\n${hostPort(a.url)}\n`)
    for (let i = 0; i < 3; i++) {
      const reply = await http(`${url}/health`)
      assert.equal([reply.status, reply.headers.get('x-backend')], [200, hostPort(a.url)])
    }

    // SIGHUP (what the charm sends) keeps the proxy serving.
    writeFileSync(backendsFile, `${hostPort(a.url)}\n${hostPort(b.url)}\n`)
    proxy.signal('SIGHUP')
    await waitFor('the reload', () => proxy?.output.includes('reloaded; backends:') === true ? true : undefined)
    assert.equal((JSON.parse((await http(`${url}/backends`)).body) as { backends: string[] }).backends.length, 2)

    // No backends at all (relation broken): 503, and /backends says so.
    writeFileSync(backendsFile, '')
    assert.is((await http(`${url}/kv/x`)).status, 503)
    assert.equal(JSON.parse((await http(`${url}/backends`)).body), { backends: [] })
    assert.is((await http(`${url}/kv/x`, { method: 'DELETE' })).status, 405)
  } finally {
    proxy?.kill()
    a.kv.kill()
    b.kv.kill()
  }
})

// ---------------------------------------------------------------------------- logship

test('shipper: copies appended complete lines with the principal prefix, skips its own files', async () => {
  const agents = freshDir('logship/agents')
  const principalState = join(agents, 'unit-kv-0', 'state')
  const ownState = join(agents, 'unit-logship-0', 'state')
  const otherShipperState = join(agents, 'unit-logship-1', 'state')
  for (const dir of [principalState, ownState, otherShipperState]) mkdirSync(dir, { recursive: true })
  const source = join(principalState, 'kv-server.log')
  const out = join(ownState, 'shipped.log')
  writeFileSync(source, 'before start\n')
  writeFileSync(join(ownState, 'noise.log'), 'own file, never shipped\n')
  writeFileSync(join(otherShipperState, 'shipped.log'), 'another shipper output, never shipped\n')
  const configFile = join(ownState, 'shipper.conf')
  writeConfig(configFile, {
    // The charm's default shape: "<unit dir>/../*/state/*.log".
    glob: join(agents, 'unit-logship-0', '..', '*', 'state', '*.log'),
    out,
    prefix: 'kv/0',
    'offsets-file': join(ownState, 'offsets.json'),
    'exclude-dir': ownState,
    'exclude-name': 'shipped.log',
    'interval-ms': 50,
    'ready-file': join(ownState, 'shipper.ready')
  })
  const shipped = (): string => existsSync(out) ? readFileSync(out, 'utf8') : ''
  const waitShipped = async (text: string): Promise<void> => {
    await waitFor(`${JSON.stringify(text)} in shipped.log (have ${JSON.stringify(shipped())})`, () => shipped().includes(text) ? true : undefined)
  }
  let ship = new Workload(shipper, configFile)
  try {
    await waitFor('the ready file', () => existsSync(join(ownState, 'shipper.ready')) ? true : undefined)
    await waitShipped('kv/0 unit-kv-0/state/kv-server.log: before start\n')

    appendFileSync(source, 'first\nsecond\npartial')
    await waitShipped('kv/0 unit-kv-0/state/kv-server.log: second\n')
    await sleep(200)
    assert.not.ok(shipped().includes('partial'), 'an unfinished line waits for its newline')
    appendFileSync(source, ' line\n')
    await waitShipped('kv/0 unit-kv-0/state/kv-server.log: partial line\n')

    // A second log of the principal is found by the glob too.
    appendFileSync(join(principalState, 'other.log'), 'from another file\n')
    await waitShipped('kv/0 unit-kv-0/state/other.log: from another file\n')

    assert.equal(shipped().split('\n').filter(Boolean), [
      'kv/0 unit-kv-0/state/kv-server.log: before start',
      'kv/0 unit-kv-0/state/kv-server.log: first',
      'kv/0 unit-kv-0/state/kv-server.log: second',
      'kv/0 unit-kv-0/state/kv-server.log: partial line',
      'kv/0 unit-kv-0/state/other.log: from another file'
    ], 'nothing from its own state dir or from other shippers\' shipped.log')

    // Restart: the saved offsets mean nothing is shipped twice.
    ship.signal('SIGTERM')
    await ship.stopped()
    const before = shipped()
    ship = new Workload(shipper, configFile)
    appendFileSync(source, 'after restart\n')
    await waitShipped('kv/0 unit-kv-0/state/kv-server.log: after restart\n')
    assert.is(shipped(), before + 'kv/0 unit-kv-0/state/kv-server.log: after restart\n')

    // A truncated (rotated in place) file is read again from the start.
    writeFileSync(source, 'rotated\n')
    await waitShipped('kv/0 unit-kv-0/state/kv-server.log: rotated\n')
  } finally {
    ship.kill()
  }
})

// ---------------------------------------------------------------------------- static checks

const unitHooks = new Set(['install', 'start', 'config-changed', 'upgrade-charm', 'stop', 'remove', 'leader-elected',
  'leader-deposed', 'leader-settings-changed', 'update-status'])
const relationHookKinds = ['created', 'joined', 'changed', 'departed', 'broken']

interface Metadata {
  name?: unknown
  summary?: unknown
  description?: unknown
  subordinate?: unknown
  provides?: Record<string, unknown>
  requires?: Record<string, unknown>
  peers?: Record<string, unknown>
}

function readYaml<T> (path: string): T {
  return parse(readFileSync(path, 'utf8')) as T
}

test('every charm has metadata.yaml with name/summary/description and valid hook names', () => {
  for (const name of charmNames) {
    const dir = join(charmsDir, name)
    const meta = readYaml<Metadata>(join(dir, 'metadata.yaml'))
    assert.is(meta.name, name, `${name}: name`)
    assert.type(meta.summary, 'string', `${name}: summary`)
    assert.ok((meta.summary as string).length > 0, `${name}: summary`)
    assert.type(meta.description, 'string', `${name}: description`)
    assert.ok((meta.description as string).length > 0, `${name}: description`)
    assert.ok(existsSync(join(dir, 'README.md')), `${name}: README.md`)

    const endpoints = [...Object.keys(meta.provides ?? {}), ...Object.keys(meta.requires ?? {}), ...Object.keys(meta.peers ?? {})]
    for (const hook of readdirSync(join(dir, 'hooks'))) {
      const valid = unitHooks.has(hook) || endpoints.some(ep => relationHookKinds.some(kind => hook === `${ep}-relation-${kind}`))
      assert.ok(valid, `${name}: hooks/${hook} is not a hook this charm can receive`)
    }

    if (existsSync(join(dir, 'config.yaml'))) {
      const config = readYaml<{ options?: Record<string, { type?: string, default?: unknown }> }>(join(dir, 'config.yaml'))
      assert.type(config.options, 'object', `${name}: config.yaml has options`)
      for (const [option, spec] of Object.entries(config.options ?? {})) {
        assert.ok(['string', 'int', 'float', 'boolean'].includes(spec.type ?? 'string'), `${name}: ${option} type`)
      }
    }
    if (existsSync(join(dir, 'actions.yaml'))) {
      const actions = readYaml<Record<string, { description?: unknown }>>(join(dir, 'actions.yaml'))
      for (const [action, spec] of Object.entries(actions)) {
        assert.match(action, /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/)
        assert.type(spec.description, 'string', `${name}: action ${action} description`)
        assert.ok(existsSync(join(dir, 'actions', action)), `${name}: actions/${action} exists`)
      }
    }
  }
  const logship = readYaml<Metadata>(join(charmsDir, 'logship', 'metadata.yaml'))
  assert.is(logship.subordinate, true)
  assert.equal(logship.requires?.['juju-info'], { interface: 'juju-info', scope: 'container' })
})

test('every hook and action is an executable #!/bin/bash script with set -euo pipefail that passes bash -n', () => {
  const scripts: string[] = []
  for (const name of charmNames) {
    for (const sub of ['hooks', 'actions']) {
      const dir = join(charmsDir, name, sub)
      if (!existsSync(dir)) continue
      for (const file of readdirSync(dir)) scripts.push(join(dir, file))
    }
  }
  assert.ok(scripts.length >= 30, `found ${scripts.length} scripts`)
  for (const script of scripts) {
    const stat = statSync(script)
    assert.ok(stat.isFile(), `${script} is a file`)
    assert.ok((stat.mode & 0o111) === 0o111, `${script} is executable`)
    const text = readFileSync(script, 'utf8')
    assert.ok(text.startsWith('#!/bin/bash\n'), `${script} starts with #!/bin/bash`)
    assert.ok(text.includes('set -euo pipefail'), `${script} sets -euo pipefail`)
    const check = spawnSync('bash', ['-n', script], { encoding: 'utf8' })
    assert.is(check.status, 0, `bash -n ${script}: ${check.stderr}`)
  }
  for (const name of charmNames) {
    const lib = join(charmsDir, name, 'lib', 'common.sh')
    const check = spawnSync('bash', ['-n', lib], { encoding: 'utf8' })
    assert.is(check.status, 0, `bash -n ${lib}: ${check.stderr}`)
  }
})

test('every workload prints its version', () => {
  for (const script of [kvServer, webProxy, shipper]) {
    const result = spawnSync(process.execPath, [script, '--version'], { encoding: 'utf8', timeout: 10_000 })
    assert.is(result.status, 0, script)
    assert.match(result.stdout, /^\d+\.\d+\.\d+\n$/)
  }
})

test.run()
