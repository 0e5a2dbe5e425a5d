/**
 * What an agent tells others to dial when it listens on one address and is reached at
 * another (`cantripd --advertise HOST`): a controller listening on 0.0.0.0, or behind a
 * NAT, must not hand out 0.0.0.0, every interface it has, or its loopback. Each TCP
 * listen address keeps its port (also an ephemeral one, known only once bound) and takes
 * the advertised host instead, so one `--advertise` covers every listen address.
 */
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr'
import { InvalidInputError } from '../../runtime/errors.ts'

const ipv4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/
const dnsName = /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/

/** The multiaddr protocol for a host: ip4, ip6 or dns. Throws one clear line for anything else. */
export function hostProtocol (component: string, host: string): 'ip4' | 'ip6' | 'dns' {
  if (ipv4.test(host)) return 'ip4'
  if (host.includes(':') && /^[0-9A-Fa-f:.]+$/.test(host)) return 'ip6'
  if (dnsName.test(host) && !/^[\d.]+$/.test(host)) return 'dns'
  throw new InvalidInputError(component, 'an IPv4 or IPv6 address or a host name', host)
}

/** libp2p's announce filter that puts `host` in every TCP address, deduplicated. */
export function advertiseAs (host: string): (addresses: Multiaddr[]) => Multiaddr[] {
  const protocol = hostProtocol('libp2p transport', host)
  return addresses => {
    const seen = new Set<string>()
    const result: Multiaddr[] = []
    for (const address of addresses) {
      const { transport, port } = address.toOptions()
      if (transport !== 'tcp') continue
      const text = `/${protocol}/${host}/tcp/${port}`
      if (seen.has(text)) continue
      seen.add(text)
      result.push(multiaddr(text))
    }
    return result
  }
}
