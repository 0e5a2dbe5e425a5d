/**
 * The example charms for real: a one-member controller group on LevelDB, a machine
 * agent's deployer starting unit agents, hooks as processes through the hook runner,
 * and every hook tool call going through the C client and the unit's socket. Checks
 * what the workloads do: kv answers over HTTP and shares the leader's token, the web
 * front end follows its backends as kv units come and go, a juju exec and actions run
 * through the tools, and removing the applications runs the stop hooks that end the
 * workloads. (logship and cluster run in test/npm-start.test.ts, through npm start.)
 */
import '../runtime/polyfill.ts'
import { freeLoopbackPort as freePort, freePortRun } from '../agent/free-port.ts'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { packCharm } from '../agent/charm/charm-archive.ts'
import { loadCharmDir } from '../agent/charm/load-charm.ts'
import { ChildProcessRunner } from '../agent/child-process-runner.ts'
import { OneControllerFixture } from './support/one-controller-fixture.ts'
import { LevelStorage } from '../agent/level-storage.ts'
import { SystemClock } from '../agent/system-clock.ts'
import type { Deployer } from '../actors/machine/deployer.ts'
import { startProcessDeployer } from '../agent/uniter/deployer.ts'
import { deployCharmArchive } from '../agent/uniter/charm-fetch.ts'
import { createMemoryLogger } from '../runtime/logger.ts'
import { killUnitWorkloads } from './support/processes.ts'
import { readerOf } from '../runtime/model/model-draft.ts'

const charmsDir = resolve('examples/charms')
/** Every wait here is bounded by this. */
const waitMsMax = 60_000


/** A port P with P and P + 1 both free on 127.0.0.1 and claimed (unit 0 and unit 1 of kv). */
async function freePortPair (): Promise<number> {
  return await freePortRun(2)
}

