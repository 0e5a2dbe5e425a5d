/**
 * Isolated local machines (`cantrip bootstrap --machine-network 10.213.7.0/24`, root
 * only): each machine the local provider starts gets a Linux network namespace of its own,
 * joined to this host by a veth pair on one bridge, with its own address in the network,
 * as LXD gives each container an address on its bridge. Two units on two machines can then
 * both listen on their charm's port, and a unit's private-address is an address another
 * machine really reaches it at.
 *
 * The bridge takes the network's first address (the controllers listen there: machines
 * dial it); machines take the next free ones. Names derive from the network, so every
 * controller of the group, and `destroy-controller`, find the same ones:
 *
 *   bridge     cbr<tag>            (interface names have at most 15 bytes)
 *   namespace  cantrip-<tag>-<n>   where the machine's address is the network's n-th
 *   veth       cv<tag>-<n> on the bridge, eth0 inside the namespace
 *
 * The bridge has no route out and no NAT: nothing a machine sends leaves this host.
 */
import { execFileSync } from 'node:child_process'
import { InvalidInputError } from '../runtime/errors.ts'
import { hashString32 } from '../runtime/random.ts'
import type { LocalMachineNetwork } from '../providers/local-provider.ts'

export interface MachineNetworkSpec {
  readonly cidr: string
  /** The bridge's address: the controllers' side. */
  readonly gateway: string
  readonly prefix: number
  /** The network's address as a number. */
  readonly base: number
  readonly size: number
}

/** Networks from /16 (65534 machines) to /29 (5). */
const prefixMin = 16
const prefixMax = 29

export function parseMachineNetwork (component: string, text: string): MachineNetworkSpec {
  const expected = `--machine-network as an IPv4 network from /${prefixMin} to /${prefixMax} (e.g. 10.213.7.0/24)`
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(text)
  if (match === null) throw new InvalidInputError(component, expected, text)
  const octets = match.slice(1, 5).map(Number)
  const prefix = Number(match[5])
  if (octets.some(o => o > 255) || prefix < prefixMin || prefix > prefixMax) throw new InvalidInputError(component, expected, text)
  const value = octets.reduce((acc, o) => acc * 256 + o, 0)
  const size = 2 ** (32 - prefix)
  const base = value - (value % size)
  const cidr = `${dotted(base)}/${prefix}`
  return { cidr, gateway: dotted(base + 1), prefix, base, size }
}

function dotted (value: number): string {
  return [24, 16, 8, 0].map(shift => Math.floor(value / 2 ** shift) % 256).join('.')
}

/**
 * Why this process cannot make namespaces, or undefined when it can: the reason a
 * bootstrap or a controller gives when it falls back to loopback.
 */
export function machineNetworkUnavailable (): string | undefined {
  const uid = process.getuid?.()
  if (uid !== 0) return `it needs root to make network namespaces (running as uid ${uid ?? 'unknown'})`
  try {
    execFileSync('ip', ['netns', 'list'], { stdio: ['ignore', 'pipe', 'pipe'] })
  } catch (error) {
    return `"ip netns" does not work here (${firstLine(error)})`
  }
  return undefined
}

export class NetnsMachineNetwork implements LocalMachineNetwork {
  readonly spec: MachineNetworkSpec
  readonly #tag: string
  #queue: Promise<unknown> = Promise.resolve()

  constructor (cidr: string) {
    this.spec = parseMachineNetwork('machine network', cidr)
    this.#tag = hashString32(this.spec.cidr).toString(16).padStart(8, '0').slice(0, 6)
  }

  get bridge (): string { return `cbr${this.#tag}` }

