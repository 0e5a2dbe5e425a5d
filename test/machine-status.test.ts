import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { initialTransition, transition } from 'xstate'
import type { SnapshotFrom } from 'xstate'
import { machineMachine } from '../actors/machine/machine-machine.ts'
import { machineStatus } from '../actors/machine/machine-status.ts'
import type { MachineStatusSource } from '../actors/machine/machine-status.ts'
import type { MachineEvent } from '../actors/machine/machine-types.ts'

type Snapshot = SnapshotFrom<typeof machineMachine>

function run (snapshot: Snapshot, ...events: Array<{ type: string, [key: string]: unknown }>): Snapshot {
  return events.reduce<Snapshot>((current, event) => transition(machineMachine, current, event as MachineEvent)[0], snapshot)
}

const fresh = (): Snapshot => initialTransition(machineMachine, { machineId: '0/lxd/2', now: 0, seed: 1 })[0]
const provisioned = { type: 'xstate.done.actor.startInstance', output: { instanceId: 'juju-0-lxd-2', addresses: [] } }

test('status reads a persisted snapshot as well as a live one', () => {
  const live = run(fresh(), { type: 'machine.provision' }, provisioned, { type: 'agent.started', at: 500 })
  const persisted = JSON.parse(JSON.stringify(live)) as MachineStatusSource
  assert.equal(machineStatus(persisted), machineStatus(live))
  assert.equal(machineStatus(persisted), { agentStatus: 'started', instanceStatus: 'running', message: '', since: 500 })
})

test('each lifecycle stage maps to Juju\'s machine State and instance status', () => {
  const rows: Array<[string, Snapshot]> = []
  let s = fresh()
  rows.push(['pending', s])
  s = run(s, { type: 'machine.provision' }); rows.push(['provisioning', s])
  s = run(s, provisioned); rows.push(['provisioned', s])
  s = run(s, { type: 'agent.started', at: 1 }); rows.push(['started', s])
  s = run(s, { type: 'machine.destroy' }); rows.push(['stopping', s])
  s = run(s, { type: 'xstate.done.actor.stopInstance' }); rows.push(['dead', s])
  const table = rows.map(([name, snapshot]) => {
    const status = machineStatus(snapshot)
    return `${name}: ${status.agentStatus} / ${status.instanceStatus} / ${status.message}`
  })
  assert.equal(table, [
    'pending: pending / pending / ',
    'provisioning: pending / allocating / starting',
    'provisioned: pending / running / running',
    'started: started / running / ',
    'stopping: started / running / stopping instance "juju-0-lxd-2"',
    'dead: stopped / stopped / '
  ])
})

test('back-off messages use Go durations as Juju prints them', () => {
  let s = run(fresh(), { type: 'machine.provision' })
  // Walk to the fifth failure, whose nominal delay (160 s) prints in minutes.
  for (let i = 0; i < 4; i++) {
    s = run(s, { type: 'xstate.error.actor.startInstance', error: new Error('boom') },
      { type: 'xstate.after.retryDelay.machine.lifecycle.provisioningBackoff' })
  }
  s = run(s, { type: 'xstate.error.actor.startInstance', error: new Error('boom') })
  const delay = s.context.retryDelayMs
  const minutes = Math.floor(delay / 60_000)
  assert.ok(minutes >= 2)
  assert.is(machineStatus(s).message,
    `failed to start machine 0/lxd/2 (boom), retrying in ${minutes}m${(delay - minutes * 60_000) / 1000}s (5 more attempts)`)
})

test.run()
