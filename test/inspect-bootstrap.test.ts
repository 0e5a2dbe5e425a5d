/**
 * Inspection across a local deployment: `cantrip bootstrap --inspect` starts the
 * controller with `--inspect 0`, the local provider's machine agents inherit it, and
 * `discoverInspectEndpoints` finds every agent's URL from controllers.yaml and the machine
 * directories; the controller streams its Raft role, the provisioner and its machine actor,
 * the machine agent its deployer, unit and relation actors. Discovery of a made-up tree too.
 */
import '../runtime/polyfill.ts'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createWebSocketReceiver, type StatelyInspectionEvent } from '@statelyai/inspect'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { parse } from 'yaml'
import type { ControllersFile } from '../agent/cli/cli-home.ts'
import { discoverInspectEndpoints } from '../agent/inspect/inspect-endpoints.ts'
import { cantrip, cantripOk, destroyLeftoverController, removeHome } from './support/cli-process.ts'
import { freePortRun } from '../agent/free-port.ts'
import { processAlive } from './support/processes.ts'

type Received = StatelyInspectionEvent & { agent?: string, actorKind?: string, name?: string }

test('discovery: controllers by their data dirs, machine agents of every model, agents without a URL left out', () => {
  const dir = mkdtempSync(join(tmpdir(), 'inspect-discover-'))
  try {
    const put = (sub: string, url: string): void => {
      mkdirSync(join(dir, sub), { recursive: true })
      writeFileSync(join(dir, sub, 'inspect.url'), url + '\n')
    }
    put('c0', 'ws://127.0.0.1:4001')
    mkdirSync(join(dir, 'c1'))
    put('machines/machine-10/agent', 'ws://127.0.0.1:4010')
    put('machines/machine-2/agent', 'ws://127.0.0.1:4002')
    mkdirSync(join(dir, 'machines/machine-3/agent'), { recursive: true })
    put('machines/m-staging/machine-0/agent', 'ws://127.0.0.1:5000')
    put('machines/machine-4/agent', 'not a url')
    const entry = {
      dir,
      provider: 'local',
      version: '0.1.0',
      controllers: [
        { 'peer-id': '12D3KooWAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA11111111', addresses: [], pid: 1, 'data-dir': join(dir, 'c0') },
        { 'peer-id': '12D3KooWBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB22222222', addresses: [], pid: 2, 'data-dir': join(dir, 'c1') }
      ]
    }
    assert.equal(discoverInspectEndpoints(entry), [
      { agent: 'controller-11111111', url: 'ws://127.0.0.1:4001' },
      { agent: 'machine-2', url: 'ws://127.0.0.1:4002' },
      { agent: 'machine-10', url: 'ws://127.0.0.1:4010' },
      { agent: 'staging:machine-0', url: 'ws://127.0.0.1:5000' }
    ])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

async function until (what: string, condition: () => boolean, describe: () => string, ms = 180_000): Promise<void> {
  const end = performance.now() + ms
  while (!condition()) {
    if (performance.now() > end) assert.unreachable(`timed out waiting for ${what}: ${describe()}`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

test('bootstrap --inspect: the controller and the machine agent it provisions stream their actors, found by discovery', async () => {
  const home = mkdtempSync(join(tmpdir(), 'cantrip-home-'))
  const pids: number[] = []
  try {
    const boot = cantrip(home, ['bootstrap', '--inspect'])
    assert.is(boot.status, 0, boot.stderr)
    const file = parse(readFileSync(join(home, 'controllers.yaml'), 'utf8')) as ControllersFile
    const entry = file.controllers['local']!
    pids.push(...entry.controllers.map(m => m.pid))
    assert.is(entry.inspect, true)
    cantripOk(home, 'deploy', resolve('examples/charms/kv'), '--config', `port-base=${await freePortRun(2)}`)
    cantripOk(home, 'wait-for', 'application', 'kv', '--status', 'active', '--timeout', '3m')
    const endpoints = discoverInspectEndpoints(entry)
    const controllerAgent = `controller-${entry.controllers[0]!['peer-id'].slice(-8)}`
    assert.equal(endpoints.map(e => e.agent), [controllerAgent, 'machine-0'])
    const received: Received[] = []
    for (const endpoint of endpoints) createWebSocketReceiver({ server: endpoint.url }).subscribe(event => { received.push(event as Received) })
    const describe = (): string => JSON.stringify([...new Set(received.map(m => `${m.agent} ${m.type} ${m.actorKind} ${m.name}`))])
    const actor = (agent: string, kind: string, name?: string): boolean =>
      received.some(m => m.type === '@xstate.actor' && m.agent === agent && m.actorKind === kind && (name === undefined || m.name === name) && m.definition !== undefined)
    await until('every actor', () => actor(controllerAgent, 'raft', 'raft:default') && actor(controllerAgent, 'machine', 'machine-0') && actor(controllerAgent, 'provisioner', 'provisioner') &&
      actor('machine-0', 'deployer', 'deployer-0') &&
      actor('machine-0', 'unit', 'unit-kv-0') && actor('machine-0', 'relation'), describe, 30_000)
    // Live: a config change reaches the unit actor as a remote change.
    const before = received.length
    cantripOk(home, 'config', 'kv', 'log-level=debug')
    await until('the unit to hear of the config change', () => received.slice(before).some(m => m.type === '@xstate.event' && m.name === 'unit-kv-0' && m.event.type === 'remote.changed'), describe, 60_000)
    // Machine agents write their pids in their instance dirs; destroy-controller stops them too.
    assert.is(cantrip(home, ['destroy-controller', 'local', '--no-prompt']).status, 0)
  } finally {
    // A failure before destroy-controller leaves the machine agent and kv-server running too.
    destroyLeftoverController(home, join(home, 'controllers', 'local', 'machines'))
    for (const pid of pids) if (processAlive(pid)) process.kill(pid, 'SIGKILL')
    removeHome(home)
  }
})

test.run()
