/**
 * The controller role of cantripd: a Raft member over the agent's mesh transport, its
 * state on LevelDB in `<data dir>/controller`, serving the propose protocol, the agents'
 * API (with per-entity authorisation from the peer ids it was given) and change notices.
 * Its Raft id is its libp2p peer id.
 *
 * A Worker for the agent's supervisor: `done` rejects if the Raft host stops by itself
 * (its storage failed, say), which no restart inside this process can cure — the agent
 * then stops with that reason and its own supervisor (systemd, the local provider)
 * restarts the process.
 */
import { join } from 'node:path'
import { ControllerNode } from '../../actors/controller/controller-node.ts'
import type { MachinePresence } from '../../actors/controller/controller-api.ts'
import type { PresenceRow } from '../../actors/controller/api-members.ts'
import type { Entity } from '../../runtime/model/model-types.ts'
import type { Logger } from '../../runtime/logger.ts'
import { unitAgentPresence } from '../../runtime/presence/membership.ts'
import type { PresenceAgent } from '../../runtime/presence/presence-agent.ts'
import { SeededRandom } from '../../runtime/random.ts'
import { FatalError, type Worker } from '../../runtime/supervisor.ts'
import type { Transport } from '../../runtime/transport.ts'
import { randomBytes } from 'node:crypto'
import { Provisioner } from '../../actors/provisioner/provisioner.ts'
import { encodeBootstrapData, type BootstrapController } from '../../runtime/bootstrap-data.ts'
import type { Provider } from '../../runtime/provider.ts'
import { readerOf } from '../../runtime/model/model-draft.ts'
import { tableValues } from '../../runtime/model/table.ts'
import { CharmStore } from '../controller/charm-store.ts'
import { ReplicatedCharmStore } from '../controller/replicated-charm-store.ts'
import { LevelStorage } from '../level-storage.ts'
import { logTopic, machineMayLogAs, parseLogBatch } from '../../runtime/logs/log-entry.ts'
import type { LogRing } from '../../runtime/logs/log-ring.ts'
import { SystemClock } from '../system-clock.ts'

export interface ControllerRoleOptions {
  id: string
  dataDir: string
  transport: Transport
  presence: PresenceAgent
  /**
   * The controllers as given on the command line: the founding voters (bootstrapped into
   * an empty store), and who is a controller until the Raft configuration says more. The
   * Raft configuration (which `enable-ha` grows) is the authority after that.
   */
  controllers: readonly string[]
  /**
   * Join a running group (`cantripd --join`): an empty store is not bootstrapped; this
   * controller waits for the leader's log or RaftSnapshot once an admin adds it (`enable-ha`).
   */
  join?: boolean
  /** The version this agent reports (`controller-status`). */
  version?: string
  /** Where the voters listen, for the `controllers` API op (agents started before `enable-ha` learn the new members). */
  controllerAddresses?: (voters: readonly string[]) => BootstrapController[]
  /** Peer ids that act as the admin user. */
  admins: readonly string[]
  /** Machine agents by peer id → machine id. */
  machines: ReadonlyMap<string, string>
  logger: Logger
  /**
   * Where the log records agents ship (`debug-log`) are kept: owned by the agent process,
   * so a restarted role keeps what was received. This role fills it from the log topic.
   */
  logs?: LogRing
  /** Called on every Raft role change as acted on. */
  onRole: (role: { role: string, term: number, leader: string, revision: number }) => void
  /**
   * Where machines come from: the provisioner runs on the leader with this provider (and
   * the manual one for `ssh:` placements, when given). Without one, machine agents are
   * brought by hand (`--machine N=PEER`).
   */
  provisioning?: {
    provider: Provider
    manual?: Provider
    /** The mesh's private-network key, for the bootstrap data. */
    networkKey: Uint8Array
    /** Where new agents find the controllers: every controller's (every Raft voter's) peer id and multiaddrs. */
    controllerAddresses: (voters: readonly string[]) => BootstrapController[]
    /** The provisioner's back-off after a failed start or stop, [min, max] ms. */
    retryDelayMs?: readonly [number, number]
    /** Runs while the provisioner does (the local provider's restart watchdog). */
    watchdog?: { start: () => void, stop: () => Promise<void> }
  }
}

/** How often the acted-on Raft role is compared with the last one reported. */
const roleReportIntervalMs = 20
/** Per peer, while fetching a missing charm archive: below the machine agents' 2 s request timeout, so their first ask succeeds. */
const charmFetchPeerTimeoutMs = 1_500
/** How often the host is checked for having stopped by itself. */
const healthCheckIntervalMs = 500

export class ControllerRole implements Worker {
  readonly done: Promise<void>
  readonly node: ControllerNode
  readonly #storage: LevelStorage
  readonly #timers: Array<ReturnType<typeof setInterval>>
  readonly #unsubscribe: () => void
  #stopping: Promise<void> | undefined

