/**
 * `start-agent N` brings a local machine back with the provider settings its controllers
 * give machines (agent/cli/machine-network-of-group.ts), read from a local member's
 * launch record: the default listen/advertise of a group off loopback, and the machine
 * network when namespaces can be made here. Before, it started the agent with none of
 * them, so an isolated machine came back outside its namespace.
 */
import '../runtime/polyfill.ts'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { writeAgentLaunch } from '../agent/agent-launch.ts'
import type { ControllerEntry } from '../agent/cli/cli-home.ts'
import { groupMachineNetwork } from '../agent/cli/machine-network-of-group.ts'
import { machineNetworkUnavailable } from '../agent/netns-machine-network.ts'

const scratch = mkdtempSync(join(tmpdir(), 'cantrip-group-net-'))
test.after(() => rmSync(scratch, { recursive: true, force: true }))

function entryWith (memberArgs: Array<string[] | undefined>): ControllerEntry {
  const controllers = memberArgs.map((args, i) => {
    const dataDir = join(scratch, `${memberArgs.length}-${i}-${Math.random().toString(36).slice(2)}`)
    mkdirSync(dataDir, { recursive: true })
    if (args !== undefined) writeAgentLaunch(dataDir, { name: `c${i}`, description: 'd', command: '/usr/bin/node', args, cwd: dataDir, logFile: join(dataDir, 'log'), env: {} })
    return { 'peer-id': `p${i}`, addresses: [], pid: 0, 'data-dir': dataDir }
  })
  return { dir: scratch, controllers, provider: 'local', version: '0.1.0' }
}

test('a group on loopback gives its machines nothing beyond the provider defaults', () => {
  assert.equal(groupMachineNetwork(entryWith([['cantripd.mjs', '--listen', '/ip4/127.0.0.1/tcp/0', '--advertise', '127.0.0.1']])), {})
})

test('a group off loopback: machines listen on its host and advertise it; the first readable record counts', () => {
  const got = groupMachineNetwork(entryWith([undefined, ['cantripd.mjs', '--listen', '/ip4/10.1.2.3/tcp/17070', '--advertise', '10.1.2.3']]))
  assert.equal(got.defaultNetwork, { listen: '10.1.2.3', advertise: '10.1.2.3' })
})

test('a group bootstrapped with --machine-network gives its machines that network where namespaces can be made', () => {
  const dir = join(scratch, 'broken')
  mkdirSync(dir)
  writeFileSync(join(dir, 'launch.json'), 'not json')
  const entry = entryWith([['cantripd.mjs', '--listen', '/ip4/10.77.0.1/tcp/0', '--advertise', '10.77.0.1', '--machine-network', '10.77.0.0/24']])
  entry.controllers.unshift({ 'peer-id': 'p-broken', addresses: [], pid: 0, 'data-dir': dir })
  const got = groupMachineNetwork(entry)
  assert.equal(got.defaultNetwork, { listen: '10.77.0.1', advertise: '10.77.0.1' })
  assert.is(got.network !== undefined, machineNetworkUnavailable() === undefined, `namespaces here: ${machineNetworkUnavailable() ?? 'yes'}`)
})

test.run()
