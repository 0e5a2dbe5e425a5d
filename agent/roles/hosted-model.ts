/**
 * One model as this controller process hosts it (a HostedModel): its replica (LevelDB in `dir`), the
 * propose protocol, the agents' API and change notices, all on the model's scoped
 * transport (actors/controller/model-scope.ts), and — while this member leads — the
 * model's provisioner. The "default" model's is started by the controller role itself;
 * the others by ModelHosts from the registry. Every model's group has the same voters:
 * the controllers, by their peer ids.
 */
import { startSecretTriggerWorker } from '../../actors/controller/secret-trigger-worker.ts'
import type { SecretSealer } from '../../runtime/model/secret-sealing.ts'
import { randomBytes } from 'node:crypto'
import { ModelReplica } from '../../actors/controller/model-replica.ts'
import { machineLiveness } from '../../actors/controller/machine-liveness.ts'
import type { AgentLiveness } from '../../actors/provisioner/liveness-feed.ts'
import type { ControllerAddresses } from '../../actors/controller/api-controllers.ts'
import type { PresenceRow } from '../../actors/controller/api-members.ts'
import { logTopic, machineMayLogAs, parseLogBatch } from '../../runtime/logs/log-entry.ts'
import { LogRing } from '../../runtime/logs/log-ring.ts'
import { modelTransport } from '../../actors/controller/model-scope.ts'
import { Provisioner } from '../../actors/provisioner/provisioner.ts'
import type { MachinePolicy } from '../../actors/machine/machine-types.ts'
import { encodeBootstrapData } from '../../runtime/bootstrap-data.ts'
import { defaultModelName, type ModelName } from '../../runtime/ids.ts'
import type { Deferral } from '../../runtime/deferral.ts'
import type { ActorInspect } from '../../runtime/inspect-hook.ts'
import type { Logger } from '../../runtime/logger.ts'
import { readerOf } from '../../runtime/model/model-draft.ts'
import type { Entity } from '../../runtime/model/model-types.ts'
import { tableValues } from '../../runtime/model/table.ts'
import type { PresenceAgent } from '../../runtime/presence/presence-agent.ts'
import { SeededRandom } from '../../runtime/random.ts'
import { limits } from '../../runtime/limits.ts'
import type { Transport } from '../../runtime/transport.ts'
import { CharmStore } from '../controller/charm-store.ts'
import { ReplicatedCharmStore } from '../controller/replicated-charm-store.ts'
import { ModelBackfills } from '../controller/model-backfills.ts'
import { LevelStorage } from '../level-storage.ts'
import { SystemClock } from '../system-clock.ts'
import { writeStageTraceFromEnvironment } from '../write-stage-trace.ts'
import type { ControllerRoleOptions } from './controller-role.ts'
import { modelUuidWorker } from './model-uuid-worker.ts'

/** Per peer, while fetching a missing charm archive: below the machine agents' 2 s request timeout, so their first ask succeeds. */
const charmFetchPeerTimeoutMs = 1_500

/** cantripd's deferral (runtime/deferral.ts): after the code running now and its microtasks, before timers. */
const afterCurrentTask: Deferral = run => { setImmediate(run) }

export type Provisioning = NonNullable<ControllerRoleOptions['provisioning']>

export interface HostedModelOptions {
  model: ModelName
  /** Its LevelDB directory. */
  dir: string
  id: string
  /** The mesh (unscoped: the model's protocols are scoped here). */
  transport: Transport
  /** This model's presence (its agents heartbeat on `cantrip/presence/<model>`). */
  presence: PresenceAgent
  controllers: readonly string[]
  admins: readonly string[]
  /** Machine agents named by hand (`--machine N=PEER`): the default model's only. */
  machines: ReadonlyMap<string, string>
  logger: Logger
  provisioning: Provisioning | undefined
  /** Join a running group (`cantripd --join`): wait for the leader's log instead of bootstrapping. */
  join?: boolean
  /** Seals and opens secret content with the controllers' key (agent/secret-key-store.ts). */
  secretSealer?: SecretSealer
  /** The version this agent reports (`controller-status`). */
  version?: string
  /** Where the voters listen (the `controllers` API op). */
  controllerAddresses?: ControllerAddresses
  /** Where this model's shipped log records are kept (debug-log); a new ring when not given. */
  logs?: LogRing
  /** Called after every applied entry (the registry watch of the default model, the provisioner). */
  onApplied?: () => void
  /** Inspection of the Raft role and the provisioner's actors. */
  inspect?: ActorInspect
  /** The model's UUID from the registry (hosted models); "default" gets a random one. */
  uuid?: string
}

