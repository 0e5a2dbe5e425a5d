/**
 * Port picks for listeners started later: outside the kernel's ephemeral range (where an
 * outgoing connection of any process could take the port before the bind, and a held one
 * blocks it for good), claimed so that another picker on this host skips them, free at
 * pick time. Claims of dead processes count for nothing.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { connect, createServer, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { ephemeralPortRange, freePortRun, pickPortRange, portFree } from '../agent/free-port.ts'
import { claimPort, livePortClaims, portClaimsDir, releasePort } from '../agent/port-claims.ts'

const dir = mkdtempSync(join(tmpdir(), 'port-claims-'))

test('the pick range lies outside the ephemeral range: below it when there is room, else above', () => {
  assert.equal(pickPortRange({ low: 32768, high: 60999 }), { low: 10000, high: 32767 })
  assert.equal(pickPortRange({ low: 49152, high: 65535 }), { low: 10000, high: 49151 })
  assert.equal(pickPortRange({ low: 10500, high: 60999 }), { low: 61000, high: 65535 })
  assert.equal(pickPortRange({ low: 1024, high: 65535 }), { low: 10000, high: 65535 }, 'no room either side: anything above the registered ports')
})

test('an outgoing connection holds its local port against a later listener (why picks avoid that range)', async () => {
  const server = await listening(createServer(), 0)
  const client = await connected((server.address() as { port: number }).port)
  try {
    const port = client.localPort!
    const { low, high } = ephemeralPortRange()
    assert.ok(port >= low && port <= high, `local port ${port} in ${low}-${high}`)
    assert.is(await portFree(port, '0.0.0.0'), false)
  } finally {
    client.destroy()
    await new Promise(resolve => server.close(resolve))
  }
})

test('a run of ports: outside the ephemeral range, free on loopback and every address, claimed', async () => {
  const range = pickPortRange()
  const base = await freePortRun(3)
  for (let port = base; port < base + 3; port++) {
    assert.ok(port >= range.low && port <= range.high, `${port} in ${range.low}-${range.high}`)
    assert.ok(await portFree(port, '0.0.0.0'), `${port} free`)
    assert.ok(existsSync(join(portClaimsDir(), `${port}-${process.pid}`)), `${port} claimed`)
  }
})

test('picks in one process never repeat a port it claimed before', async () => {
  const picks = new Set<number>()
  for (let i = 0; i < 30; i++) picks.add(await freePortRun(1))
  assert.is(picks.size, 30)
})

test("another live process's claim is respected; a dead one's is removed and the port taken", async () => {
  const other = spawn('sleep', ['60'], { stdio: 'ignore' })
  await new Promise(resolve => other.once('spawn', resolve))
  try {
    writeFileSync(join(dir, `20001-${other.pid!}`), `${other.pid!}\n`)
    assert.is(claimPort(20001, dir), false)
    assert.equal(readdirSync(dir), [`20001-${other.pid!}`], 'the withdrawn claim leaves no file')
    assert.equal(livePortClaims(dir), [{ port: 20001, pid: other.pid! }])
  } finally {
    other.kill('SIGKILL')
    await new Promise(resolve => other.once('exit', resolve))
  }
  assert.is(claimPort(20001, dir), true)
  assert.equal(readdirSync(dir), [`20001-${process.pid}`])
  assert.is(claimPort(20001, dir), false, 'claimed already, by this process')
  releasePort(20001, dir)
  assert.equal(readdirSync(dir), [])
})

test('a run longer than the range is refused in one line', async () => {
  const { low, high } = pickPortRange()
  const span = high - low + 1
  try {
    await freePortRun(span + 1)
    assert.unreachable('accepted')
  } catch (error) {
    assert.is((error as Error).message, `free port: expected a run of 1 to ${span} ports, got ${span + 1}`)
  }
})

test.after(() => { rmSync(dir, { recursive: true, force: true }) })

async function listening (server: Server, port: number): Promise<Server> {
  return await new Promise((resolve, reject) => { server.once('error', reject).listen(port, '127.0.0.1', () => { resolve(server) }) })
}

async function connected (port: number): Promise<Socket> {
  return await new Promise((resolve, reject) => { const socket = connect(port, '127.0.0.1', () => { resolve(socket) }).once('error', reject) })
}

test.run()
