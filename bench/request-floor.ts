import '../runtime/polyfill.ts'
import { echoProtocol, withEchoPair } from './echo-pair.ts'
import { quantile, round } from './stats.ts'

/**
 * The floor under every Raft message and client command in cantrip: one request/response
 * over the mesh transport (a frame each way on the peers' long-lived request channel:
 * yamux, Noise and pnet, no stream opened per request) between two peers in this one
 * process on loopback, with an empty handler; sequential, then 64 in flight. A commit needs at least
 * two such legs in series (leader → follower append, follower → leader answer) besides
 * the client's own request, so this bounds the write path from below with no disk at all.
 */
const requests = 500
const concurrent = 64

export interface RequestFloor { sequentialP50Ms: number, sequentialP99Ms: number, perSecondAt64: number }

export async function measureRequestFloor (): Promise<RequestFloor> {
  return await withEchoPair(async (client, server) => {
    const payload = new Uint8Array(200)
    const once = async (): Promise<number> => {
      const t0 = performance.now()
      await client.request(server.peerId, echoProtocol, payload, { timeoutMs: 5_000 })
      return performance.now() - t0
    }
    for (let i = 0; i < 50; i++) await once()
    const seq: number[] = []
    for (let i = 0; i < requests; i++) seq.push(await once())
    let done = 0
    const started = performance.now()
    await Promise.all(Array.from({ length: concurrent }, async () => { while (done < requests * 2) { done++; await once() } }))
    return { sequentialP50Ms: round(quantile(seq, 0.5)), sequentialP99Ms: round(quantile(seq, 0.99)), perSecondAt64: Math.round(done / ((performance.now() - started) / 1000)) }
  })
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await measureRequestFloor()))
  process.exit(0)
}
