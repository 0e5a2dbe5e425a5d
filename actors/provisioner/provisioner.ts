/**
 * The provisioner (Juju's worker of the same name): a singular worker on the controller
 * leader that turns the model's machines into instances through a Provider and back.
 * One machine statechart (actors/machine/machine-machine.ts) per machine carries the
 * start and stop attempts, the back-off and the status; this worker feeds it the model
 * and the provider's facts and writes back what it learns.
 *
 * Each pass, serialised and triggered by model changes and a periodic tick (a tick's pass
 * looks at every machine; a change's only at the machines it changed and those `#revisit`
 * names, see there):
 * 1. List the provider's instances. Stop the unknown ones first — an instance whose
 *    machine has left the model, or whose token is not the machine's — so a machine
 *    never has two (Juju: "stop unknown instances before starting pending ones").
 * 2. A pending machine (alive, no instance recorded) first gets its provisioning record
 *    through Raft: an idempotency token and a one-time registration secret. The first
 *    record stands, so a new leader reuses the old leader's token, and the provider
 *    answers a start with a token it has seen with the same instance.
 * 3. An instance the provider already has for the machine's token is adopted
 *    (`set-machine-instance`), else the machine's actor is asked to provision, at most
 *    limits.provisionerStartsInFlightMax at once. A round of failed attempts ends in
 *    `provisioning error` with the reason in status; retryable failures (quota, no
 *    capacity, a failed deployment) start a new round after limits.provisionerRetryRoundMs.
 * 4. A dying machine's actor learns its unit count; with none left it stops the instance
 *    and the machine is marked dead here if its agent has not done so.
 * The instance status and message of each machine follow its actor's (machine-status.ts),
 * written only when they change.
 *
 * Leadership: started when this controller begins to run singular workers, stopped when
 * it stops; starts already in flight finish in the cloud, and the next leader adopts
 * their instances by token. Nothing here reads a clock but the injected one.
 */
import { createActor, fromPromise, type ActorRefFrom } from 'xstate'
import type { AgentNetwork } from '../../runtime/agent-network.ts'
import type { Clock, TimerHandle } from '../../runtime/clock.ts'
import type { ActorInspect } from '../../runtime/inspect-hook.ts'
import { limits } from '../../runtime/limits.ts'
import type { Logger } from '../../runtime/logger.ts'
import { readerOf } from '../../runtime/model/model-draft.ts'
import { CommandProposer, type ModelCommandBody } from '../../runtime/model/command-proposer.ts'
import type { CommandResult, MachineRecord, ModelCommand, ModelContext } from '../../runtime/model/model-types.ts'
import { lostAgentMessage } from '../../runtime/model/status-display.ts'
import { forEachChangedKey, tableValues } from '../../runtime/model/table.ts'
import type { InstanceInfo, Provider } from '../../providers/provider-contract.ts'
import { machineMachine } from '../machine/machine-machine.ts'
import { machineStatus } from '../machine/machine-status.ts'
import { provisionerMachine, type ProvisionerActorRef } from './provisioner-machine.ts'
import { LivenessFeed, type AgentLiveness } from './liveness-feed.ts'
import type { MachinePolicy, StartInstanceInput, StartInstanceOutput, StopInstanceInput } from '../machine/machine-types.ts'

const component = 'provisioner'

/** The commands the provisioner proposes: each about one machine. */
type MachineCommandBody = Extract<ModelCommandBody, { machine: string }>

export interface ProvisionerOptions {
  /** This controller: the proposer of every command, and part of every request id. */
  controllerId: string
  /** Tells this incarnation's request ids apart from an earlier one's (e.g. the Raft term). */
  incarnation: string
  clock: Clock
  logger: Logger
  /** The provider of a machine (the manual one for `ssh:` placements). */
  providerFor: (machine: MachineRecord) => Provider
  /** Every provider whose instances this controller owns (for the unknown-instance sweep). */
  providers: readonly Provider[]
  /** The model as applied on this controller, and its change feed. */
  model: () => ModelContext
  onModelChange: (listener: () => void) => () => void
  submit: (command: ModelCommand) => Promise<CommandResult>
  /** Fresh random hex: 16+ digits for tokens, 32+ for secrets (agent/ provides crypto). */
  newToken: () => string
  newSecret: () => string
  /** The bootstrap data of a machine's instance (runtime/bootstrap-data.ts). */
  bootstrapFor: (machine: MachineRecord, secret: string) => Uint8Array
  /** Shorter timings in tests and the simulator. */
  policy?: Partial<MachinePolicy>
  reconcileIntervalMs?: number
  retryRoundMs?: number
  /** Inspection of the machine actors (agent/ passes it in). */
  inspect?: ActorInspect
  /** Instance starts in flight at once; limits.provisionerStartsInFlightMax when absent (a cloud's API rate is the usual bound). */
  startsInFlightMax?: number
  /**
   * When this controller's presence last heard each machine's agent (actors/controller/
   * machine-liveness.ts). Without it nothing tells the machine actors their agents are
   * alive, and every started machine shows down agentDownAfterMs after it reported in.
   */
  liveness?: AgentLiveness
  /** limits.provisionerLivenessFeedIntervalMs when absent. */
  livenessFeedIntervalMs?: number
}

