/**
 * The network a controller gives the local machines it starts when they name none of
 * their own (providers/local-provider.ts `defaultNetwork`): the controller's, so a group
 * bootstrapped on an address other hosts reach (`bootstrap --listen 10.0.0.5`, or
 * `--listen 0.0.0.0 --advertise 10.0.0.5`) has machines, and units, reachable at that
 * address too rather than at this host's loopback. A group on loopback keeps the agents'
 * own default (127.0.0.1), as `juju bootstrap localhost` does.
 */
import { isAdvertisableHost, type AgentNetwork } from '../runtime/agent-network.ts'

const loopback = /^(127\.|::1$|localhost$)/

/** `--listen /ip4/H/tcp/P` and `--advertise A` of a controller as its machines' default; undefined on loopback. */
export function machineDefaultNetwork (listen: string | undefined, advertise: string | undefined): AgentNetwork | undefined {
  const host = listen === undefined ? undefined : /^\/(?:ip4|ip6|dns|dns4|dns6)\/([^/]+)/.exec(listen)?.[1]
  const outward = advertise ?? (host !== undefined && isAdvertisableHost(host) ? host : undefined)
  if (outward === undefined || loopback.test(outward)) return undefined
  return { ...(host === undefined ? {} : { listen: host.includes(':') ? `[${host}]` : host }), advertise: outward }
}
