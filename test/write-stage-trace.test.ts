/**
 * The write trace's socket probe (agent/write-stage-trace.ts): with CANTRIP_WRITE_TRACE
 * every TCP write and read is recorded with its bytes, under one connection name on both
 * ends, so bench/write-stages.ts can pair a sender's write with the receiver's read.
 */
import { once } from 'node:events'
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { probeSockets } from '../agent/write-stage-trace.ts'

test('a write and its read are recorded with their bytes under the same connection name', async () => {
  const events: Array<{ stage: string, detail: number }> = []
  probeSockets((stage, detail) => { events.push({ stage, detail }) })
  const accepted: Socket[] = []
  const server = createServer(socket => { accepted.push(socket) })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const client = createConnection((server.address() as AddressInfo).port, '127.0.0.1')
  try {
    await once(client, 'connect')
    while (accepted.length === 0) await new Promise(resolve => setImmediate(resolve))
    const received = once(accepted[0]!, 'data')
    client.write(new Uint8Array(5))
    await received
    const name = [client.localPort!, client.remotePort!].sort((a, b) => a - b).join('-')
    assert.ok(events.some(e => e.stage === `socket-write:${name}` && e.detail === 5), `the write: ${JSON.stringify(events)}`)
    assert.ok(events.some(e => e.stage === `socket-read:${name}` && e.detail === 5), `the read: ${JSON.stringify(events)}`)
  } finally {
    client.destroy()
    for (const socket of accepted) socket.destroy()
    server.close()
  }
})

test.run()