type MachineActor = ActorRefFrom<typeof machineMachine>

interface Tracked {
  readonly actor: MachineActor
  /** The machine as tracking began: whose provider serves it once it has left the model. */
  readonly record: MachineRecord
  /** The provider's instance recorded in the model, so it is written once. */
  recorded: string | null
  /** When the current provisioning error may start a new round (on the clock). */
  retryAt: number | null
  markedDead: boolean
  /** The machine's `provisioningRetries` already acted on (`retry-provisioning`). */
  retriesSeen: number
}

export class Provisioner {
  readonly #o: ProvisionerOptions
  readonly #machines = new Map<string, Tracked>()
  readonly #machineLogic: ReturnType<typeof machineMachine.provide>
  #unsubscribe: (() => void) | undefined
  #timer: TimerHandle | undefined
  #running = false
  #again = false
  /**
   * Instance starts in flight during a pass: counted at the first pending machine, then
   * kept up to date machine by machine. Counting them again for every pending machine made
   * a deploy of N machines cost N² state matches (10,000 machines: 10⁸ per pass).
   */
  #passStarts: number | undefined
  #stopped = false
  readonly #proposer: CommandProposer
  /** Commands this incarnation has in flight, by a key naming what they do (so each is sent once at a time). */
  readonly #inFlight = new Set<string>()
  #lastPassAt = Number.NEGATIVE_INFINITY
  #soon: TimerHandle | undefined
  /** The machines table the last pass looked at. */
  #machinesSeen: ModelContext['machines'] | undefined
  /**
   * Whether the next pass looks at every machine: the first, and each on the reconcile
   * interval, so that whatever a pass of changes missed is not missed for good.
   */
  #fullPassDue = true
  /**
   * The machines a pass of changes looks at besides those whose record changed: each whose
   * actor changed, whose command failed, or that waits on something other than the model
   * (a start slot, a retry round). A pass over every machine for every change of one made a
   * deploy of N machines cost N² reconciles (3,000 simulated agents: 7 % of the run).
   */
  readonly #revisit = new Set<string>()
  /** Counters for tests, benchmarks and the inspector. */
  readonly counters = { passes: 0, starts: 0, stops: 0, adopted: 0, unknownStopped: 0, failures: 0, secretsRenewed: 0 }

  /** The worker's own statechart (provisioner-machine.ts): passes as the inspector sees them. */
  readonly worker: ProvisionerActorRef
  /** Presence fed to the machine actors; undefined without `liveness`. */
  readonly livenessFeed: LivenessFeed | undefined

