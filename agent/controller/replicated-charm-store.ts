/**
 * A controller's charm store that fills itself from its peer controllers, so an admin
 * uploads an archive to one controller and every controller can serve it. The Raft log
 * carries only the archive's identity (`add-charm`: URL → hash), never its bytes.
 *
 * When this controller is asked for a hash it does not hold, it asks its peers in turn
 * over the controller API for the manifest (`{op: 'charm-manifest', hash, local: true}`)
 * and then for each chunk (`charm-chunk`), feeding them into its own store as an upload
 * (charm-store.ts checks each chunk against the manifest and the whole against the
 * hash); a peer that fails half-way leaves the chunks received so far, and the next peer
 * is asked only for the rest. `local: true` makes a peer answer from its own store only,
 * so a fetch is one hop and two controllers that both lack an archive cannot ask each
 * other in a loop. Concurrent requests for one hash share one fetch; the peers asked, the
 * time each may take and the fetches running at once are bounded (limits.charmFetch*).
 *
 * Committing an upload waits until a majority of the controllers hold the archive: the
 * peers are asked for its manifest without `local`, which makes each fetch it from here.
 * So once `deploy` has added the charm to the model, losing the controller it uploaded
 * to loses no archive.
 */
import { controllerApiProtocol, type CharmArchives } from '../../actors/controller/controller-api.ts'
import { requestApi } from '../../actors/controller/api-requests.ts'
import { isInvalidManifest, parseCharmManifest, type CharmManifest, type CharmUploadState } from '../../runtime/charm/charm-manifest.ts'
import { CantripError } from '../../runtime/errors.ts'
import { limits } from '../../runtime/limits.ts'
import type { Logger } from '../../runtime/logger.ts'
import type { PeerId, Transport } from '../../runtime/transport.ts'
import type { CharmStore, StoreKind } from './charm-store.ts'

export interface ReplicatedCharmStoreOptions {
  /** This controller's own store. */
  store: CharmStore
  transport: Transport
  /** This controller's peer id, skipped among `peers`. */
  self: PeerId
  /** The controllers to ask, read at each fetch so membership changes are followed. */
  peers: () => readonly PeerId[]
  /** Time one peer may take to answer one request; limits.charmFetchPeerTimeoutMs by default. */
  timeoutMs?: number
  /** Time a commit waits for a majority to hold the archive; limits.charmReplicationTimeoutMs by default. */
  replicationTimeoutMs?: number
  logger?: Logger
  /** What the store holds (the peers are asked for the same kind); 'charm' by default. */
  kind?: StoreKind
}

/** Too many distinct archives are being fetched already: refused at once. */
export class CharmFetchBusyError extends CantripError {
  override name = 'CharmFetchBusyError'
  constructor (hash: string, inFlightMax: number, kind: StoreKind = 'charm') {
    super(`${componentOf(kind)}: cannot fetch ${thingOf(kind)} "${hash}": ${inFlightMax} fetches already in flight, the maximum`)
  }
}

const componentOf = (kind: StoreKind): string => kind === 'charm' ? 'replicated charm store' : 'replicated agent binary store'
const thingOf = (kind: StoreKind): string => kind === 'charm' ? 'charm archive' : 'agent bundle'

/** An accepted upload that not enough controllers could copy in time. */
export class CharmReplicationError extends CantripError {
  override name = 'CharmReplicationError'
}

export class ReplicatedCharmStore implements CharmArchives {
  readonly #o: ReplicatedCharmStoreOptions
  readonly #fetches = new Map<string, Promise<CharmManifest | undefined>>()
  readonly #kind: StoreKind
  /** Added to every request to a peer: which of its stores is meant. */
  readonly #store: { store?: 'agent' }

  constructor (options: ReplicatedCharmStoreOptions) {
    this.#o = options
    this.#kind = options.kind ?? 'charm'
    this.#store = this.#kind === 'agent' ? { store: 'agent' } : {}
  }

  get #component (): string {
    return componentOf(this.#kind)
  }

  async begin (manifest: CharmManifest): Promise<CharmUploadState> {
    return await this.#o.store.begin(manifest)
  }

  async putChunk (hash: string, index: number, bytes: Uint8Array): Promise<void> {
    await this.#o.store.putChunk(hash, index, bytes)
  }

  async commit (hash: string): Promise<void> {
    await this.#o.store.commit(hash)
    await this.#replicate(hash)
  }

  async manifest (hash: string, options: { local?: boolean } = {}): Promise<CharmManifest | undefined> {
    // The store checks the hash's form (and throws) before anything goes to a peer.
    const held = await this.#o.store.manifest(hash)
    if (held !== undefined || options.local === true) return held
    return await this.#ensure(hash)
  }

