/**
 * The controller's presence fed to the provisioner's machine actors
 * (actors/provisioner/liveness-feed.ts) and read for the API (actors/controller/
 * machine-liveness.ts): one heartbeat per machine per round at the time presence heard
 * it, none for an agent not heard again or no longer alive, and a machine actor that is
 * fed stays started past its down timeout while one that is not goes down on time.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createActor, SimulatedClock } from 'xstate'
import { machineLiveness } from '../actors/controller/machine-liveness.ts'
import { machineMachine } from '../actors/machine/machine-machine.ts'
import { machineStatus } from '../actors/machine/machine-status.ts'
import { LivenessFeed, type AgentHeard } from '../actors/provisioner/liveness-feed.ts'
import { limits } from '../runtime/limits.ts'
import type { Member } from '../runtime/presence/membership.ts'

function startedMachine (clock: SimulatedClock, id: string) {
  const actor = createActor(machineMachine, { clock, input: { machineId: id, now: clock.now(), instance: { instanceId: `i-${id}`, addresses: [] } } })
  actor.start()
  actor.send({ type: 'agent.started', at: clock.now() })
  return actor
}

test('feed: one heartbeat per machine per round, at the heard time; none when not heard again or not alive', () => {
  const clock = new SimulatedClock()
  clock.set(1_000)
  const heard = new Map<string, AgentHeard>([['0', { lastHeardAt: 900, alive: true }], ['1', { lastHeardAt: 950, alive: false }]])
  const machines = new Map([['0', startedMachine(clock, '0')], ['1', startedMachine(clock, '1')]])
  const feed = new LivenessFeed({ clock, heard: id => heard.get(id), machines: () => machines, intervalMs: limits.provisionerLivenessFeedIntervalMs })
  feed.feed()
  assert.is(feed.sent, 1, 'machine 1 is not believed alive')
  feed.feed()
  assert.is(feed.sent, 1, 'machine 0 was not heard again')
  heard.set('0', { lastHeardAt: 1_900, alive: true })
  feed.feed()
  assert.is(feed.sent, 2)
  assert.is(machines.get('0')!.getSnapshot().context.agentLastHeardAt, 1_900)
  assert.is(feed.startedAt('0', 5_000), 1_900, 'a new leader starts from when it heard the agent')
  assert.is(feed.startedAt('2', 5_000), 5_000, 'an agent it never heard gets the whole timeout')
})

test('feed: a fed machine stays started past the down timeout; one whose agent falls silent shows down on time', () => {
  const clock = new SimulatedClock()
  clock.set(10_000)
  const silentFrom = 10_000 + 2 * limits.machineAgentDownAfterMs
  const machines = new Map([['0', startedMachine(clock, '0')], ['1', startedMachine(clock, '1')]])
  // Machine 0's agent is heard every second throughout; machine 1's until silentFrom.
  const heard = (id: string): AgentHeard => ({ lastHeardAt: id === '1' ? Math.min(clock.now(), silentFrom) : clock.now(), alive: true })
  const feed = new LivenessFeed({ clock, heard, machines: () => machines, intervalMs: limits.provisionerLivenessFeedIntervalMs })
  feed.start()
  for (let t = 0; t < 4 * limits.machineAgentDownAfterMs; t += 1_000) {
    clock.increment(1_000)
    assert.is(machineStatus(machines.get('0')!.getSnapshot()).agentStatus, 'started', `machine 0 at ${clock.now()}`)
    const shown = machineStatus(machines.get('1')!.getSnapshot())
    const downBy = silentFrom + limits.machineAgentDownAfterMs + limits.provisionerLivenessFeedIntervalMs
    if (clock.now() < silentFrom + limits.machineAgentDownAfterMs) assert.is(shown.agentStatus, 'started', `machine 1 at ${clock.now()}`)
    if (clock.now() >= downBy) assert.is(shown.message, 'agent not heard from for 1m0s', `machine 1 at ${clock.now()}`)
  }
  feed.stop()
})

test('machine liveness: the API and the feed read one table alike', () => {
  const member = (state: Member['state']): Member => ({ id: 'p', role: 'machine', incarnation: 1, state, lastHeardAt: 500, heardBy: 'c0', since: 400 })
  const table = new Map<string, Member>([['p-alive', { ...member('alive'), id: 'p-alive' }], ['p-suspect', { ...member('suspect'), id: 'p-suspect' }], ['p-failed', { ...member('failed'), id: 'p-failed' }]])
  const { presenceOf, heard } = machineLiveness({ self: 'c0', peerOf: m => m === 'self' ? 'c0' : m === 'none' ? undefined : `p-${m}`, member: peer => table.get(peer), now: () => 1_000 })
  assert.equal(presenceOf('alive'), { status: 'alive', since: 400, heardBy: 'c0' })
  assert.equal(heard('alive'), { lastHeardAt: 500, alive: true })
  assert.is(presenceOf('suspect').status, 'alive')
  assert.equal(heard('suspect'), { lastHeardAt: 500, alive: true })
  assert.is(presenceOf('failed').status, 'lost')
  assert.equal(heard('failed'), { lastHeardAt: 500, alive: false })
  assert.is(presenceOf('unknown').status, 'lost')
  assert.is(heard('unknown'), undefined)
  assert.is(heard('none'), undefined)
  assert.equal(presenceOf('self'), { status: 'alive', since: undefined, heardBy: 'c0' })
  assert.equal(heard('self'), { lastHeardAt: 1_000, alive: true })
})

test.run()
