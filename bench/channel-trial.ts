import '../runtime/polyfill.ts'
import { spawn } from 'node:child_process'
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { createServer, connect, type Socket } from 'node:net'
import { createInterface } from 'node:readline'
import { Libp2pTransport } from '../agent/mesh/libp2p-transport.ts'
import { generatePeerKey } from '../agent/mesh/peer-identity.ts'
import { cpuMs } from './child-processes.ts'
import { pollUntil, round } from './stats.ts'

/**
 * `node --import tsx bench/channel-trial.ts [ROUNDS] [libp2p|sealed|plain…]`: what one request and its answer
 * cost in CPU at each end when the two ends are separate processes (as two controllers
 * are), over the mesh's request channel (libp2p: TCP, Noise, yamux, the channel's frames
 * and envelopes) against a bare TCP connection carrying length-prefixed
 * ChaCha20-Poly1305 frames handled on 'data' events, and against bare TCP without a
 * cipher (the kernel's share). Sequential, 200-byte payloads, after a warm-up; each
 * end's user + system CPU from /proc. Sizes the "lean Raft channel" of issue 28 before
 * anyone builds it.
 *
 * `paced` and `push` size a watch's change (issue 28): `paced` is a request and its
 * answer per message with a 1 ms pause after each (a long-poll watch: the answer, then
 * the next watch), `push` one request on which the server pushes every message
 * (IncomingRequest.push) with the same pause, as the controllers now send changes. The
 * pause keeps each message its own frame, seal and wake-up, as changes apart in time are.
 */
const payloadBytes = 200
const warmup = 2_000
const networkKey = '/key/swarm/psk/1.0.0/\n/base16/\n' + 'ab'.repeat(32)
const key = Buffer.alloc(32, 7)
const protocol = 'bench/trial/1'
const gapMs = 1
const sleep = async (ms: number): Promise<void> => { await new Promise(resolve => { setTimeout(resolve, ms) }) }

/** A sealed frame: u32 length, 12-byte nonce counter, ciphertext, 16-byte tag. */
function sealer (): (plain: Uint8Array) => Buffer {
  let counter = 0n
  return plain => {
    const nonce = Buffer.alloc(12)
    nonce.writeBigUInt64LE(counter++, 4)
    const cipher = createCipheriv('chacha20-poly1305', key, nonce, { authTagLength: 16 })
    const body = Buffer.concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()])
    const head = Buffer.alloc(4)
    head.writeUInt32LE(body.length)
    return Buffer.concat([head, body])
  }
}

function open (body: Buffer): Buffer {
  const decipher = createDecipheriv('chacha20-poly1305', key, body.subarray(0, 12), { authTagLength: 16 })
  decipher.setAuthTag(body.subarray(body.length - 16))
  return Buffer.concat([decipher.update(body.subarray(12, body.length - 16)), decipher.final()])
}

/** Calls `onFrame` with each whole frame's body as 'data' events bring them. */
function frames (socket: Socket, sealed: boolean, onFrame: (body: Buffer) => void): void {
  let buffered = Buffer.alloc(0)
  socket.on('data', chunk => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk])
    while (buffered.length >= 4) {
      const n = buffered.readUInt32LE(0)
      if (buffered.length < 4 + n) break
      const body = buffered.subarray(4, 4 + n)
      buffered = buffered.subarray(4 + n)
      onFrame(sealed ? open(body) : body)
    }
  })
}

function plainFrame (body: Uint8Array): Buffer {
  const head = Buffer.alloc(4)
  head.writeUInt32LE(body.byteLength)
  return Buffer.concat([head, body])
}

async function serve (mode: string): Promise<void> {
  if (mode === 'libp2p' || mode === 'paced' || mode === 'push') {
    const server = await Libp2pTransport.create({ privateKey: await generatePeerKey(), networkKey })
    server.handle(protocol, async request => {
      if (mode !== 'push') return request.data
      // The body names how many to push; each waits for the writer when the bound says no.
      const count = Number(new TextDecoder().decode(request.data))
      const message = randomBytes(payloadBytes)
      for (let i = 0; i < count; i++) {
        while (!request.push!(message)) await sleep(0)
        await sleep(gapMs)
      }
      return message
    })
    console.log(JSON.stringify({ address: server.addresses()[0] }))
    return
  }
  const seal = mode === 'sealed' ? sealer() : plainFrame
  const listener = createServer(socket => {
    socket.setNoDelay(true)
    frames(socket, mode === 'sealed', body => { socket.write(seal(body)) })
  })
  listener.listen(0, '127.0.0.1', () => {
    const address = listener.address()
    if (typeof address === 'object' && address !== null) console.log(JSON.stringify({ port: address.port }))
  })
}

