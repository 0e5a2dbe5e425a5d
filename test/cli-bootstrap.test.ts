/**
 * The CLI as a user drives it, in real processes: `cantrip bootstrap --ha 3` starts a
 * controller group and makes it current; `controllers` and `show-controller` see it and
 * its leader; bad input is refused with one line before anything starts;
 * `destroy-controller` leaves no process and no directory behind. A bootstrap that fails
 * after starting its controllers cleans them up, as Juju's does, unless `--keep-broken`.
 */
import '../runtime/polyfill.ts'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { cantrip, removeHome } from './support/cli-process.ts'
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
    removeHome(home)
  }
})

test('a bootstrap whose controllers cannot listen says why and cleans up; --keep-broken keeps them', async () => {
  const home = mkdtempSync(join(tmpdir(), 'cantrip-home-'))
  // The port the controller is told to listen on is already taken: cantripd exits at start.
  const taken = createServer()
  await new Promise<void>(resolve => taken.listen(0, '127.0.0.1', resolve))
  const port = (taken.address() as AddressInfo).port
  let pids: number[] = []
  try {
    const failed = cantrip(home, ['bootstrap', '--listen', `127.0.0.1:${port}`])
    assert.is(failed.status, 1)
    const lines = failed.stderr.trim().split('\n')
    assert.ok(lines.includes('cantrip bootstrap: cleaning up after failed bootstrap (--keep-broken keeps the controllers and their logs)'), failed.stderr)
    assert.match(lines.at(-1) ?? '', new RegExp(`^ERROR cantrip bootstrap: every controller exited before electing a leader; c0's log ends: .*EADDRINUSE.*127\\.0\\.0\\.1:${port}$`))
    assert.not.ok(existsSync(join(home, 'controllers', 'local')), 'the controller directory is gone')
    assert.equal(parse(readFileSync(join(home, 'controllers.yaml'), 'utf8')), { 'current-controller': null, controllers: {} })

    const kept = cantrip(home, ['bootstrap', '--keep-broken', '--listen', `127.0.0.1:${port}`])
    assert.is(kept.status, 1)
    assert.not.match(kept.stderr, /cleaning up/)
    const file = parse(readFileSync(join(home, 'controllers.yaml'), 'utf8')) as { controllers: { local: { controllers: Array<{ pid: number }> } } }
    pids = file.controllers.local.controllers.map(member => member.pid)
    assert.match(readFileSync(join(home, 'controllers', 'local', 'c0', 'cantripd.log'), 'utf8'), /EADDRINUSE/)
    const destroyed = cantrip(home, ['destroy-controller', 'local', '--no-prompt'])
    assert.is(destroyed.status, 0, destroyed.stderr)
    assert.not.ok(existsSync(join(home, 'controllers', 'local')))
  } finally {
    taken.close()
    for (const pid of pids) if (processAlive(pid)) process.kill(pid, 'SIGKILL')
    removeHome(home)
  }
})

test.run()
