import { Libp2pTransport } from '../agent/mesh/libp2p-transport.ts'
import { generateNetworkKey } from '../agent/mesh/network-key.ts'
import { generatePeerKey } from '../agent/mesh/peer-identity.ts'
import { pollUntil } from './stats.ts'

/** The protocol both ends of an echo pair speak: the answer is the request's own bytes. */
export const echoProtocol = 'bench/echo/1'

/**
 * Two mesh peers in this one process on loopback, the client connected to a server that
 * echoes every request (`echoProtocol`): the setup of the mesh benches that measure one
 * message (request-floor.ts, mesh-message-cost.ts). `use` runs with both; both stop after.
 */
export async function withEchoPair<T> (use: (client: Libp2pTransport, server: Libp2pTransport) => Promise<T>): Promise<T> {
  const networkKey = generateNetworkKey()
  const server = await Libp2pTransport.create({ privateKey: await generatePeerKey(), networkKey })
  const client = await Libp2pTransport.create({ privateKey: await generatePeerKey(), networkKey, bootstrap: server.addresses() })
  try {
    server.handle(echoProtocol, async request => request.data)
    await pollUntil(() => client.connectedPeers().includes(server.peerId), 10_000)
    return await use(client, server)
  } finally {
    await client.stop()
    await server.stop()
  }
}