  constructor (options: ProvisionerOptions) {
    this.#o = options
    this.#proposer = new CommandProposer({
      proposer: { kind: 'controller', id: options.controllerId },
      requestPrefix: `${component}/${options.controllerId}/${options.incarnation}`
    })
    this.#machineLogic = this.#provideMachineLogic()
    const inspect = options.inspect?.('provisioner', 'provisioner')
    this.worker = createActor(provisionerMachine, { clock: options.clock, input: { controllerId: options.controllerId }, ...(inspect === undefined ? {} : { inspect }) })
    this.livenessFeed = options.liveness === undefined
      ? undefined
      : new LivenessFeed({
        clock: options.clock,
        heard: options.liveness,
        machines: () => [...this.#machines].map(([id, tracked]) => [id, tracked.actor] as const),
        intervalMs: options.livenessFeedIntervalMs ?? limits.provisionerLivenessFeedIntervalMs
      })
  }

  start (): void {
    this.worker.start()
    // Only a change of the machines themselves (the table is replaced whenever one of them
    // changes) calls for a pass, not every unit's status commit: what a unit's record says
    // that a pass reads (a lost status) changes with its machine's record.
    this.#unsubscribe = this.#o.onModelChange(() => {
      if (this.#o.model().machines !== this.#machinesSeen) this.#kickSoon()
    })
    this.#kick()
    this.livenessFeed?.start()
  }

  stop (): void {
    this.#stopped = true
    this.livenessFeed?.stop()
    this.worker.send({ type: 'provisioner.stop' })
    this.#unsubscribe?.()
    if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer)
    if (this.#soon !== undefined) this.#o.clock.clearTimeout(this.#soon)
    for (const tracked of this.#machines.values()) tracked.actor.stop()
    this.#machines.clear()
  }

  /** The machine actors' snapshots, for the inspector and tests. */
  actors (): ReadonlyMap<string, MachineActor> {
    return new Map([...this.#machines].map(([id, tracked]) => [id, tracked.actor]))
  }

  /**
   * A pass for a change of the machines, but not more often than
   * limits.provisionerPassIntervalMinMs: a deploy of 1,000 machines changes them
   * thousands of times, and each pass looks at all of them.
   */
  #kickSoon (): void {
    if (this.#stopped || this.#soon !== undefined) return
    const wait = this.#lastPassAt + limits.provisionerPassIntervalMinMs - this.#o.clock.now()
    if (wait <= 0) {
      this.#kick()
      return
    }
    this.#soon = this.#o.clock.setTimeout(() => {
      this.#soon = undefined
      this.#kick()
    }, wait)
  }

  #kick (): void {
    if (this.#stopped) return
    if (this.#running) {
      this.#again = true
      return
    }
    this.#running = true
    void this.#passes().finally(() => {
      this.#running = false
      if (this.#stopped) return
      if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer)
      this.#timer = this.#o.clock.setTimeout(() => {
        this.#fullPassDue = true
        this.#kick()
      }, this.#o.reconcileIntervalMs ?? limits.provisionerReconcileIntervalMs)
    })
  }

  async #passes (): Promise<void> {
    do {
      this.#again = false
      this.worker.send({ type: 'pass.begin' })
      try {
        await this.#pass()
        this.worker.send({ type: 'pass.end', machines: this.#machines.size })
      } catch (error) {
        this.counters.failures++
        const reason = error instanceof Error ? error.message : String(error)
        this.worker.send({ type: 'pass.failed', reason })
        this.#o.logger.log('warning', `${component}: pass failed: ${reason}`)
      }
    } while (this.#again && !this.#stopped)
  }

  async #pass (): Promise<void> {
    this.counters.passes++
    this.#lastPassAt = this.#o.clock.now()
    const instances = (await Promise.all(this.#o.providers.map(async provider => await provider.allInstances()))).flat()
    if (this.#stopped) return
    const model = this.#o.model()
    const seen = this.#machinesSeen
    this.#machinesSeen = model.machines
    const ids = this.#fullPassDue || seen === undefined ? undefined : this.#changedSince(seen, model.machines)
    if (ids === undefined) this.#revisit.clear()
    this.#fullPassDue = false
    await this.#stopUnknown(model, instances)
    const reader = readerOf(model)
    const byToken = new Map(instances.filter(i => i.status !== 'stopping' && i.status !== 'failed').map(i => [i.token, i]))
    // The loop is synchronous: no provider callback can end a start while it runs.
    this.#passStarts = undefined
    try {
      for (const machine of ids === undefined ? tableValues(model.machines) : [...ids].map(id => reader.machine(id))) {
        if (this.#stopped) return
        if (machine === undefined) continue
        this.#reconcileMachine(machine, byToken.get(machine.provisioning?.token ?? ''))
        if (waits(this.#machines.get(machine.id))) this.#revisit.add(machine.id)
      }
    } finally {
      this.#passStarts = undefined
    }
    // Machines that left the model: their actors go (their instances were unknown above).
    for (const id of ids ?? [...this.#machines.keys()]) {
      const tracked = this.#machines.get(id)
      if (tracked !== undefined && reader.machine(id) === undefined) {
        tracked.actor.stop()
        this.#machines.delete(id)
      }
    }
  }

  /**
   * The machines a pass of changes looks at: those whose record was set, replaced or
   * removed since the table `seen` (records are immutable, and the table shares every
   * untouched one, so this costs the changes), and those named in `#revisit`.
   */
  #changedSince (seen: ModelContext['machines'], now: ModelContext['machines']): Set<string> {
    const ids = new Set(this.#revisit)
    this.#revisit.clear()
    forEachChangedKey(seen, now, id => { ids.add(id) })
    return ids
  }

  /** Instances no machine of the model owns (by machine id and token) are stopped first. */
  async #stopUnknown (model: ModelContext, instances: readonly InstanceInfo[]): Promise<void> {
    const reader = readerOf(model)
    const unknown = instances.filter(instance => {
      if (instance.status === 'stopped') return false
      const machine = reader.machine(instance.machineId)
      return machine === undefined || machine.provisioning === null || machine.provisioning.token !== instance.token
    })
    for (const provider of this.#o.providers) {
      const ids = unknown.filter(i => this.#owns(provider, i)).map(i => i.instanceId)
      if (ids.length === 0) continue
      this.#o.logger.log('info', `${component}: stopping unknown instances ${ids.join(', ')}`)
      this.counters.unknownStopped += ids.length
      await provider.stopInstances(ids)
    }
  }

  #owns (provider: Provider, instance: InstanceInfo): boolean {
    return instance.instanceId.startsWith(`${provider.name}:`) || this.#o.providers.length === 1
  }

  #reconcileMachine (machine: MachineRecord, existing: InstanceInfo | undefined): void {
    const id = machine.id
    if (machine.provisioning === null) {
      if (machine.life === 'alive' && machine.instanceId === null) {
        this.#command(`provisioning/${id}`, { type: 'set-machine-provisioning', machine: id, token: this.#o.newToken(), secret: this.#o.newSecret() })
      }
      return
    }
    let tracked = this.#machines.get(id)
    if (tracked === undefined) {
      const instance = machine.instanceId !== null
        ? { instanceId: machine.instanceId, addresses: machine.addresses }
        : existing !== undefined && existing.status === 'running' ? { instanceId: existing.instanceId, addresses: existing.addresses } : undefined
      if (instance !== undefined && machine.instanceId === null) this.counters.adopted++
      tracked = this.#track(machine, instance)
      if (this.#passStarts !== undefined && isStarting(tracked.actor)) this.#passStarts++
    }
    const { actor } = tracked
    const now = this.#o.clock.now()
    const snapshot = actor.getSnapshot()
    const wasStarting = isStarting(actor)
    // Pending: ask for an instance, within the bound on starts in flight.
    if (machine.life === 'alive' && snapshot.matches({ lifecycle: 'pending' }) && this.#startsInFlight() < (this.#o.startsInFlightMax ?? limits.provisionerStartsInFlightMax)) {
      this.counters.starts++
      actor.send({ type: 'machine.provision', at: now, bootstrapData: this.#o.bootstrapFor(machine, machine.provisioning.secret) })
    }
    // The operator's retry-provisioning starts a round now, whatever the error was.
    const retriesAsked = machine.provisioningRetries ?? 0
    if (retriesAsked > tracked.retriesSeen) {
      tracked.retriesSeen = retriesAsked
      if (actor.getSnapshot().matches({ lifecycle: 'provisioningError' })) {
        tracked.retryAt = null
        actor.send({ type: 'machine.retryProvisioning', at: now })
      }
    }
    // A round that ended in error starts again later, unless the provider called it hopeless.
    if (actor.getSnapshot().matches({ lifecycle: 'provisioningError' })) {
      const failure = actor.getSnapshot().context.lastFailure
      if (tracked.retryAt === null) tracked.retryAt = now + (this.#o.retryRoundMs ?? limits.provisionerRetryRoundMs)
      if (now >= tracked.retryAt && failure !== null && !/: invalid: /.test(failure.reason)) {
        tracked.retryAt = null
        actor.send({ type: 'machine.retryProvisioning', at: now })
      }
    }
    if (machine.agent.status === 'started' && actor.getSnapshot().context.agentReportedAt === null) {
      actor.send({ type: 'agent.started', at: this.livenessFeed?.startedAt(id, now) ?? now })
    }
    // Only a change: the event records the count and nothing else, and every pass over every
    // machine sent it (a macrostep each) although counts rarely move.
    if (actor.getSnapshot().context.unitCount !== machine.units.length) actor.send({ type: 'machine.unitsChanged', count: machine.units.length, at: now })
    if (machine.life !== 'alive' && actor.getSnapshot().context.life === 'alive') actor.send({ type: 'machine.destroy', at: now })
    if (this.#passStarts !== undefined) this.#passStarts += Number(isStarting(actor)) - Number(wasStarting)
    this.#writeBack(machine, tracked)
  }

  /**
   * The machine actors' logic, provided once per provisioner: a provide() per machine
   * would build a whole machine definition (its state-node tree) for every machine.
   * What differs per machine comes from the actor's input (its machine id).
   */
  #provideMachineLogic () {
    return machineMachine.provide({
      actors: {
        startInstance: fromPromise<StartInstanceOutput, StartInstanceInput>(async ({ input }) => {
          const current = readerOf(this.#o.model()).machine(input.machineId)
          if (current?.provisioning == null) throw new Error(`${component}: machine ${input.machineId} has no provisioning record`)
          const bootstrap = await this.#bootstrapForAttempt(current) ?? input.bootstrapData ?? new Uint8Array()
          return await this.#providerOf(input.machineId).startInstance({
            machineId: input.machineId,
            token: current.provisioning.token,
            bootstrap,
            constraints: input.constraints,
            ...(current.placement === null ? {} : { placement: current.placement }),
            ...(current.privateKey === undefined ? {} : { sshKeyFile: current.privateKey }),
            ...(current.listen === undefined && current.advertise === undefined ? {} : { network: machineNetwork(current) })
          }, progress => {
            const actor = this.#machines.get(input.machineId)?.actor
            if (progress.type === 'allocated') actor?.send({ type: 'instance.allocated', instanceId: progress.instanceId, at: this.#o.clock.now() })
            else actor?.send({ type: 'instance.deploying', message: progress.message, at: this.#o.clock.now() })
          })
        }),
        stopInstance: fromPromise<void, StopInstanceInput>(async ({ input }) => {
          this.counters.stops++
          await this.#providerOf(input.machineId).stopInstances([input.instanceId])
        })
      }
    })
  }

  /**
   * A start attempt after one whose agent registered (the secret is used) but whose
   * instance was never recorded (it failed and was released) needs a fresh secret, or the
   * new instance's agent would be refused: renewed through Raft first, and the bootstrap
   * data made with it. Undefined when the recorded secret is still unused.
   */
  async #bootstrapForAttempt (machine: MachineRecord): Promise<Uint8Array | undefined> {
    if (machine.provisioning === null || machine.provisioning.secret !== '' || machine.instanceId !== null) return undefined
    const secret = this.#o.newSecret()
    const result = await this.#o.submit(this.#proposer.command({ type: 'set-machine-provisioning', machine: machine.id, token: machine.provisioning.token, secret, renew: true }))
    if (!result.ok) throw new Error(`${component}: cannot renew the registration secret of machine ${machine.id}: ${result.error}`)
    this.counters.secretsRenewed++
    return this.#o.bootstrapFor(machine, secret)
  }

  /** The provider of a machine: by its current record, or the one it had when tracked if it has left the model. */
  #providerOf (machineId: string): Provider {
    const record = readerOf(this.#o.model()).machine(machineId) ?? this.#machines.get(machineId)?.record
    if (record === undefined) throw new Error(`${component}: machine ${machineId} is neither in the model nor tracked`)
    return this.#o.providerFor(record)
  }

  #track (machine: MachineRecord, instance: { instanceId: string, addresses: readonly string[] } | undefined): Tracked {
    const o = this.#o
    const inspect = o.inspect?.('machine', `machine-${machine.id}`)
    const actor = createActor(this.#machineLogic, {
      clock: o.clock,
      ...(inspect === undefined ? {} : { inspect }),
      input: {
        machineId: machine.id,
        now: o.clock.now(),
        constraints: machine.constraints,
        unitCount: machine.units.length,
        ...(instance === undefined ? {} : { instance }),
        ...(o.policy === undefined ? {} : { policy: o.policy })
      }
    })
    const tracked: Tracked = { actor, record: machine, recorded: machine.instanceId, retryAt: null, markedDead: false, retriesSeen: machine.provisioningRetries ?? 0 }
    this.#machines.set(machine.id, tracked)
    // Each change of the actor is written back against the model as it is then.
    actor.subscribe({
      next: () => {
        // Its state may call for what a pass does (a start slot freed, a retry round due).
        this.#revisit.add(machine.id)
        const current = readerOf(o.model()).machine(machine.id)
        if (current !== undefined && !this.#stopped) this.#writeBack(current, tracked)
      },
      error: error => { o.logger.log('error', `${component}: machine ${machine.id} actor failed: ${String(error)}`) }
    })
    actor.start()
    return tracked
  }

  /** What the actor knows that the model does not yet: the instance, the instance status, death. */
  #writeBack (machine: MachineRecord, tracked: Tracked): void {
    const snapshot = tracked.actor.getSnapshot()
    const context = snapshot.context
    if (context.instanceState === 'running' && context.instanceId !== null && machine.instanceId === null && tracked.recorded !== context.instanceId) {
      this.#command(`instance/${machine.id}`, { type: 'set-machine-instance', machine: machine.id, instanceId: context.instanceId, addresses: [...context.addresses] },
        () => { tracked.recorded = context.instanceId })
    }
    const status = machineStatus(snapshot)
    if (machine.life === 'alive' && (status.instanceStatus !== machine.instance.status || status.message !== machine.instance.message)) {
      this.#command(`status/${machine.id}/${status.instanceStatus}/${status.message}`, {
        type: 'set-machine-status', machine: machine.id, instanceStatus: status.instanceStatus, message: status.message, now: Math.floor(this.#o.clock.now())
      })
    }
    this.#recordPresence(machine, status.agentStatus)
    if (snapshot.matches({ lifecycle: 'dead' }) && !tracked.markedDead && machine.units.length === 0) {
      this.#command(`dead/${machine.id}`, { type: 'machine-dead', machine: machine.id }, () => { tracked.markedDead = true })
    }
  }

  /**
   * The agent's lost and down periods into the status history: the actor calls a started
   * agent `down` when it was not heard for its timeout, and `started` once heard again.
   * Whether the period was recorded is read from the model's own history, so a new leader
   * ends a period its predecessor began.
   */
  #recordPresence (machine: MachineRecord, agentStatus: string): void {
    if (machine.life !== 'alive') return
    const recordedDown = machine.statusHistory.findLast(e => e.type === 'juju-machine')?.status === 'down'
    if (agentStatus === 'down' && !recordedDown) {
      this.#command(`presence/${machine.id}/lost`, { type: 'record-agent-presence', machine: machine.id, present: false, now: Math.floor(this.#o.clock.now()) })
    } else if (agentStatus === 'started' && (recordedDown || this.#unitsRecordedLost(machine))) {
      this.#command(`presence/${machine.id}/back`, { type: 'record-agent-presence', machine: machine.id, present: true, now: Math.floor(this.#o.clock.now()) })
    }
  }

  /** A unit of the machine whose history still ends lost (its machine agent restarted, say, and wrote `started` itself). */
  #unitsRecordedLost (machine: MachineRecord): boolean {
    const reader = readerOf(this.#o.model())
    return machine.units.some(name => {
      const history = reader.unit(name)?.statusHistory ?? []
      return history.findLast(e => e.type === 'juju-unit')?.status === 'lost' ||
        history.findLast(e => e.type === 'workload')?.message === lostAgentMessage(name)
    })
  }

  #startsInFlight (): number {
    if (this.#passStarts !== undefined) return this.#passStarts
    let n = 0
    for (const { actor } of this.#machines.values()) if (isStarting(actor)) n++
    this.#passStarts = n
    return n
  }

  /** Submits once at a time per key; a failure is logged and retried by a later pass. */
  #command (key: string, body: MachineCommandBody, onApplied?: () => void): void {
    if (this.#inFlight.has(key) || this.#stopped) return
    this.#inFlight.add(key)
    void this.#o.submit(this.#proposer.command(body)).then(result => {
      if (result.ok) onApplied?.()
      else {
        this.#revisit.add(body.machine)
        this.#o.logger.log('warning', `${component}: ${result.error}`)
      }
    }, (error: unknown) => {
      this.#revisit.add(body.machine)
      this.#o.logger.log('warning', `${component}: ${body.type} for machine ${body.machine} not committed: ${error instanceof Error ? error.message : String(error)}`)
    }).finally(() => { this.#inFlight.delete(key) })
  }
}

/** The machine's own listen and advertise settings, as the provider takes them. */
function machineNetwork (machine: MachineRecord): AgentNetwork {
  return { ...(machine.listen === undefined ? {} : { listen: machine.listen }), ...(machine.advertise === undefined ? {} : { advertise: machine.advertise }) }
}

/**
 * Whether a machine waits on what no change of its record announces: a start slot (it is
 * pending) or a retry round (provisioning error), so every pass of changes looks at it.
 */
function waits (tracked: Tracked | undefined): boolean {
  if (tracked === undefined) return false
  const snapshot = tracked.actor.getSnapshot()
  return snapshot.matches({ lifecycle: 'pending' }) || snapshot.matches({ lifecycle: 'provisioningError' })
}

/** Whether the machine's instance is being started (counts against startsInFlightMax). */
function isStarting (actor: MachineActor): boolean {
  return actor.getSnapshot().matches({ lifecycle: 'provisioning' })
}
