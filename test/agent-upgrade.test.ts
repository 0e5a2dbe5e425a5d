/**
 * A machine agent's upgrade, below the processes: the tools directory (one directory per
 * version, `current` switched by one rename, as juju/juju agent/tools/toolsdir.go keeps
 * them), the launcher's rollback of a new version that never reports itself healthy,
 * kill -9 during a switch, and the upgrader (juju/juju worker/upgrader/upgrader.go:
 * fetch, check the hash, unpack, switch, restart; never downgrade) against a controller
 * client double serving a small bundle — including a corrupted one, refused with a line
 * naming its hash. The real-process upgrade is test/cli-upgrade-model.test.ts.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { packEntries } from '../agent/charm/charm-archive.ts'
import { charmChunk, charmManifestOf } from '../agent/charm/charm-chunks.ts'
import { agentPlatform } from '../agent/tools/agent-bundle.ts'
import { AgentUpgrader } from '../agent/tools/agent-upgrader.ts'
import { beginUpgrade, completeUpgrade, currentProgram, currentVersion, prepareLaunch, readUpgradeFailure, switchCurrent, versionDir } from '../agent/tools/agent-tools-dir.ts'
import { createMemoryLogger } from '../runtime/logger.ts'
import { CommandProposer, type ModelCommandBody } from '../runtime/model/command-proposer.ts'
import { applyCommand, emptyModel } from '../runtime/model/model-store.ts'
import type { CommandResult, ModelCommand, ModelContext } from '../runtime/model/model-types.ts'

/** A bundle of `version` as agent-bundle.ts lays one out, with a one-line agent. */
function bundleOf (version: string): { bytes: Uint8Array, hash: string } {
  const text = (s: string): Uint8Array => new TextEncoder().encode(s)
  return packEntries([
    { path: 'dist', dir: true },
    { path: 'dist/cantripd.mjs', mode: 0o755, data: text(`console.log(${JSON.stringify(version)})\n`) },
    { path: 'package.json', mode: 0o644, data: text(JSON.stringify({ name: 'cantrip', version })) }
  ])
}

function installed (dataDir: string, version: string): void {
  const dir = versionDir(dataDir, version)
  mkdirSync(join(dir, 'dist'), { recursive: true })
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'cantrip', version }))
  writeFileSync(join(dir, 'dist', 'cantripd.mjs'), '')
}

function modelWith (...bodies: ModelCommandBody[]): ModelContext {
  let model = emptyModel()
  for (const body of bodies) {
    const outcome = applyCommand(model, new CommandProposer({ proposer: { kind: 'user', name: 'admin' }, requestPrefix: `m${model.revision}` }).command(body), { index: model.revision + 1, term: 1 })
    assert.ok(outcome.result.ok, JSON.stringify(outcome.result))
    model = outcome.context
  }
  return model
}

/** The controller client double: the model, the agent store's manifest and chunks (chunk 0 flipped when `corrupt`), and what was submitted. */
function clientFor (model: ModelContext, bundle: { bytes: Uint8Array }, corrupt = false): { client: ConstructorParameters<typeof AgentUpgrader>[0]['client'], submitted: ModelCommand[] } {
  const manifest = charmManifestOf(bundle.bytes, 64)
  const submitted: ModelCommand[] = []
  return {
    submitted,
    client: {
      model: () => model,
      charmManifest: async (hash, selector) => selector.store === 'agent' && hash === manifest.hash ? manifest : undefined,
      charmChunk: async (hash, index) => {
        const chunk = Uint8Array.from(charmChunk(bundle.bytes, manifest, index))
        if (corrupt && index === 0) chunk[0] = chunk[0]! ^ 0xff
        return hash === manifest.hash ? chunk : undefined
      },
      submit: async (command): Promise<CommandResult> => { submitted.push(command); return { ok: true, index: 1 } }
    }
  }
}

async function settled (upgrader: AgentUpgrader): Promise<void> {
  await upgrader.check()
}

const dirs: string[] = []
function dataDir (): string {
  const dir = mkdtempSync(join(tmpdir(), 'cantrip-upgrade-'))
  dirs.push(dir)
  return dir
}

const tools = suite('agent tools directory')

tools.after(() => { for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true }) })