  private constructor (node: ControllerNode, storage: LevelStorage, options: ControllerRoleOptions, unsubscribe: () => void) {
    this.node = node
    this.#storage = storage
    this.#unsubscribe = unsubscribe
    let lastRole = ''
    const report = setInterval(() => {
      const role = `${node.host.role}/${node.host.term}/${node.host.leader}`
      if (role === lastRole) return
      lastRole = role
      options.onRole({ role: node.host.role, term: node.host.term, leader: node.host.leader, revision: node.host.model().revision })
    }, roleReportIntervalMs)
    let fail: (error: unknown) => void = () => {}
    this.done = new Promise<void>((_resolve, reject) => { fail = reject })
    const health = setInterval(() => {
      if (this.#stopping !== undefined || !node.stopped) return
      const error = new FatalError(`controller ${options.id}: the Raft host stopped by itself (see the log above)`)
      void this.stop().finally(() => { fail(error) })
    }, healthCheckIntervalMs)
    this.#timers = [report, health]
  }

  static async start (options: ControllerRoleOptions): Promise<ControllerRole> {
    const { id, controllers, admins, machines, presence } = options
    if (options.join !== true && !controllers.includes(id)) throw new FatalError(`this agent's peer id ${id} is not among --controllers ${controllers.join(',')}`)
    const storage = await LevelStorage.open(join(options.dataDir, 'controller'))
    // Machine agents are known by registration (the model binds their peer ids) or by --machine.
    let nodeRef: ControllerNode | undefined
    let registered = { revision: -1, byPeer: new Map<string, string>() }
    const registeredMachine = (peer: string): string | undefined => {
      const model = nodeRef?.host.model()
      if (model === undefined) return undefined
      if (model.revision !== registered.revision) {
        const byPeer = new Map<string, string>()
        for (const machine of tableValues(model.machines)) if (machine.agentPeer !== null) byPeer.set(machine.agentPeer, machine.id)
        registered = { revision: model.revision, byPeer }
      }
      return registered.byPeer.get(peer)
    }
    // Every voter of the latest configuration (committed or not), so a controller being added is recognised as soon as it is one.
    const isController = (peer: string): boolean => controllers.includes(peer) || (nodeRef?.host.status().config.voters.includes(peer) ?? false)
    const controllerPeers = (): string[] => [...new Set([...controllers, ...(nodeRef?.host.status().config.voters ?? [])])]
    const identify = (peer: string): Entity | undefined => {
      if (admins.includes(peer)) return { kind: 'user', name: 'admin' }
      if (isController(peer)) return { kind: 'controller', id: peer }
      const machine = machines.get(peer) ?? registeredMachine(peer)
      return machine === undefined ? undefined : { kind: 'machine', id: machine }
    }
    const peerOfMachine = (machine: string): string | undefined => {
      const given = [...machines].find(([, m]) => m === machine)?.[0]
      if (given !== undefined || nodeRef === undefined) return given
      return readerOf(nodeRef.host.model()).machine(machine)?.agentPeer ?? undefined
    }
    const presenceOf: MachinePresence = machine => {
      const peer = peerOfMachine(machine)
      // A machine agent in this very process (role both) is heard whenever we run.
      if (peer === id) return { status: 'alive', since: undefined, heardBy: id }
      const seen = unitAgentPresence(peer === undefined ? undefined : presence.member(peer))
      return { status: seen.status, since: seen.since, heardBy: seen.heardBy }
    }
    const modelListeners = new Set<() => void>()
    let node: ControllerNode
    try {
      node = await ControllerNode.start({
        id,
        peers: [...controllers],
        ...(options.join === true ? { join: true } : {}),
        storage,
        transport: options.transport,
        clock: new SystemClock(),
        random: new SeededRandom(Number.parseInt(id.slice(-8).replace(/[^0-9a-f]/gi, '0'), 16) >>> 0),
        tickMs: 100,
        // 600–1200 ms election timeouts (PreVote and CheckQuorum keep a loaded follower from deposing a live leader): a new leader serves well within 2 s.
        electionTicks: 6,
        heartbeatTicks: 1,
        onApplied: () => { for (const listener of [...modelListeners]) listener() },
        ...(options.provisioning === undefined ? {} : { singularWorkers: () => provisionerWorker(() => nodeRef, options, modelListeners) }),
        agents: {
          modelUuid: 'default',
          identify,
          // An archive put into any controller is fetched from it by the others on first use.
          charms: new ReplicatedCharmStore({ store: new CharmStore(storage), transport: options.transport, self: id, peers: controllerPeers, logger: options.logger, timeoutMs: charmFetchPeerTimeoutMs }),
          presenceOf,
          extras: {
            ...(options.version === undefined ? {} : { version: options.version }),
            presenceTable: () => presenceTable(presence, id, options.version),
            ...(options.controllerAddresses === undefined ? {} : { controllerAddresses: options.controllerAddresses })
          },
          ...(options.logs === undefined ? {} : { logs: options.logs })
        }
      })
    } catch (error) {
      await storage.close()
      throw error
    }
    nodeRef = node
    return new ControllerRole(node, storage, options, receiveLogs(options, identify, unit => readerOf(node.host.model()).unit(unit)?.machine))
  }

  async stop (): Promise<void> {
    this.#stopping ??= (async () => {
      for (const timer of this.#timers) clearInterval(timer)
      this.#unsubscribe()
      await this.node.stop()
      await this.#storage.close()
    })()
    await this.#stopping
  }
}