async function client (mode: string, rounds: number): Promise<{ clientUs: number, serverUs: number, roundUs: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', new URL(import.meta.url).pathname, 'serve', mode], { stdio: ['ignore', 'pipe', 'inherit'] })
  try {
    const first = await new Promise<string>(resolve => { createInterface({ input: child.stdout! }).once('line', resolve) })
    const where = JSON.parse(first) as { address?: string, port?: number }
    const payload = randomBytes(payloadBytes)
    let once: () => Promise<void>
    let stop = async (): Promise<void> => {}
    let measured = async (): Promise<void> => { for (let i = 0; i < rounds; i++) await once() }
    if (mode === 'libp2p' || mode === 'paced' || mode === 'push') {
      const transport = await Libp2pTransport.create({ privateKey: await generatePeerKey(), networkKey, bootstrap: [where.address!] })
      const peer = where.address!.split('/p2p/')[1]!
      await pollUntil(() => transport.connectedPeers().includes(peer), 10_000)
      once = async () => { await transport.request(peer, protocol, payload, { timeoutMs: 5_000 }) }
      if (mode === 'paced') {
        once = async () => {
          await transport.request(peer, protocol, payload, { timeoutMs: 5_000 })
          await sleep(gapMs)
        }
      }
      if (mode === 'push') {
        let pushed = 0
        const pushes = async (count: number): Promise<void> => {
          pushed = 0
          await transport.request(peer, protocol, new TextEncoder().encode(String(count)), { timeoutMs: 600_000, onPush: () => { pushed++ } })
          if (pushed !== count) throw new Error(`bench channel trial: expected ${count} pushes, got ${pushed}`)
        }
        // The warm-up below sends one push request per message; the measured run one for all.
        once = async () => { await pushes(1) }
        measured = async () => { await pushes(rounds) }
      }
      stop = async () => { await transport.stop() }
    } else {
      const socket = connect(where.port!, '127.0.0.1')
      socket.setNoDelay(true)
      await new Promise(resolve => socket.once('connect', resolve))
      const seal = mode === 'sealed' ? sealer() : plainFrame
      let waiting: (() => void) | undefined
      frames(socket, mode === 'sealed', () => { waiting?.() })
      once = async () => { await new Promise<void>(resolve => { waiting = resolve; socket.write(seal(payload)) }) }
      stop = async () => { socket.destroy() }
    }
    for (let i = 0; i < warmup; i++) await once()
    const c0 = process.cpuUsage()
    const s0 = cpuMs(child.pid!)
    const t0 = performance.now()
    await measured()
    const elapsed = performance.now() - t0
    const c1 = process.cpuUsage()
    const s1 = cpuMs(child.pid!)
    await stop()
    return {
      clientUs: round((c1.user - c0.user + c1.system - c0.system) / rounds, 1),
      serverUs: round((s1 - s0) * 1000 / rounds, 1),
      roundUs: round(elapsed * 1000 / rounds, 1)
    }
  } finally {
    child.kill('SIGTERM')
  }
}

const [command, arg, ...more] = process.argv.slice(2)
if (command === 'serve') {
  await serve(arg!)
} else {
  const rounds = Number(command ?? 10_000)
  const modes = arg === undefined ? ['libp2p', 'sealed', 'plain'] : [arg, ...more]
  for (const mode of modes) {
    const cost = await client(mode, rounds)
    console.log(`${mode.padEnd(7)} CPU µs per ${mode === 'push' ? 'push' : 'round trip'}: client ${cost.clientUs}, server ${cost.serverUs}; wall ${cost.roundUs} µs`)
  }
  process.exit(0)
}
