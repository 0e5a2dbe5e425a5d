/**
 * A small world of real transports for tests and local experiments: N Libp2pTransports
 * on loopback with ephemeral ports, one network key, each dialled directly to every
 * other one. It is the real counterpart of sim/sim-network-world.ts: `wait` really
 * waits, and `close` stops every node.
 *
 * `create` returns only once every pair is connected and has gossipsub streams both
 * ways, so a subscription made afterwards is announced to every peer at once. Meshes
 * form later, at gossipsub heartbeats, but publishing does not need them: the
 * transport flood-publishes to every peer known to subscribe (see libp2p-transport.ts);
 * `waitForMesh` is there for tests about forwarding.
 */
import { CantripError } from '../../runtime/errors.ts'
import type { Logger } from '../../runtime/logger.ts'
import { Libp2pTransport } from './libp2p-transport.ts'
import { generateNetworkKey } from './network-key.ts'
import { generatePeerKey } from './peer-identity.ts'

export interface Libp2pWorldOptions {
  peers: number
  /** The network key of the world; a new one when not given. */
  networkKey?: Uint8Array
  heartbeatIntervalMs?: number
  /** Longest wait for the world to connect before `create` gives up (and stops what it started). */
  readyTimeoutMs?: number
  logger?: Logger
}

const pollMs = 10

export class Libp2pWorld {
  readonly transports: Libp2pTransport[]
  readonly networkKey: Uint8Array

  private constructor (transports: Libp2pTransport[], networkKey: Uint8Array) {
    this.transports = transports
    this.networkKey = networkKey
  }

  static async create (options: Libp2pWorldOptions): Promise<Libp2pWorld> {
    const networkKey = options.networkKey ?? generateNetworkKey()
    const started = await Promise.allSettled(Array.from({ length: options.peers }, async () => await Libp2pTransport.create({
      privateKey: await generatePeerKey(),
      networkKey,
      ...(options.heartbeatIntervalMs === undefined ? {} : { heartbeatIntervalMs: options.heartbeatIntervalMs }),
      ...(options.logger === undefined ? {} : { logger: options.logger })
    })))
    const transports = started.flatMap(result => result.status === 'fulfilled' ? [result.value] : [])
    const world = new Libp2pWorld(transports, networkKey)
    try {
      const failed = started.find(result => result.status === 'rejected')
      if (failed !== undefined) throw (failed as PromiseRejectedResult).reason
      // One dial per pair: dialling both ways at once would race two connections.
      const dials: Array<Promise<unknown>> = []
      for (const [i, from] of transports.entries()) {
        for (const to of transports.slice(i + 1)) dials.push(from.dial(to.addresses()[0]!))
      }
      await Promise.all(dials)
      await world.waitFor('every pair connected with gossipsub streams both ways', () => transports.every(transport => {
        const others = transports.filter(other => other !== transport).map(other => other.peerId)
        const connected = new Set(transport.connectedPeers())
        const gossiping = new Set(transport.gossipPeers())
        return others.every(peer => connected.has(peer) && gossiping.has(peer))
      }), options.readyTimeoutMs ?? 10_000)
    } catch (error) {
      await world.close()
      throw error
    }
    return world
  }

  /** Really waits `ms`. */
  async wait (ms: number): Promise<void> {
    await new Promise(resolve => setTimeout(resolve, ms))
  }

  /** Polls `condition` until it holds; fails after `timeoutMs` with what it waited for. */
  async waitFor (what: string, condition: () => boolean, timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs
    while (!condition()) {
      if (performance.now() > deadline) throw new CantripError(`libp2p world: ${what}: not within ${timeoutMs} ms`)
      await this.wait(pollMs)
    }
  }

  /** Waits until every transport subscribed to `topic` has a mesh peer for it (after a heartbeat). */
  async waitForMesh (topic: string, timeoutMs: number): Promise<void> {
    await this.waitFor(`a gossipsub mesh for topic "${topic}"`, () => this.transports
      .filter(transport => transport.node.status === 'started' && transport.node.services.pubsub.getTopics().includes(topic))
      .every(transport => transport.meshPeers(topic).length > 0), timeoutMs)
  }

  /** Stops every transport (a stopped one is a no-op). */
  async close (): Promise<void> {
    await Promise.allSettled(this.transports.map(async transport => { await transport.stop() }))
  }
}
