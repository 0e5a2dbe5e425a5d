/**
 * Where a machine agent listens and what address it gives out (`cantrip add-machine
 * --listen HOST[:PORT] --advertise HOST`), as plain data the model keeps with the machine
 * and the provider turns into the agent's flags. Pure: the model's apply and the
 * providers check the same text the same way, wherever they run.
 *
 * Absent fields mean the provider's default: the local provider's machines follow the
 * controllers' network (loopback for a group bootstrapped on it), the manual provider's
 * listen on every interface and advertise the host as the controllers reached it.
 */

export interface AgentNetwork {
  /** `HOST`, `HOST:PORT` or `[V6]:PORT`: the address the agent binds (port 0, a free one, when none). */
  readonly listen?: string
  /** The host other agents and units dial (never a wildcard). */
  readonly advertise?: string
}

const ipv4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/
const dnsName = /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/
const wildcards = new Set(['0.0.0.0', '::'])

/** The multiaddr protocol of a host (ip4, ip6 or dns), or undefined when it is none of them. */
export function hostKind (host: string): 'ip4' | 'ip6' | 'dns' | undefined {
  if (ipv4.test(host)) return 'ip4'
  if (host.includes(':') && /^[0-9A-Fa-f:.]{2,45}$/.test(host)) return 'ip6'
  if (dnsName.test(host) && !/^[\d.]+$/.test(host)) return 'dns'
  return undefined
}

/** `HOST`, `HOST:PORT` or `[V6]:PORT` (a bare IPv6 address too) as its parts; undefined when it is not one. */
export function parseListen (text: string): { host: string, port?: number } | undefined {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:\s[\]]+))(?::(\d{1,5}))?$/.exec(text) ?? /^([0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*)()$/.exec(text)
  if (match === null) return undefined
  const host = match[1] ?? match[2] ?? ''
  if (hostKind(host) === undefined) return undefined
  if (match[3] === undefined || match[3] === '') return { host }
  const port = Number(match[3])
  return port >= 1 && port <= 65535 ? { host, port } : undefined
}

/** Whether `host` can be given out to others: an address or a name, not a wildcard. */
export function isAdvertisableHost (host: string): boolean {
  return hostKind(host) !== undefined && !wildcards.has(host)
}

/** Whether `host` binds every interface. */
export function isWildcardHost (host: string): boolean {
  return wildcards.has(host)
}

/** `/ip4/10.0.0.5/tcp/0`: the agent's `--listen` multiaddr (a DNS name binds as given). */
export function listenMultiaddr (listen: { host: string, port?: number }): string {
  return `/${hostKind(listen.host) ?? 'dns'}/${listen.host}/tcp/${listen.port ?? 0}`
}

/**
 * What is wrong with a network as given (one phrase, for a refusal), or undefined when
 * nothing is: the listen text must parse and the advertised host must be one others can dial.
 */
export function agentNetworkProblem (network: AgentNetwork): string | undefined {
  if (network.listen !== undefined && parseListen(network.listen) === undefined) {
    return `listen ${JSON.stringify(network.listen)} is not HOST, HOST:PORT or [V6]:PORT with a port from 1 to 65535`
  }
  if (network.advertise !== undefined && !isAdvertisableHost(network.advertise)) {
    return `advertise ${JSON.stringify(network.advertise)} is not an IPv4 or IPv6 address or a host name others can dial`
  }
  return undefined
}
