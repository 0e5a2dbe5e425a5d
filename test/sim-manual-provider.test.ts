/**
 * The manual provider's own code with ssh and tar simulated (sim/sim-ssh-hosts.ts) on
 * SimProcessRunner, SimFileSystem and SimClock: starts on two hosts, an agent that exits
 * at once, a crashed agent found dead and brought back by a same-token start, a host
 * that does not answer, a refused key, and stops that forget an emptied host.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { ManualProvider } from '../providers/manual-provider.ts'
import { ProviderError, type InstanceSpec } from '../providers/provider-contract.ts'
import { SimClock } from '../sim/sim-clock.ts'
import { SimFileSystem } from '../sim/sim-file-system.ts'
import { SimProcessRunner } from '../sim/sim-process-runner.ts'
import { SimSshHosts } from '../sim/sim-ssh-hosts.ts'
import { providerCompliance } from './compliance/provider-compliance.ts'
import { flush, settle as settleClock } from './support/sim-settle.ts'


interface World {
  clock: SimClock
  files: SimFileSystem
  hosts: SimSshHosts
  provider: ManualProvider
  trace: string[]
}

function world (): World {
  const clock = new SimClock({ startMs: 0 })
  const files = new SimFileSystem()
  const hosts = new SimSshHosts({ files, sshCommand: '/usr/bin/ssh', tarCommand: '/usr/bin/tar' })
  hosts.add('ubuntu@10.0.0.1:22')
  hosts.add('ubuntu@10.0.0.2:22')
  const trace: string[] = []
  const processes = new SimProcessRunner(clock, spec => {
    trace.push(`${clock.now()} ${spec.command.split('/').pop() ?? ''}`)
    return hosts.script(spec)
  })
  const provider = new ManualProvider({
    processes,
    files,
    clock,
    sshCommand: '/usr/bin/ssh',
    tarCommand: '/usr/bin/tar',
    env: {},
    writerId: 'controller-0',
    stateFile: '/var/lib/cantrip/manual-hosts.json',
    source: { kind: 'directory', path: '/opt/cantrip' },
    sourceVersion: 'v1',
    controlDir: '/var/lib/cantrip/ssh',
    connectTimeoutMs: 2_000
  })
  return { clock, files, hosts, provider, trace }
}

async function settle<T> (w: World, promise: Promise<T>, budgetMs = 60_000): Promise<T> {
  return await settleClock(w.clock, promise, 10, budgetMs)
}

async function rejection (w: World, promise: Promise<unknown>): Promise<ProviderError> {
  try {
    await settle(w, promise)
  } catch (error) {
    if (error instanceof ProviderError) return error
    throw error
  }
  throw new Error('expected a rejection')
}

function spec (machineId: string, host: string, token = `token-${machineId}`): InstanceSpec {
  return { machineId, token, bootstrap: new TextEncoder().encode(`boot ${machineId}`), constraints: {}, placement: `ssh:ubuntu@${host}` }
}

// The shared provider contract, against the manual provider's code with ssh simulated.
let complianceWorld = world()
providerCompliance({
  name: 'manual (simulated ssh hosts)',
  create: async () => {
    complianceWorld = world()
    return { provider: complianceWorld.provider, close: async () => {} }
  },
  bootstrap: machineId => new TextEncoder().encode(`boot ${machineId}`),
  placement: () => 'ssh:ubuntu@10.0.0.1',
  settle: async () => {
    complianceWorld.clock.advance(10)
    await flush()
  },
  timeoutMs: 10_000,
  failingStart: () => ({ overrides: { placement: 'ssh:nobody' }, failure: 'invalid' })
})

const test = suite('manual provider on the simulator')

test('starts on two hosts install the code once per host and run one agent per machine', async () => {
  const w = world()
  const a = await settle(w, w.provider.startInstance(spec('0', '10.0.0.1')))
  const b = await settle(w, w.provider.startInstance(spec('1', '10.0.0.2')))
  const c = await settle(w, w.provider.startInstance(spec('2', '10.0.0.1')))
  assert.equal([a.instanceId, b.instanceId, c.instanceId], ['manual:ubuntu@10.0.0.1:22/machine-0', 'manual:ubuntu@10.0.0.2:22/machine-1', 'manual:ubuntu@10.0.0.1:22/machine-2'])
  assert.equal(w.hosts.calls.filter(call => call.includes(' install')), ['ubuntu@10.0.0.1:22 install v1', 'ubuntu@10.0.0.2:22 install v1'])
  assert.equal(w.hosts.running('ubuntu@10.0.0.1:22'), ['machine-0', 'machine-2'])
  assert.equal(JSON.parse(new TextDecoder().decode(w.files.readFile('/var/lib/cantrip/manual-hosts.json'))), { hosts: ['ubuntu@10.0.0.1:22', 'ubuntu@10.0.0.2:22'] })
  assert.equal(w.files.paths('/var/lib/cantrip').filter(path => path.endsWith('.tar')), [], 'the staged archive is removed')
  const listed = await settle(w, w.provider.allInstances())
  assert.equal(listed.map(i => [i.machineId, i.token, i.status]), [['0', 'token-0', 'running'], ['2', 'token-2', 'running'], ['1', 'token-1', 'running']])
})

test('an agent that exits at once is a failed deployment that leaves nothing on the host', async () => {
  const w = world()
  w.hosts.add('ubuntu@10.0.0.3:22').failingStarts.push('cantripd: bad bootstrap data')
  const error = await rejection(w, w.provider.startInstance(spec('3', '10.0.0.3')))
  assert.is(error.failure, 'deployment-failed')
  assert.match(error.message, 'machine 3 on ubuntu@10.0.0.3:22: agent exited at once: cantripd: bad bootstrap data')
  assert.equal(w.hosts.running('ubuntu@10.0.0.3:22'), [])
  assert.equal(await settle(w, w.provider.allInstances()), [])
})

test('a crashed agent is listed failed; a start with its token brings it back, not a second one', async () => {
  const w = world()
  await settle(w, w.provider.startInstance(spec('4', '10.0.0.1')))
  assert.ok(w.hosts.crash('ubuntu@10.0.0.1:22', 'machine-4'))
  assert.equal((await settle(w, w.provider.allInstances())).map(i => [i.machineId, i.status]), [['4', 'failed']])
  await settle(w, w.provider.startInstance(spec('4', '10.0.0.1')))
  assert.equal((await settle(w, w.provider.allInstances())).map(i => i.status), ['running'])
  assert.equal(w.hosts.running('ubuntu@10.0.0.1:22'), ['machine-4'])
})

test('a host that does not answer is transient within the connect timeout; a refused key is invalid', async () => {
  const w = world()
  w.hosts.add('ubuntu@10.0.0.9:22').reachable = false
  const begun = w.clock.now()
  const unreachable = await rejection(w, w.provider.startInstance(spec('5', '10.0.0.9')))
  assert.is(unreachable.failure, 'transient')
  assert.match(unreachable.message, 'Connection timed out')
  assert.ok(w.clock.now() - begun <= 2_100, `answered after ${w.clock.now() - begun} ms`)
  w.hosts.add('ubuntu@10.0.0.8:22').refusesKey = true
  const refused = await rejection(w, w.provider.startInstance(spec('6', '10.0.0.8')))
  assert.is(refused.failure, 'invalid')
  assert.match(refused.message, 'Permission denied')
})

test('stopping the last machine of a host forgets the host', async () => {
  const w = world()
  const started = await settle(w, w.provider.startInstance(spec('7', '10.0.0.2')))
  await settle(w, w.provider.stopInstances([started.instanceId, 'manual:nobody', 'local:machine-1']))
  assert.equal(w.hosts.running('ubuntu@10.0.0.2:22'), [])
  assert.equal(JSON.parse(new TextDecoder().decode(w.files.readFile('/var/lib/cantrip/manual-hosts.json'))), { hosts: [] })
  assert.equal(await settle(w, w.provider.allInstances()), [])
})

test('the same steps give the same trace of processes and times', async () => {
  const run = async (): Promise<string[]> => {
    const w = world()
    await settle(w, w.provider.startInstance(spec('0', '10.0.0.1')))
    w.hosts.crash('ubuntu@10.0.0.1:22', 'machine-0')
    await settle(w, w.provider.allInstances())
    await settle(w, w.provider.startInstance(spec('0', '10.0.0.1')))
    await settle(w, w.provider.stopInstances(['manual:ubuntu@10.0.0.1:22/machine-0']))
    return [...w.trace, ...w.hosts.calls]
  }
  const first = await run()
  assert.ok(first.length > 5)
  assert.equal(await run(), first)
})

test.run()
