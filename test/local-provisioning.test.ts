/**
 * Provisioning on the local provider, end to end in real processes: a cantripd
 * controller with `--provider local` deploys three kv units without placement; its
 * provisioner makes three machines, starts a detached `cantripd --bootstrap` for each,
 * each agent registers with its one-time secret and installs its unit. A provider
 * failure injected at each step (list, allocate, deploy, stop) is retried and its reason
 * shows in the machine's status. kill -9 of a machine agent gets it restarted by the
 * watchdog. Healthy agents stay `started` past the machine actors' down timeout
 * (shortened with `--agent-down-ms`). Removing the last unit of a machine removes the machine
 * too, as Juju does: its agent is stopped (and reaped) and its directory removed, with no
 * `remove-machine` (that command's own path is cli-e2e.test.ts's). A credential canary in the provider config
 * appears in no bootstrap data, agent directory, gossip message or agent log.
 */
import '../runtime/polyfill.ts'
import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { SummaryReply } from '../actors/controller/controller-api.ts'
import { changeTopic } from '../actors/controller/change-notices.ts'
import { presenceTopic } from '../runtime/presence/presence-agent.ts'
import { CantripdCluster, freePortRun, waitFor } from './support/cantripd-cluster.ts'
import { killUnitWorkloads, processAlive, unitWorkloadPids } from './support/processes.ts'

const canary = `CANARY-${randomBytes(12).toString('hex')}`
/** The machine actors' down timeout for this test (`cantripd --agent-down-ms`), instead of a minute. */
const agentDownAfterMs = 4_000

/** Every file under `dir`, read as text (bounded: agent trees are small). */
function filesUnder (dir: string): Array<{ path: string, text: string }> {
  const out: Array<{ path: string, text: string }> = []
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const path = join(d, name)
      const stat = statSync(path, { throwIfNoEntry: false })
      if (stat === undefined) continue
      if (stat.isDirectory()) walk(path)
      else if (stat.isFile() && stat.size < 5_000_000) out.push({ path, text: readFileSync(path).toString('latin1') })
    }
  }
  if (existsSync(dir)) walk(dir)
  return out
}

function agentPid (machinesDir: string, machine: string): number | undefined {
  const file = join(machinesDir, `machine-${machine}`, 'agent.pid')
  if (!existsSync(file)) return undefined
  const pid = Number(readFileSync(file, 'utf8').trim().split(/\s+/)[0])
  return Number.isSafeInteger(pid) && pid > 1 ? pid : undefined
}

