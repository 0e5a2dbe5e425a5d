/**
 * The CLI as a user drives it, in real processes: `cantrip bootstrap --ha 3` starts a
 * controller group and makes it current; `controllers` and `show-controller` see it and
 * its leader; bad input is refused with one line before anything starts;
 * `destroy-controller` leaves no process and no directory behind.
 */
import '../runtime/polyfill.ts'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { cantrip } from './support/cli-process.ts'
import { parse } from 'yaml'
import { processAlive } from './support/processes.ts'

test('bootstrap --ha 3, controllers, show-controller, destroy-controller; bad input refused', async () => {
  const home = mkdtempSync(join(tmpdir(), 'cantrip-home-'))
  let pids: number[] = []
  try {
    const bad = cantrip(home, ['bootstrap', '--ha', '2'])
    assert.is(bad.status, 1)
    assert.equal(bad.stderr.trim().split('\n'), ['ERROR cantrip bootstrap: expected --ha as an odd number from 1 to 7, got "2"'])
    assert.is(cantrip(home, ['bootstrap', '--hah', '3']).status, 2, 'an unknown flag is a usage error (exit 2, as Juju)')
    assert.not.ok(existsSync(join(home, 'controllers.yaml')), 'nothing was recorded')

    const boot = cantrip(home, ['bootstrap', '--ha', '3'])
    assert.is(boot.status, 0, boot.stderr)
    assert.match(boot.stdout, /Bootstrapped controller "local": 3 members/)
    const file = parse(cantrip(home, ['show-controller']).stdout) as { local: { raft: { leader: string }, members: Record<string, { pid: number, role: string }> } }
    const members = Object.values(file.local.members)
    pids = members.map(m => m.pid)
    assert.is(members.length, 3)
    assert.is(members.filter(m => m.role === 'leader').length, 1)
    assert.ok(pids.every(processAlive))
    assert.match(cantrip(home, ['controllers']).stdout, /^local\*\s+default\s+admin\s+superuser\s+localhost\/localhost\s+1\s+3\s+3\s+0\.1\.0$/m)

    const destroyed = cantrip(home, ['destroy-controller', 'local', '--no-prompt'])
    assert.is(destroyed.status, 0, destroyed.stderr)
    assert.ok(pids.every(pid => !processAlive(pid)), 'every controller process stopped')
    assert.not.ok(existsSync(join(home, 'controllers', 'local')), 'the controller directory is gone')
    assert.match(cantrip(home, ['controllers']).stdout, /No controllers registered/)
  } finally {
    for (const pid of pids) if (processAlive(pid)) process.kill(pid, 'SIGKILL')
    rmSync(home, { recursive: true, force: true })
  }
})

test.run()