async function waitFor (what: string, condition: () => boolean | Promise<boolean>, describe: () => string = () => ''): Promise<void> {
  const until = performance.now() + waitMsMax
  while (!await condition()) {
    if (performance.now() > until) throw new Error(`charms e2e: timed out waiting for ${what}: ${describe()}`)
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

async function get (url: string, headers: Record<string, string> = {}): Promise<{ status: number, body: string }> {
  try {
    const response = await fetch(url, { headers, signal: AbortSignal.timeout(2_000) })
    return { status: response.status, body: await response.text() }
  } catch {
    return { status: 0, body: '' }
  }
}


test('kv and web run for real through the hook runner and the hook tools', async () => {
  const root = mkdtempSync(join(tmpdir(), 'cantrip-e2e-'))
  const logger = createMemoryLogger('machine-0', [], 50_000)
  let controller: OneControllerFixture | undefined
  let storage: LevelStorage | undefined
  let deployer: Deployer | undefined
  const status = (unit: string): string => {
    const record = controller === undefined ? undefined : readerOf(controller.model()).unit(unit)
    return record === undefined ? 'gone' : `${record.workload.status} ${record.workload.message}`
  }
  const statuses = (): string => ['kv/0', 'kv/1', 'web/0', 'logship/0', 'cluster/0']
    .map(u => `${u}: ${status(u)}`).join('; ') + ' | ' + logger.records.filter(r => r.level === 'error' || r.level === 'warning').slice(-5).map(r => `${r.module} ${r.message}`).join(' / ')
  try {
    controller = await OneControllerFixture.start(join(root, 'controller'))
    storage = await LevelStorage.open(join(root, 'machine-0'))
    await controller.admin({ type: 'add-machine' })
    await controller.asController({ type: 'set-machine-instance', machine: '0', instanceId: 'local-0', addresses: ['127.0.0.1'] })
    for (const name of ['kv', 'web', 'logship', 'cluster']) {
      const dir = join(charmsDir, name)
      const loaded = await loadCharmDir(dir)
      const packed = await packCharm(dir)
      const url = `local:${name}-0`
      assert.is(await controller.charms.put(packed.bytes), packed.hash)
      await controller.admin({ type: 'add-charm', url, hash: packed.hash, metadata: loaded.summary })
    }
    const kvPort = await freePort()
    const webPort = await freePort()
    await controller.admin({ type: 'deploy', application: 'kv', charm: 'local:kv-0', config: { port: kvPort }, constraints: {}, numUnits: 1, placement: ['0'] })
    await controller.admin({ type: 'deploy', application: 'web', charm: 'local:web-0', config: { port: webPort }, constraints: {}, numUnits: 1, placement: ['0'] })
    await controller.admin({ type: 'integrate', a: 'web:backend', b: 'kv:website' })

    deployer = startProcessDeployer({
      machineId: '0',
      dataDir: root,
      controller,
      storage,
      processRunner: new ChildProcessRunner(),
      // The archive from the controller's store, unpacked with its hash and paths checked.
      fetchCharm: async (url, dir) => { await deployCharmArchive(controller!, url, dir) },
      logger,
      clock: new SystemClock(),
      leaseDurationMs: 10_000
    })

    // kv serves, with the token its leader shared through leader-set.
    await waitFor('kv/0 active', () => status('kv/0').startsWith('active'), statuses)
    const health = await get(`http://127.0.0.1:${kvPort}/health`)
    assert.is(health.status, 200, 'kv answers /health')
    const token = readerOf(controller.model()).application('kv')!.leaderSettings.token
    assert.ok(token !== undefined && token.length > 0, 'the leader shared a token with leader-set')
    // status-set applies at once, open-port when the hook's changes commit: active may be seen first.
    await waitFor('open-port committed after the hook', () => readerOf(controller!.model()).unit('kv/0')!.openedPorts.some(p => p.from === kvPort), statuses)

    // web found its backend through relation data and proxies to it.
    await waitFor('web/0 with one backend', () => status('web/0') === 'active 1 backends', statuses)
    const put = await fetch(`http://127.0.0.1:${webPort}/kv/greeting`, { method: 'PUT', body: 'hello', headers: { 'X-Token': token! }, signal: AbortSignal.timeout(2_000) })
    assert.is(put.status, 204, 'PUT through the front end')
    assert.equal(await get(`http://127.0.0.1:${webPort}/kv/greeting`), { status: 200, body: 'hello' })

    // A second kv unit joins: the front end follows; it leaves: the front end follows again.
    // kv's port is per application: port 0 gives unit N the port port-base + N (both free).
    await controller.admin({ type: 'set-config', application: 'kv', config: { port: 0, 'port-base': await freePortPair() } })
    await controller.admin({ type: 'add-unit', application: 'kv', numUnits: 1, placement: ['0'] })
    await waitFor('web/0 with two backends', () => status('web/0') === 'active 2 backends', statuses)
    await controller.admin({ type: 'remove-unit', unit: 'kv/1' })
    await waitFor('kv/1 gone and web back to one backend', () => status('kv/1') === 'gone' && status('web/0') === 'active 1 backends', statuses)

    // juju exec and an action go through the same tools.
    const exec = await controller.admin({ type: 'enqueue-command', unit: 'kv/0', commands: 'config-get port; is-leader' })
    await waitFor('the exec to complete', () => readerOf(controller!.model()).unit('kv/0')!.commands.every(c => c.id !== exec.commandId))
    const action = await controller.admin({ type: 'enqueue-action', unit: 'kv/0', name: 'get', parameters: { key: 'greeting' } })
    await waitFor('the action to complete', () => !['pending', 'running', undefined].includes(readerOf(controller!.model()).action(action.actionId!)?.status), () => JSON.stringify(readerOf(controller!.model()).action(action.actionId!)))
    const done = readerOf(controller.model()).action(action.actionId!)!
    assert.is(done.status, 'completed', JSON.stringify(done))
    // Parameters are checked against actions.yaml before anything runs.
    const invalid = await controller.admin({ type: 'enqueue-action', unit: 'kv/0', name: 'get', parameters: { key: 7 } })
    await waitFor('the invalid action to fail', () => readerOf(controller!.model()).action(invalid.actionId!)?.status === 'failed')
    assert.match(JSON.stringify(readerOf(controller.model()).action(invalid.actionId!)), /validation failed/)

    // Removing the applications runs stop: the workloads end.
    await controller.admin({ type: 'remove-application', application: 'web' })
    await controller.admin({ type: 'remove-application', application: 'kv' })
    await waitFor('every unit gone', () => status('kv/0') === 'gone' && status('web/0') === 'gone', statuses)
    assert.is((await get(`http://127.0.0.1:${kvPort}/health`)).status, 0, 'kv stopped')
    assert.is((await get(`http://127.0.0.1:${webPort}/backends`)).status, 0, 'web stopped')
  } finally {
    await deployer?.stop()
    await controller?.stop()
    await storage?.close()
    killUnitWorkloads(root)
    rmSync(root, { recursive: true, force: true })
  }
})

test.run()
