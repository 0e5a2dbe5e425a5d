/**
 * Agents carry their software version in presence heartbeats (for `cantrip version --all`
 * and its skew warning): every controller learns each member's version (a machine agent,
 * the controllers'); an agent of an older
 * release that sends none is still a member, with no version; a heartbeat whose version is
 * not a short version string is refused by the schema.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { limits } from '../runtime/limits.ts'
import { PresenceAgent, parsePresenceMessage, presenceVersionLengthMax } from '../runtime/presence/presence-agent.ts'
import { PresenceWorld } from '../sim/presence-world.ts'

const test = suite('presence version')
const interval = limits.presenceHeartbeatIntervalMsDefault

test('every controller learns the version each member reports, a machine agent the controllers\'; one that reports none has none', () => {
  const world = new PresenceWorld({ seed: 7, peers: 3, controllers: 2, agent: { version: '0.1.0' } })
  const skewed = new PresenceAgent({ transport: world.network.transport('peer-new'), clock: world.clock }, { modelUuid: 'model-1', role: 'machine', version: '9.9.9-rc.1' })
  const old = new PresenceAgent({ transport: world.network.transport('peer-old'), clock: world.clock }, { modelUuid: 'model-1', role: 'machine' })
  skewed.start()
  old.start()
  world.advance(interval * 5)
  for (const observer of ['peer-0', 'peer-1']) {
    const agent = world.agent(observer)
    assert.is(agent.member('peer-old')?.state, 'alive')
    assert.equal(['peer-0', 'peer-1', 'peer-2', 'peer-new', 'peer-old'].map(id => agent.versionOf(id)),
      ['0.1.0', '0.1.0', '0.1.0', '9.9.9-rc.1', undefined])
  }
  assert.equal(['peer-0', 'peer-1', 'peer-2', 'peer-new'].map(id => world.agent('peer-2').versionOf(id)), ['0.1.0', '0.1.0', '0.1.0', undefined])
  assert.is(skewed.versionOf('peer-1'), '0.1.0')
  skewed.stop()
  old.stop()
})

test('the schema takes a heartbeat with or without a version, and refuses a bad one', () => {
  const heartbeat = { v: 1, kind: 'heartbeat', sender: 'a', role: 'machine', incarnation: 1, digest: [] }
  assert.equal(parsePresenceMessage(heartbeat), heartbeat)
  assert.equal(parsePresenceMessage({ ...heartbeat, version: '1.2.3+build.4' }), { ...heartbeat, version: '1.2.3+build.4' })
  for (const version of ['', 'x'.repeat(presenceVersionLengthMax + 1), '1.0 beta', 7, null]) {
    assert.is(parsePresenceMessage({ ...heartbeat, version }), undefined, `version ${JSON.stringify(version)}`)
  }
  assert.is(parsePresenceMessage({ v: 1, kind: 'leave', sender: 'a', role: 'machine', incarnation: 1, version: '1.0.0' }), undefined, 'a leave carries no version')
  const world = new PresenceWorld({ seed: 1, peers: 1 })
  assert.throws(() => new PresenceAgent({ transport: world.network.transport('z'), clock: world.clock }, { modelUuid: 'm', role: 'machine', version: 'no spaces allowed' }), /presence: version must be/)
})

test.run()
