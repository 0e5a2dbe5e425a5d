import { createActor, fromCallback, fromPromise } from 'xstate'
import { assert } from '../../runtime/assert.ts'
import type { Clock } from '../../runtime/clock.ts'
import { decode, encode } from '../../runtime/codec.ts'
import { CantripError, describeValue, InvalidInputError } from '../../runtime/errors.ts'
import type { ActorInspect } from '../../runtime/inspect-hook.ts'
import { limits } from '../../runtime/limits.ts'
import { ModelStateMachine, type ModelRaftHost } from '../../runtime/model/model-state-machine.ts'
import type { CommandOf, CommandResult, ModelCommand, ModelContext } from '../../runtime/model/model-types.ts'
import { tableGet } from '../../runtime/model/table.ts'
import { encodingSealer, sealCommand, type SecretSealer } from '../../runtime/model/secret-sealing.ts'
import {
  NotLeaderError, ProposalAbandonedError, ProposalRefusedError, RaftHost, ReadFailedError, type RaftHostOptions, type RaftHostStage
} from '../../runtime/raft/raft-host.ts'
import type { NodeId } from '../../runtime/raft/raft-types.ts'
import { ChangeNotifier } from './change-notices.ts'
import { LeaderWait } from './leader-wait.ts'
import { LeaseClaimGate } from './lease-claim-gate.ts'
import { MachineWatches, type MachineWatchStage } from './machine-watches.ts'
import { WatchLeaderGuard } from './watch-leader-guard.ts'
import { ModelWatches } from './model-watches.ts'
import type { LogRing } from '../../runtime/logs/log-ring.ts'
import { controllerApiProtocol, serveApiRequest, type ApiExtras, type CharmArchives, type IdentifyPeer, type MachinePresence } from './controller-api.ts'
import { controllerMachine, runsSingularWorkers, type ClaimOutcome, type ControllerActor, type ControllerEvent, type ControllerSnapshot } from './controller-machine.ts'

import { controllerProposeProtocol } from './api-protocols.ts'
export { controllerProposeProtocol } from './api-protocols.ts'

/** The controller lease that gates the singular workers. */
export const singularLease = 'singular'

const component = 'controller'

/** Started when this controller begins to hold the singular lease as leader; `stop` is called when it stops. */
export type SingularWorkers = (controller: NodeId) => { stop: () => void }

export interface ModelReplicaOptions extends Omit<RaftHostOptions<ModelCommand, CommandResult, ModelContext>, 'onRoleChange' | 'stateMachine' | 'onStage'> {
  /** The write path's steps (RaftHostOptions.onStage) and the machine watches' (MachineWatchesOptions.onStage). */
  onStage?: (stage: RaftHostStage | MachineWatchStage, detail: number) => void
  /** Duration of each claim of the singular lease; default limits.controllerLeaseDurationMsDefault. */
  leaseDurationMs?: number
  singularWorkers?: SingularWorkers
  /**
   * Serve machine agents: the API (`controller-api.ts`) with callers identified by
   * `identify`, and change notices on the model's topic while this controller leads.
   */
  /** Inspection of the controller actor (agent/ passes it in; `raft` actors named `raft:<model>`). */
  inspect?: ActorInspect
  /** Seals secret content as commands arrive (agent/: AES-GCM with the controllers' key); default encodingSealer. */
  secretSealer?: SecretSealer
  agents?: { modelUuid: string, identify: IdentifyPeer, noticeIntervalMs?: number, charms?: CharmArchives, presenceOf?: MachinePresence, extras?: ApiExtras, logs?: LogRing }
}

/** A command could not be committed within the attempts allowed; it may still apply later. */
export class SubmitFailedError extends CantripError {
  override name = 'SubmitFailedError'
  constructor (id: NodeId, attempts: number, last: string) {
    super(`${component} "${id}": command not committed after ${attempts} attempts: ${last}`)
  }
}

