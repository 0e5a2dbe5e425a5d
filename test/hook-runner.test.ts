/**
 * The real hook runner (agent/uniter/hook-runner.ts) on real processes: the exact
 * environment of juju-semantics §4.2 and nothing inherited, dispatch before hooks/,
 * missing and non-executable hooks, output into the unit log with levels, a hanging hook
 * killed with its children within timeout + 5 s, 100 MB of output without the agent's
 * memory following it, and an abort (agent stopping) reported as terminated.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { processAlive } from './support/processes.ts'
import { ChildProcessRunner } from '../agent/child-process-runner.ts'
import { HookRunner, hookEnvironment, locateHook, type HookRunSpec, type UnitHookSetup } from '../agent/uniter/hook-runner.ts'
import { createMemoryLogger } from '../runtime/logger.ts'
import { actionProcessResults } from '../agent/uniter/action-process-results.ts'

const test = suite('hook runner')

interface Charm { dir: string, setup: UnitHookSetup }

function makeCharm (hooks: Record<string, string>, options: { metadata?: boolean, mode?: number } = {}): Charm {
  const root = mkdtempSync(join(tmpdir(), 'cantrip-hook-runner-'))
  const dir = join(root, 'charm')
  mkdirSync(join(dir, 'hooks'), { recursive: true })
  if (options.metadata !== false) writeFileSync(join(dir, 'metadata.yaml'), 'name: t\nsummary: t\ndescription: t\n')
  for (const [path, body] of Object.entries(hooks)) {
    writeFileSync(join(dir, path), `#!/bin/bash\n${body}\n`)
    chmodSync(join(dir, path), options.mode ?? 0o755)
  }
  return {
    dir: root,
    setup: {
      unit: 'web/0', charmDir: dir, toolsDir: join(root, 'tools'), socketPath: join(root, 'agent.socket'),
      modelUuid: 'uuid-1', modelName: 'default', apiAddresses: ['10.0.0.1:17070'], machineId: '0', principalUnit: '',
      availabilityZone: 'zone-a', agentPath: '/usr/bin:/bin', jujuVersion: '3.5.0'
    }
  }
}

const install: HookRunSpec = { kind: 'hook', name: 'install', contextId: 'web/0-install-1' }

function runner (options: { timeoutMs?: number, outputBytesMax?: number } = {}): { runner: HookRunner, logger: ReturnType<typeof createMemoryLogger> } {
  const logger = createMemoryLogger('unit.web/0')
  return { runner: new HookRunner({ runner: new ChildProcessRunner({ timeoutKillGraceMs: 200, outputDrainMs: 200 }), logger, ...options }), logger }
}

const never = new AbortController().signal

test('the hook sees exactly the Juju environment of §4.2, in the charm directory, nothing inherited', async () => {
  const charm = makeCharm({ 'hooks/db-relation-departed': 'env -0 > "$CHARM_DIR/../env"; pwd > "$CHARM_DIR/../cwd"' })
  try {
    process.env['CANTRIP_LEAK_CHECK'] = 'leaked'
    const run: HookRunSpec = {
      kind: 'hook', name: 'db-relation-departed', contextId: 'ctx-1',
      relation: { endpoint: 'db', id: 3, remoteUnit: 'mysql/1', remoteApplication: 'mysql', departingUnit: 'mysql/1' }
    }
    const { runner: r } = runner()
    assert.equal(await r.run(charm.setup, run, never), { kind: 'succeeded' })
    const env = Object.fromEntries(readFileSync(join(charm.dir, 'env'), 'utf8').split('\0').filter(Boolean).map(kv => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]))
    // `env` itself adds nothing; bash adds PWD, SHLVL and _ — the only names not given.
    for (const name of ['PWD', 'SHLVL', '_']) delete env[name]
    assert.equal(env, hookEnvironment(charm.setup, run))
    assert.is(env.JUJU_RELATION_ID, 'db:3')
    assert.is(env.JUJU_REMOTE_UNIT, 'mysql/1')
    assert.is(env.JUJU_DEPARTING_UNIT, 'mysql/1')
    assert.is(env.JUJU_DISPATCH_PATH, 'hooks/db-relation-departed')
    assert.is(env.PATH, `${charm.setup.toolsDir}:/usr/bin:/bin`)
    assert.is(env.CANTRIP_LEAK_CHECK, undefined)
    assert.is(env.HOME, undefined)
    assert.is(readFileSync(join(charm.dir, 'cwd'), 'utf8').trim(), charm.setup.charmDir)
  } finally {
    delete process.env['CANTRIP_LEAK_CHECK']
    rmSync(charm.dir, { recursive: true, force: true })
  }
})

test('storage and action runs add their variables; relation-created exports an empty remote unit', () => {
  const { setup } = makeCharm({})
  try {
    const storage = hookEnvironment(setup, { kind: 'hook', name: 'data-storage-attached', contextId: 'c', storage: { id: 'data/0', location: '/srv/data', kind: 'filesystem' } })
    assert.is(storage.JUJU_STORAGE_ID, 'data/0')
    assert.is(storage.JUJU_STORAGE_LOCATION, '/srv/data')
    assert.is(storage.JUJU_STORAGE_KIND, 'filesystem')
    const action = hookEnvironment(setup, { kind: 'action', name: 'backup', contextId: 'c', action: { id: '7' } })
    assert.is(action.JUJU_DISPATCH_PATH, 'actions/backup')
    assert.is(action.JUJU_ACTION_NAME, 'backup')
    assert.is(action.JUJU_ACTION_UUID, '7')
    assert.is(action.JUJU_ACTION_TAG, 'action-7')
    const created = hookEnvironment(setup, { kind: 'hook', name: 'db-relation-created', contextId: 'c', relation: { endpoint: 'db', id: 1, remoteUnit: '', remoteApplication: 'mysql' } })
    assert.is(created.JUJU_REMOTE_UNIT, '')
    assert.is(created.JUJU_REMOTE_APP, 'mysql')
  } finally {
    rmSync(join(setup.charmDir, '..'), { recursive: true, force: true })
  }
})

test('dispatch runs for every hook when present; otherwise hooks/<name>; missing is skipped; no exec bit fails', async () => {
  const withDispatch = makeCharm({ dispatch: 'echo "$JUJU_DISPATCH_PATH" > "$CHARM_DIR/../ran"', 'hooks/install': 'exit 3' })
  const plain = makeCharm({ 'hooks/install': 'exit 0' })
  const noExec = makeCharm({ 'hooks/install': 'exit 0' }, { mode: 0o644 })
  const noMetadata = makeCharm({ 'hooks/install': 'exit 0' }, { metadata: false })
  try {
    const { runner: r } = runner()
    assert.equal(await r.run(withDispatch.setup, install, never), { kind: 'succeeded' })
    assert.is(readFileSync(join(withDispatch.dir, 'ran'), 'utf8').trim(), 'hooks/install')
    assert.equal(locateHook(plain.setup.charmDir, { kind: 'hook', name: 'start' }), { kind: 'missing' })
    assert.equal(await r.run(plain.setup, { ...install, name: 'start' }, never), { kind: 'missing' })
    assert.equal(await r.run(plain.setup, install, never), { kind: 'succeeded' })
    const failed = await r.run(noExec.setup, install, never)
    assert.is(failed.kind, 'failed')
    assert.match((failed as { reason: string }).reason, /^exec: ".*\/hooks\/install": permission denied$/)
    const missing = await r.run(noMetadata.setup, install, never)
    assert.is(missing.kind, 'failed')
    assert.match((missing as { reason: string }).reason, /charm missing from disk/)
  } finally {
    for (const charm of [withDispatch, plain, noExec, noMetadata]) rmSync(charm.dir, { recursive: true, force: true })
  }
})

test('a non-zero exit fails the hook; stdout goes to the unit log at DEBUG, stderr at WARNING', async () => {
  const charm = makeCharm({ 'hooks/install': 'echo to-stdout; echo to-stderr >&2; exit 4' })
  try {
    const { runner: r, logger } = runner()
    assert.equal(await r.run(charm.setup, install, never), { kind: 'failed', exitCode: 4, reason: 'exit status 4' })
    const lines = (level: string): string[][] => logger.records.filter(x => x.level === level).map(x => [x.module, x.message])
    assert.equal(lines('debug'), [['unit.web/0.install', 'to-stdout']])
    assert.equal(lines('warning'), [['unit.web/0.install', 'to-stderr']])
  } finally {
    rmSync(charm.dir, { recursive: true, force: true })
  }
})

test('a hanging hook and its children are killed within timeout + 5 s', async () => {
  const charm = makeCharm({ 'hooks/install': 'sleep 600 & echo $! > "$CHARM_DIR/../child"; trap "" TERM; sleep 600' })
  try {
    const { runner: r } = runner({ timeoutMs: 500 })
    const started = performance.now()
    const outcome = await r.run(charm.setup, install, never)
    const took = performance.now() - started
    assert.equal(outcome, { kind: 'failed', exitCode: null, reason: 'hook "install" timed out' })
    assert.ok(took < 500 + 5_000, `took ${Math.round(took)} ms`)
    const child = Number(readFileSync(join(charm.dir, 'child'), 'utf8'))
    assert.ok(!processAlive(child), `child ${child} still alive`)
  } finally {
    rmSync(charm.dir, { recursive: true, force: true })
  }
})

test('100 MB of output: the hook succeeds, the log keeps the capped part, the agent\'s memory does not follow', async () => {
  const charm = makeCharm({ 'hooks/install': 'head -c 104857600 /dev/zero | tr "\\0" "x" | fold -w 1000' })
  try {
    const { runner: r, logger } = runner({ outputBytesMax: 256 * 1024 })
    global.gc?.()
    const before = process.memoryUsage().rss
    let peak = before
    const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss) }, 20)
    const outcome = await r.run(charm.setup, install, never)
    clearInterval(sampler)
    assert.equal(outcome, { kind: 'succeeded' })
    const kept = logger.records.filter(x => x.level === 'debug').reduce((n, x) => n + x.message.length + 1, 0)
    // Each line counted with its newline; the last one, cut at the cap, has none.
    assert.ok(kept <= 256 * 1024 + 1 && kept > 250 * 1024, `kept ${kept} bytes`)
    assert.ok(logger.records.some(x => /bytes was dropped/.test(x.message)), 'the drop is logged')
    assert.ok(peak - before < 64 * 1024 * 1024, `rss grew by ${Math.round((peak - before) / 1024 / 1024)} MB`)
  } finally {
    rmSync(charm.dir, { recursive: true, force: true })
  }
})

test('an abort (the agent stopping) kills the hook and reports it terminated, for re-queueing', async () => {
  const charm = makeCharm({ 'hooks/install': 'touch "$CHARM_DIR/../started"; sleep 600' })
  try {
    const { runner: r } = runner()
    const abort = new AbortController()
    const running = r.run(charm.setup, install, abort.signal)
    for (let i = 0; i < 500 && !existsSync(join(charm.dir, 'started')); i++) await new Promise(resolve => setTimeout(resolve, 10))
    abort.abort()
    assert.equal(await running, { kind: 'terminated', signal: 'SIGTERM' })
  } finally {
    rmSync(charm.dir, { recursive: true, force: true })
  }
})


// Juju's runner.go (runCharmProcessOnLocal, updateActionResults): an action's results get
// `return-code` and its stdout and stderr; a non-zero exit fails it with Go's ExitError
// text, "exit status N" (set by the hook context's Flush).
test('an action exiting 3: "exit status 3", return-code 3, its stdout and stderr as results', async () => {
  const charm = makeCharm({})
  mkdirSync(join(charm.setup.charmDir, 'actions'))
  writeFileSync(join(charm.setup.charmDir, 'actions', 'exit-nonzero'), '#!/bin/bash\necho one\necho two\necho oops >&2\nexit 3\n', { mode: 0o755 })
  writeFileSync(join(charm.setup.charmDir, 'actions', 'quiet'), '#!/bin/bash\ntrue\n', { mode: 0o755 })
  try {
    const { runner: r } = runner()
    const output = { stdout: [] as string[], stderr: [] as string[] }
    const run: HookRunSpec = { kind: 'action', name: 'exit-nonzero', contextId: 'ctx-a', action: { id: '7' }, onOutput: (stream, line) => { output[stream].push(line) } }
    const outcome = await r.run(charm.setup, run, never)
    assert.equal(outcome, { kind: 'failed', exitCode: 3, reason: 'exit status 3' })
    assert.equal(actionProcessResults(outcome, output), { 'return-code': 3, stdout: 'one\ntwo\n', stderr: 'oops\n' })
    const quiet = await r.run(charm.setup, { kind: 'action', name: 'quiet', contextId: 'ctx-b', action: { id: '8' } }, never)
    assert.equal(actionProcessResults(quiet, { stdout: [], stderr: [] }), { 'return-code': 0 })
    assert.equal(actionProcessResults({ kind: 'missing' }, { stdout: [], stderr: [] }), {}, 'no process, no return-code')
  } finally {
    rmSync(charm.dir, { recursive: true, force: true })
  }
})

test.run()
