import '../runtime/polyfill.ts'
import { writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { join } from 'node:path'
import type { Libp2pTransport } from '../agent/mesh/libp2p-transport.ts'
import { echoProtocol, withEchoPair } from './echo-pair.ts'
import { pollUntil, round } from './stats.ts'

/**
 * `node --import tsx bench/mesh-message-cost.ts [ROUNDS]`: the CPU one message costs on
 * the mesh stack (issue 28), both ends in this one process on loopback, so each figure is
 * the whole of it — sender and receiver:
 *
 * - a request round trip (a request frame and its answer on the long-lived request
 *   channel): what one Raft heartbeat and its reply cost, or one client request;
 * - a gossip copy (one publication delivered to one subscriber).
 *
 * Sizes are a heartbeat's (about 60 bytes) and a small write's (about 400 bytes). Run it
 * under `node --cpu-prof` and summarise with `bench/profile-layers.ts` to split the cost
 * by layer (TCP socket, pnet, Noise, yamux, request channel, msgpackr, gossipsub).
 * With CANTRIP_PROF_DIR set it writes one V8 CPU profile per measured loop there
 * (requests of each size, gossip), taken after the warm-up, for bench/profile-layers.ts.
 */
export interface MessageCost { requestUs: Record<number, number>, gossipUs: number }

/** Rounds of each kind before any is measured: V8 optimises the hot paths meanwhile. */
const warmup = 1_000

function cpuUs (): number {
  const usage = process.cpuUsage()
  return usage.user + usage.system
}

export async function measureMessageCost (rounds: number): Promise<MessageCost> {
  return await withEchoPair(async (client, server) => {
    const requestUs: Record<number, number> = {}
    const once = async (payload: Uint8Array): Promise<void> => { await client.request(server.peerId, echoProtocol, payload, { timeoutMs: 10_000 }) }
    const sizes = [60, 400]
    for (const size of sizes) for (let i = 0; i < warmup; i++) await once(new Uint8Array(size))
    for (const size of sizes) {
      const payload = new Uint8Array(size)
      requestUs[size] = await measured(`request-${size}`, rounds, async () => { for (let i = 0; i < rounds; i++) await once(payload) })
    }
    return { requestUs, gossipUs: await gossipCost(client, server, rounds) }
  })
}

/** One publication at a time from `from`, each awaited at `to` before the next. */
async function gossipCost (from: Libp2pTransport, to: Libp2pTransport, rounds: number): Promise<number> {
  const topic = 'bench/gossip'
  let arrived = 0
  let wake: (() => void) | undefined
  to.subscribe(topic, () => { arrived++; wake?.() })
  from.subscribe(topic, () => {})
  const publishOne = async (i: number): Promise<void> => {
    const seen = new Promise<void>(resolve => { wake = resolve })
    await from.publish(topic, new TextEncoder().encode(`notice ${i}`))
    await Promise.race([seen, new Promise(resolve => setTimeout(resolve, 2_000))])
  }
  // Gossipsub learns the subscription first: publish until one arrives.
  await pollUntil(async () => { await publishOne(-1); return arrived > 0 }, 20_000)
  for (let i = 0; i < warmup; i++) await publishOne(i)
  const start = arrived
  const us = await measured('gossip', rounds, async () => { for (let i = 0; i < rounds; i++) await publishOne(i) })
  if (arrived - start < rounds * 0.9) throw new Error(`mesh-message-cost: expected ${rounds} gossip copies to arrive, got ${arrived - start}`)
  return us
}

/** CPU µs per round of `loop`, profiled into CANTRIP_PROF_DIR/<name>.cpuprofile when set. */
async function measured (name: string, rounds: number, loop: () => Promise<void>): Promise<number> {
  const dir = process.env['CANTRIP_PROF_DIR']
  const session = dir === undefined ? undefined : new Session()
  if (session !== undefined) {
    session.connect()
    await session.post('Profiler.enable')
    await session.post('Profiler.start')
  }
  const before = cpuUs()
  await loop()
  const us = round((cpuUs() - before) / rounds, 1)
  if (session !== undefined) {
    const { profile } = await session.post('Profiler.stop')
    writeFileSync(join(dir!, `${name}.cpuprofile`), JSON.stringify(profile))
    session.disconnect()
  }
  return us
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await measureMessageCost(Number(process.argv[2] ?? 2000))
  console.log(JSON.stringify(result))
  process.exit(0)
}
