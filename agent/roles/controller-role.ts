/**
 * The controller role of cantripd: a Raft member over the agent's mesh transport, its
 * state on LevelDB in `<data dir>/controller`, serving the propose protocol, the agents'
 * API (with per-entity authorisation from the peer ids it was given) and change notices.
 * Its Raft id is its libp2p peer id.
 *
 * It also serves the group's other models (agent/roles/model-hosts.ts): a Raft group
 * per model in the registry the default model holds, each under `<data dir>/models/`.
 *
 * A Worker for the agent's supervisor: `done` rejects if the Raft host stops by itself
 * (its storage failed, say), which no restart inside this process can cure — the agent
 * then stops with that reason and its own supervisor (systemd, the local provider)
 * restarts the process.
 */
import { deferredSealer, fetchSecretKey, localSecretKey, serveSecretKey } from '../secret-key-store.ts'
import { join } from 'node:path'
import type { ModelReplica } from '../../actors/controller/model-replica.ts'
import type { BootstrapController } from '../../runtime/bootstrap-data.ts'
import { defaultModelName, type ModelName } from '../../runtime/ids.ts'
import type { Logger } from '../../runtime/logger.ts'
import type { LogRing } from '../../runtime/logs/log-ring.ts'
import type { PresenceAgent } from '../../runtime/presence/presence-agent.ts'
import type { Provider } from '../../providers/provider-contract.ts'
import { FatalError, type Worker } from '../../runtime/supervisor.ts'
import type { Transport } from '../../runtime/transport.ts'
import { HostedModel } from './hosted-model.ts'
import { ModelHosts } from './model-hosts.ts'
import type { ActorInspect } from '../../runtime/inspect-hook.ts'
import { tableGet } from '../../runtime/model/table.ts'

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
   * Where the log records the default model's agents ship (`debug-log`) are kept: owned
   * by the agent process, so a restarted role keeps what was received. Other models'
   * controllers keep rings of their own.
   */
  logs?: LogRing
  /** Inspection of the controller's actors (`cantripd --inspect`): the Raft role and the provisioner's machines, per model. */
  inspect?: ActorInspect
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
    /** A machine agent not heard from for this long shows down (`--agent-down-ms`); limits.machineAgentDownAfterMs by default. */
    agentDownAfterMs?: number
    /** Runs while the provisioner does (the local provider's restart watchdog). */
    watchdog?: { start: () => void, stop: () => Promise<void> }
  }
  /** Provisioning for another model than "default" (its own machine directories); none: that model's machines are brought by hand. */
  provisioningFor?: (model: ModelName) => ControllerRoleOptions['provisioning']
  /** A new, started presence agent on another model's topic (left when the model's controller stops). */
  presenceFor: (model: ModelName) => PresenceAgent
  /** A removed model's controller stopped and its data is gone. */
  onModelRemoved?: (model: ModelName) => void
}

/** How often the host is checked for having stopped by itself. */
const healthCheckIntervalMs = 500

export class ControllerRole implements Worker {
  readonly done: Promise<void>
  /** The default model's controller: the bootstrap group, which holds the model registry. */
  readonly node: ModelReplica
  readonly models: ModelHosts
  readonly #default: HostedModel
  readonly #timers: Array<ReturnType<typeof setInterval>>
  /** Ends the role reports (the controller actor's subscription). */
  readonly #unreport: () => void
  #stopping: Promise<void> | undefined

