/**
 * `upgrade-model` end to end, as a user runs it (issue 26): two releases of cantrip — this
 * tree, and the same tree stamped one patch higher (test/support/stamped-tree.ts) — a
 * controller bootstrapped by the lower one, the example bundle deployed, then the higher
 * client's `upgrade-model`: it uploads its agent bundle to the controllers' store and
 * sets the model's agent-version; every machine agent fetches the bundle, checks it,
 * switches and restarts into it (agent/tools/agent-upgrader.ts). One machine agent is
 * killed with SIGKILL as soon as the rollout starts, wherever in its swap it is.
 *
 * Checked: every machine reports the new version and status shows it; the kv and web
 * workloads are the same processes after as before, and answer (an agent restart is not
 * a machine reboot); no unit runs install or start again; the version errors are the issue's lines
 * (a version the store lacks, a downgrade, model-config agent-version, bootstrap at a
 * version the client does not hold). Then a third release is copied into the store with
 * `sync-agent-binary` and damaged at rest (one byte of its stored first chunk, the
 * controller stopped and started around it): `upgrade-model --agent-version` to it is
 * accepted from a client of another version, and every agent refuses the bundle, naming
 * its sha256 and when it tries again, in status and debug-log, and keeps running,
 * unrestarted, on the version it had.
 *
 * Juju sources followed: worker/upgrader/upgrader.go (the agent fetches the tools of the
 * model's desired version, refuses downgrades, and restarts into them),
 * cmd/juju/commands/upgrademodel.go (`upgrade-model --agent-version`, "no upgrades
 * available", "started upgrade to …"), cmd/juju/model/config.go (agent-version is set only
 * through an upgrade), cmd/juju/commands/synctools.go (sync-agent-binary --agent-version
 * --source), agent/tools/toolsdir.go (a download whose sha256 does not match is refused
 * before anything is unpacked; the upgrader logs it and keeps the running version).
 */
import '../runtime/polyfill.ts'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ClassicLevel } from 'classic-level'
import { test } from 'uvu'
import { parse as parseYaml } from 'yaml'
import * as assert from 'uvu/assert'
import { cantripVersion } from '../agent/version.ts'
import { tableValues } from '../runtime/model/table.ts'
import { cantrip, cantripOk as ok, destroyLeftoverController, removeHome } from './support/cli-process.ts'
import { freePortRun } from '../agent/free-port.ts'
import { StatusReader } from './support/status-reader.ts'
import { writeExampleBundle } from './support/example-bundle.ts'
import { processAlive } from './support/processes.ts'
import type { StatusDocument } from '../agent/cli/status-document.ts'
import { stampedTree } from './support/stamped-tree.ts'

const lower = cantripVersion
const higher = lower.replace(/(\d+)$/, patch => String(Number(patch) + 1))
const thirdVersion = lower.replace(/(\d+)$/, patch => String(Number(patch) + 2))

/** Whether `url` answers 200 within a few tries (bounded): one request may time out on a loaded machine. */
async function answers (url: string): Promise<boolean> {
  for (let attempt = 0; attempt < answerAttemptsMax; attempt++) {
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(5_000) })).ok) return true
    } catch { /* try again */ }
    await new Promise(resolve => setTimeout(resolve, 500))
  }
  return false
}

const answerAttemptsMax = 5

/** The pid the local provider recorded for machine `machine`'s agent. */
function agentPid (machinesDir: string, machine: string): number {
  return Number(readFileSync(join(machinesDir, `machine-${machine}`, 'agent.pid'), 'utf8').split(' ')[0])
}

interface Member { pid: number, 'data-dir': string }

/**
 * Damages the agent bundle `hash` at rest, as a bad disk would: stops the controller,
 * flips one byte of the bundle's first chunk in its store (its default model's LevelDB),
 * and starts it again with `cantrip start-agent`.
 */
