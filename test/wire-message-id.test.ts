/**
 * agent/mesh/wire-message-id.ts: gossipsub's message identity read off the wire (author
 * and sequence number), which lets a peer drop copies of a message it already accepted
 * without verifying their signatures again — and nothing more: a message it has not
 * accepted is still checked in full.
 */
import '../runtime/polyfill.ts'
import type { RPC } from '@chainsafe/libp2p-gossipsub/message'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { Libp2pWorld } from '../agent/mesh/libp2p-world.ts'
import type { Libp2pTransport } from '../agent/mesh/libp2p-transport.ts'
import { wireMessageId } from '../agent/mesh/wire-message-id.ts'

const bytes = (...values: number[]): Uint8Array => new Uint8Array(values)
const text = (value: string): Uint8Array => new TextEncoder().encode(value)
const message = (from: Uint8Array | undefined, seqno: Uint8Array | undefined, data = bytes(1)): RPC.Message =>
  ({ topic: 't', data, ...(from === undefined ? {} : { from }), ...(seqno === undefined ? {} : { seqno }), signature: bytes(9) })

test('the id is the author and the sequence number, whatever the data and signature', () => {
  const a = message(bytes(0xab, 0x01), bytes(0, 0, 0, 0, 0, 0, 0, 7), bytes(1))
  const sameOtherData = { ...message(bytes(0xab, 0x01), bytes(0, 0, 0, 0, 0, 0, 0, 7), bytes(2)), signature: bytes(8) }
  assert.is(wireMessageId(a), 'ab01:0000000000000007')
  assert.is(wireMessageId(sameOtherData), wireMessageId(a))
  assert.is.not(wireMessageId(message(bytes(0xab, 0x02), bytes(0, 0, 0, 0, 0, 0, 0, 7))), wireMessageId(a))
  assert.is.not(wireMessageId(message(bytes(0xab, 0x01), bytes(0, 0, 0, 0, 0, 0, 0, 8))), wireMessageId(a))
})

test('no two (author, number) pairs share an id: the boundary between them is marked', () => {
  assert.is.not(wireMessageId(message(bytes(1, 2), bytes(3))), wireMessageId(message(bytes(1), bytes(2, 3))))
  // A view into a larger buffer reads only its own bytes.
  const backing = bytes(0xff, 0x0a, 0x0b, 0xff)
  assert.is(wireMessageId(message(backing.subarray(1, 3), bytes(1))), '0a0b:01')
  // Missing fields (gossipsub refuses such a message under StrictSign) still give distinct ids.
  assert.is(wireMessageId(message(undefined, bytes(1))), '-:01')
  assert.is(wireMessageId(message(bytes(1), undefined)), '01:-')
})

type RawGossip = {
  publishConfig: { privateKey: unknown }
  mcache: { msgs: Map<string, { message: RPC.Message }> }
  sendRpc: (id: string, rpc: { subscriptions: unknown[], messages: RPC.Message[] }) => boolean
}
const raw = (transport: Libp2pTransport): RawGossip => transport.node.services.pubsub as unknown as RawGossip

test('over the mesh: a copy of an accepted message is a duplicate without a signature check; an unseen forgery is still checked', async () => {
  const world = await Libp2pWorld.create({ peers: 2, heartbeatIntervalMs: 100, readyTimeoutMs: 10_000 })
  try {
    const [sender, receiver] = world.transports as [Libp2pTransport, Libp2pTransport]
    const received: string[] = []
    receiver.subscribe('status', message => { received.push(new TextDecoder().decode(message.data)) })
    await world.waitFor('the sender sees the receiver on the topic', () => sender.topicPeers('status').includes(receiver.peerId), 10_000)
    await sender.publish('status', text('honest'))
    await world.waitFor('the honest message delivered', () => received.length === 1, 10_000)
    const before = receiver.refusals()
    // The accepted message again, and a forgery of it (same author and number, other
    // bytes, the genuine signature): both dropped as duplicates, neither verified.
    const genuine = [...raw(sender).mcache.msgs.values()].map(entry => entry.message)[0]!
    const forged = { ...genuine, data: text('forged') }
    raw(sender).sendRpc(receiver.peerId, { subscriptions: [], messages: [genuine, forged] })
    await world.waitFor('two duplicates counted', () => receiver.refusals().duplicate >= before.duplicate + 2, 10_000)
    // A forgery nobody accepted before (a fresh number, signed with another key) is verified and refused.
    raw(sender).publishConfig.privateKey = await generateKeyPair('Ed25519')
    await sender.publish('status', text('unseen forgery'))
    await world.waitFor('the bad signature counted', () => receiver.refusals().signature > before.signature, 10_000)
    const after = receiver.refusals()
    assert.is(after.signature - before.signature, 1, 'only the unseen forgery went to a signature check')
    assert.equal(received, ['honest'])
  } finally {
    await world.close()
  }
})

test.run()