  async chunk (hash: string, index: number, options: { local?: boolean } = {}): Promise<Uint8Array | undefined> {
    if (options.local !== true && await this.#o.store.manifest(hash) === undefined) await this.#ensure(hash)
    return await this.#o.store.chunk(hash, index)
  }

  /** A whole archive, for tests: fetched from the peers first if need be. */
  async get (hash: string): Promise<Uint8Array | undefined> {
    return await this.manifest(hash) === undefined ? undefined : await this.#o.store.get(hash)
  }

  /** Fetches currently running (one per hash). */
  fetchesInFlight (): number {
    return this.#fetches.size
  }

  async #ensure (hash: string): Promise<CharmManifest | undefined> {
    const running = this.#fetches.get(hash)
    if (running !== undefined) return await running
    if (this.#fetches.size >= limits.charmFetchesInFlightMax) throw new CharmFetchBusyError(hash, limits.charmFetchesInFlightMax, this.#kind)
    const fetch = this.#fetch(hash).finally(() => { this.#fetches.delete(hash) })
    this.#fetches.set(hash, fetch)
    return await fetch
  }

  async #fetch (hash: string): Promise<CharmManifest | undefined> {
    for (const peer of this.#candidates()) {
      try {
        const manifest = await this.#copyFrom(peer, hash)
        if (manifest === undefined) continue
        this.#o.logger?.log('info', `${thingOf(this.#kind)} "${hash}" fetched from controller "${peer}"`, { hash, peer, bytes: manifest.size })
        return manifest
      } catch (error) {
        this.#o.logger?.log('warning', `cannot fetch ${thingOf(this.#kind)} "${hash}" from controller "${peer}": ${error instanceof Error ? error.message : String(error)}`, { hash, peer })
      }
    }
    return undefined
  }

  /** Copies the archive from `peer`'s own store, chunk by chunk; undefined if it has none. Throws on a bad or broken copy. */
  async #copyFrom (peer: PeerId, hash: string): Promise<CharmManifest | undefined> {
    const reply = await this.#ask(peer, { op: 'charm-manifest', hash, local: true, ...this.#store })
    if (!reply.ok) throw new CantripError(reply.error)
    if (reply.manifest === null) return undefined
    const manifest = parseCharmManifest(reply.manifest, this.#component)
    if (isInvalidManifest(manifest)) throw new CantripError(manifest.invalid)
    if (manifest.hash !== hash) throw new CantripError(`${this.#component}: expected the manifest of "${hash}", got that of "${manifest.hash}"`)
    const { missing } = await this.#o.store.begin(manifest)
    for (const index of missing) {
      const chunk = await this.#ask(peer, { op: 'charm-chunk', hash, index, local: true, ...this.#store })
      if (!chunk.ok) throw new CantripError(chunk.error)
      if (!(chunk.bytes instanceof Uint8Array)) throw new CantripError(`${this.#component}: expected chunk ${index} of "${hash}", got none`)
      await this.#o.store.putChunk(hash, index, chunk.bytes)
    }
    await this.#o.store.commit(hash)
    return manifest
  }

  async #ask<Op extends 'charm-manifest' | 'charm-chunk'> (peer: PeerId, request: Parameters<typeof requestApi<Op>>[3]): ReturnType<typeof requestApi<Op>> {
    return await requestApi<Op>(this.#o.transport, peer, controllerApiProtocol, request, { component: this.#component, timeoutMs: this.#o.timeoutMs ?? limits.charmFetchPeerTimeoutMs })
  }

  /** Peers other than this one, those connected now first, at most limits.charmFetchPeersMax. */
  #candidates (): PeerId[] {
    const connected = new Set(this.#o.transport.connectedPeers())
    const others = this.#others()
    return [...others.filter(peer => connected.has(peer)), ...others.filter(peer => !connected.has(peer))].slice(0, limits.charmFetchPeersMax)
  }

  #others (): PeerId[] {
    return [...new Set(this.#o.peers())].filter(peer => peer !== this.#o.self)
  }

  /**
   * Resolves once a majority of the group (this controller included) holds `hash`: each
   * peer is asked for the manifest without `local`, so it fetches the archive from here.
   */
  async #replicate (hash: string): Promise<void> {
    const others = this.#others()
    const group = others.length + 1
    const needed = Math.floor(group / 2) // Peers besides this one.
    if (needed === 0) return
    let held = 0
    let answered = 0
    let last = 'no peer answered'
    await new Promise<void>(resolve => {
      for (const peer of others) {
        requestApi(this.#o.transport, peer, controllerApiProtocol, { op: 'charm-manifest', hash, ...this.#store }, { component: this.#component, timeoutMs: this.#o.replicationTimeoutMs ?? limits.charmReplicationTimeoutMs })
          .then(reply => {
            if (reply.ok && reply.manifest !== null) held++
            else last = reply.ok ? `controller "${peer}" could not copy it` : reply.error
          }, (error: unknown) => { last = error instanceof Error ? error.message : String(error) })
          .finally(() => {
            answered++
            if (held >= needed || answered === others.length) resolve()
          })
      }
    })
    if (held < needed) {
      throw new CharmReplicationError(`${this.#component}: ${thingOf(this.#kind)} "${hash}" is on ${held + 1} of ${group} controllers, expected a majority (${needed + 1}): ${last}`)
    }
  }
}
