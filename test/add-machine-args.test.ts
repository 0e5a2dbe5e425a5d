/**
 * `cantrip add-machine` arguments, as Juju's add-machine takes them: an ssh placement
 * with an optional port, and `--private-key FILE` (juju/juju cmd/juju/machine/add.go:
 * "Path to the private key to use during the connection"). The key travels as its
 * absolute path; bad input is one line naming the command, what was expected and what
 * arrived.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { addMachineCommand } from '../agent/cli/commands/machines.ts'

const dir = mkdtempSync(join(tmpdir(), 'cantrip-add-machine-'))
const key = join(dir, 'id_ed25519')
writeFileSync(key, 'not really a key\n', { mode: 0o600 })
test.after(() => { rmSync(dir, { recursive: true, force: true }) })

test('an ssh placement with a port and a key file: the key by its absolute path', () => {
  assert.equal(addMachineCommand('ssh:root@10.1.2.3:2222', [], key), { type: 'add-machine', placement: 'ssh:root@10.1.2.3:2222', privateKey: key })
  const cwd = process.cwd()
  process.chdir(dir)
  try {
    assert.equal(addMachineCommand('ssh:root@h', [], 'id_ed25519').privateKey, key)
  } finally {
    process.chdir(cwd)
  }
})

test('bad input: one line each', () => {
  assert.throws(() => addMachineCommand(undefined, [], key), (e: Error) => e.message === `cantrip add-machine: expected --private-key only with an ssh:user@host placement, got "${key}"`)
  assert.throws(() => addMachineCommand('ssh:root@h', [], join(dir, 'missing')), (e: Error) => e.message === `cantrip add-machine: expected --private-key as a readable private key file, got "${join(dir, 'missing')}"`)
  assert.throws(() => addMachineCommand('root@h', []), (e: Error) => e.message === 'cantrip add-machine: expected a placement like ssh:user@host or ssh:user@host:port, got "root@h"')
})

test('--listen and --advertise: where the agent binds and what it gives out, checked here', () => {
  assert.equal(addMachineCommand('ssh:root@10.1.2.3', [], undefined, { listen: '0.0.0.0:17080', advertise: '203.0.113.7' }),
    { type: 'add-machine', placement: 'ssh:root@10.1.2.3', listen: '0.0.0.0:17080', advertise: '203.0.113.7' })
  assert.equal(addMachineCommand(undefined, [], undefined, { listen: '[fd00::5]:17080' }), { type: 'add-machine', listen: '[fd00::5]:17080' })
  assert.throws(() => addMachineCommand(undefined, [], undefined, { listen: '10.0.0.5:0x' }), (e: Error) => e.message === 'cantrip add-machine: expected --listen as HOST, HOST:PORT or [V6]:PORT (e.g. 10.0.0.7:17080), got "10.0.0.5:0x"')
  assert.throws(() => addMachineCommand(undefined, [], undefined, { advertise: '::' }), (e: Error) => e.message === 'cantrip add-machine: expected --advertise as an IPv4 or IPv6 address or a host name (not 0.0.0.0), got "::"')
})

test.run()