/** The leader a command was forwarded to answered with an error. */
export class ForwardedError extends CantripError {
  override name = 'ForwardedError'
  readonly remoteName: string
  readonly leader: NodeId | ''
  constructor (remoteName: string, message: string, leader: NodeId | '') {
    super(message)
    this.remoteName = remoteName
    this.leader = leader
  }
}

/** The answer to one command on `controllerProposeProtocol`. */
export type ForwardReply =
  | { ok: true, result: CommandResult }
  | { ok: false, name: string, message: string, leader: NodeId | '' }

/**
 * A batched request on `controllerProposeProtocol`: `{ batch: ModelCommand[] }`, at most
 * limits.apiBatchCommandsMax commands, answered with one ForwardReply per command, in
 * order. A refusal of the whole batch (not the leader, malformed) is the single form's
 * `{ ok: false, … }`.
 */
export interface BatchRequest { batch: ModelCommand[] }
export type BatchReply = { ok: true, results: ForwardReply[] } | Extract<ForwardReply, { ok: false }>

/** A batch the leader will not look into: not a list, empty, too long, or holding a non-map. */
export const invalidBatchName = 'InvalidBatchError'

/** Errors after which the same command (same request id) may be sent again. */
const retryableNames = new Set([
  'NotLeaderError', 'ProposalAbandonedError', 'ProposalRefusedError', 'ReadFailedError',
  'RequestTimeoutError', 'PeerUnreachableError', 'TransportBusyError', 'RemoteHandlerError', 'HostStoppedError'
])

function retryable (error: unknown): boolean {
  if (error instanceof ForwardedError) return retryableNames.has(error.remoteName)
  return error instanceof Error && retryableNames.has(error.name)
}

/**
 * One controller's replica of one model (a ModelReplica): the Raft host (the replicated
 * model), the controller actor (Raft role
 * and singular workers, as the inspector shows them), and the client side of the API:
 * `submit` commits a command from any controller (followers forward it to the leader,
 * and retries reuse the request id so it applies once), `read` is linearizable from any
 * controller. The agent and the simulator both run controllers through this class; it
 * touches nothing but the contracts it is given.
 */
export class ModelReplica {
  readonly id: NodeId
  readonly host: ModelRaftHost
  readonly actor: ControllerActor
  readonly #options: ModelReplicaOptions
  #claimIds = 0
  #stopped = false
  /** The snapshot `runsSingularWorkers` last looked at, and its answer. */
  #singularSnapshot: ControllerSnapshot | undefined
  #singular = false

  readonly #notifier: ChangeNotifier | undefined
  /** Machine agents' watches of their views, served from the state applied here (machine-watches.ts). */
  readonly watches: MachineWatches
  /** The admin's watches of the whole model (model-watches.ts), served from the state applied here. */
  readonly modelWatches: ModelWatches
  /** Leadership claims that would lose are answered here, never proposed (lease-claim-gate.ts). */
  readonly #claims = new LeaseClaimGate(() => this.host.state())
  /** Clients' writes that arrived during an election, waiting for its leader (leader-wait.ts). */
  readonly #leaderWait: LeaderWait
  /** Ends the machine watches while this controller has no leader (watch-leader-guard.ts). */
  readonly #watchGuard: WatchLeaderGuard

  private constructor (options: ModelReplicaOptions, host: ModelRaftHost, actor: ControllerActor, notifier: ChangeNotifier | undefined, watches: MachineWatches, modelWatches: ModelWatches, watchGuard: WatchLeaderGuard) {
    this.id = options.id
    this.#options = options
    this.host = host
    this.actor = actor
    this.#notifier = notifier
    this.watches = watches
    this.modelWatches = modelWatches
    this.#watchGuard = watchGuard
    this.#leaderWait = new LeaderWait(options.clock, limits.controllerClientWritesAwaitingLeaderMax)
  }

  /** Change notices published while leading (for tests and status). */
  get noticesPublished (): number {
    return this.#notifier?.published ?? 0
  }

