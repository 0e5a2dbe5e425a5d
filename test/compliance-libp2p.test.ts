/**
 * The transport compliance suite against the real transport: Libp2pTransport nodes on
 * 127.0.0.1 with ephemeral ports and one network key, each dialled directly to every
 * other one (agent/mesh/libp2p-world.ts). Time really passes, so the harness's delivery
 * and propagation times carry slack for a loaded 2-core machine: on loopback a message
 * or request leg takes a few milliseconds.
 */
import { Libp2pWorld } from '../agent/mesh/libp2p-world.ts'
import { generatePeerKey, peerIdOfKey } from '../agent/mesh/peer-identity.ts'
import { transportCompliance } from './compliance/transport-compliance.ts'

transportCompliance({
  name: 'Libp2pTransport',
  create: async count => await Libp2pWorld.create({ peers: count, readyTimeoutMs: 10_000 }),
  deliveryMs: 150,
  propagationMs: 200,
  // A real Ed25519 peer id whose key is thrown away: well formed, and nobody has its addresses.
  unknownPeer: peerIdOfKey(await generatePeerKey()),
  pushes: true
})
