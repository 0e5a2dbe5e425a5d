/**
 * The source address of an agent's outbound TCP dials when it stands for a host of its
 * own on loopback.
 *
 * Tests, benches and local deployments run many agents on one machine. Listening each on
 * its own loopback address (127.0.0.2, 127.0.0.3, …) only separates them as listeners:
 * the kernel picks 127.0.0.1 as the source of every loopback dial, so a peer sees every
 * agent as one host. libp2p paces inbound connections per remote host (5 new per second),
 * and on one shared host 50 agents' seed dials and the controllers' own reconnections
 * queue behind each other; some agents never got a connection at all. Dialling from the
 * address an agent listens on makes it the separate host it stands for, as on real
 * machines.
 */
import type { Multiaddr } from '@multiformats/multiaddr'

/**
 * The IPv4 loopback address other than 127.0.0.1 that every listen address of this agent
 * is on, or undefined (any other address: the kernel's choice of source is right).
 */
export function loopbackDialSource (listen: readonly Multiaddr[]): string | undefined {
  const hosts = new Set(listen.map(address => {
    const { family, host } = address.toOptions()
    return family === 4 ? host : ''
  }))
  if (hosts.size !== 1) return undefined
  const [host] = [...hosts] as [string]
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) && host !== '127.0.0.1' ? host : undefined
}