tools('a switched-to version that reports healthy stays; one that never does is rolled back, with why', () => {
  const dir = dataDir()
  installed(dir, '0.1.0')
  installed(dir, '0.1.1')
  switchCurrent(dir, '0.1.0')
  beginUpgrade(dir, '0.1.0', '0.1.1')
  assert.is(prepareLaunch(dir, 3), join(versionDir(dir, '0.1.1'), 'dist', 'cantripd.mjs'))
  completeUpgrade(dir)
  assert.is(prepareLaunch(dir, 3), join(versionDir(dir, '0.1.1'), 'dist', 'cantripd.mjs'))

  installed(dir, '0.1.2')
  beginUpgrade(dir, '0.1.1', '0.1.2')
  for (let start = 0; start < 3; start++) {
    assert.is(prepareLaunch(dir, 3), join(versionDir(dir, '0.1.2'), 'dist', 'cantripd.mjs'), `start ${start + 1}`)
  }
  assert.is(prepareLaunch(dir, 3), join(versionDir(dir, '0.1.1'), 'dist', 'cantripd.mjs'))
  assert.equal(readUpgradeFailure(dir), { version: '0.1.2', error: 'agent 0.1.2 did not pass its health check in 3 starts; back on 0.1.1' })
})

tools('a machine with no switched-to version runs its installation\'s agent', () => {
  assert.is(prepareLaunch(dataDir(), 3), undefined)
})

tools('kill -9 during a switch leaves current on one of the two versions, whole', async () => {
  const dir = dataDir()
  installed(dir, '0.1.0')
  installed(dir, '0.1.1')
  switchCurrent(dir, '0.1.0')
  // A child switching back and forth as fast as it can, killed at whatever point it reached.
  const script = `import { beginUpgrade } from ${JSON.stringify(new URL('../agent/tools/agent-tools-dir.ts', import.meta.url).href)}
process.stdout.write('switching\\n')
for (let i = 0; ; i++) beginUpgrade(${JSON.stringify(dir)}, i % 2 === 0 ? '0.1.0' : '0.1.1', i % 2 === 0 ? '0.1.1' : '0.1.0')\n`
  writeFileSync(join(dir, 'switch.mts'), script)
  for (let round = 0; round < 2; round++) {
    const child = spawn(process.execPath, ['--import', 'tsx', join(dir, 'switch.mts')], { stdio: ['ignore', 'pipe', 'inherit'] })
    await new Promise<void>(resolve => { child.stdout.once('data', () => { resolve() }) })
    await new Promise(resolve => setTimeout(resolve, 20 + round * 15))
    const exited = new Promise(resolve => child.once('exit', resolve))
    child.kill('SIGKILL')
    await exited
    assert.ok(['0.1.0', '0.1.1'].includes(currentVersion(dir)!), `round ${round}: current is ${String(currentVersion(dir))}`)
    const program = prepareLaunch(dir, 3)
    assert.ok(program !== undefined && existsSync(program), `round ${round}: the launcher runs ${String(program)}`)
    assert.equal(currentProgram(dir), program)
  }
})

tools.run()

const upgrader = suite('agent upgrader')

upgrader.after(() => { for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true }) })

const binary = (version: string, bundle: { bytes: Uint8Array, hash: string }): ModelCommandBody =>
  ({ type: 'add-agent-binary', version, platform: agentPlatform, hash: bundle.hash, size: bundle.bytes.byteLength })

upgrader('fetches the model\'s version, checks it, unpacks it, switches and asks for a restart', async () => {
  const dir = dataDir()
  const bundle = bundleOf('0.1.1')
  const model = modelWith({ type: 'add-machine' }, binary('0.1.1', bundle), { type: 'set-agent-version', version: '0.1.1' })
  const { client, submitted } = clientFor(model, bundle)
  const restarts: string[] = []
  const upgrader = new AgentUpgrader({ machineId: '0', dataDir: dir, version: '0.1.0', incarnation: 1, client, logger: createMemoryLogger('t'), restart: to => { restarts.push(to) } })
  await upgrader.started()
  await settled(upgrader)
  assert.equal(restarts, ['0.1.1'])
  assert.is(currentVersion(dir), '0.1.1')
  assert.is(readFileSync(join(versionDir(dir, '0.1.1'), 'dist', 'cantripd.mjs'), 'utf8'), 'console.log("0.1.1")\n')
  assert.equal(submitted.map(c => c.type === 'set-machine-agent-version' ? [c.version, c.upgradeError] : c.type), [['0.1.0', '']])
})