  /** Makes the bridge with the gateway address if it is missing; idempotent. */
  ensureBridge (): void {
    if (this.#links().includes(this.bridge)) return
    ip(['link', 'add', this.bridge, 'type', 'bridge'])
    ip(['addr', 'add', `${this.spec.gateway}/${this.spec.prefix}`, 'dev', this.bridge])
    ip(['link', 'set', this.bridge, 'up'])
  }

  async attach (machineId: string): Promise<{ namespace: string, address: string }> {
    // One at a time in this process: two starts must not take the same address.
    const run = this.#queue.then(() => this.#attach(machineId))
    this.#queue = run.catch(() => {})
    return await run
  }

  #attach (_machineId: string): { namespace: string, address: string } {
    this.ensureBridge()
    const used = new Set(this.namespaces().map(name => Number(name.slice(name.lastIndexOf('-') + 1))))
    let n = 2
    while (used.has(n) && n < this.spec.size - 1) n++
    if (n >= this.spec.size - 1) throw new Error(`machine network ${this.spec.cidr}: every address is taken`)
    const namespace = `cantrip-${this.#tag}-${n}`
    const address = dotted(this.spec.base + n)
    this.#plumb(namespace, n, address)
    return { namespace, address }
  }

  /** The namespace, its veth pair on the bridge and its address; all undone if a step fails. */
  #plumb (namespace: string, n: number, address: string): void {
    const veth = `cv${this.#tag}-${n}`
    try {
      ip(['netns', 'add', namespace])
      ip(['link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', namespace])
      ip(['link', 'set', veth, 'master', this.bridge, 'up'])
      ip(['-n', namespace, 'addr', 'add', `${address}/${this.spec.prefix}`, 'dev', 'eth0'])
      ip(['-n', namespace, 'link', 'set', 'eth0', 'up'])
      ip(['-n', namespace, 'link', 'set', 'lo', 'up'])
    } catch (error) {
      this.detachSync(namespace)
      throw error
    }
  }

  async restore (namespace: string, address: string): Promise<void> {
    const run = this.#queue.then(() => {
      if (this.namespaces().includes(namespace)) return
      this.ensureBridge()
      this.#plumb(namespace, Number(namespace.slice(namespace.lastIndexOf('-') + 1)), address)
    })
    this.#queue = run.catch(() => {})
    await run
  }

  async detach (namespace: string): Promise<void> {
    this.detachSync(namespace)
  }

  /** Removing the namespace removes its end of the veth pair, and so the pair. */
  detachSync (namespace: string): void {
    if (!this.namespaces().includes(namespace)) return
    try { ip(['netns', 'del', namespace]) } catch { /* gone meanwhile */ }
  }

  wrap (namespace: string, command: { file: string, args: readonly string[] }): { file: string, args: string[] } {
    // `ip netns exec` enters the namespace and execs the command: the pid stays the agent's.
    return { file: ipCommand(), args: ['netns', 'exec', namespace, command.file, ...command.args] }
  }

  /** This network's namespaces, from `ip netns list`. */
  namespaces (): string[] {
    const prefix = `cantrip-${this.#tag}-`
    return ip(['netns', 'list']).split('\n').map(line => line.split(' ')[0] ?? '').filter(name => name.startsWith(prefix))
  }

  /** Every namespace and the bridge (destroy-controller). */
  removeAll (): void {
    for (const namespace of this.namespaces()) this.detachSync(namespace)
    if (this.#links().includes(this.bridge)) {
      try { ip(['link', 'del', this.bridge]) } catch { /* gone meanwhile */ }
    }
  }

  #links (): string[] {
    return ip(['-o', 'link', 'show']).split('\n').map(line => /^\d+:\s+([^:@\s]+)/.exec(line)?.[1] ?? '').filter(Boolean)
  }
}

let ipPath: string | undefined

function ipCommand (): string {
  if (ipPath !== undefined) return ipPath
  for (const candidate of ['/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip', '/bin/ip']) {
    try {
      execFileSync(candidate, ['-V'], { stdio: 'ignore' })
      ipPath = candidate
      return candidate
    } catch { /* not here */ }
  }
  return 'ip'
}

function ip (args: readonly string[]): string {
  try {
    return execFileSync(ipCommand(), args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 10_000 })
  } catch (error) {
    throw new Error(`machine network: ip ${args.join(' ')}: ${firstLine(error)}`, { cause: error })
  }
}

function firstLine (error: unknown): string {
  const stderr = (error as { stderr?: string | Buffer }).stderr
  const text = stderr !== undefined && String(stderr).trim() !== '' ? String(stderr) : error instanceof Error ? error.message : String(error)
  return text.trim().split('\n')[0] ?? ''
}
