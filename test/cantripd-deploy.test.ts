/**
 * A deployment across real processes: three cantripd controllers and three machine agents
 * on loopback, talking over the libp2p mesh. The admin client uploads the kv and web
 * charms to the controllers' stores, adds them, deploys three units of each (one per
 * machine) and relates them; every unit must become active and idle, with every web unit
 * finding all three kv units through relation data exchanged over the mesh. Then the
 * Raft leader is killed with kill -9 while commands are being acknowledged: none is lost,
 * another controller serves, and the units still converge when a kv unit is removed.
 * Then a machine agent is killed with kill -9 in the middle of a hook and restarted, as
 * juju-semantics §2.11 says: while it is down presence shows its units' agents lost (with
 * since when and by whom); on restart the interrupted hook counts as failed, the unit
 * shows `hook failed: "install"`, the automatic retry runs it again and the unit carries
 * on, and the other units on that machine resume idle. Removing the applications then
 * runs the stop hooks on the machines.
 */
import '../runtime/polyfill.ts'
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { CantripdCluster, freePortRun, waitFor } from './support/cantripd-cluster.ts'
import { killProcessGroup, processAlive } from './support/processes.ts'
import { writeSlowCharm } from './support/slow-charm.ts'

test('3 controllers + 3 machine agents in real processes deploy related charms (3 units each) over the mesh', async () => {
  const cluster = new CantripdCluster()
  // Presence: heartbeat 1 s, suspect after 2 s, failed 2 s later: a lost agent shows
  // within about 5 s. (Heartbeats cost CPU in every agent all through the test: every 500 ms
  // sent twice the messages of every 1 s, for the same verdict.)
  cluster.extraArgs = ['--presence-ms', '1000,2000,2000']
  const marks = join(cluster.root, 'marks')
  writeSlowCharm(join(cluster.root, 'slow'), marks)
  try {
    await cluster.prepare(3, 3)
    for (const c of cluster.controllers) cluster.start(c)
    await cluster.connectClient()
    await waitFor('a leader', () => cluster.leader() !== undefined)
    for (const name of ['kv', 'web', 'slow']) {
      const dir = name === 'slow' ? join(cluster.root, 'slow') : resolve('examples/charms', name)
      // Into one controller's store; the others fetch it from there when a machine asks them.
      const charm = await cluster.addCharm(cluster.controllers[0]!, dir, `local:${name}-0`)
      assert.is(charm.stored, charm.hash)
      assert.ok(charm.added?.ok, JSON.stringify(charm.added))
    }
    for (const _ of cluster.machines) assert.ok((await cluster.submit({ type: 'add-machine' }))?.ok)
    // All machines share this host: each unit listens on port-base + its number.
    assert.ok((await cluster.submit({ type: 'deploy', application: 'kv', charm: 'local:kv-0', config: { 'port-base': await freePortRun(3) }, constraints: {}, numUnits: 3, placement: ['0', '1', '2'] }))?.ok)
    assert.ok((await cluster.submit({ type: 'deploy', application: 'web', charm: 'local:web-0', config: { 'port-base': await freePortRun(3) }, constraints: {}, numUnits: 3, placement: ['0', '1', '2'] }))?.ok)
    assert.ok((await cluster.submit({ type: 'integrate', a: 'web:backend', b: 'kv:website' }))?.ok)
    for (const m of cluster.machines) cluster.start(m)

    const describe = (): string => JSON.stringify(last) + '\n' + cluster.machines.map(m => m.output.slice(-1500)).join('\n---\n')
    let last: unknown
    await waitFor('every unit active and idle, each web unit with all three backends', async () => {
      const summary = await cluster.summary(cluster.leader() ?? cluster.controllers[0]!)
      last = summary
      if (summary === undefined || !summary.ok) return false
      const units = summary.units
      const all = ['kv/0', 'kv/1', 'kv/2', 'web/0', 'web/1', 'web/2']
      return all.every(u => units[u]?.workload === 'active' && units[u]?.agent === 'idle') &&
        ['web/0', 'web/1', 'web/2'].every(u => units[u]?.message === '3 backends')
    }, describe)

    // kill -9 of the Raft leader while commands are being acknowledged: none is lost, another
    // controller serves, and the units still converge (kv/2 leaves; web follows).
    const kill = await cluster.killLeaderUnderLoad(5)
    process.stdout.write(`  serving again ${Math.round(kill.servingMs)} ms after kill -9 of the leader\n`)
    assert.ok((await cluster.submit({ type: 'remove-unit', unit: 'kv/2' }))?.ok)
    await waitFor('kv/2 gone and every web unit with two backends', async () => {
      const summary = await cluster.summary(cluster.leader()!)
      last = summary
      return summary?.ok === true && summary.units['kv/2'] === undefined &&
        ['web/0', 'web/1', 'web/2'].every(u => summary.units[u]?.message === '2 backends' && summary.units[u]?.agent === 'idle')
    }, describe)
    const acknowledged = await kill.finish()
    cluster.start(kill.killed)
    await cluster.waitForMachinesEverywhere(acknowledged)

    // kill -9 of machine 1's agent in the middle of slow/0's first install.
    assert.ok((await cluster.submit({ type: 'deploy', application: 'slow', charm: 'local:slow-0', config: {}, constraints: {}, numUnits: 1, placement: ['1'] }))?.ok)
    await waitFor('the first install to be running', () => existsSync(join(marks, 'first')), describe)
    const orphan = Number(readFileSync(join(marks, 'first'), 'utf8'))
    const machine = cluster.machines[1]!
    machine.process!.kill('SIGKILL')
    await new Promise(resolve => machine.process!.once('exit', resolve))
    machine.process = undefined
    // The hook was not killed with the agent (it leads its own process group, as in Juju);
    // end it here, group and all (its `sleep` too).
    killProcessGroup(orphan)
    await waitFor('the orphaned hook to be gone', () => !processAlive(orphan))
    const onMachine1 = ['kv/1', 'web/1', 'slow/0']
    await waitFor('the agents of machine 1\'s units to show lost', async () => {
      const summary = await cluster.summary(cluster.leader()!)
      last = summary
      return summary?.ok === true && onMachine1.every(u => summary.units[u]?.agent === 'lost')
    }, describe)
    // Since when, and by whom: a controller that stopped hearing the machine agent.
    const lostSummary = await cluster.summary(cluster.leader()!)
    const lost = lostSummary?.ok === true ? lostSummary.units['kv/1'] : undefined
    assert.ok(lost?.agentSince !== undefined && lost.agentSince > Date.now() - 60_000, JSON.stringify(lost))
    assert.ok(cluster.controllers.some(c => c.id === lost?.agentHeardBy), JSON.stringify(lost))
    cluster.start(machine)
    const seen: string[] = []
    await waitFor('slow/0 active after the retry, and machine 1\'s other units idle again', async () => {
      const summary = await cluster.summary(cluster.leader()!)
      last = summary
      const unit = summary?.ok === true ? summary.units['slow/0'] : undefined
      if (unit !== undefined) seen.push(`${unit.agent}: ${unit.workload} ${unit.message}`)
      return summary?.ok === true && unit?.workload === 'active' && onMachine1.every(u => summary.units[u]?.agent === 'idle')
    }, () => seen.slice(-5).join(' | ') + '\n' + describe())
    assert.ok(seen.some(s => s.startsWith('error:')), `the crashed hook showed as failed: ${[...new Set(seen)].join(' | ')}`)
    assert.ok(existsSync(join(marks, 'installed')), 'the retried install completed')

    // Removing the applications runs the stop hooks on the machines: the workloads end.
    for (const application of ['slow', 'web', 'kv']) assert.ok((await cluster.submit({ type: 'remove-application', application }))?.ok)
    await waitFor('every unit gone', async () => {
      const summary = await cluster.summary(cluster.leader() ?? cluster.controllers[0]!)
      last = summary
      return summary?.ok === true && Object.keys(summary.units).length === 0
    }, describe)
  } finally {
    await cluster.close()
  }
})

test.run()