  static async start (options: ModelReplicaOptions): Promise<ModelReplica> {
    const leaseDurationMs = options.leaseDurationMs ?? limits.controllerLeaseDurationMsDefault
    assert(leaseDurationMs > limits.controllerLeaseClockDriftMarginMs * 2,
      `${component}: lease duration ${leaseDurationMs} ms must exceed twice the drift margin of ${limits.controllerLeaseClockDriftMarginMs} ms`)
    let node: ModelReplica | undefined
    const early: Array<{ role: ModelRaftHost['role'], leader: NodeId | '', term: number }> = []
    const notifier = options.agents === undefined
      ? undefined
      : new ChangeNotifier({
        transport: options.transport,
        clock: options.clock,
        modelUuid: options.agents.modelUuid,
        noticeIntervalMs: options.agents.noticeIntervalMs ?? limits.changeNoticeIntervalMs,
        machines: () => node?.host.state().counters.machine ?? 0
      })
    const watches = new MachineWatches({
      clock: options.clock,
      model: () => node!.host.state(),
      // The same "after the code running now" as the host's deferred apply (cantripd: setImmediate; the simulator a zero-delay step).
      ...(options.deferApply === undefined ? {} : { defer: options.deferApply }),
      ...(options.onStage === undefined ? {} : { onStage: options.onStage })
    })
    const modelWatches = new ModelWatches({ clock: options.clock, revision: () => node?.host.state().revision ?? 0 })
    const watchGuard = new WatchLeaderGuard({
      clock: options.clock,
      graceMs: limits.machineWatchLeaderlessElectionTimeouts * options.electionTicks * options.tickMs,
      refuse: reason => {
        watches.refuse(reason)
        modelWatches.refuse(reason)
      }
    })
    const host = await RaftHost.start({
      ...options,
      stateMachine: new ModelStateMachine(options.id),
      onApplied: (entry, result) => {
        options.onApplied?.(entry, result)
        // Only the leader announces: one notice per commit burst, not one per controller.
        if (node !== undefined && node.host.role === 'leader') notifier?.changed(entry.index)
        // Every controller answers the watches it holds from what it applied, leader or not.
        // A restarted controller may apply before start() returns: it holds no watch yet,
        // and its model is not readable through `node`.
        if (node !== undefined) watches.applied()
        modelWatches.applied()
      },
      onRoleChange: change => {
        watchGuard.known(change.leader)
        if (node === undefined) early.push(change)
        else {
          node.actor.send({ type: 'raft.role', ...change })
          node.#leaderWait.known(change.leader)
        }
      }
    })
    const machine = controllerMachine.provide({
      actors: {
        claimLease: fromPromise<ClaimOutcome, { controller: NodeId }>(async () => await claimSingularLease(node!, leaseDurationMs)),
        singularWorkers: fromCallback<ControllerEvent, { controller: NodeId }>(({ input }) => {
          const running = options.singularWorkers?.(input.controller)
          return () => { running?.stop() }
        })
      }
    })
    const inspect = options.inspect?.('raft', `raft:${options.agents?.modelUuid ?? 'default'}`)
    const actor = createActor(machine, {
      clock: options.clock,
      ...(inspect === undefined ? {} : { inspect }),
      input: {
        id: options.id,
        role: host.role,
        term: host.term,
        leader: host.leader,
        claimRetryMs: Math.max(options.tickMs * options.electionTicks, Math.floor(leaseDurationMs / 10))
      }
    })
    node = new ModelReplica(options, host, actor, notifier, watches, modelWatches, watchGuard)
    // A controller starts without a leader until it hears one: the grace runs from here.
    watchGuard.known(host.leader)
    actor.start()
    for (const change of early) actor.send({ type: 'raft.role', ...change })
    options.transport.handle(controllerProposeProtocol, async request => await node.#serveForwarded(request.from, request.data))
    const agents = options.agents
    if (agents !== undefined) options.transport.handle(controllerApiProtocol, async request => await serveApiRequest(node, agents.identify, request, agents.charms, agents.presenceOf, { ...agents.extras, ...(agents.logs === undefined ? {} : { logs: agents.logs }) }))
    return node
  }

  get stopped (): boolean {
    return this.#stopped || this.host.stopped
  }

  get clock (): Clock {
    return this.#options.clock
  }

  /**
   * A fresh request id for a lease claim. The term makes it unique across restarts: a
   * restarted controller leads again only in a later term.
   */
  nextClaimId (): string {
    return `${this.id}/${singularLease}/${this.host.term}/${++this.#claimIds}`
  }

  /** Whether the singular workers run here now. */
  runsSingularWorkers (): boolean {
    if (this.stopped) return false
    // Asked after every simulated step and on every lease check; the answer changes only with the snapshot.
    const snapshot = this.actor.getSnapshot()
    if (snapshot !== this.#singularSnapshot) {
      this.#singularSnapshot = snapshot
      this.#singular = runsSingularWorkers(snapshot)
    }
    return this.#singular
  }

  /**
   * Commits `command` through whichever controller leads, and resolves with its result.
   * Retries (with the same request id, so it applies at most once) after a leader change,
   * a lost reply or a timeout, up to limits.controllerSubmitAttemptsMax attempts;
   * rejected with SubmitFailedError after that, when the command may or may not apply.
   */
  async submit (command: ModelCommand): Promise<CommandResult> {
    let last = 'no attempt made'
    for (let attempt = 1; attempt <= limits.controllerSubmitAttemptsMax; attempt++) {
      if (this.stopped) throw new SubmitFailedError(this.id, attempt - 1, 'this controller stopped')
      try {
        return await this.#submitOnce(command)
      } catch (error) {
        if (!retryable(error)) throw error
        last = (error as Error).message
      }
      await this.#sleep(this.#retryDelayMs())
    }
    throw new SubmitFailedError(this.id, limits.controllerSubmitAttemptsMax, last)
  }

  /** A linearizable read of the model, from this controller (ReadIndex through the leader). */
  async read (): Promise<ModelContext> {
    let last = 'no attempt made'
    for (let attempt = 1; attempt <= limits.controllerSubmitAttemptsMax; attempt++) {
      if (this.stopped) throw new ReadFailedError(this.id, 'this controller stopped')
      try {
        return await this.host.read()
      } catch (error) {
        if (!(error instanceof ReadFailedError)) throw error
        last = error.message
      }
      await this.#sleep(this.#retryDelayMs())
    }
    throw new ReadFailedError(this.id, `no read point after ${limits.controllerSubmitAttemptsMax} attempts: ${last}`)
  }

  async stop (): Promise<void> {
    if (this.#stopped) return
    this.#stopped = true
    this.#watchGuard.stop()
    this.actor.stop()
    this.#unhandle()
    await this.host.stop()
  }

  /** Power cut: see RaftHost.crash. */
  crash (): void {
    this.#stopped = true
    this.#watchGuard.stop()
    this.actor.stop()
    this.#unhandle()
    this.host.crash()
  }

  /** The sealer this controller seals and opens secret content with. */
  get secretSealer (): SecretSealer {
    return this.#options.secretSealer ?? encodingSealer
  }

  async #submitOnce (unsealed: ModelCommand): Promise<CommandResult> {
    // Sealed here, at the first controller: plain content goes no further, not even to the leader.
    const command = sealCommand(unsealed, this.secretSealer)
    if (this.host.role === 'leader') return await this.host.propose(command)
    const leader = this.host.leader
    if (leader === '' || leader === this.id) throw new NotLeaderError(this.id, '')
    return await this.#forward(leader, command)
  }

  async #forward (leader: NodeId, command: ModelCommand): Promise<CommandResult> {
    const o = this.#options
    const timeoutMs = (o.proposeTimeoutMs ?? 20 * o.electionTicks * o.tickMs) + o.electionTicks * o.tickMs
    const bytes = await o.transport.request(leader, controllerProposeProtocol, encode(command, component), { timeoutMs })
    const reply = decode(bytes, component) as ForwardReply
    if (typeof reply !== 'object' || reply === null || typeof reply.ok !== 'boolean') {
      throw new ForwardedError('InvalidReply', `${component} "${this.id}": leader "${leader}" sent a malformed reply`, '')
    }
    if (reply.ok) return reply.result
    throw new ForwardedError(reply.name, reply.message, reply.leader)
  }