export class HostedModel {
  readonly model: ModelName
  readonly node: ModelReplica
  readonly #storage: LevelStorage
  readonly #transport: Transport
  /** Ends what runs beside the replica: the log receiver and the charm backfill. */
  readonly #stopBackground: () => void
  #stopping: Promise<void> | undefined

  private constructor (model: ModelName, node: ModelReplica, storage: LevelStorage, transport: Transport, stopBackground: () => void) {
    this.model = model
    this.node = node
    this.#storage = storage
    this.#transport = transport
    this.#stopBackground = stopBackground
  }

  static async start (options: HostedModelOptions): Promise<HostedModel> {
    const { id, controllers, admins, machines, presence, model } = options
    const transport = modelTransport(options.transport, model)
    const storage = await LevelStorage.open(options.dir)
    let nodeRef: ModelReplica | undefined
    // Machine agents are known by registration (the model binds their peer ids) or by --machine.
    let registered = { revision: -1, byPeer: new Map<string, string>() }
    const registeredMachine = (peer: string): string | undefined => {
      const context = nodeRef?.host.state()
      if (context === undefined) return undefined
      if (context.revision !== registered.revision) {
        const byPeer = new Map<string, string>()
        for (const machine of tableValues(context.machines)) if (machine.agentPeer !== null) byPeer.set(machine.agentPeer, machine.id)
        registered = { revision: context.revision, byPeer }
      }
      return registered.byPeer.get(peer)
    }
    // Every voter of the latest configuration (committed or not), so a controller being added is recognised as soon as it is one.
    const isController = (peer: string): boolean => controllers.includes(peer) || (nodeRef?.host.voters.includes(peer) ?? false)
    const controllerPeers = (): string[] => [...new Set([...controllers, ...(nodeRef?.host.voters ?? [])])]
    const identify = (peer: string): Entity | undefined => {
      if (admins.includes(peer)) return { kind: 'user', name: 'admin' }
      if (isController(peer)) return { kind: 'controller', id: peer }
      const machine = machines.get(peer) ?? registeredMachine(peer)
      return machine === undefined ? undefined : { kind: 'machine', id: machine }
    }
    const peerOfMachine = (machine: string): string | undefined => {
      const given = [...machines].find(([, m]) => m === machine)?.[0]
      if (given !== undefined || nodeRef === undefined) return given
      return readerOf(nodeRef.host.state()).machine(machine)?.agentPeer ?? undefined
    }
    // What the API shows and what the provisioner's machine actors are fed, from one table.
    const clock = new SystemClock()
    const charmStore = new CharmStore(storage)
    const { presenceOf, heard } = machineLiveness({ self: id, peerOf: peerOfMachine, member: peer => presence.member(peer), now: () => clock.now() })
    const modelListeners = new Set<() => void>()
    const logger = options.logger.child(model)
    // An archive put into any controller is fetched from it by the others on first use, and
    // copied to each controller that lacks one the model names (model-backfills.ts).
    const charms = new ReplicatedCharmStore({ store: charmStore, transport, self: id, peers: controllerPeers, logger, timeoutMs: charmFetchPeerTimeoutMs })
    // Agent bundles are kept, replicated, fetched and copied exactly as charm archives are.
    const agentStore = new CharmStore(storage, 'agent')
    const agentBinaries = new ReplicatedCharmStore({ store: agentStore, kind: 'agent', transport, self: id, peers: controllerPeers, logger, timeoutMs: charmFetchPeerTimeoutMs })
    const raftLogger = logger.child('raft')
    const logs = options.logs ?? new LogRing()
    let node: ModelReplica
    try {
      node = await ModelReplica.start({
        id,
        peers: [...controllers],
        ...(options.join === true ? { join: true } : {}),
        storage,
        transport,
        clock,
        // Election timeouts drawn from a fresh seed each start: a seed derived from the peer
        // id gave every controller the same draws after each restart, and ids whose last
        // characters are not hex all got seed 0, so their timeouts fired together (split votes).
        random: new SeededRandom(randomBytes(4).readUInt32LE(0)),
        tickMs: 100,
        // 600–1200 ms election timeouts (PreVote and CheckQuorum keep a loaded follower from deposing a live leader): a new leader serves well within 2 s.
        electionTicks: 6,
        heartbeatTicks: 1,
        // While writes stream in, a commit rides on the next append (runtime/raft/commit-hold.ts).
        commitHoldMs: limits.raftCommitHoldMsMax,
        // A follower applies after its acknowledgement has reached its socket (runtime/raft/apply-timing.ts).
        deferApply: afterCurrentTask,
        // A leader's own synced write starts once its appends have reached their sockets (runtime/raft/leader-write-timing.ts).
        deferLeaderWrite: afterCurrentTask,
        // Timing the write path (bench/write-stages.ts); unset in a deployment.
        ...stageTrace(),
        // Elections, votes, step-downs and refusals, one line each: as etcd logs its raft at
        // info, so an election that does not settle can be read from the controller's log.
        trace: line => { raftLogger.log('info', line) },
        onApplied: () => {
          options.onApplied?.()
          for (const listener of [...modelListeners]) listener()
        },
        ...(options.inspect === undefined ? {} : { inspect: options.inspect }),
        ...(options.secretSealer === undefined ? {} : { secretSealer: options.secretSealer }),
        singularWorkers: () => singularWorkers(() => nodeRef, options, modelListeners, heard),
        agents: {
          modelUuid: model,
          identify,
          charms,
          presenceOf,
          extras: {
            agentBinaries,
            ...(options.version === undefined ? {} : { version: options.version }),
            presenceTable: () => presenceTable(presence, id, options.version),
            ...(options.controllerAddresses === undefined ? {} : { controllerAddresses: options.controllerAddresses })
          },
          logs
        }
      })
    } catch (error) {
      await storage.close()
      throw error
    }
    nodeRef = node
    const backfill = new ModelBackfills({
      clock,
      model: () => node.host.state(),
      charms: { held: async hash => await charmStore.manifest(hash) !== undefined, fetch: async hash => await charms.manifest(hash) !== undefined },
      agentBinaries: { held: async hash => await agentStore.manifest(hash) !== undefined, fetch: async hash => await agentBinaries.manifest(hash) !== undefined },
      logger
    })
    backfill.start()
    modelListeners.add(() => { backfill.applied() })
    const unsubscribeLogs = receiveLogs(transport, model, logs, identify, unit => readerOf(node.host.state()).unit(unit)?.machine)
    const stopBackground = (): void => {
      unsubscribeLogs()
      backfill.stop()
    }
    return new HostedModel(model, node, storage, transport, stopBackground)
  }

