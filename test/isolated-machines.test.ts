/**
 * Isolated local machines (`cantrip bootstrap --machine-network CIDR`, root only): each
 * machine is a network namespace with its own address on a bridge, so two units of one
 * charm on two machines both serve on the same port, each reached at its own address, and
 * the unit's address (status, unit-get private-address) is that machine's. As with
 * Juju's LXD machines: every container has its own address on lxdbr0, and a unit's
 * private-address is its machine's (juju/juju apiserver/facades/agent/uniter, PrivateAddress
 * → the machine's preferred private address).
 *
 * Without root or `ip netns` the suite skips with the reason; the fallback message is
 * pinned by a check that runs everywhere.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, readlinkSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { NetnsMachineNetwork, machineNetworkUnavailable, parseMachineNetwork } from '../agent/netns-machine-network.ts'
import { timeNamespaceUnavailable } from '../agent/time-namespace-boot-clock.ts'
import { controllerNetwork } from '../agent/cli/controller-network.ts'
import { cantrip, cantripOk, destroyLeftoverController, removeHome } from './support/cli-process.ts'
import { killUnitWorkloads } from './support/processes.ts'
import { StatusReader } from './support/status-reader.ts'

const test = suite('isolated local machines')
const unavailable = machineNetworkUnavailable()
// One network per run: two runs on one machine never share a bridge.
const cidr = `10.213.${20 + (process.pid % 200)}.0/24`
const home = mkdtempSync(join(tmpdir(), 'cantrip-isolated-'))
const kvCharm = resolve('examples/charms/kv')
const port = 18470

test.after(() => {
  destroyLeftoverController(home, join(home, 'controllers', 'local', 'machines'))
  // Whatever a failed run left: the namespaces and the bridge of this run's network.
  if (unavailable === undefined) new NetnsMachineNetwork(cidr).removeAll()
  removeHome(home)
})

test('bad --machine-network and --listen values are one clear line each', () => {
  assert.throws(() => parseMachineNetwork('cantrip bootstrap', '10.213.0.0/8'), /cantrip bootstrap: expected --machine-network as an IPv4 network from \/16 to \/29 \(e\.g\. 10\.213\.7\.0\/24\), got "?10\.213\.0\.0\/8/)
  assert.throws(() => controllerNetwork('cantrip bootstrap', { listen: '0.0.0.0' }), /cantrip bootstrap: expected --advertise HOST with --listen 0\.0\.0\.0 \(no other host can dial 0\.0\.0\.0\), got "?none/)
  assert.throws(() => controllerNetwork('cantrip bootstrap', { listen: 'not a host!' }), /cantrip bootstrap: expected --listen as HOST or HOST:PORT/)
  const network = parseMachineNetwork('x', '10.213.7.99/24')
  assert.equal([network.cidr, network.gateway], ['10.213.7.0/24', '10.213.7.1'])
  // The controllers listen on the bridge, where the machines reach them.
  assert.equal(controllerNetwork('x', { machineNetwork: '10.213.7.0/24' }), { listen: '10.213.7.1', advertise: '10.213.7.1', machineNetwork: '10.213.7.0/24' })
  assert.equal(controllerNetwork('x', { listen: '0.0.0.0:17070', advertise: '192.168.1.5' }), { listen: '0.0.0.0', advertise: '192.168.1.5', port: 17070 })
})

test('two units serve on one port on two isolated machines, each at its own address', async () => {
  if (unavailable !== undefined) {
    console.log(`  skipped: isolated machines ${unavailable}`)
    return
  }
  const boot = cantripOk(home, 'bootstrap', '--machine-network', cidr)
  const network = parseMachineNetwork('test', cidr)
  assert.match(boot, `at ${network.gateway}, local provider, machines isolated in ${network.cidr}`)
  cantripOk(home, 'deploy', kvCharm, '-n', '2', '--config', `port=${port}`)
  const reader = await StatusReader.open(home)
  try {
    const doc = await reader.until('both kv units active with an address each', d => {
      const units = Object.values(d.applications['kv']?.units ?? {})
      return units.length === 2 && units.every(u => u['workload-status'].current === 'active' && u['public-address'] !== undefined)
    }, 240_000)
    const units = doc.applications['kv']!.units!
    const addresses = Object.values(units).map(u => u['public-address']!)
    assert.is(new Set(addresses).size, 2, `two addresses: ${addresses.join(', ')}`)
    for (const address of addresses) {
      assert.ok(address.startsWith(network.cidr.slice(0, network.cidr.lastIndexOf('.'))), `${address} in ${cidr}`)
      assert.is.not(address, network.gateway)
    }
    // Each machine's address is its units' (and the machine's dns-name).
    for (const unit of Object.values(units)) assert.is(doc.machines[unit.machine!]?.['dns-name'], unit['public-address'])
    // Both serve on the one port, each at its own address, reached from this host over the bridge.
    const served = await Promise.all(addresses.map(async address => await health(address, port)))
    assert.equal(served.map(s => s.status), [200, 200], JSON.stringify(served))
    // Relation settings carry the machine's address: each peer sees the other's (juju-semantics §2.2).
    const [first, second] = Object.keys(units).sort() as [string, string]
    const shown = cantripOk(home, 'show-unit', first, '--format', 'json')
    assert.match(shown, units[second]!['public-address']!)
    // A host reboot drops every namespace: a machine whose agent died with its namespace
    // gone is brought back by the watchdog in a namespace made again at the same address.
    const [machineId, address] = [units[first]!.machine!, units[first]!['public-address']!]
    const instanceDir = join(home, 'controllers', 'local', 'machines', `machine-${machineId}`)
    const [namespace] = readFileSync(join(instanceDir, 'netns'), 'utf8').trim().split(' ') as [string]
    const agentPid = Number(readFileSync(join(instanceDir, 'agent.pid'), 'utf8').trim().split(' ')[0])
    try { process.kill(-agentPid, 'SIGKILL') } catch { /* gone */ }
    killUnitWorkloads(join(instanceDir, 'agent'))
    execFileSync('ip', ['netns', 'del', namespace])
    // The watchdog's restart: a new agent pid, in the namespace made again.
    const deadline = Date.now() + 120_000
    const restarted = (): boolean => {
      const pid = Number(readFileSync(join(instanceDir, 'agent.pid'), 'utf8').trim().split(' ')[0])
      return pid !== agentPid && new NetnsMachineNetwork(cidr).namespaces().includes(namespace)
    }
    while (!restarted()) {
      assert.ok(Date.now() < deadline, `the watchdog restarted machine ${machineId} within 120 s`)
      await new Promise(resolve => setTimeout(resolve, 500))
    }
    await reader.until(`machine ${machineId} back after its namespace was lost`, d => {
      const unit = d.applications['kv']?.units?.[first]
      return unit?.['juju-status'].current === 'idle' && d.machines[machineId]?.['juju-status'].current === 'started'
    }, 240_000)
    assert.ok(new NetnsMachineNetwork(cidr).namespaces().includes(namespace), `${namespace} made again`)
    assert.match(execFileSync('ip', ['-n', namespace, '-br', 'addr'], { encoding: 'utf8' }), address)
    // The machine is in both namespaces: its network's, and a time namespace of its own
    // (agent/time-namespace-boot-clock.ts) where this host can make one.
    const pid = Number(readFileSync(join(instanceDir, 'agent.pid'), 'utf8').trim().split(' ')[0])
    assert.match(execFileSync('ip', ['netns', 'identify', String(pid)], { encoding: 'utf8' }), namespace)
    if (timeNamespaceUnavailable() === undefined) assert.is.not(readlinkSync(`/proc/${pid}/ns/time`), readlinkSync('/proc/self/ns/time'))
  } finally {
    await reader.close()
  }
  const destroyed = cantrip(home, ['destroy-controller', 'local', '--no-prompt'])
  assert.is(destroyed.status, 0, destroyed.stderr)
  assert.is(new NetnsMachineNetwork(cidr).namespaces().length, 0, 'every machine namespace removed')
  assert.not.match(execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' }), new NetnsMachineNetwork(cidr).bridge)
})

async function health (host: string, port: number): Promise<{ status: number, body: string }> {
  return await new Promise((resolve, reject) => {
    const req = request({ host, port, path: '/health', timeout: 10_000 }, res => {
      let body = ''
      res.on('data', chunk => { body += String(chunk) })
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, body }) })
    })
    req.on('timeout', () => { req.destroy(new Error(`no answer from ${host}:${port}`)) })
    req.on('error', reject)
    req.end()
  })
}

test.run()
