/**
 * The CLI's client transport (agent/cli/client-transport.ts) against real mesh nodes
 * (Libp2pTransport) on loopback: a request dials only the member it is for; the member
 * sees the client's own peer id (Noise proves the admin key, so authorisation holds);
 * a member address naming another identity, or another swarm key, is refused; bad
 * input is one line naming the component. Its Noise HKDF (node:crypto) equals the
 * library's own.
 */
import '../runtime/polyfill.ts'
import { pureJsCrypto } from '@chainsafe/libp2p-noise'
import { randomBytes } from 'node:crypto'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { ClientTransport } from '../agent/cli/client-transport.ts'
import { nodeHkdf } from '../agent/cli/client-noise-crypto.ts'
import { Libp2pTransport } from '../agent/mesh/libp2p-transport.ts'
import { generateNetworkKey } from '../agent/mesh/network-key.ts'
import { generatePeerKey, peerIdOfKey } from '../agent/mesh/peer-identity.ts'
import { PeerUnreachableError, RemoteHandlerError } from '../runtime/transport.ts'

const networkKey = generateNetworkKey()
let members: Libp2pTransport[] = []
const seen: string[] = []

test.before(async () => {
  members = await Promise.all([0, 1, 2].map(async () => await Libp2pTransport.create({ privateKey: await generatePeerKey(), networkKey })))
  for (const member of members) member.handle('echo', async ({ from, data }) => { seen.push(from); return data })
})

test.after(async () => {
  await Promise.all(members.map(async member => { await member.stop() }))
})

/** The error `promise` rejects with; fails the test when it resolves. */
async function rejection (promise: Promise<unknown>): Promise<Error> {
  try {
    await promise
  } catch (error) {
    return error as Error
  }
  throw new Error('expected a rejection')
}

const addresses = (): string[] => members.flatMap(member => member.addresses())

test('a request dials only the member it is for, which sees the admin\'s peer id', async () => {
  const adminKey = await generatePeerKey()
  const client = await ClientTransport.create({ privateKey: adminKey, networkKey, members: addresses() })
  try {
    assert.equal(client.connectedPeers(), [], 'nothing is dialled before a request')
    const answer = await client.request(members[1]!.peerId, 'echo', new Uint8Array([1, 2, 3]), { timeoutMs: 20_000 })
    assert.equal([...answer], [1, 2, 3])
    assert.equal(client.connectedPeers(), [members[1]!.peerId], 'one connection, to that member only')
    assert.is(seen.at(-1), peerIdOfKey(adminKey).toString())
    const refused = await rejection(client.request(members[1]!.peerId, 'nothing-here', new Uint8Array(1), { timeoutMs: 20_000 }))
    assert.instance(refused, RemoteHandlerError)
    assert.match(refused.message, 'no handler for protocol "nothing-here"')
  } finally {
    await client.stop()
  }
})

test('a member address whose peer id is not the key that answers is refused by Noise', async () => {
  const impostor = peerIdOfKey(await generatePeerKey()).toString()
  const [address] = members[0]!.addresses()
  const wrong = address!.replace(/\/p2p\/.*$/, `/p2p/${impostor}`)
  const client = await ClientTransport.create({ privateKey: await generatePeerKey(), networkKey, members: [wrong] })
  try {
    assert.instance(await rejection(client.request(impostor, 'echo', new Uint8Array(1), { timeoutMs: 20_000 })), PeerUnreachableError)
    assert.equal(client.connectedPeers(), [])
  } finally {
    await client.stop()
  }
})

test('a client with another swarm key cannot reach a member', async () => {
  const client = await ClientTransport.create({ privateKey: await generatePeerKey(), networkKey: generateNetworkKey(), members: addresses() })
  try {
    const error = await rejection(client.request(members[2]!.peerId, 'echo', new Uint8Array(1), { timeoutMs: 20_000 }))
    assert.ok(error instanceof PeerUnreachableError || error.name === 'RequestTimeoutError', error.message)
    assert.equal(seen.filter(peer => peer === client.peerId), [], 'the member never served it')
  } finally {
    await client.stop()
  }
})

test('bad input: one line naming the component, what was expected and what arrived', async () => {
  const privateKey = await generatePeerKey()
  try {
    await ClientTransport.create({ privateKey, networkKey, members: ['/ip4/127.0.0.1/tcp/1'] })
    assert.unreachable()
  } catch (error) {
    assert.is((error as Error).message, 'cantrip client transport: expected a member multiaddr ending in /p2p/<peer id>, got "/ip4/127.0.0.1/tcp/1"')
  }
  const client = await ClientTransport.create({ privateKey, networkKey, members: [] })
  try {
    assert.is((await rejection(client.request('12D3KooWNotAMember', 'echo', new Uint8Array(1), { timeoutMs: 1_000 }))).message,
      'peer "12D3KooWNotAMember": unreachable: no address known for it (not a member of this controller group)')
  } finally {
    await client.stop()
  }
})

test('Noise HKDF from node:crypto equals the library\'s JavaScript one', () => {
  for (let i = 0; i < 20; i++) {
    const ck = randomBytes(32)
    const ikm = randomBytes(i === 0 ? 0 : 32)
    assert.equal(nodeHkdf(ck, ikm).map(k => Buffer.from(k).toString('hex')), pureJsCrypto.getHKDF(ck, ikm).map(k => Buffer.from(k).toString('hex')))
  }
})

test.run()