/** The presence table as the members API shows it: this agent first, then every member it has heard of. */
function presenceTable (presence: PresenceAgent, self: string, version: string | undefined): PresenceRow[] {
  const now = Date.now()
  const own: PresenceRow = { id: self, role: presence.role, state: 'alive', incarnation: presence.incarnation, lastHeardAt: now, heardBy: self, since: now, ...(version === undefined ? {} : { version }) }
  return [own, ...presence.members().map(member => {
    const reported = presence.versionOf(member.id)
    return { ...member, ...(reported === undefined ? {} : { version: reported }) }
  })]
}

/**
 * Log batches from the model's agents into the ring: only from controllers and
 * registered machine agents (anyone else's is rejected, and the mesh penalises them).
 */
function receiveLogs (options: ControllerRoleOptions, identify: (peer: string) => Entity | undefined, unitMachine: (unit: string) => string | undefined): () => void {
  const ring = options.logs
  if (ring === undefined) return () => {}
  const topic = logTopic('default')
  options.transport.setTopicValidator(topic, message => {
    const sender = identify(message.from)
    if (sender === undefined || (sender.kind !== 'machine' && sender.kind !== 'controller')) return 'reject'
    return parseLogBatch(message.data) === undefined ? 'reject' : 'accept'
  })
  const unsubscribe = options.transport.subscribe(topic, message => {
    const batch = parseLogBatch(message.data)
    const sender = identify(message.from)
    if (batch === undefined || sender === undefined) return
    // A machine agent speaks for itself and its units only (a unit just removed may be dropped: that is all).
    const records = sender.kind === 'machine' ? batch.records.filter(r => machineMayLogAs(sender.id, r.entity, unitMachine)) : batch.records
    ring.append(message.from, records)
  })
  return () => {
    unsubscribe()
    options.transport.setTopicValidator(topic, undefined)
  }
}

/** The provisioner, while this controller runs the singular workers. */
function provisionerWorker (node: () => ControllerNode | undefined, options: ControllerRoleOptions, modelListeners: Set<() => void>): { stop: () => void } {
  const provisioning = options.provisioning!
  const current = node()
  if (current === undefined) return { stop: () => {} }
  const providers = [provisioning.provider, ...(provisioning.manual === undefined ? [] : [provisioning.manual])]
  const provisioner = new Provisioner({
    controllerId: options.id,
    incarnation: `${current.host.term}-${Date.now()}`,
    clock: current.clock,
    logger: options.logger.child('provisioner'),
    providerFor: machine => machine.placement?.startsWith('ssh:') === true && provisioning.manual !== undefined ? provisioning.manual : provisioning.provider,
    providers,
    model: () => current.host.model(),
    onModelChange: listener => {
      // Coalesced: one pass per burst of applied entries.
      let queued = false
      const coalesced = (): void => {
        if (queued) return
        queued = true
        setImmediate(() => { queued = false; listener() })
      }
      modelListeners.add(coalesced)
      return () => { modelListeners.delete(coalesced) }
    },
    submit: async command => await current.submit(command),
    ...(provisioning.retryDelayMs === undefined ? {} : { policy: { retryDelayMsMin: provisioning.retryDelayMs[0], retryDelayMsMax: provisioning.retryDelayMs[1] }, retryRoundMs: provisioning.retryDelayMs[1] }),
    newToken: () => randomBytes(16).toString('hex'),
    newSecret: () => randomBytes(32).toString('hex'),
    bootstrapFor: (machine, secret) => encodeBootstrapData({
      version: 1,
      modelUuid: 'default',
      machineId: machine.id,
      controllers: provisioning.controllerAddresses(current.host.status().config.voters),
      networkKey: provisioning.networkKey,
      secret
    })
  })
  provisioner.start()
  provisioning.watchdog?.start()
  return {
    stop: () => {
      provisioner.stop()
      void provisioning.watchdog?.stop()
    }
  }
}
