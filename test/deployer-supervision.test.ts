/**
 * The deployer supervises each unit agent: when a unit's actor ends `failed` (here: its
 * first state write fails), the agent is started again after the supervisor's back-off,
 * and the unit then installs and starts as if nothing had happened. A unit whose agent
 * cannot be set up at all (its hook tool socket will not bind) does not keep the other
 * units of the machine from starting.
 */
import '../runtime/polyfill.ts'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { ChildProcessRunner } from '../agent/child-process-runner.ts'
import { SystemClock } from '../agent/system-clock.ts'
import { startProcessDeployer } from '../agent/uniter/deployer.ts'
import { createMemoryLogger } from '../runtime/logger.ts'
import type { CommandResult, ModelCommand } from '../runtime/model/model-types.ts'
import { readerOf } from '../runtime/model/model-draft.ts'
import { SimStorage } from '../sim/sim-storage.ts'
import { MemoryController } from './support/model-controller.ts'

/** The in-memory controller, telling its listeners after every command, on the real clock. */
class WatchedController extends MemoryController {
  readonly #listeners = new Set<() => void>()
  override now (): number { return performance.timeOrigin + performance.now() }
  override async submit (command: ModelCommand): Promise<CommandResult> {
    const result = await super.submit(command)
    queueMicrotask(() => { for (const listener of this.#listeners) listener() })
    return result
  }

  onChange (listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => { this.#listeners.delete(listener) }
  }
}

test('a unit agent whose actor fails is restarted after the back-off and carries on', async () => {
  const root = mkdtempSync(join(tmpdir(), 'cantrip-supervision-'))
  const charm = join(root, 'charm-src')
  mkdirSync(join(charm, 'hooks'), { recursive: true })
  writeFileSync(join(charm, 'metadata.yaml'), 'name: quiet\nsummary: q\ndescription: q\n')
  const controller = new WatchedController()
  controller.run('add-charm', { url: 'local:quiet-0', hash: 'ab'.repeat(8), metadata: { name: 'quiet' } })
  controller.run('deploy', { application: 'quiet', charm: 'local:quiet-0', config: {}, constraints: {}, numUnits: 1 })
  const machine = readerOf(controller.context).unit('quiet/0')!.machine
  const storage = new SimStorage()
  storage.failNextWrites(1)
  const logger = createMemoryLogger('machine', [], 10_000)
  const deployer = startProcessDeployer({
    machineId: machine,
    dataDir: root,
    controller,
    storage,
    processRunner: new ChildProcessRunner(),
    toolsFor: async (_unit, agentDir) => ({ socketPath: join(agentDir, 'agent.socket'), toolsDir: join(agentDir, 'tools'), open: () => () => {} }),
    fetchCharm: async (_url, dir) => {
      rmSync(dir, { recursive: true, force: true })
      mkdirSync(dir, { recursive: true })
      writeFileSync(join(dir, 'metadata.yaml'), 'name: quiet\nsummary: q\ndescription: q\n')
    },
    logger,
    clock: new SystemClock()
  })
  try {
    const until = performance.now() + 20_000
    const agentStatus = (): string | undefined => readerOf(controller.context).unit('quiet/0')?.agent.status
    while (agentStatus() !== 'idle' || readerOf(controller.context).unit('quiet/0')?.workload.status === undefined) {
      assert.ok(performance.now() < until, `unit never became idle; log: ${logger.records.slice(-5).map(r => r.message).join(' | ')}`)
      await new Promise(resolve => setTimeout(resolve, 50))
    }
    assert.ok(logger.records.some(r => /failed: cannot persist local state/.test(r.message)), 'the failure was logged by the supervisor')
    const starts = logger.records.filter(r => r.message === 'worker "quiet/0" started').length
    assert.is(starts, 2, `started again once: ${logger.records.map(r => r.message).join(' | ').slice(0, 800)}`)
  } finally {
    await deployer.stop()
    rmSync(root, { recursive: true, force: true })
  }
})

test('a unit whose hook tool service cannot start does not keep the other units of its machine from starting', async () => {
  const root = mkdtempSync(join(tmpdir(), 'cantrip-supervision-'))
  const controller = new WatchedController()
  controller.run('add-charm', { url: 'local:quiet-0', hash: 'ab'.repeat(8), metadata: { name: 'quiet' } })
  controller.run('deploy', { application: 'quiet', charm: 'local:quiet-0', config: {}, constraints: {}, numUnits: 1 })
  const machine = readerOf(controller.context).unit('quiet/0')!.machine
  controller.run('add-unit', { application: 'quiet', numUnits: 1, placement: [machine] })
  assert.equal(readerOf(controller.context).machine(machine)?.units, ['quiet/0', 'quiet/1'])
  const logger = createMemoryLogger('machine', [], 10_000)
  const deployer = startProcessDeployer({
    machineId: machine,
    dataDir: root,
    controller,
    storage: new SimStorage(),
    processRunner: new ChildProcessRunner(),
    // quiet/0 fails as a socket path over the limit does; quiet/1 comes after it.
    toolsFor: async (unit, agentDir) => {
      if (unit === 'quiet/0') throw new Error('hook tool server: expected a socket path of at most 107 bytes, got "…"')
      return { socketPath: join(agentDir, 'agent.socket'), toolsDir: join(agentDir, 'tools'), open: () => () => {} }
    },
    fetchCharm: async (_url, dir) => {
      rmSync(dir, { recursive: true, force: true })
      mkdirSync(dir, { recursive: true })
      writeFileSync(join(dir, 'metadata.yaml'), 'name: quiet\nsummary: q\ndescription: q\n')
    },
    logger,
    clock: new SystemClock()
  })
  try {
    const until = performance.now() + 20_000
    while (readerOf(controller.context).unit('quiet/1')?.agent.status !== 'idle') {
      assert.ok(performance.now() < until, `quiet/1 never became idle; log: ${logger.records.slice(-5).map(r => r.message).join(' | ')}`)
      await new Promise(resolve => setTimeout(resolve, 50))
    }
    assert.is(deployer.agent('quiet/0'), undefined, 'quiet/0 has no agent')
    assert.ok(logger.records.some(r => r.level === 'warning' && r.message.includes('cannot start the agent of quiet/0: hook tool server: expected a socket path')),
      `the failure names the unit: ${logger.records.map(r => r.message).join(' | ').slice(0, 800)}`)
  } finally {
    await deployer.stop()
    rmSync(root, { recursive: true, force: true })
  }
})

test.run()