upgrader('a corrupted bundle is refused naming its hash, reported, not switched to, and tried again after a bounded backoff', async () => {
  // Juju's upgrader (worker/upgrader/upgrader.go) logs a failed fetch and tries again after
  // retryAfter (5 s); cantrip doubles the wait up to a bound and says so in status.
  const dir = dataDir()
  const bundle = bundleOf('0.1.1')
  const model = modelWith({ type: 'add-machine' }, binary('0.1.1', bundle), { type: 'set-agent-version', version: '0.1.1' })
  const { client, submitted } = clientFor(model, bundle, true)
  const restarts: string[] = []
  const retries: Array<{ ms: number, fire: () => void }> = []
  const schedule = (ms: number, fire: () => void): () => void => { retries.push({ ms, fire }); return () => {} }
  const upgrader = new AgentUpgrader({ machineId: '0', dataDir: dir, version: '0.1.0', incarnation: 1, client, logger: createMemoryLogger('t'), restart: to => { restarts.push(to) }, schedule })
  await upgrader.started()
  await settled(upgrader)
  assert.equal(restarts, [])
  assert.is(currentVersion(dir), undefined)
  const reported = submitted.at(-1)!
  assert.ok(reported.type === 'set-machine-agent-version')
  const refusal = `^upgrade to 0\\.1\\.1 failed: machine 0 agent 0\\.1\\.0: cannot upgrade to 0\\.1\\.1: agent bundle sha256 ${bundle.hash}: chunk 0: expected sha256 [0-9a-f]{64}, got sha256 [0-9a-f]{64}`
  assert.match(reported.upgradeError, new RegExp(`${refusal}; trying again in 5 s \\(1 failure\\)$`))
  assert.equal(readUpgradeFailure(dir)?.version, '0.1.1')
  // A view before the retry is due does not fetch again.
  await settled(upgrader)
  assert.is(submitted.length, 2)
  assert.equal(retries.map(r => r.ms), [5_000])
  // Each due retry fetches again, fails again and waits twice as long, never longer than the bound.
  for (let failure = 2; failure <= 9; failure++) {
    retries.at(-1)!.fire()
    await settled(upgrader)
  }
  assert.equal(retries.map(r => r.ms), [5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000])
  const last = submitted.at(-1)!
  assert.ok(last.type === 'set-machine-agent-version')
  assert.match(last.upgradeError, new RegExp(`${refusal}; trying again in 300 s \\(9 failures\\)$`))
  assert.equal(restarts, [])
  // Once the store holds good bytes again (a controller repaired, another bundle recorded), the next try succeeds.
  const repaired = clientFor(model, bundle)
  const healed = new AgentUpgrader({ machineId: '0', dataDir: dir, version: '0.1.0', incarnation: 2, client: repaired.client, logger: createMemoryLogger('t'), restart: to => { restarts.push(to) }, schedule })
  await settled(healed)
  assert.equal(restarts, ['0.1.1'])
  upgrader.stop()
})

upgrader('a model version without binaries for this platform is reported; an older one is never fetched', async () => {
  const dir = dataDir()
  const bundle = bundleOf('0.1.1')
  const { agentBinaries: _none, ...missing } = modelWith({ type: 'add-machine' }, binary('0.1.1', bundle), { type: 'set-agent-version', version: '0.1.1' })
  const { client, submitted } = clientFor(missing, bundle)
  const upgrader = new AgentUpgrader({ machineId: '0', dataDir: dir, version: '0.1.0', incarnation: 1, client, logger: createMemoryLogger('t'), restart: () => { assert.unreachable('no restart') } })
  await settled(upgrader)
  const reported = submitted.at(-1)!
  assert.ok(reported.type === 'set-machine-agent-version')
  assert.is(reported.upgradeError, `cannot upgrade to 0.1.1: no agent binaries for 0.1.1 ${agentPlatform} in the model (have none)`)

  const older = clientFor(modelWith({ type: 'add-machine' }, binary('0.1.1', bundle), { type: 'set-agent-version', version: '0.1.1' }), bundle)
  const newer = new AgentUpgrader({ machineId: '0', dataDir: dir, version: '0.2.0', incarnation: 1, client: older.client, logger: createMemoryLogger('t'), restart: () => { assert.unreachable('no downgrade') } })
  await settled(newer)
  assert.equal(older.submitted, [])
})

upgrader.run()
