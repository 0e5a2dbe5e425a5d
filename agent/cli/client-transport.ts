/**
 * The CLI's link for commands that ask and exit: a libp2p node with only what one
 * request needs — TCP, the private network's key (network-handshake.ts), Noise with the admin's identity
 * and yamux — and none of an agent's services (identify, ping, gossipsub), no listening
 * socket and no seed dialling. A request dials the one member it is for, when it is
 * sent: a command that the first member answers makes one connection and one Noise
 * handshake, where a full mesh node made one per member plus identify and gossipsub
 * streams on each. Requests use the agents' request channels (request-channel.ts), so a
 * member serves this client as it serves any peer, and authenticates it the same way
 * (Noise proves the admin key; a member refuses an identity it does not know).
 *
 * Watching (change notices, log batches) needs gossip, which this node does not speak:
 * the Connection starts a full mesh node for that, on first use (connection.ts).
 */
import '../../runtime/polyfill.ts'
import { yamux } from '@chainsafe/libp2p-yamux'
import { tcp } from '@libp2p/tcp'
import type { Connection } from '@libp2p/interface'
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr'
import { createLibp2p, type Libp2p } from 'libp2p'
import { InvalidInputError } from '../../runtime/errors.ts'
import { admitRequest } from '../../runtime/transport-arguments.ts'
import {
  PeerUnreachableError,
  RemoteHandlerError,
  RequestTimeoutError,
  TransportStoppedError,
  type PeerId,
  type RequestOptions
} from '../../runtime/transport.ts'
import { clientNoiseCrypto } from './client-noise-crypto.ts'
import { checkWireName, decodeResponseEnvelope, encodeRequestEnvelope } from '../mesh/mesh-envelopes.ts'
import { requestProtocol } from '../mesh/request-protocol.ts'
import { networkHandshake } from '../mesh/network-handshake.ts'
import { parseNetworkKey } from '../mesh/network-key.ts'
import { networkNoise } from '../mesh/network-noise.ts'
import { parsePeerKey } from '../mesh/peer-identity.ts'
import { RequestChannel } from '../mesh/request-channel.ts'

const component = 'cantrip client transport'

export interface ClientTransportOptions {
  /** The admin's Ed25519 key bytes (`admin.key`, peer-identity.ts). */
  privateKey: Uint8Array
  /** The group's swarm key file bytes (network-key.ts). */
  networkKey: Uint8Array | string
  /** The members' multiaddrs, each ending in `/p2p/<peer id>`: where a request to that peer is dialled. */
  members: readonly string[]
}

export class ClientTransport {
  readonly peerId: PeerId
  readonly #node: Libp2p
  /** Where each known peer is dialled: a member's addresses, or one `dial` reached. */
  readonly #addresses = new Map<PeerId, Multiaddr[]>()
  readonly #channels = new Map<PeerId, RequestChannel>()
  readonly #opening = new Map<PeerId, Promise<RequestChannel>>()
  readonly #pending = new Set<(error: Error) => void>()
  #stopped = false

  static async create (options: ClientTransportOptions): Promise<ClientTransport> {
    if (typeof options !== 'object' || options === null) throw new InvalidInputError(component, 'options', options)
    const privateKey = parsePeerKey(options.privateKey)
    const psk = parseNetworkKey(options.networkKey)
    const members = memberAddresses(options.members)
    const node = await createLibp2p({
      privateKey,
      addresses: { listen: [] },
      transports: [tcp()],
      connectionProtector: networkHandshake(psk),
      connectionEncrypters: [networkNoise(psk, { crypto: clientNoiseCrypto })],
      streamMuxers: [yamux()]
    })
    return new ClientTransport(node, members)
  }

  private constructor (node: Libp2p, members: Map<PeerId, Multiaddr[]>) {
    this.#node = node
    this.peerId = node.peerId.toString()
    for (const [peer, addresses] of members) this.#addresses.set(peer, addresses)
  }

