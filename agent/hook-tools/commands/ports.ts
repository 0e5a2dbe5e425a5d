/**
 * open-port, close-port and opened-ports (juju-semantics §5.3).
 *
 * A port is `80`, `80/tcp`, `1000-2000/udp` or `icmp` (case-insensitive; tcp by
 * default), parsed and validated as Juju's network.ParsePortRange does; a bad one is a
 * usage error. `--endpoints a,b` limits the change to those endpoints; without it the
 * change applies to all endpoints, passed to the context as `['*']` (the same marker
 * `OpenedPort.endpoints` uses). Opening and closing are buffered until the hook succeeds,
 * so opened-ports shows only what was committed before this hook.
 */
import type { PortRange } from '../hook-context.ts'
import { checkEmpty, goQuote, usageError } from './args.ts'
import { outputFlags, writeOutput } from './format.ts'
import type { HookTool } from './hook-tool.ts'

/** Go's strconv.Atoi, with its error text. */
function atoi (text: string, what: string): number {
  if (!/^[+-]?[0-9]+$/.test(text)) throw usageError(`invalid port ${goQuote(what)}: strconv.Atoi: parsing ${goQuote(text)}: invalid syntax`)
  return Number(text)
}

function describe (range: { protocol: string, from: number, to: number }): string {
  if (range.protocol === 'icmp') return 'icmp'
  return range.from === range.to ? `${range.from}/${range.protocol}` : `${range.from}-${range.to}/${range.protocol}`
}

/** network.ParsePortRange followed by Validate; every failure is a usage error. */
export function parsePortRange (input: string): PortRange {
  const text = input.toLowerCase()
  const slash = text.indexOf('/')
  const ports = slash < 0 ? text : text.slice(0, slash)
  let protocol = slash < 0 ? 'tcp' : text.slice(slash + 1)
  const parts = ports.split('-')
  let from: number
  let to: number
  if (parts.length > 2) throw usageError(`invalid port range ${goQuote(ports)}`)
  if (parts.length === 1) {
    if (parts[0] === 'icmp') {
      from = -1
      to = -1
    } else {
      from = to = atoi(parts[0]!, ports)
    }
  } else {
    from = atoi(parts[0]!, parts[0]!)
    to = atoi(parts[1]!, parts[1]!)
  }
  if (from === -1) protocol = 'icmp'
  if (protocol !== 'tcp' && protocol !== 'udp' && protocol !== 'icmp') {
    throw usageError(`invalid protocol ${goQuote(protocol)}, expected "tcp", "udp", or "icmp"`)
  }
  if (protocol === 'icmp') {
    if (from === -1 && to === -1) return { protocol: 'icmp' }
    throw usageError(`protocol "icmp" doesn't support any ports; got "${from}"`)
  }
  if (from > to) throw usageError(`invalid port range ${describe({ protocol, from, to })}`)
  if (from < 0 || from > 65535 || to < 0 || to > 65535) {
    throw usageError(`port range bounds must be between 0 and 65535, got ${from}-${to}`)
  }
  return { protocol, from, to }
}

function portCommand (name: 'open-port' | 'close-port'): HookTool {
  const opening = name === 'open-port'
  return {
    name,
    args: '<port>[/<protocol>] or <from>-<to>[/<protocol>] or icmp',
    purpose: opening ? 'Register a request to open a port or port range.' : 'Register a request to close a port or port range.',
    doc: `By default the port or range is ${opening ? 'opened' : 'closed'} for all application endpoints; --endpoints limits the request to a comma-delimited list of endpoints. The change takes effect only if the hook succeeds.`,
    flags: () => ({
      format: { names: ['format'], value: 'format', usage: 'deprecated format flag' },
      endpoints: { names: ['endpoints'], value: 'endpoints', usage: 'a comma-delimited list of application endpoints to target with this operation' }
    }),
    async run (call, parsed) {
      const [port, ...rest] = parsed.args
      if (port === undefined) throw usageError('no port or range specified')
      const range = parsePortRange(port)
      checkEmpty(rest)
      const format = parsed.string('format')
      // Juju writes this warning without a newline; so does cantrip.
      if (format !== undefined && format !== '') call.stderr += `--format flag deprecated for command ${goQuote(name)}`
      const listed = parsed.string('endpoints') ?? ''
      const endpoints = listed === '' ? ['*'] : listed.split(',').map(endpoint => endpoint.trim())
      if (opening) await call.context.openPort(range, endpoints)
      else await call.context.closePort(range, endpoints)
    }
  }
}

export const openPort = portCommand('open-port')
export const closePort = portCommand('close-port')

const protocolOrder = (port: PortRange): string => port.protocol

/** Juju's PortRange.LessThan: by protocol name, then from, then to (icmp counts as -1). */
function comparePorts (a: PortRange, b: PortRange): number {
  if (protocolOrder(a) !== protocolOrder(b)) return protocolOrder(a) < protocolOrder(b) ? -1 : 1
  return ((a.from ?? -1) - (b.from ?? -1)) || ((a.to ?? -1) - (b.to ?? -1))
}

function portText (port: PortRange): string {
  return describe({ protocol: port.protocol, from: port.from ?? -1, to: port.to ?? -1 })
}

export const openedPorts: HookTool = {
  name: 'opened-ports',
  args: '',
  purpose: 'List all ports or port ranges opened by the unit.',
  doc: 'Each entry is <port>/<protocol> or <from>-<to>/<protocol>; with --endpoints it is followed by the endpoints it applies to, or (*) for all. Ports opened or closed in the current hook are not shown until it succeeds.',
  flags: () => ({
    ...outputFlags,
    endpoints: { names: ['endpoints'], usage: 'display the list of target application endpoints for each port range' }
  }),
  async run (call, parsed) {
    checkEmpty(parsed.args)
    const byRange = new Map<string, { port: PortRange, endpoints: Set<string> }>()
    for (const opened of await call.context.openedPorts()) {
      const key = portText(opened)
      const entry = byRange.get(key) ?? { port: opened, endpoints: new Set<string>() }
      for (const endpoint of opened.endpoints) entry.endpoints.add(endpoint)
      byRange.set(key, entry)
    }
    const entries = [...byRange.values()].sort((a, b) => comparePorts(a.port, b.port))
    const lines = entries.map(({ port, endpoints }) => {
      if (!parsed.bool('endpoints')) return portText(port)
      const shown = endpoints.has('*') || endpoints.size === 0 ? '*' : [...endpoints].sort().join(', ')
      return `${portText(port)} (${shown})`
    })
    await writeOutput(call, parsed, lines)
  }
}
