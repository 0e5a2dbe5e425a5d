/**
 * A network of Linux network namespaces the test builds itself (it runs as root), for
 * partitions that are real links going down. Node i lives in its own namespace with two
 * links: one into a bridge (in a hub namespace) that carries the traffic between nodes,
 * at 10.O.0.(i+1)/24, and a point-to-point link to the test's own namespace, over which
 * the test process reaches node i at that same address (a host route). Taking a node's
 * bridge link down cuts it off from the other nodes while the test still reaches it.
 * `destroy()` deletes every namespace and link, and is safe to call more than once.
 */
import { execFileSync } from 'node:child_process'

/** Nodes one network holds: each takes a /30 for its link to the test, 10.O.(i+1).0/30. */
export const netnsNodesMax = 16

function ip (...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] })
}

export class NetnsNet {
  /** Short and unique per run: interface names may have at most 15 characters. */
  readonly tag = `cx${process.pid % 10_000}${Math.floor(Math.random() * 100)}`
  /** The second octet of every address: per run, so two runs side by side do not share routes. */
  readonly octet = 100 + (process.pid % 100)
  readonly size: number
  readonly #created: string[] = []
  readonly #rootLinks: string[] = []
  readonly #routes: string[] = []

  constructor (size: number) {
    if (!Number.isSafeInteger(size) || size < 1 || size > netnsNodesMax) throw new Error(`netns net: expected 1 to ${netnsNodesMax} nodes, got ${size}`)
    this.size = size
  }

  get hub (): string {
    return `${this.tag}-hub`
  }

  namespace (i: number): string {
    return `${this.tag}-${i}`
  }

  /** Node i's address, on the bridge and as the test reaches it. */
  address (i: number): string {
    return `10.${this.octet}.0.${i + 1}`
  }

  /** The command prefix that runs a program inside node i's namespace. */
  launcher (i: number): string[] {
    return ['ip', 'netns', 'exec', this.namespace(i)]
  }

  create (): void {
    this.#addNamespace(this.hub)
    ip('-n', this.hub, 'link', 'add', 'br0', 'type', 'bridge')
    ip('-n', this.hub, 'link', 'set', 'br0', 'up')
    for (let i = 0; i < this.size; i++) {
      const ns = this.namespace(i)
      this.#addNamespace(ns)
      // Bridge link: created here, each end moved to its namespace.
      const [node, port] = [`${this.tag}c${i}`, `${this.tag}p${i}`]
      this.#rootLinks.push(node)
      ip('link', 'add', node, 'type', 'veth', 'peer', 'name', port)
      ip('link', 'set', node, 'netns', ns)
      ip('link', 'set', port, 'netns', this.hub)
      ip('-n', ns, 'addr', 'add', `${this.address(i)}/24`, 'dev', node)
      ip('-n', ns, 'link', 'set', node, 'up')
      ip('-n', this.hub, 'link', 'set', port, 'master', 'br0')
      ip('-n', this.hub, 'link', 'set', port, 'up')
      // The test's link to the node.
      const [root, inner] = [`${this.tag}r${i}`, `${this.tag}s${i}`]
      this.#rootLinks.push(root)
      ip('link', 'add', root, 'type', 'veth', 'peer', 'name', inner)
      ip('link', 'set', inner, 'netns', ns)
      ip('addr', 'add', `10.${this.octet}.${i + 1}.1/30`, 'dev', root)
      ip('link', 'set', root, 'up')
      ip('-n', ns, 'addr', 'add', `10.${this.octet}.${i + 1}.2/30`, 'dev', inner)
      ip('-n', ns, 'link', 'set', inner, 'up')
      ip('route', 'add', `${this.address(i)}/32`, 'via', `10.${this.octet}.${i + 1}.2`)
      this.#routes.push(`${this.address(i)}/32`)
    }
  }

  /** Takes node i's bridge link down: it reaches no other node, and no other node reaches it. */
  cut (i: number): void {
    ip('-n', this.namespace(i), 'link', 'set', `${this.tag}c${i}`, 'down')
  }

  heal (i: number): void {
    ip('-n', this.namespace(i), 'link', 'set', `${this.tag}c${i}`, 'up')
  }

  /** Deletes everything created, ignoring what is already gone. Call after the processes inside were killed. */
  destroy (): void {
    for (const route of this.#routes.splice(0)) {
      try { ip('route', 'del', route) } catch { /* gone with its link */ }
    }
    for (const ns of this.#created.splice(0).reverse()) {
      try { ip('netns', 'del', ns) } catch { /* already gone */ }
    }
    // A veth goes with either end; these are left only if a namespace move failed half-way.
    for (const link of this.#rootLinks.splice(0)) {
      try { ip('link', 'del', link) } catch { /* gone with its peer */ }
    }
  }

  #addNamespace (ns: string): void {
    ip('netns', 'add', ns)
    this.#created.push(ns)
    ip('-n', ns, 'link', 'set', 'lo', 'up')
  }
}
