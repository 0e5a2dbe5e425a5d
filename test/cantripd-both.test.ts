/**
 * `cantripd --role both`: one process that is a controller and the agent of machine 0 (as
 * Juju's bootstrap machine is), beside a plain machine agent for machine 1. Both machines
 * report their agents `started` (the machiner), a unit on each becomes active. Removing
 * machine 1's only unit removes the machine too (as Juju): its agent marks it dead, says
 * `machine-done` and exits 0, and the machine leaves the model. Removing machine 0's only
 * unit leaves machine 0, a controller's (Juju keeps a JobManageModel machine).
 */
import '../runtime/polyfill.ts'
import { resolve } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { SummaryReply } from '../actors/controller/controller-api.ts'
import { CantripdCluster, freePortRun, waitFor } from './support/cantripd-cluster.ts'

test('role both: a controller that is also machine 0 outlives its last unit; a machine agent ends when its last unit goes', async () => {
  const cluster = new CantripdCluster()
  try {
    await cluster.prepare(1, 1, { both: 1 })
    const controller = cluster.controllers[0]!
    const machine1 = cluster.machines[0]!
    assert.is(controller.machineId, '0')
    assert.is(machine1.machineId, '1')
    cluster.start(controller)
    await cluster.connectClient()
    await waitFor('a leader', () => cluster.leader() !== undefined)
    const dir = resolve('examples/charms/kv')
    const charm = await cluster.addCharm(controller, dir, 'local:kv-0')
    assert.ok(charm.added?.ok, JSON.stringify(charm.added))
    for (let i = 0; i < 2; i++) assert.ok((await cluster.submit({ type: 'add-machine' }))?.ok)
    assert.ok((await cluster.submit({ type: 'deploy', application: 'kv', charm: 'local:kv-0', config: { 'port-base': await freePortRun(2) }, constraints: {}, numUnits: 2, placement: ['0', '1'] }))?.ok)
    cluster.start(machine1)

    let last: SummaryReply | undefined
    const describe = (): string => JSON.stringify(last) + '\n' + [controller, machine1].map(a => a.output.slice(-1500)).join('\n---\n')
    await waitFor('both units active and idle, both machine agents started', async () => {
      last = await cluster.summary(controller)
      if (last?.ok !== true) return false
      const units = last.units
      return ['kv/0', 'kv/1'].every(u => units[u]?.workload === 'active' && units[u]?.agent === 'idle') &&
        last.machineStatus['0']?.agent === 'started' && last.machineStatus['1']?.agent === 'started'
    }, describe)

    const exited = new Promise<number | null>(resolve => { machine1.process!.once('exit', code => { resolve(code) }) })
    assert.ok((await cluster.submit({ type: 'remove-unit', unit: 'kv/1' }))?.ok)
    await waitFor('kv/1 gone and machine 1 with it', async () => {
      last = await cluster.summary(controller)
      return last?.ok === true && last.units['kv/1'] === undefined && !last.machines.includes('1')
    }, describe)
    assert.is(await exited, 0, describe())
    machine1.process = undefined
    assert.match(machine1.output, /"event":"machine-done","machine":"1","outcome":"dead"/)
    // Machine 0, in the controller's process, carries on without its unit.
    assert.ok((await cluster.submit({ type: 'remove-unit', unit: 'kv/0' }))?.ok)
    await waitFor('kv/0 gone', async () => {
      last = await cluster.summary(controller)
      return last?.ok === true && last.units['kv/0'] === undefined
    }, describe)
    last = await cluster.summary(controller)
    assert.ok(last?.ok === true && last.machines.includes('0') && last.machineStatus['0']?.life === 'alive' && last.machineStatus['0']?.agent === 'started', describe())
  } finally {
    await cluster.close()
  }
})

test.run()
