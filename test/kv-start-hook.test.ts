/**
 * The example kv charm's `start` hook, run by bash with recording stand-ins for the hook
 * tools: it starts kv-server and reports active once /health answers, and when the server
 * cannot listen (its port taken) it fails saying so in its log — which port, and the
 * workload's own EADDRINUSE line — so a failure under load can be told from a slow start.
 * (A failed start hook is retried by the uniter, as Juju's does: worker/uniter/.)
 */
import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { freePortRun } from '../agent/free-port.ts'
import { processAlive } from './support/processes.ts'

const root = mkdtempSync(join(tmpdir(), 'kv-start-hook-'))

/** A unit dir with the kv charm linked in and hook tools that record their calls in `calls`. */
function unitDir (name: string, portBase: number): { charm: string, bin: string, calls: string, state: string } {
  const unit = join(root, name)
  const bin = join(unit, 'bin')
  mkdirSync(bin, { recursive: true })
  const charm = join(unit, 'charm')
  symlinkSync(resolve('examples/charms/kv'), charm)
  const calls = join(unit, 'calls')
  const tool = (toolName: string, body: string): void => {
    writeFileSync(join(bin, toolName), `#!/bin/bash\necho "${toolName} $*" >>'${calls}'\n${body}\n`)
    chmodSync(join(bin, toolName), 0o755)
  }
  tool('config-get', `case "$1" in port) echo 0 ;; port-base) echo ${portBase} ;; log-level) echo info ;; esac`)
  for (const quiet of ['juju-log', 'status-set', 'open-port', 'close-port', 'state-set', 'leader-set', 'application-version-set']) tool(quiet, '')
  for (const empty of ['leader-get', 'state-get']) tool(empty, 'echo')
  tool('is-leader', 'echo False')
  tool('unit-get', 'echo 127.0.0.1')
  return { charm, bin, calls, state: join(unit, 'state') }
}

function runStart (unit: { charm: string, bin: string }): number {
  const run = spawnSync('bash', [join(unit.charm, 'hooks', 'start')], {
    env: { ...process.env, PATH: `${unit.bin}:${process.env['PATH'] ?? ''}`, CHARM_DIR: unit.charm, JUJU_UNIT_NAME: 'kv/0' }, encoding: 'utf8', timeout: 120_000
  })
  return run.status ?? -1
}

function killServer (state: string): void {
  try {
    const pid = Number(readFileSync(join(state, 'kv-server.pid'), 'utf8').trim())
    if (processAlive(pid)) process.kill(pid, 'SIGKILL')
  } catch { /* never started */ }
}

test('start: kv-server answers /health, the port is opened and the unit is active', async () => {
  const port = await freePortRun(1)
  const unit = unitDir('ok', port)
  try {
    assert.is(runStart(unit), 0, readFileSync(unit.calls, 'utf8'))
    const calls = readFileSync(unit.calls, 'utf8').split('\n')
    assert.ok(calls.includes(`juju-log kv-server healthy at http://127.0.0.1:${port}`), calls.join('\n'))
    assert.ok(calls.includes(`open-port ${port}/tcp`))
    assert.is(calls.filter(c => c.startsWith('status-set')).at(-1), `status-set active serving on ${port}`)
  } finally {
    killServer(unit.state)
  }
})

test('start with its port taken: fails, and its log names the port and the workload\'s EADDRINUSE', async () => {
  const port = await freePortRun(1)
  const taken: Server = createServer()
  await new Promise<void>(resolve => taken.listen(port, '0.0.0.0', resolve))
  const unit = unitDir('taken', port)
  try {
    assert.is(runStart(unit), 1)
    const calls = readFileSync(unit.calls, 'utf8').split('\n')
    const error = calls.filter(c => c.startsWith('juju-log -l ERROR'))
    assert.equal(error, [`juju-log -l ERROR kv-server exited before answering on port ${port} (a port taken shows as EADDRINUSE): ` +
      `kv-server: cannot listen on 0.0.0.0:${port}: listen EADDRINUSE: address already in use 0.0.0.0:${port} `])
    assert.not.ok(calls.some(c => c.startsWith('open-port') || c.startsWith('status-set active')), 'no port opened, not active')
  } finally {
    killServer(unit.state)
    await new Promise(resolve => taken.close(resolve))
  }
})

// Two deployments on one host (two demos, one per clone) once shared kv's ports: the second
// kv-server could not listen, but its start hook's /health look was answered by the first
// one's server and it reported active, until the first deployment went away.
test('start with its port held by another kv-server that answers /health: fails, not active', async () => {
  const port = await freePortRun(1)
  // In a process of its own: the hook runs under spawnSync, which blocks this one.
  const stranger = spawn(process.execPath, ['-e', `require('node:http').createServer((q, s) => { s.writeHead(200, { 'content-type': 'application/json' }); s.end('{"status":"ok"}\\n') }).listen(${port}, '0.0.0.0', () => console.log('ready'))`], { stdio: ['ignore', 'pipe', 'inherit'] })
  const unit = unitDir('stranger', port)
  try {
    await new Promise<void>((resolve, reject) => {
      stranger.stdout.once('data', () => { resolve() })
      stranger.once('exit', code => { reject(new Error(`the stranger exited (${String(code)}) before listening`)) })
    })
    assert.is(runStart(unit), 1)
    const calls = readFileSync(unit.calls, 'utf8').split('\n')
    assert.ok(calls.some(c => c.startsWith(`juju-log -l ERROR kv-server exited before answering on port ${port}`) && c.includes('EADDRINUSE')), calls.join('\n'))
    assert.not.ok(calls.some(c => c.startsWith('open-port') || c.startsWith('status-set active')), 'no port opened, not active')
  } finally {
    killServer(unit.state)
    stranger.kill('SIGKILL')
  }
})

test.after(() => { rmSync(root, { recursive: true, force: true }) })

test.run()