test('local provider: deploy makes machines with running agents; failures retried and explained; kill -9 restarted; removing its last unit stops and cleans a machine', async () => {
  const cluster = new CantripdCluster()
  const workloads2: number[] = []
  const machinesDir = join(cluster.root, 'machines')
  const config = join(cluster.root, 'provider.json')
  writeFileSync(config, JSON.stringify({ credentials: { token: canary }, faults: { list: 1, allocate: 1, deploy: 1, stop: 1 }, retryDelayMs: [1_000, 3_000] }))
  cluster.extraArgs = ['--provider', 'local', '--machines-dir', machinesDir, '--provider-config', config, '--presence-ms', '300,1500,1500', '--agent-down-ms', String(agentDownAfterMs)]
  const gossip: Uint8Array[] = []
  try {
    await cluster.prepare(1, 0)
    const controller = cluster.controllers[0]!
    cluster.start(controller)
    const client = await cluster.connectClient()
    client.subscribe(changeTopic('default'), message => { gossip.push(message.data) })
    client.subscribe(presenceTopic('default'), message => { gossip.push(message.data) })
    await waitFor('a leader', () => cluster.leader() !== undefined)
    const dir = resolve('examples/charms/kv')
    const charm = await cluster.addCharm(controller, dir, 'local:kv-0')
    assert.ok(charm.added?.ok, JSON.stringify(charm.added))
    assert.ok((await cluster.submit({ type: 'deploy', application: 'kv', charm: 'local:kv-0', config: { 'port-base': await freePortRun(3) }, constraints: {}, numUnits: 3 }))?.ok)

    let last: SummaryReply | undefined
    const messages = new Set<string>()
    const describe = (): string => JSON.stringify(last) + '\n' + controller.output.slice(-3000)
    await waitFor('three machines with running agents, every unit active and idle', async () => {
      last = await cluster.summary(controller)
      if (last?.ok !== true) return false
      for (const machine of Object.values(last.machineStatus)) if (machine.message !== '') messages.add(`${machine.instance}: ${machine.message}`)
      return ['0', '1', '2'].every(m => last?.ok === true && last.machineStatus[m]?.instance === 'running' && last.machineStatus[m]?.agent === 'started') &&
        ['kv/0', 'kv/1', 'kv/2'].every(u => last?.ok === true && last.units[u]?.workload === 'active' && last.units[u]?.agent === 'idle')
    }, describe)
    assert.equal(Object.keys(last!.ok ? last!.machineStatus : {}).sort(), ['0', '1', '2'], 'one machine per unit')
    const seen = [...messages].join(' | ')
    assert.match(seen, /injected: no instance quota left/, `the allocate failure shows in status: ${seen}`)
    assert.match(seen, /injected: the deployment of local:machine-\d+ failed/, `the deploy failure shows in status: ${seen}`)
    for (const m of ['0', '1', '2']) assert.ok(processAlive(agentPid(machinesDir, m)!), `machine ${m}'s agent runs`)

    // Healthy agents stay started past the machine actors' down timeout: the controller's
    // presence feeds them (actors/provisioner/liveness-feed.ts). Without it every machine
    // read "agent not heard from for 4s" here (and for 1m0s a minute after a real deploy).
    const watchUntil = Date.now() + 3 * agentDownAfterMs
    while (Date.now() < watchUntil) {
      last = await cluster.summary(controller)
      assert.ok(last?.ok === true, describe())
      for (const m of ['0', '1', '2']) {
        const shown = last.ok ? last.machineStatus[m] : undefined
        assert.is(shown?.agent, 'started', `machine ${m}: ${describe()}`)
        assert.not.match(shown?.message ?? '', /not heard from/, `machine ${m} shows down while its agent runs: ${describe()}`)
      }
      await new Promise(resolve => setTimeout(resolve, 500))
    }

    // kill -9 of a machine agent: the watchdog starts it again; its unit carries on.
    const before = agentPid(machinesDir, '1')!
    process.kill(before, 'SIGKILL')
    await waitFor('machine 1\'s agent restarted', () => {
      const pid = agentPid(machinesDir, '1')
      return pid !== undefined && pid !== before && processAlive(pid)
    }, describe)
    await waitFor('kv/1 idle again', async () => {
      last = await cluster.summary(controller)
      return last?.ok === true && last.units['kv/1']?.agent === 'idle' && last.units['kv/1']?.workload === 'active'
    }, describe)

    // Removing the only unit of machine 2 removes the machine (Juju's remove-unit): its
    // agent marks it dead and exits, the provisioner stops the instance and its directory goes.
    const pid2 = agentPid(machinesDir, '2')!
    // Its stop hook stops kv-server; these are killed after as well, in case it did not.
    workloads2.push(...unitWorkloadPids(join(machinesDir, 'machine-2', 'agent')))
    assert.ok((await cluster.submit({ type: 'remove-unit', unit: 'kv/2' }))?.ok)
    await waitFor('kv/2 gone and machine 2 with it, its agent stopped and its directory removed', async () => {
      last = await cluster.summary(controller)
      return last?.ok === true && last.units['kv/2'] === undefined && !last.machines.includes('2') && !processAlive(pid2) && !existsSync(join(machinesDir, 'machine-2'))
    }, describe)
    assert.ok(last?.ok === true && last.machines.includes('0') && last.machines.includes('1'), 'the other machines stay')

    // The canary stayed on the controller.
    const leaks = filesUnder(machinesDir).filter(file => file.text.includes(canary)).map(file => file.path)
    assert.equal(leaks, [], 'no agent directory, bootstrap file or agent log holds the credential')
    assert.ok(gossip.length > 0, 'gossip was captured')
    assert.not.ok(gossip.some(data => Buffer.from(data).toString('latin1').includes(canary)), 'no gossip message holds the credential')
  } finally {
    // Provisioned agents are detached from the test: first the controller (and its
    // watchdog) goes, then the agents' process groups and their workloads, by pid.
    const controller = cluster.controllers[0]?.process
    if (controller !== undefined && controller.exitCode === null && controller.signalCode === null) {
      const exited = new Promise(resolve => { controller.once('exit', resolve) })
      controller.kill('SIGKILL')
      // Bounded, and a timer keeps the event loop alive while the exit is reported.
      await Promise.race([exited, new Promise(resolve => setTimeout(resolve, 10_000))])
    }
    for (const m of ['0', '1', '2']) {
      const pid = agentPid(machinesDir, m)
      if (pid !== undefined) try { process.kill(-pid, 'SIGKILL') } catch { /* gone */ }
      killUnitWorkloads(join(machinesDir, `machine-${m}`, 'agent'))
    }
    for (const pid of workloads2) try { process.kill(pid, 'SIGKILL') } catch { /* gone */ }
    await cluster.close()
  }
})

test.run()
