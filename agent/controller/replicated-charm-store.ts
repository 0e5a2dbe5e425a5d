/**
 * A controller's charm store that fills itself from its peer controllers, so an admin
 * puts an archive to one controller and every controller can serve it. The model records
 * only URL → hash; when this controller is asked for a hash it does not hold, it asks its
 * peers in turn over the controller API (`{op: 'charm-archive', hash, local: true}`),
 * keeps the first answer whose sha256 is the hash asked for, stores it and answers.
 *
 * `local: true` makes a peer answer from its own store only, so a fetch is one hop and
 * two controllers that both lack an archive cannot ask each other in a loop. Concurrent
 * gets of one hash share one fetch; the peers asked, the time each may take and the
 * fetches running at once are bounded (limits.charmFetch*). A hash nobody has answers
 * undefined, and the next get asks again: the archive may have been put since.
 */
import { charmArchiveHash } from '../charm/charm-archive.ts'
import { controllerApiProtocol, type CharmArchives, type CharmReply } from '../../actors/controller/controller-api.ts'
import { requestApi } from '../../actors/controller/api-requests.ts'
import { CantripError } from '../../runtime/errors.ts'
import { limits } from '../../runtime/limits.ts'
import type { Logger } from '../../runtime/logger.ts'
import type { PeerId, Transport } from '../../runtime/transport.ts'
import type { CharmStore } from './charm-store.ts'

const component = 'replicated charm store'

export interface ReplicatedCharmStoreOptions {
  /** This controller's own store. */
  store: CharmStore
  transport: Transport
  /** This controller's peer id, skipped among `peers`. */
  self: PeerId
  /** The controllers to ask, read at each fetch so membership changes are followed. */
  peers: () => readonly PeerId[]
  /** Time one peer may take to answer; limits.charmFetchPeerTimeoutMs by default. */
  timeoutMs?: number
  logger?: Logger
}

/** Too many distinct archives are being fetched already: refused at once. */
export class CharmFetchBusyError extends CantripError {
  override name = 'CharmFetchBusyError'
  constructor (hash: string, inFlightMax: number) {
    super(`${component}: cannot fetch charm archive "${hash}": ${inFlightMax} fetches already in flight, the maximum`)
  }
}

export class ReplicatedCharmStore implements CharmArchives {
  readonly #o: ReplicatedCharmStoreOptions
  readonly #fetches = new Map<string, Promise<Uint8Array | undefined>>()

  constructor (options: ReplicatedCharmStoreOptions) {
    this.#o = options
  }

  async put (bytes: Uint8Array): Promise<string> {
    return await this.#o.store.put(bytes)
  }

  async get (hash: string, options: { local?: boolean } = {}): Promise<Uint8Array | undefined> {
    // The store checks the hash's form (and throws) before anything goes to a peer.
    const held = await this.#o.store.get(hash)
    if (held !== undefined || options.local === true) return held
    const running = this.#fetches.get(hash)
    if (running !== undefined) return await running
    if (this.#fetches.size >= limits.charmFetchesInFlightMax) throw new CharmFetchBusyError(hash, limits.charmFetchesInFlightMax)
    const fetch = this.#fetch(hash).finally(() => { this.#fetches.delete(hash) })
    this.#fetches.set(hash, fetch)
    return await fetch
  }

  /** Fetches currently running (one per hash). */
  fetchesInFlight (): number {
    return this.#fetches.size
  }

  async #fetch (hash: string): Promise<Uint8Array | undefined> {
    for (const peer of this.#candidates()) {
      const bytes = await this.#ask(peer, hash)
      if (bytes === undefined) continue
      await this.#o.store.put(bytes)
      this.#o.logger?.log('info', `charm archive "${hash}" fetched from controller "${peer}"`, { hash, peer, bytes: bytes.byteLength })
      return bytes
    }
    return undefined
  }

  /** Peers other than this one, those connected now first, at most limits.charmFetchPeersMax. */
  #candidates (): PeerId[] {
    const connected = new Set(this.#o.transport.connectedPeers())
    const others = [...new Set(this.#o.peers())].filter(peer => peer !== this.#o.self)
    return [...others.filter(peer => connected.has(peer)), ...others.filter(peer => !connected.has(peer))].slice(0, limits.charmFetchPeersMax)
  }

  /** The archive from `peer`'s own store, if it has it and it is what was asked for; undefined otherwise. */
  async #ask (peer: PeerId, hash: string): Promise<Uint8Array | undefined> {
    let reply: CharmReply
    try {
      reply = await requestApi(this.#o.transport, peer, controllerApiProtocol, { op: 'charm-archive', hash, local: true }, { component, timeoutMs: this.#o.timeoutMs ?? limits.charmFetchPeerTimeoutMs })
    } catch (error) {
      this.#o.logger?.log('debug', `cannot fetch charm archive "${hash}" from controller "${peer}"`, { hash, peer, error: error instanceof Error ? error.message : String(error) })
      return undefined
    }
    if (typeof reply !== 'object' || reply === null || reply.ok !== true) {
      const error = typeof reply === 'object' && reply !== null && reply.ok === false ? String(reply.error) : 'a malformed reply'
      this.#o.logger?.log('debug', `cannot fetch charm archive "${hash}" from controller "${peer}"`, { hash, peer, error })
      return undefined
    }
    if (reply.bytes === null || reply.bytes === undefined) return undefined
    if (!(reply.bytes instanceof Uint8Array) || reply.bytes.byteLength > limits.charmArchiveBytesMax || charmArchiveHash(reply.bytes) !== hash) {
      this.#o.logger?.log('warning', `charm archive "${hash}" from controller "${peer}" refused: its bytes are not the archive asked for`, { hash, peer })
      return undefined
    }
    return reply.bytes
  }
}