  async stop (): Promise<void> {
    this.#stopping ??= (async () => {
      this.#stopBackground()
      await this.node.stop()
      await this.#storage.close()
      // The scoped view only (the mesh goes on serving the other models); never the mesh itself.
      if (this.model !== defaultModelName) await this.#transport.stop().catch(() => {})
    })()
    await this.#stopping
  }
}

function stageTrace (): { onStage?: (stage: string, detail: number) => void } {
  const record = writeStageTraceFromEnvironment()
  return record === undefined ? {} : { onStage: record }
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
function receiveLogs (transport: Transport, model: ModelName, ring: LogRing, identify: (peer: string) => Entity | undefined, unitMachine: (unit: string) => string | undefined): () => void {
  const topic = logTopic(model)
  transport.setTopicValidator(topic, message => {
    const sender = identify(message.from)
    if (sender === undefined || (sender.kind !== 'machine' && sender.kind !== 'controller')) return 'reject'
    return parseLogBatch(message.data) === undefined ? 'reject' : 'accept'
  })
  const unsubscribe = transport.subscribe(topic, message => {
    const batch = parseLogBatch(message.data)
    const sender = identify(message.from)
    if (batch === undefined || sender === undefined) return
    // A machine agent speaks for itself and its units only (a unit just removed may be dropped: that is all).
    const records = sender.kind === 'machine' ? batch.records.filter(r => machineMayLogAs(sender.id, r.entity, unitMachine)) : batch.records
    ring.append(message.from, records)
  })
  return () => {
    unsubscribe()
    transport.setTopicValidator(topic, undefined)
  }
}

/** What the controller holding the model's singular lease runs: the UUID worker, the secret clock worker and the provisioner. */
function singularWorkers (node: () => ModelReplica | undefined, options: HostedModelOptions, modelListeners: Set<() => void>, liveness: AgentLiveness): { stop: () => void } {
  const current = node()
  if (current === undefined) return { stop: () => {} }
  const uuid = modelUuidWorker(current, options.id, options.uuid, modelListeners, options.logger.child(options.model))
  const secretTriggers = startSecretTriggerWorker({
    controllerId: options.id,
    incarnation: `${current.host.term}-${Date.now()}`,
    clock: current.clock,
    model: () => current.host.state(),
    onModelChange: listener => { modelListeners.add(listener); return () => { modelListeners.delete(listener) } },
    sink: current,
    logger: options.logger.child(options.model).child('secret-triggers')
  })
  const provisioner = options.provisioning === undefined ? undefined : provisionerWorker(node, options, options.provisioning, modelListeners, liveness)
  return {
    stop: () => {
      uuid.stop()
      secretTriggers.stop()
      provisioner?.stop()
    }
  }
}

function provisionerWorker (node: () => ModelReplica | undefined, options: HostedModelOptions, provisioning: Provisioning, modelListeners: Set<() => void>, liveness: AgentLiveness): { stop: () => void } {
  const current = node()
  if (current === undefined) return { stop: () => {} }
  const providers = [provisioning.provider, ...(provisioning.manual === undefined ? [] : [provisioning.manual])]
  const provisioner = new Provisioner({
    controllerId: options.id,
    incarnation: `${current.host.term}-${Date.now()}`,
    clock: current.clock,
    logger: options.logger.child(options.model).child('provisioner'),
    providerFor: machine => machine.placement?.startsWith('ssh:') === true && provisioning.manual !== undefined ? provisioning.manual : provisioning.provider,
    providers,
    model: () => current.host.state(),
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
    liveness,
    ...(provisioning.agentDownAfterMs === undefined ? {} : { livenessFeedIntervalMs: Math.max(1, Math.floor(provisioning.agentDownAfterMs / 4)) }),
    // Machine N of two models are two actors: the other models' names carry the model.
    ...(options.inspect === undefined ? {} : { inspect: (kind, name) => options.inspect!(kind, options.model === defaultModelName ? name : `${options.model}:${name}`) }),
    ...machinePolicyOf(provisioning),
    ...(provisioning.retryDelayMs === undefined ? {} : { retryRoundMs: provisioning.retryDelayMs[1] }),
    newToken: () => randomBytes(16).toString('hex'),
    newSecret: () => randomBytes(32).toString('hex'),
    bootstrapFor: (machine, secret) => encodeBootstrapData({
      version: 1,
      modelUuid: options.model,
      machineId: machine.id,
      controllers: provisioning.controllerAddresses(current.host.voters),
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

/** The machine actors' timings when the controller was started with shorter ones (tests), as provisioner options. */
function machinePolicyOf (provisioning: Provisioning): { policy?: Partial<MachinePolicy> } {
  if (provisioning.retryDelayMs === undefined && provisioning.agentDownAfterMs === undefined) return {}
  return {
    policy: {
      ...(provisioning.retryDelayMs === undefined ? {} : { retryDelayMsMin: provisioning.retryDelayMs[0], retryDelayMsMax: provisioning.retryDelayMs[1] }),
      ...(provisioning.agentDownAfterMs === undefined ? {} : { agentDownAfterMs: provisioning.agentDownAfterMs })
    }
  }
}