  /**
   * A follower's forwarded command, or a machine agent's batch of them: proposed here only
   * (never forwarded again). Each command of a batch is authorised on its own, and the
   * permitted ones are proposed together so Raft carries them in one Ready.
   */
  async #serveForwarded (from: string, data: Uint8Array): Promise<Uint8Array> {
    let reply: BatchReply | ForwardReply
    try {
      const request = decode(data, component) as unknown
      if (typeof request !== 'object' || request === null || Array.isArray(request) || request instanceof Uint8Array) {
        reply = forwardError(new InvalidInputError(`${component} "${this.id}"`, 'a command map or {batch}', request))
      } else if (Object.hasOwn(request, 'batch')) {
        reply = await this.#serveBatch(from, (request as { batch: unknown }).batch)
      } else {
        reply = await this.#serveOne(from, request as ModelCommand)
      }
    } catch (error) {
      reply = forwardError(error)
    }
    return encode(reply, component)
  }

  async #serveOne (from: string, command: ModelCommand): Promise<ForwardReply> {
    const refusal = this.#forwardRefusal(from, command)
    if (refusal !== undefined) return permissionDenied(refusal)
    const sealed = sealCommand(command, this.secretSealer)
    // A controller's forward is proposed here only (never forwarded again, so no loop).
    if (this.host.role === 'leader' || this.host.voters.includes(from)) return await this.#proposeOne(sealed)
    return await this.#serveClientWrite(sealed)
  }

  /**
   * A client's write reaching a follower: forwarded to the leader (DESIGN.md: clients may
   * talk to any controller), as etcd forwards a proposal, rather than refused with a hint
   * that costs the client another round trip. During an election it first waits for the
   * leader (leader-wait.ts), at most two election timeouts (the longest one a member
   * draws), rather than being refused with 'leader unknown', on which a client can only
   * sleep and guess. When this controller becomes the leader, it proposes the write itself.
   * A leader that does not answer at all may be the dead one this follower still names (a
   * failover): the write goes once more to the leader known then, if another. So does a
   * write whose leader was cut off (partitioned, not dead): it is sent again as soon as this
   * follower hears of another leader, not after the forward's timeout of 21 election
   * timeouts (etcd likewise drops a proposal's wait when its member sees the leader change).
   * Sending it twice is safe: a command is applied once per request id.
   */
  async #serveClientWrite (command: ModelCommand): Promise<ForwardReply> {
    const o = this.#options
    let tried: NodeId | '' = ''
    let last: ForwardReply | undefined
    for (let forwards = 0; forwards < limits.controllerClientWriteForwardsMax; forwards++) {
      const leader = this.host.leader !== '' ? this.host.leader : await this.#leaderWait.wait(2 * o.electionTicks * o.tickMs)
      if (leader === '' || leader === this.id || this.stopped) return await this.#proposeOne(command)
      if (leader === tried) break
      tried = leader
      const away = this.#leaderWait.movedFrom(leader)
      try {
        const forwarded = this.#forward(leader, command)
        // Once the leader moved its answer is moot, and must not surface as unhandled.
        forwarded.catch(() => {})
        const outcome = await Promise.race([forwarded.then(result => ({ result })), away.moved.then(next => ({ next }))])
        if ('result' in outcome) return { ok: true, result: outcome.result }
        last = forwardError(new NotLeaderError(leader, outcome.next))
      } catch (error) {
        // The leader's own refusal goes back as it was given (its name and its hint).
        if (error instanceof ForwardedError) return { ok: false, name: error.remoteName, message: error.message, leader: error.leader }
        last = forwardError(error)
      } finally {
        away.cancel()
      }
    }
    return last ?? forwardError(new NotLeaderError(this.id, this.host.leader))
  }

  async #proposeOne (command: ModelCommand): Promise<ForwardReply> {
    try {
      if (LeaseClaimGate.isClaim(command) && this.host.role === 'leader') {
        return { ok: true, result: await this.#claims.afterPending(command, async claim => await this.host.propose(claim)) }
      }
      return { ok: true, result: await this.host.propose(command) }
    } catch (error) {
      return forwardError(error)
    }
  }

  async #serveBatch (from: string, batch: unknown): Promise<BatchReply> {
    const invalid = (why: string): BatchReply => ({ ok: false, name: invalidBatchName, message: `${component} "${this.id}": cannot accept batch from peer "${from}": ${why}`, leader: '' })
    if (!Array.isArray(batch)) return invalid('"batch" is not a list')
    if (batch.length === 0) return invalid('the batch is empty')
    if (batch.length > limits.apiBatchCommandsMax) return invalid(`${batch.length} commands exceed the maximum of ${limits.apiBatchCommandsMax}`)
    const bad = batch.findIndex(command => typeof command !== 'object' || command === null || Array.isArray(command))
    if (bad !== -1) return invalid(`entry ${bad} is not a command map`)
    // The whole batch goes elsewhere, as a single command would, so the client re-targets once.
    if (this.host.role !== 'leader') return forwardError(new NotLeaderError(this.id, this.host.leader))
    // Each command is authorised on its own; the permitted ones are committed together.
    const results: ForwardReply[] = new Array<ForwardReply>(batch.length)
    const permitted: Array<{ at: number, command: ModelCommand }> = []
    const waiting: Array<{ at: number, claim: CommandOf<'claim-leadership'> }> = []
    /** Application → the unit whose claim this batch proposes: another unit's waits for it. */
    const claiming = new Map<string, string>()
    for (const [at, command] of (batch as ModelCommand[]).entries()) {
      const refusal = this.#forwardRefusal(from, command)
      if (refusal !== undefined) {
        results[at] = permissionDenied(refusal)
        continue
      }
      const sealed = sealCommand(command, this.secretSealer)
      // As in #proposeOne, only a leader judges claims: a follower's applied leases may lag, and it answers not-leader.
      if (LeaseClaimGate.isClaim(sealed) && this.host.role === 'leader') {
        // A claim another unit's lease refuses is answered now; one behind another unit's claim in flight waits for it.
        const lost = this.#claims.refusalNow(sealed)
        if (lost !== undefined) results[at] = { ok: true, result: lost }
        else if (this.#claims.mustWait(sealed) || (claiming.get(sealed.application) ?? sealed.unit) !== sealed.unit) waiting.push({ at, claim: sealed })
        else {
          claiming.set(sealed.application, sealed.unit)
          permitted.push({ at, command: sealed })
        }
      } else {
        permitted.push({ at, command: sealed })
      }
    }
    // Proposed together and in order: the leader's host appends them with whatever else
    // came in meanwhile, in as few entries as its group commit allows (proposal-queue.ts).
    const proposed = this.host.proposeAll(permitted.map(p => p.command))
    permitted.forEach((p, i) => { if (LeaseClaimGate.isClaim(p.command)) this.#claims.proposed(p.command, proposed[i]!) })
    const settle = async (applied: Promise<CommandResult>): Promise<ForwardReply> => {
      try {
        return { ok: true, result: await applied } satisfies ForwardReply
      } catch (error) {
        return forwardError(error)
      }
    }
    const replies = await Promise.all([
      ...proposed.map(settle),
      ...waiting.map(async w => await settle(this.#claims.afterPending(w.claim, async claim => await this.host.propose(claim))))
    ])
    permitted.forEach((p, i) => { results[p.at] = replies[i]! })
    waiting.forEach((w, i) => { results[w.at] = replies[permitted.length + i]! })
    return { ok: true, results }
  }

  /**
   * Who may submit what (DESIGN.md §10): without `agents` (a closed simulated group)
   * anyone; otherwise the caller's peer id must identify an entity, and the command's
   * proposer must be that entity — or, for a machine agent, one of the units the model
   * puts on its machine. Controllers forward for clients they authenticated themselves.
   * The model then checks what the proposer may do.
   */
  #forwardRefusal (from: string, command: ModelCommand): string | undefined {
    const agents = this.#options.agents
    if (agents === undefined) return undefined
    const caller = agents.identify(from)
    // Built only for a refusal: a machine agent's batch of 30 commands is checked command by command.
    const denied = (): string => `${component} "${this.id}": permission denied: peer "${from}"`
    if (caller === undefined) return `${denied()} is not known to this model`
    if (caller.kind === 'controller') return undefined
    const proposer = (command as { proposer?: unknown }).proposer
    if (typeof proposer !== 'object' || proposer === null) return `${denied()} sent a command without a proposer`
    const p = proposer as { kind?: unknown, name?: unknown }
    // Most of what a machine agent sends is its units' (status, hook commits): checked first,
    // by the model's placement, without the JSON of both sides that the agent's own needs.
    if (caller.kind === 'machine' && p.kind === 'unit' && typeof p.name === 'string' &&
      tableGet(this.host.state().units, p.name)?.machine === caller.id) return undefined
    if (quoted(proposer) === JSON.stringify(caller)) return undefined
    return `${denied()} may not propose as ${quoted(proposer)}`
  }

  #retryDelayMs (): number {
    return this.#options.tickMs * this.#options.electionTicks
  }

  async #sleep (ms: number): Promise<void> {
    await new Promise<void>(resolve => { this.#options.clock.setTimeout(resolve, ms) })
  }

  #unhandle (): void {
    this.#leaderWait.stop()
    this.#notifier?.stop()
    this.watches.stop()
    this.modelWatches.stop()
    for (const protocol of [controllerProposeProtocol, ...(this.#options.agents === undefined ? [] : [controllerApiProtocol])]) {
      try {
        this.#options.transport.unhandle(protocol)
      } catch {
        // A stopped transport refuses unhandle; nothing is attached then.
      }
    }
  }
}

/**
 * Claims (or extends) the singular lease through Raft, stamped with this controller's
 * clock. The belief lasts until the lease's expiry minus the drift margin, on the same
 * clock, counted from when the grant is known here.
 */
async function claimSingularLease (node: ModelReplica, durationMs: number): Promise<ClaimOutcome> {
  const clock: Clock = node.clock
  const result = await node.host.propose({
    type: 'claim-controller-lease',
    lease: singularLease,
    controller: node.id,
    // Whole milliseconds, rounded down: an earlier reading only shortens the lease and delays a grant.
    now: Math.floor(clock.now()),
    durationMs,
    requestId: node.nextClaimId(),
    proposer: { kind: 'controller', id: node.id }
  })
  if (!result.ok) return { granted: false, why: result.error }
  const expiry = result.lease?.expiry
  if (expiry === undefined) return { granted: false, why: 'the grant carried no expiry' }
  const validForMs = expiry - limits.controllerLeaseClockDriftMarginMs - clock.now()
  return validForMs > 0 ? { granted: true, validForMs } : { granted: false, why: 'granted too late to believe' }
}

/** JSON for a message, or a short description when the value has none (a BigInt from the wire, say). */
function quoted (value: unknown): string {
  try {
    return JSON.stringify(value) ?? describeValue(value)
  } catch {
    return describeValue(value)
  }
}

function permissionDenied (message: string): ForwardReply {
  return { ok: false, name: 'PermissionDeniedError', message, leader: '' }
}

function forwardError (error: unknown): Extract<ForwardReply, { ok: false }> {
  const err = error instanceof Error ? error : new Error(String(error))
  return { ok: false, name: err.name, message: err.message, leader: error instanceof NotLeaderError ? error.leader : '' }
}
