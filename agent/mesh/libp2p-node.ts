/**
 * The libp2p node under Libp2pTransport: TCP (dialling from the agent's own loopback host
 * where it has one), the private-network key (network-handshake.ts), Noise, Yamux with lazy window updates,
 * identify, ping and gossipsub as this mesh uses it. Kept apart from the transport so the
 * stack's configuration reads in one place.
 */
import { gossipsub, type GossipsubEvents } from '@chainsafe/libp2p-gossipsub'
import { yamux } from '@chainsafe/libp2p-yamux'
import { identify, type Identify } from '@libp2p/identify'
import type { PrivateKey, PubSub } from '@libp2p/interface'
import { ping, type PingService } from '@libp2p/ping'
import { tcp, type TCPOptions, type TCPSocketOptions } from '@libp2p/tcp'
import type { Multiaddr } from '@multiformats/multiaddr'
import { createLibp2p, type Libp2p } from 'libp2p'
import { limits } from '../../runtime/limits.ts'
import { withLazyWindowUpdates } from './lazy-window-updates.ts'
import { advertiseAs } from './advertised-addresses.ts'
import { loopbackDialSource } from './loopback-dial-source.ts'
import { networkHandshake } from './network-handshake.ts'
import { networkNoise } from './network-noise.ts'
import { withCachedSigning } from './signing-key.ts'
import { installCachedVerify } from './verify-key-cache.ts'
import { wireMessageId } from './wire-message-id.ts'
import type { HandshakeWatch } from './refusal-counters.ts'

export type MeshServices = { identify: Identify, ping: PingService, pubsub: PubSub<GossipsubEvents> }

export interface MeshNodeOptions {
  privateKey: PrivateKey
  /** The private network's key: swarm key file bytes (network-key.ts). */
  psk: Uint8Array
  listen: readonly Multiaddr[]
  /** The host others dial (advertised-addresses.ts); the listen addresses themselves when not given. */
  advertise?: string
  /** Watches handshakes to count refused peers (refusal-counters.ts). */
  handshakes: HandshakeWatch
  /** Gossipsub's heartbeat; its default (1 s) when not given. */
  heartbeatIntervalMs?: number
}

export async function createMeshNode (options: MeshNodeOptions): Promise<Libp2p<MeshServices>> {
  // Checks peers' signatures without importing their keys again (verify-key-cache.ts).
  installCachedVerify()
  return await createLibp2p<MeshServices>({
    // Signs each gossip publication without importing the key again (signing-key.ts).
    privateKey: withCachedSigning(options.privateKey),
    connectionGater: options.handshakes.gater,
    addresses: {
      listen: options.listen.map(address => address.toString()),
      ...(options.advertise === undefined ? {} : { announceFilter: advertiseAs(options.advertise) })
    },
    transports: [tcp(tcpOptions(options.listen))],
    // The network key is proven once, by Noise, between peers of this version; pnet's
    // cipher only with older ones (network-handshake.ts).
    connectionProtector: networkHandshake(options.psk),
    connectionEncrypters: [networkNoise(options.psk)],
    streamMuxers: [withLazyWindowUpdates(yamux())],
    // libp2p prunes connections beyond 300 by default, which would cap the machine agents
    // a controller keeps. Its inbound pacing stays, looser per host (limits.ts): unpaced,
    // 150 Noise handshakes at once starved a loaded leader into an election in a test of
    // 50 agents starting together on one host; 10 pending at once still bounds that.
    connectionManager: {
      maxConnections: limits.transportConnectionsMax,
      inboundConnectionThreshold: limits.transportInboundConnectionsPerHostPerSecond
    },
    // libp2p pings every connection from both ends (a new stream, with its protocol
    // negotiation, each time) to abort connections that died without a close. Every 10 s,
    // its default, an idle machine agent with three controllers handled such a stream
    // every 1.7 s, several frames each way (issue 28). A dead process's socket is closed
    // by its kernel at once, so the ping only finds silently cut links: every 30 s, as
    // yamux's own keepalive.
    connectionMonitor: { pingInterval: limits.transportConnectionPingIntervalMs },
    services: {
      // Gossipsub learns which peers speak it only through identify.
      identify: identify(),
      ping: ping(),
      pubsub: gossipsub({
        globalSignaturePolicy: 'StrictSign',
        // Copies of a message already accepted are dropped before their signature is
        // verified again (wire-message-id.ts).
        fastMsgIdFn: wireMessageId,
        // The contract: a subscriber never receives its own publications, and
        // publishing with nobody subscribed is fine (gossip is a hint).
        emitSelf: false,
        allowPublishToZeroTopicPeers: true,
        // Send our own publications to every peer known to subscribe, not only to mesh
        // peers: in a cluster of tens of agents this is cheap and delivers at once,
        // before any mesh has formed.
        floodPublish: true,
        // Only our own agents are in this private network, and they all speak gossipsub.
        fallbackToFloodsub: false,
        // Validation is synchronous and cheap; forward right after it.
        asyncValidation: false,
        maxInboundDataLength: limits.transportGossipRpcBytesMax,
        maxOutboundBufferSize: limits.transportGossipOutboundBufferBytesMax,
        ...(options.heartbeatIntervalMs === undefined ? {} : { heartbeatInterval: options.heartbeatIntervalMs }),
        scoreParams: {
          // Peers on one host (several agents of one machine, a test cluster) all come
          // from loopback; that is deployment, not a Sybil attack.
          IPColocationFactorWhitelist: new Set(['127.0.0.1', '::1'])
        }
      })
    }
  })
}

/** libp2p's TCP options: dials come from the agent's own loopback host when it stands for one (loopback-dial-source.ts). */
function tcpOptions (listen: readonly Multiaddr[]): TCPOptions {
  const localAddress = loopbackDialSource(listen)
  // TCPSocketOptions names a subset of net.connect's options; @libp2p/tcp passes dialOpts
  // to net.connect whole, so localAddress reaches it.
  return localAddress === undefined ? {} : { dialOpts: { localAddress } as TCPSocketOptions }
}

