/**
 * The CLI's way into the mesh's gossip (log batches for `debug-log`), started only when a
 * command first listens: a full mesh node (agent/mesh/libp2p-transport.ts) with the
 * admin's identity, dialling every member, since a publication reaches a subscriber only
 * from a peer it is connected to. Its module (gossipsub and the rest) is loaded then
 * too, so the commands that only ask and exit never read or compile it.
 */
import type { Libp2pTransport } from '../mesh/libp2p-transport.ts'

export interface GossipLinkOptions {
  privateKey: Uint8Array
  networkKey: Uint8Array
  /** The members' multiaddrs (`/p2p/<peer id>`), dialled at start and redialled when lost. */
  bootstrap: readonly string[]
}

export class GossipLink {
  readonly #options: GossipLinkOptions
  #transport: Promise<Libp2pTransport> | undefined
  #stopped = false

  constructor (options: GossipLinkOptions) {
    this.#options = options
  }

  /**
   * Runs `attach` on the node once it has started (at once if it has); the returned
   * function undoes it, also when called before the node was up. A node that cannot start
   * leaves the listener unattached: a watch then falls back on its caller's re-reads.
   */
  attach (attach: (transport: Libp2pTransport) => () => void): () => void {
    let detach: (() => void) | undefined
    let cancelled = false
    this.#node().then(transport => {
      if (!cancelled && !this.#stopped) detach = attach(transport)
    }, () => {})
    return () => {
      cancelled = true
      detach?.()
      detach = undefined
    }
  }

  async stop (): Promise<void> {
    this.#stopped = true
    if (this.#transport === undefined) return
    await (await this.#transport.catch(() => undefined))?.stop()
  }

  async #node (): Promise<Libp2pTransport> {
    this.#transport ??= import('../mesh/libp2p-transport.ts').then(async ({ Libp2pTransport }) => await Libp2pTransport.create(this.#options))
    return await this.#transport
  }
}
