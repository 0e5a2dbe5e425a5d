/**
 * The CLI's verdict on a controller group that cannot commit (agent/cli/group-health.ts):
 * a majority of the voters the newest answer names must answer; the line names how many
 * answered, how many are needed and which (c0, c1, … as `controllers` names them).
 * The real-process check is test/cli-ha-rejoin.test.ts.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { ControllerEntry } from '../agent/cli/cli-home.ts'
import type { ControllerStatus } from '../agent/cli/connection.ts'
import { memberName, quorumLostMessage } from '../agent/cli/group-health.ts'

const entry: ControllerEntry = {
  dir: '/x',
  provider: 'local',
  version: '0.1.0',
  controllers: ['pa', 'pb', 'pc'].map((peer, i) => ({ 'peer-id': peer, addresses: [`/ip4/127.0.0.1/tcp/${4000 + i}/p2p/${peer}`], pid: 100 + i, 'data-dir': `/x/c${i}` }))
}

function status (id: string, voters: string[], term = 3): ControllerStatus {
  return { ok: true, id, version: '0.1.0', role: 'follower', term, leader: '', commit: 1, applied: 1, snapshotIndex: 0, voters, progress: {} }
}

test('a majority answering: no verdict; fewer: one line with the numbers and names', () => {
  const voters = ['pa', 'pb', 'pc']
  assert.is(quorumLostMessage('demo', entry, [{ peer: 'pa', status: undefined }, { peer: 'pb', status: status('pb', voters) }, { peer: 'pc', status: status('pc', voters) }]), undefined)
  assert.is(quorumLostMessage('demo', entry, [{ peer: 'pa', status: status('pa', voters) }, { peer: 'pb', status: undefined }, { peer: 'pc', status: undefined }]),
    'controller group "demo": 1 of 3 controllers reachable, 2 needed to commit; reachable: c0')
  assert.is(quorumLostMessage('demo', entry, ['pa', 'pb', 'pc'].map(peer => ({ peer, status: undefined }))),
    'controller group "demo": 0 of 3 controllers reachable, 2 needed to commit; reachable: none')
})

test('the voters are the newest answer\'s Raft configuration, not the client\'s list', () => {
  // pc was removed from the group: two voters, one answers — one of two is not a majority.
  assert.is(quorumLostMessage('demo', entry, [{ peer: 'pa', status: status('pa', ['pa', 'pb'], 5) }, { peer: 'pb', status: undefined }, { peer: 'pc', status: status('pc', ['pa', 'pb', 'pc'], 2) }]),
    'controller group "demo": 1 of 2 controllers reachable, 2 needed to commit; reachable: c0')
  assert.is(memberName(entry, 'pc'), 'c2')
  assert.is(memberName(entry, '12D3KooWnotlisted12345678'), '12345678')
})

test.run()