async function corruptStoredChunk (home: string, hash: string): Promise<void> {
  const file = parseYaml(readFileSync(join(home, 'controllers.yaml'), 'utf8')) as { controllers: Record<string, { controllers: Member[] }> }
  const member = file.controllers['local']!.controllers[0]!
  process.kill(member.pid, 'SIGTERM')
  for (let waited = 0; processAlive(member.pid); waited += 100) {
    assert.ok(waited < stopWaitMs, `controller ${member.pid} to stop within ${stopWaitMs / 1000} s`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  const db = new ClassicLevel<string, Uint8Array>(join(member['data-dir'], 'controller'), { keyEncoding: 'utf8', valueEncoding: 'view' })
  await db.open()
  try {
    const key = `agent-chunk/${hash}/000000`
    const bytes = await db.get(key)
    assert.ok(bytes !== undefined, `${key} in the controller's store`)
    const damaged = new Uint8Array(bytes)
    damaged[damaged.length >> 1]! ^= 0xff
    await db.put(key, damaged, { sync: true })
  } finally {
    await db.close()
  }
  ok(home, 'start-agent', 'c0')
}

const stopWaitMs = 30_000
/** How long a shipped log record may take to reach the controllers' debug-log: generous, for a loaded machine. */
const logArrivalMsMax = 60_000

/** The pid in a unit's workload pid file (`<agents>/unit-kv-0/state/kv-server.pid`). */
function workloadPid (machinesDir: string, machine: string, unit: string, pidFile: string): number {
  return Number(readFileSync(join(machinesDir, `machine-${machine}`, 'agent', 'agents', `unit-${unit.replace('/', '-')}`, 'state', pidFile), 'utf8').trim())
}

function unitMachine (doc: StatusDocument, unit: string): string {
  const machine = doc.applications[unit.split('/')[0]!]?.units?.[unit]?.machine
  assert.ok(machine !== undefined, `${unit} in status`)
  return machine
}

test('upgrade-model moves every machine to the new agent; workloads keep serving; no install or start again', async () => {
  const home = mkdtempSync(join(tmpdir(), 'cantrip-upgrade-'))
  const tree = stampedTree(higher)
  const [kvBase, webBase] = [await freePortRun(2), await freePortRun(1)]
  const bundle = join(home, 'bundle.yaml')
  writeExampleBundle(bundle, { kvBase, webBase })
  const machinesDir = join(home, 'controllers', 'local', 'machines')
  let reader: StatusReader | undefined
  try {
    const refusedBootstrap = cantrip(home, ['bootstrap', '--agent-version', '9.9.9'])
    assert.is(refusedBootstrap.stderr.trim(), `ERROR cantrip ${lower}: cannot bootstrap at agent 9.9.9: no agent binaries for 9.9.9 linux/x64 in this client (have ${lower})`)
    ok(home, 'bootstrap')
    reader = await StatusReader.open(home)
    ok(home, 'deploy', bundle)
    ok(home, 'wait-for', 'application', 'web', '--timeout', '4m')
    ok(home, 'wait-for', 'application', 'kv', '--timeout', '2m')
    const before = await reader.until('web to see both backends', d => d.applications['web']?.['application-status'].message === '2 backends')
    assert.is(before.model.version, lower)
    for (const machine of Object.values(before.machines)) assert.is(machine['juju-status'].version, lower)

    // The workloads: the same processes must serve before and after (an agent restart is no reboot).
    const workloads = [['kv/0', 'kv-server.pid'], ['kv/1', 'kv-server.pid'], ['web/0', 'web-proxy.pid']] as const
    const pidsBefore = workloads.map(([unit, file]) => workloadPid(machinesDir, unitMachine(before, unit), unit, file))
    const urls = [`http://127.0.0.1:${webBase}/backends`, `http://127.0.0.1:${kvBase}/health`, `http://127.0.0.1:${kvBase + 1}/health`]
    for (const url of urls) assert.ok(await answers(url), `${url} answers before the upgrade`)

    const upgradeStartedAt = Date.now()
    assert.is(cantrip(home, ['upgrade-model'], {}, tree.root).stdout.trim(), `started upgrade to ${higher}`)
    // SIGKILL one agent wherever its swap is: it must come back on one version or the other, and end on the new one.
    const victimPid = Number(readFileSync(join(machinesDir, 'machine-1', 'agent.pid'), 'utf8').split(' ')[0])
    process.kill(victimPid, 'SIGKILL')

    const after = await reader.until(`every machine to report ${higher}`, d =>
      Object.values(d.machines).every(m => m['juju-status'].version === higher && m['agent-version-message'] === undefined), 180_000)
    assert.is(after.model.version, higher)
    assert.equal(Object.keys(after.machines), ['0', '1', '2'])
    await reader.until('web to see both backends again', d => d.applications['web']?.['application-status'].message === '2 backends')
    assert.equal(workloads.map(([unit, file]) => workloadPid(machinesDir, unitMachine(after, unit), unit, file)), pidsBefore, 'the same workload processes')
    for (const pid of pidsBefore) assert.ok(processAlive(pid), `workload ${pid} alive`)
    for (const url of urls) assert.ok(await answers(url), `${url} answers after the upgrade`)

    // No unit ran install or start again after the upgrade began.
    const full = await reader.model()
    for (const unit of tableValues(full.model.units)) {
      const rerun = unit.statusHistory.filter(e => (e.since ?? 0) >= upgradeStartedAt && /^running (install|start) hook$/.test(e.message))
      assert.equal(rerun, [], `${unit.name} ran install or start again`)
    }

    // The version errors, as the issue writes them.
    const missing = cantrip(home, ['upgrade-model', '--agent-version', '9.9.9'], {}, tree.root)
    assert.is(missing.status, 1)
    assert.is(missing.stderr.trim(), `ERROR controller ${lower}: cannot upgrade model "default" to agent 9.9.9: no agent binaries for 9.9.9 linux/x64 in the controller store (have ${lower}, ${higher}); copy one there with "cantrip sync-agent-binary --agent-version 9.9.9 --source <installation>"`)
    const downgrade = cantrip(home, ['upgrade-model', '--agent-version', lower])
    assert.is(downgrade.stderr.trim(), `ERROR controller ${lower}: cannot upgrade model "default" to agent ${lower}: cannot change version from ${higher} to lower version ${lower}`)
    assert.is(cantrip(home, ['upgrade-model'], {}, tree.root).stdout.trim(), 'no upgrades available')
    assert.is(cantrip(home, ['model-config', 'agent-version=9.9.9']).stderr.trim(), 'ERROR cantrip model-config: agent-version must be set via "upgrade-model"')

    // A third release, copied into the store by sync-agent-binary (Juju's way to supply agent
    // binaries other than the client's), then damaged at rest in the controller's store: the
    // agents fetch it, find its bytes do not match its sha256, refuse it and keep running.
    const third = stampedTree(thirdVersion)
    let hash: string
    try {
      assert.equal(cantrip(home, ['sync-agent-binary', '--source', third.root]), { status: 1, stdout: '', stderr: 'ERROR cantrip sync-agent-binary: expected --agent-version (the version to copy), got none\n' })
      assert.equal(cantrip(home, ['sync-agent-binary', '--agent-version', higher, '--source', third.root]), { status: 1, stdout: '', stderr: `ERROR cantrip sync-agent-binary: expected the installation at ${third.root} to hold agent ${higher}, got agent ${thirdVersion}\n` })
      assert.equal(cantrip(home, ['sync-agent-binary', '--agent-version', thirdVersion, '--source', home]), { status: 1, stdout: '', stderr: `ERROR cantrip sync-agent-binary: expected --source to be an installation of cantrip with its dist/ built, got ${home} without ${join(home, 'package.json')}\n` })
      const synced = cantrip(home, ['sync-agent-binary', '--agent-version', thirdVersion, '--source', third.root])
      assert.is(synced.status, 0, synced.stderr)
      const copied = new RegExp(`^copied agent binary ${thirdVersion} linux/x64 \\(sha256 ([0-9a-f]{64}), \\d+ kB\\) from ${third.root}\n$`).exec(synced.stdout)
      assert.ok(copied !== null, synced.stdout)
      hash = copied[1]!
    } finally {
      third.remove()
    }
    await reader.close()
    reader = undefined
    await corruptStoredChunk(home, hash)
    reader = await StatusReader.open(home)
    const agentPids = ['0', '1', '2'].map(machine => agentPid(machinesDir, machine))
    // Any client may ask for a version the store holds, not only its own.
    assert.equal(cantrip(home, ['upgrade-model', '--agent-version', thirdVersion]), { status: 0, stdout: `started upgrade to ${thirdVersion}\n`, stderr: '' })
    const refused = await reader.until('every machine to refuse the damaged bundle', d =>
      Object.values(d.machines).every(m => m['agent-version-message']?.startsWith(`upgrade to ${thirdVersion} failed: `) === true), 120_000)
    for (const [id, machine] of Object.entries(refused.machines)) {
      assert.is(machine['juju-status'].version, higher, `machine ${id} still runs ${higher}`)
      assert.match(machine['agent-version-message']!, `machine ${id} agent ${higher}: cannot upgrade to ${thirdVersion}: agent bundle sha256 ${hash}: chunk 0: expected sha256 `)
      // As Juju's upgrader it will fetch it again (a repaired store cures it), and says when.
      assert.match(machine['agent-version-message']!, /; trying again in \d+ s \(\d+ failures?\)$/)
    }
    assert.equal(['0', '1', '2'].map(machine => agentPid(machinesDir, machine)), agentPids, 'no agent restarted')
    // The agent's log record travels apart from its status (shipped in batches over gossip,
    // limits.logShipIntervalMs): a quick debug-log can run before it has arrived.
    const logged = `cannot upgrade to ${thirdVersion}: agent bundle sha256 ${hash}`
    let log = cantrip(home, ['debug-log', '--replay', '--no-tail', '--level', 'ERROR', '--include', 'machine-0'])
    for (const until = Date.now() + logArrivalMsMax; !log.stdout.includes(logged) && Date.now() < until;) {
      await new Promise(resolve => setTimeout(resolve, 500))
      log = cantrip(home, ['debug-log', '--replay', '--no-tail', '--level', 'ERROR', '--include', 'machine-0'])
    }
    assert.match(log.stdout, logged)
  } finally {
    await reader?.close()
    destroyLeftoverController(home, machinesDir)
    tree.remove()
    removeHome(home)
  }
})

test.run()
