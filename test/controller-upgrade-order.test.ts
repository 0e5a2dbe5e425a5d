/**
 * The order `upgrade-controller` restarts the members in (agent/cli/controller-upgrade.ts):
 * followers first and the leader last, so the group holds one election, not one per
 * member; a member already on the version is skipped (a second run resumes an upgrade
 * that stopped half-way). The restarts themselves run in test/cli-upgrade-controller.test.ts.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { ControllerEntry, ControllerMember } from '../agent/cli/cli-home.ts'
import type { ControllerStatus } from '../agent/cli/connection.ts'
import { upgradeOrder } from '../agent/cli/controller-upgrade.ts'
import type { GroupStatus } from '../agent/cli/group-status.ts'

const member = (n: number): ControllerMember => ({ 'peer-id': `peer-${n}`, addresses: [], pid: 100 + n, 'data-dir': `/d/c${n}` })
const entry: ControllerEntry = { dir: '/d', controllers: [member(0), member(1), member(2)], provider: 'local', version: '0.1.0' }

function status (n: number, version: string, role: string): ControllerStatus {
  return { ok: true, id: `peer-${n}`, version, role, term: 2, leader: 'peer-0', commit: 9, applied: 9, snapshotIndex: 0, voters: ['peer-0', 'peer-1', 'peer-2'], progress: {} }
}

function group (versions: readonly string[]): GroupStatus {
  const members = versions.map((version, n) => ({ peer: `peer-${n}`, status: status(n, version, n === 0 ? 'leader' : 'follower'), error: undefined }))
  return { members, leader: members[0]!.status }
}

test('followers first, the leader last', () => {
  assert.equal(upgradeOrder(entry, group(['0.1.0', '0.1.0', '0.1.0']), '0.1.1').map(m => m['data-dir']), ['/d/c1', '/d/c2', '/d/c0'])
})

test('members already on the version are skipped; none left is nothing to do', () => {
  assert.equal(upgradeOrder(entry, group(['0.1.0', '0.1.1', '0.1.0']), '0.1.1').map(m => m['data-dir']), ['/d/c2', '/d/c0'])
  assert.equal(upgradeOrder(entry, group(['0.1.1', '0.1.1', '0.1.1']), '0.1.1'), [])
})

test.run()
