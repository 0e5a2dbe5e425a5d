/**
 * Three cantripd controller processes on loopback: Raft over the libp2p mesh (private
 * network key, each agent's own identity), LevelDB in each data dir. A client in this
 * process keeps submitting commands; kill -9 of the Raft leader loses none that were
 * acknowledged, another controller leads and serves soon after, and when the killed one
 * comes back from its directory every controller holds every acknowledged command.
 */
import '../runtime/polyfill.ts'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { controllerApiProtocol, type SummaryReply } from '../actors/controller/controller-api.ts'
import { controllerProposeProtocol } from '../actors/controller/controller-node.ts'
import { Libp2pTransport } from '../agent/mesh/libp2p-transport.ts'
import { generateNetworkKey, writeNetworkKey } from '../agent/mesh/network-key.ts'
import { generatePeerKey, peerIdOfKey, writePeerKey } from '../agent/mesh/peer-identity.ts'
import { decode, encode } from '../runtime/codec.ts'
import type { CommandResult } from '../runtime/model/model-types.ts'

const waitMsMax = 30_000
const admin = { kind: 'user', name: 'admin' } as const

interface Controller {
  id: string
  dir: string
  port: number
  process: ChildProcess | undefined
  role: string
  term: number
  output: string
}

async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => { resolve(typeof address === 'object' && address !== null ? address.port : 0) })
    })
  })
}

async function waitFor (what: string, condition: () => boolean): Promise<void> {
  const until = performance.now() + waitMsMax
  while (!condition()) {
    if (performance.now() > until) throw new Error(`cantripd test: timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}

test('three controllers in real processes: kill -9 of the leader loses no acknowledged command', async () => {
  const root = mkdtempSync(join(tmpdir(), 'cantripd-'))
  const keyFile = join(root, 'swarm.key')
  const networkKey = generateNetworkKey()
  await writeNetworkKey(keyFile, networkKey)
  const controllers: Controller[] = []
  for (let i = 0; i < 3; i++) {
    const dir = join(root, `c${i}`)
    mkdirSync(dir)
    const key = await generatePeerKey()
    await writePeerKey(join(dir, 'agent.key'), key)
    controllers.push({ id: peerIdOfKey(key), dir, port: await freePort(), process: undefined, role: '', term: 0, output: '' })
  }
  const address = (c: Controller): string => `/ip4/127.0.0.1/tcp/${c.port}/p2p/${c.id}`
  const clientKey = await generatePeerKey()
  const start = (c: Controller): void => {
    const args = ['--import', 'tsx', 'agent/cantripd.ts', '--role', 'controller', '--data-dir', c.dir, '--network-key', keyFile,
      '--listen', `/ip4/127.0.0.1/tcp/${c.port}`, '--controllers', controllers.map(x => x.id).join(','),
      '--admin', peerIdOfKey(clientKey), ...controllers.filter(x => x !== c).flatMap(x => ['--seed', address(x)])]
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    c.process = child
    c.role = ''
    let pending = ''
    child.stdout!.on('data', chunk => {
      pending += String(chunk)
      const lines = pending.split('\n')
      pending = lines.pop()!
      for (const line of lines) {
        c.output += line + '\n'
        const event = JSON.parse(line) as { event: string, role?: string, term?: number }
        if (event.event === 'role') { c.role = event.role!; c.term = event.term! }
      }
    })
    child.stderr!.on('data', chunk => { c.output += String(chunk) })
  }
  const leader = (): Controller | undefined => controllers.filter(c => c.process !== undefined && c.role === 'leader').sort((a, b) => b.term - a.term)[0]
  let client: Libp2pTransport | undefined
  try {
    for (const c of controllers) start(c)
    client = await Libp2pTransport.create({ privateKey: clientKey, networkKey, bootstrap: controllers.map(address) })
    await waitFor('a leader', () => leader() !== undefined)

    // Submit through whichever controller leads; a retry keeps the request id.
    /** The machine ids acknowledged commands created. */
    const acknowledged: string[] = []
    const submit = async (requestId: string): Promise<string | undefined> => {
      for (let attempt = 0; attempt < 20; attempt++) {
        const target = leader() ?? controllers[attempt % 3]!
        try {
          const reply = decode(await client!.request(target.id, controllerProposeProtocol, encode({ type: 'add-machine', requestId, proposer: admin }, 'test'), { timeoutMs: 3_000 }), 'test') as { ok: boolean, result?: CommandResult }
          if (reply.ok && reply.result?.ok === true) return reply.result.machines?.[0]
        } catch {
          // Not reachable (killed) or timed out: try again.
        }
        await new Promise(resolve => setTimeout(resolve, 100))
      }
      return undefined
    }
    let running = true
    let n = 0
    const load = (async () => {
      while (running) {
        const machine = await submit(`m${n++}`)
        if (machine !== undefined) acknowledged.push(machine)
      }
    })()
    await waitFor('10 acknowledged commands', () => acknowledged.length >= 10)

    const old = leader()!
    old.process!.kill('SIGKILL')
    const killedAt = performance.now()
    const ackedBefore = acknowledged.length
    old.process = undefined
    await waitFor('a new leader', () => leader() !== undefined && leader() !== old)
    const electedMs = performance.now() - killedAt
    await waitFor('a command acknowledged by the new leader', () => acknowledged.length > ackedBefore + 1)
    const servingMs = performance.now() - killedAt
    process.stdout.write(`  new leader elected ${Math.round(electedMs)} ms and serving ${Math.round(servingMs)} ms after kill -9\n`)
    assert.ok(servingMs < 5_000, `serving again after ${Math.round(servingMs)} ms`)
    await waitFor('more commands', () => acknowledged.length >= ackedBefore + 10)
    running = false
    await load

    // The killed controller comes back from its directory; every one holds every acknowledged command.
    start(old)
    for (const c of controllers) {
      let summary: SummaryReply | undefined
      await waitFor(`a summary from ${c.id.slice(-6)} with every acknowledged command`, () => {
        void client!.request(c.id, controllerApiProtocol, encode({ op: 'model-summary' }, 'test'), { timeoutMs: 2_000 })
          .then(bytes => { summary = decode(bytes, 'test') as SummaryReply }, () => {})
        return summary !== undefined && summary.ok && acknowledged.every(id => summary!.ok && summary!.machines.includes(id))
      })
    }
  } finally {
    await client?.stop()
    for (const c of controllers) {
      if (c.process !== undefined && c.process.exitCode === null) c.process.kill('SIGKILL')
    }
    rmSync(root, { recursive: true, force: true })
  }
})

test.run()