  private constructor (controller: HostedModel, models: ModelHosts, options: ControllerRoleOptions) {
    const node = this.node = controller.node
    this.#default = controller
    this.models = models
    let lastRole = ''
    // Reported when the controller actor has acted on a role change (it sees each one as
    // a `raft.role` event): an event, where a 20 ms poll woke every controller 50 times a second.
    const report = (): void => {
      const role = `${node.host.role}/${node.host.term}/${node.host.leader}`
      if (role === lastRole) return
      lastRole = role
      options.onRole({ role: node.host.role, term: node.host.term, leader: node.host.leader, revision: node.host.state().revision })
    }
    const subscription = node.actor.subscribe({ next: report, error: () => {} })
    this.#unreport = () => { subscription.unsubscribe() }
    report()
    let fail: (error: unknown) => void = () => {}
    this.done = new Promise<void>((_resolve, reject) => { fail = reject })
    const health = setInterval(() => {
      if (this.#stopping !== undefined || !node.stopped) return
      // The host's own failure (its storage, say) is the reason: nothing else logged it.
      const why = node.host.failure?.message ?? 'no reason recorded'
      const error = new FatalError(`controller ${options.id}: the Raft host stopped by itself: ${why}`)
      void this.stop().finally(() => { fail(error) })
    }, healthCheckIntervalMs)
    this.#timers = [health]
  }

  static async start (options: ControllerRoleOptions): Promise<ControllerRole> {
    const { id, controllers, admins, presence, logger } = options
    if (options.join !== true && !controllers.includes(id)) throw new FatalError(`this agent's peer id ${id} is not among --controllers ${controllers.join(',')}`)
    // The secrets key: on disk or new at bootstrap; a joining controller asks the group for
    // it in the background, since the group admits it only once it serves (enable-ha).
    let secretKey = localSecretKey(options.dataDir, options.join === true)
    if (secretKey === undefined) {
      fetchSecretKey({
        dataDir: options.dataDir,
        transport: options.transport,
        controllers: controllers.filter(peer => peer !== id),
        logger,
        sleep: async ms => { await new Promise(resolve => setTimeout(resolve, ms)) }
      }).then(key => { secretKey = key }, (error: Error) => { logger.log('error', error.message) })
    }
    const common = {
      id, transport: options.transport, controllers, admins, logger, secretSealer: deferredSealer(() => secretKey),
      ...(options.version === undefined ? {} : { version: options.version }),
      ...(options.controllerAddresses === undefined ? {} : { controllerAddresses: options.controllerAddresses }),
      ...(options.inspect === undefined ? {} : { inspect: options.inspect })
    }
    let hosts: ModelHosts | undefined
    const controller = await HostedModel.start({
      ...common,
      model: defaultModelName,
      dir: join(options.dataDir, 'controller'),
      presence,
      machines: options.machines,
      provisioning: options.provisioning,
      ...(options.join === true ? { join: true } : {}),
      ...(options.logs === undefined ? {} : { logs: options.logs }),
      // Every applied entry may change the registry; the hosts compare and act only on a change.
      // A controller that joined by enable-ha hosts the default model only: every other
      // model's group keeps the founding controllers (the same --controllers on each of
      // them), so no two members ever bootstrap one group with different voters.
      onApplied: () => { if (options.join !== true) hosts?.changed() }
    })
    hosts = new ModelHosts({
      dataDir: options.dataDir,
      registry: () => controller.node.host.state(),
      presenceFor: options.presenceFor,
      start: async (model, dir, modelPresence) => await HostedModel.start({
        ...common,
        model,
        dir,
        uuid: tableGet(controller.node.host.state().models, model)?.uuid ?? '',
        presence: modelPresence,
        machines: new Map(),
        provisioning: options.provisioningFor?.(model)
      }),
      ...(options.onModelRemoved === undefined ? {} : { onRemoved: options.onModelRemoved }),
      logger
    })
    if (options.join !== true) hosts.changed()
    // Controllers only: the founding ones and whoever the group has made a voter since.
    serveSecretKey(options.transport, () => secretKey, peer => peer !== id && (controllers.includes(peer) || controller.node.host.voters.includes(peer)))
    return new ControllerRole(controller, hosts, options)
  }

  async stop (): Promise<void> {
    this.#stopping ??= (async () => {
      for (const timer of this.#timers) clearInterval(timer)
      this.#unreport()
      await this.models.stop()
      await this.#default.stop()
    })()
    await this.#stopping
  }
}