  /** One request on our channel to `peer`, dialling it first when not connected; errors as Transport.request's. */
  async request (peer: PeerId, protocol: string, data: Uint8Array, options: RequestOptions): Promise<Uint8Array> {
    if (this.#stopped) throw new TransportStoppedError(this.peerId)
    checkWireName(protocol, 'protocol')
    const timeoutMs = admitRequest(component, this.peerId, peer, protocol, data, options, this.#pending.size)
    const envelope = encodeRequestEnvelope({ protocol, data })
    const answer = Promise.withResolvers<Uint8Array>()
    let cancel: (() => void) | undefined
    let settled = false
    const settle = (error: Error | undefined, body?: Uint8Array): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      this.#pending.delete(fail)
      if (error !== undefined) {
        cancel?.()
        answer.reject(error)
      } else answer.resolve(body!)
    }
    const fail = (error: Error): void => { settle(error) }
    const timer = setTimeout(() => { settle(new RequestTimeoutError(peer, protocol, timeoutMs)) }, timeoutMs)
    this.#pending.add(fail)
    this.#channel(peer, protocol).then(channel => {
      if (settled) return
      cancel = channel.request(protocol, envelope, (error, body) => {
        cancel = undefined
        if (error !== undefined) settle(error)
        else settle(...response(peer, protocol, body!))
      })
    }).catch(fail)
    return await answer.promise
  }

  /** Connects to the peer at `address` (a multiaddr with `/p2p/<peer id>`) and remembers it; resolves with its peer id. */
  async dial (address: string, options: { timeoutMs?: number } = {}): Promise<PeerId> {
    if (this.#stopped) throw new TransportStoppedError(this.peerId)
    const [target] = memberAddresses([address])
    const [peer, addresses] = target!
    await this.#connect(peer, addresses, options.timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(options.timeoutMs) })
    this.#addresses.set(peer, addresses)
    return peer
  }

  connectedPeers (): PeerId[] {
    if (this.#stopped) return []
    return [...new Set(this.#node.getPeers().map(peer => peer.toString()))]
  }

  /** Fails what still waits, then closes every connection. */
  async stop (): Promise<void> {
    if (this.#stopped) return
    this.#stopped = true
    const error = new TransportStoppedError(this.peerId)
    for (const fail of [...this.#pending]) fail(error)
    for (const channel of [...this.#channels.values()]) channel.close(error)
    await this.#node.stop()
  }

  /**
   * A connection to `peer` at `addresses`, proven to be that peer: libp2p does not hold a
   * dial by address to the `/p2p/` id in it, so the identity Noise authenticated is
   * compared here, and a connection to anyone else is closed and refused.
   */
  async #connect (peer: PeerId, addresses: Multiaddr[], options: { signal?: AbortSignal }): Promise<Connection> {
    let connection: Connection
    try {
      connection = await this.#node.dial(addresses, options)
    } catch (error) {
      if (this.#stopped) throw new TransportStoppedError(this.peerId)
      throw new PeerUnreachableError(peer, describeError(error))
    }
    const answered = connection.remotePeer.toString()
    if (answered === peer) return connection
    await connection.close().catch(() => {})
    throw new PeerUnreachableError(peer, `the address answered as peer "${answered}"`)
  }

  /** Our open channel to `peer`, the one being opened, or a new one. */
  async #channel (peer: PeerId, protocol: string): Promise<RequestChannel> {
    const open = this.#channels.get(peer)
    if (open !== undefined) return open
    let opening = this.#opening.get(peer)
    if (opening === undefined) {
      opening = this.#openChannel(peer, protocol).finally(() => { this.#opening.delete(peer) })
      this.#opening.set(peer, opening)
    }
    return await opening
  }

  async #openChannel (peer: PeerId, protocol: string): Promise<RequestChannel> {
    const addresses = this.#addresses.get(peer)
    if (addresses === undefined) throw new PeerUnreachableError(peer, 'no address known for it (not a member of this controller group)')
    const connection = await this.#connect(peer, addresses, {})
    let stream
    try {
      stream = await connection.newStream(requestProtocol)
    } catch (error) {
      if (this.#stopped) throw new TransportStoppedError(this.peerId)
      if ((error as Error).name === 'UnsupportedProtocolError') throw new RemoteHandlerError(peer, protocol, 'the peer serves no requests')
      throw new PeerUnreachableError(peer, describeError(error))
    }
    const channel = new RequestChannel(peer, stream, closed => {
      if (this.#channels.get(peer) === closed) this.#channels.delete(peer)
    })
    if (channel.closed === undefined) this.#channels.set(peer, channel)
    return channel
  }
}

/** A response envelope as request()'s result: the data, or the remote error. */
function response (peer: PeerId, protocol: string, body: Uint8Array): [Error | undefined, Uint8Array?] {
  try {
    const answer = decodeResponseEnvelope(body)
    return answer.ok ? [undefined, answer.data] : [new RemoteHandlerError(peer, protocol, answer.error)]
  } catch (error) {
    return [new RemoteHandlerError(peer, protocol, `malformed response: ${(error as Error).message}`)]
  }
}

/** Member multiaddrs by peer id; each must name its peer (`/p2p/<id>`), which Noise then proves. */
function memberAddresses (list: readonly string[]): Map<PeerId, Multiaddr[]> {
  const expected = 'a member multiaddr ending in /p2p/<peer id>'
  if (!Array.isArray(list)) throw new InvalidInputError(component, `a list of ${expected}s`, list)
  const members = new Map<PeerId, Multiaddr[]>()
  for (const address of list) {
    let parsed: Multiaddr
    try {
      parsed = multiaddr(address)
    } catch (error) {
      throw new InvalidInputError(component, expected, address, { cause: error })
    }
    const peer = parsed.getPeerId()
    if (peer === null) throw new InvalidInputError(component, expected, address)
    members.set(peer, [...members.get(peer) ?? [], parsed])
  }
  return members
}

function describeError (error: unknown): string {
  if (error instanceof Error) return error.name === 'Error' ? error.message : `${error.name}: ${error.message}`
  return String(error)
}
