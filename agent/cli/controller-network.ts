/**
 * Where a controller group's members listen and what they advertise: `cantrip bootstrap
 * --listen HOST[:PORT] --advertise HOST --machine-network CIDR`. Kept in the controller's
 * directory (`network.json`) so every member started later (enable-ha, a restart) binds
 * and advertises the same way without being told again.
 *
 * The default is this host's loopback, as `juju bootstrap localhost` reaches its
 * controller: nothing else assumes 127.0.0.1. A group other hosts join listens on an
 * address they can reach (`--listen 10.0.0.5`, or `--listen 0.0.0.0 --advertise
 * 10.0.0.5`); with a fixed port, member cN listens on PORT + N, as several members share
 * this host.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { InvalidInputError } from '../../runtime/errors.ts'
import { hostProtocol } from '../mesh/advertised-addresses.ts'
import { parseMachineNetwork } from '../netns-machine-network.ts'

export interface ControllerNetwork {
  /** The host the members bind. */
  readonly listen: string
  /** The host everyone else dials. */
  readonly advertise: string
  /** The first member's port; free ports when absent. */
  readonly port?: number
  /** Isolated local machines: each in its own network namespace, addressed from CIDR. */
  readonly machineNetwork?: string
}

export const loopbackNetwork: ControllerNetwork = { listen: '127.0.0.1', advertise: '127.0.0.1' }

const fileName = 'network.json'
const wildcard = new Set(['0.0.0.0', '::'])

/** The bootstrap flags as a network; one clear line for each thing wrong. */
export function controllerNetwork (component: string, flags: { listen?: string, advertise?: string, machineNetwork?: string }): ControllerNetwork {
  const { host: listen, port } = flags.listen === undefined ? { host: loopbackNetwork.listen, port: undefined } : hostAndPort(component, flags.listen)
  if (flags.advertise !== undefined) hostProtocol(component, flags.advertise)
  const machineNetwork = flags.machineNetwork === undefined ? undefined : parseMachineNetwork(component, flags.machineNetwork)
  // Machines in their namespaces reach the controllers at the bridge's address.
  const bridge = machineNetwork?.gateway
  const advertise = flags.advertise ?? (wildcard.has(listen) ? bridge : listen)
  if (advertise === undefined) throw new InvalidInputError(component, `--advertise HOST with --listen ${listen} (no other host can dial ${listen})`, 'none')
  if (bridge !== undefined && flags.listen === undefined) {
    // The controllers must be reachable from the machines' namespaces: they listen on the bridge.
    return { listen: bridge, advertise: flags.advertise ?? bridge, machineNetwork: machineNetwork!.cidr }
  }
  return { listen, advertise, ...(port === undefined ? {} : { port }), ...(machineNetwork === undefined ? {} : { machineNetwork: machineNetwork.cidr }) }
}

/** `HOST`, `HOST:PORT` or `[V6]:PORT`. */
function hostAndPort (component: string, text: string): { host: string, port?: number } {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:\s]+))(?::(\d{1,5}))?$/.exec(text) ?? /^([0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*)()$/.exec(text)
  if (match === null) throw new InvalidInputError(component, '--listen as HOST or HOST:PORT (e.g. 10.0.0.5:17070)', text)
  const host = match[1] ?? match[2] ?? ''
  hostProtocol(component, host)
  if (match[3] === undefined || match[3] === '') return { host }
  const port = Number(match[3])
  if (port < 1 || port > 65535) throw new InvalidInputError(component, '--listen with a port from 1 to 65535', text)
  return { host, port }
}

export function writeControllerNetwork (dir: string, network: ControllerNetwork): void {
  const file = join(dir, fileName)
  writeFileSync(`${file}.new`, JSON.stringify(network, null, 2) + '\n', { mode: 0o600 })
  renameSync(`${file}.new`, file)
}

/** The group's network; loopback for a controller bootstrapped before it was configurable. */
export function readControllerNetwork (dir: string): ControllerNetwork {
  const file = join(dir, fileName)
  if (!existsSync(file)) return loopbackNetwork
  const value = JSON.parse(readFileSync(file, 'utf8')) as Partial<ControllerNetwork>
  if (typeof value.listen !== 'string' || typeof value.advertise !== 'string') throw new InvalidInputError('controller network', `"listen" and "advertise" in ${file}`, JSON.stringify(value))
  return value as ControllerNetwork
}

/** `/ip4/HOST`, `/ip6/HOST` or `/dns/HOST`. */
export function hostMultiaddr (host: string): string {
  return `/${hostProtocol('controller network', host)}/${host}`
}
