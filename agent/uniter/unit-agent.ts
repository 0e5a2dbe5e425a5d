/**
 * One unit's agent for real: the unit actor (actors/unit/unit-machine.ts) provided with
 * real effects — local state in the machine agent's Storage, the machine-wide hook lock,
 * hooks and actions as processes through the HookRunner with the hook tools served on the
 * unit's socket, `juju exec` commands through bash, the charm deployed into the agent
 * directory — and wired to a controller: the remote state it watches is projected from
 * the controller's model (refreshed on every change and on a timer, since leadership
 * belief depends on time), what the actor asks for (enter scope, clear resolved, action
 * results, status, …) goes back as commands, and the unit claims its application's
 * leadership lease as Juju's leadership tracker does.
 */
import { randomUUID } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { hookName, type HookInfo } from '../../actors/unit/hook-info.ts'
import { initialLocalState, type LocalState } from '../../actors/unit/local-state.ts'
import { hookCommitKey } from '../../actors/unit/operation-steps.ts'
import type { ActionOutcome, CommandOutcome, DeployOutcome, HookOutcome } from '../../actors/unit/operation.ts'
import type { UnitEmitted } from '../../actors/unit/unit-effects.ts'
import { commandForEmitted } from '../../actors/unit/emitted-commands.ts'
import { createUnitActor, type UnitActorRef } from '../../actors/unit/unit-machine.ts'
import type { UnitPorts } from '../../actors/unit/unit-ports.ts'
import { createUnitStateStore } from '../../actors/unit/unit-state-store.ts'
import type { Clock, TimerHandle } from '../../runtime/clock.ts'
import type { HookLock } from '../../runtime/hook-lock.ts'
import type { ActorInspect } from '../../runtime/inspect-hook.ts'
import { limits } from '../../runtime/limits.ts'
import type { Logger } from '../../runtime/logger.ts'
import { readerOf } from '../../runtime/model/model-draft.ts'
import type { ModelCommand } from '../../runtime/model/model-types.ts'
import { remoteStateFor } from '../../runtime/model/remote-state-view.ts'
import { plainEqual } from '../../runtime/plain-equal.ts'
import type { RemoteState } from '../../runtime/unit-remote-state.ts'
import type { ProcessRunner } from '../../runtime/process-runner.ts'
import { hashString32 } from '../../runtime/random.ts'
import type { Storage } from '../../runtime/storage.ts'
import type { RemoteAction, RemoteCommand } from '../../runtime/unit-remote-state.ts'
import { validateActionParams } from '../../runtime/charm/action-params.ts'
import { loadCharmDir } from '../charm/load-charm.ts'
import { HookRunner, hookEnvironment, type HookRunSpec, type UnitHookSetup } from './hook-runner.ts'
import type { HookContext } from '../hook-tools/hook-context.ts'
import { UnitHookContext, type UnitControllerApi } from './unit-hook-context.ts'

/** The hook-tool server as the unit agent uses it (agent/hook-tools/transport). */
export interface HookToolService {
  readonly socketPath: string
  readonly toolsDir: string
  /** Serves tool calls with `contextId` against `context` until the returned function is called. */
  open (contextId: string, context: HookContext): () => void
  /** Stops serving and removes the socket, when the unit agent is done. */
  close?: () => Promise<void>
}

/**
 * The PATH hooks get behind the tools directory: the directory of the node running the
 * agent first (charms that start node workloads find the same one), then the usual ones.
 */
export function defaultAgentPath (): string {
  return [dirname(process.execPath), '/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin']
    .filter((dir, i, all) => all.indexOf(dir) === i).join(':')
}

export interface UnitAgentController extends UnitControllerApi {
  /** Called after every change of the model; returns the unsubscribe function. */
  onChange (listener: () => void): () => void
}

export interface UnitAgentOptions {
  unit: string
  machineId: string
  /** `<data dir>/agents/unit-<app>-<n>`: charm/, state/ and the socket live here. */
  agentDir: string
  controller: UnitAgentController
  /** The machine agent's store (uniter state of all its units). */
  storage: Storage
  hookLock: HookLock
  processRunner: ProcessRunner
  tools: HookToolService
  logger: Logger
  clock: Clock
  /** Copies the charm with this URL into `dir` (replacing what is there). */
  fetchCharm: (url: string, dir: string) => Promise<void>
  hookTimeoutMs?: number
  /** Leadership lease claims; default limits.leadershipLeaseDurationMsDefault. */
  leaseDurationMs?: number
  updateStatusIntervalMs?: number
  modelName?: string
  /** The PATH after the tools directory in hooks; default `defaultAgentPath()`. */
  agentPath?: string
  /** Inspection of the unit actor and its relation actors (`cantripd --inspect`). */
  inspect?: ActorInspect
}

export class UnitAgent {
  readonly unit: string
  readonly actor: UnitActorRef
  readonly #o: UnitAgentOptions
  readonly #runner: HookRunner
  readonly #unsubscribe: () => void
  #leaseTimer: TimerHandle | undefined
  #refreshTimer: TimerHandle | undefined
  #stopped = false
  /** The remote state last sent to the actor by a refresh. */
  #lastRemote: RemoteState | undefined
  #requests = 0
  /** Emitted effects still being sent to the controller, in order. */
  #outbox: Promise<void> = Promise.resolve()

  private constructor (options: UnitAgentOptions, actor: UnitActorRef, runner: HookRunner) {
    this.unit = options.unit
    this.#o = options
    this.actor = actor
    this.#runner = runner
    this.#unsubscribe = options.controller.onChange(() => { this.#refresh(false) })
  }

  static start (options: UnitAgentOptions): UnitAgent {
    mkdirSync(join(options.agentDir, 'state'), { recursive: true })
    const runner = new HookRunner({
      runner: options.processRunner,
      logger: options.logger,
      ...(options.hookTimeoutMs === undefined ? {} : { timeoutMs: options.hookTimeoutMs })
    })
    const remote = remoteStateFor(options.controller.model(), options.unit, options.controller.now())
    if (remote === undefined) throw new Error(`unit agent "${options.unit}": the unit is not in the model`)
    const store = createUnitStateStore(options.storage)
    let agent: UnitAgent | undefined
    const ports: UnitPorts = {
      loadLocalState: async unit => withStateId(await store.load(unit)),
      persistLocalState: async ({ unit, local }) => { await store.save(unit, local) },
      acquireHookLock: (unit, acquired) => options.hookLock.acquire(unit, acquired),
      runHook: async ({ hook, local }, signal) => await agent!.#runHook(hook, local, signal),
      deployCharm: async ({ charm }) => await agent!.#deploy(charm.url),
      runAction: async ({ action, local }, signal) => await agent!.#runAction(action, local, signal),
      runCommand: async ({ command, local }, signal) => await agent!.#runCommand(command, local, signal)
    }
    const inspect = options.inspect?.('unit', `unit-${options.unit.replace('/', '-')}`)
    const actor = createUnitActor(ports, {
      clock: options.clock,
      ...(inspect === undefined ? {} : { inspect }),
      input: {
        unit: options.unit,
        remote,
        seed: hashString32(options.unit, 1),
        ...(options.updateStatusIntervalMs === undefined ? {} : { updateStatusIntervalMs: options.updateStatusIntervalMs })
      }
    })
    agent = new UnitAgent(options, actor, runner)
    actor.on('*', event => { agent!.#onEmitted(event as UnitEmitted) })
    actor.subscribe({ complete: () => { agent!.#dispose() }, error: () => { agent!.#dispose() } })
    actor.start()
    agent.#claimLeadership()
    agent.#scheduleRefresh()
    return agent
  }

  get charmDir (): string {
    return join(this.#o.agentDir, 'charm')
  }

  /** SIGTERM: the running hook is killed and re-queued; resolves when the actor has stopped. */
  async stop (): Promise<void> {
    if (this.#stopped) return
    this.#dispose()
    const done = new Promise<void>(resolve => {
      const sub = this.actor.subscribe({ complete: () => { sub.unsubscribe(); resolve() }, error: () => { sub.unsubscribe(); resolve() } })
      if (this.actor.getSnapshot().status !== 'active') resolve()
    })
    this.actor.send({ type: 'agent.stop' })
    await done
    await this.#outbox
  }

  /** No more timers or controller watching: the agent is stopping, or its actor has finished (the unit is gone). */
  #dispose (): void {
    this.#stopped = true
    this.#unsubscribe()
    if (this.#leaseTimer !== undefined) this.#o.clock.clearTimeout(this.#leaseTimer)
    if (this.#refreshTimer !== undefined) this.#o.clock.clearTimeout(this.#refreshTimer)
  }

  // -------------------------------------------------------------------------------
  // Remote state and leadership

  /**
   * Tells the actor the remote state. A change of the model that leaves this unit's remote
   * state as it was is dropped (every unit of a machine recomputes on every view); the
   * periodic and leadership refreshes always send (`always`), since leadership belief
   * moves with time and a lost scope entry is asserted again on them.
   */
  #refresh (always = true): void {
    if (this.#stopped) return
    const remote = remoteStateFor(this.#o.controller.model(), this.unit, this.#o.controller.now())
    if (remote === undefined) return
    if (!always && this.#lastRemote !== undefined && plainEqual(remote, this.#lastRemote)) return
    this.#lastRemote = remote
    this.actor.send({ type: 'remote.changed', remote })
  }

  /** Leadership belief changes with time alone; look again a few times per lease. */
  #scheduleRefresh (): void {
    const every = Math.max(1_000, Math.floor(this.#leaseDurationMs() / 6))
    this.#refreshTimer = this.#o.clock.setTimeout(() => {
      this.#refresh()
      if (!this.#stopped) this.#scheduleRefresh()
    }, every)
  }

  #leaseDurationMs (): number {
    return this.#o.leaseDurationMs ?? limits.leadershipLeaseDurationMsDefault
  }

  /** Claims (or extends) the lease now and again at half its duration, as Juju's tracker does. */
  #claimLeadership (): void {
    if (this.#stopped) return
    const application = this.unit.split('/')[0]!
    const durationMs = this.#leaseDurationMs()
    void this.#send({ type: 'claim-leadership', application, unit: this.unit, now: Math.floor(this.#o.clock.now()), durationMs })
      .finally(() => {
        this.#refresh()
        if (!this.#stopped) this.#leaseTimer = this.#o.clock.setTimeout(() => { this.#claimLeadership() }, Math.floor(durationMs / 2))
      })
  }

  // -------------------------------------------------------------------------------
  // What the actor asks of the controller

  #onEmitted (event: UnitEmitted): void {
    if (event.type === 'hook.failed') this.#o.logger.log('error', `hook failed: ${event.reason}`)
    const body = commandForEmitted(this.unit, event, Math.floor(this.#o.clock.now()))
    if (body !== undefined) this.#queue(body)
  }

  /** Sends commands one after another, in the order the actor emitted them. */
  #queue (body: Record<string, unknown>): void {
    this.#outbox = this.#outbox.then(async () => { await this.#send(body) })
  }

  async #send (body: Record<string, unknown>): Promise<void> {
    const command = { ...body, requestId: `${this.unit}/${randomUUID()}/${++this.#requests}`, proposer: { kind: 'unit', name: this.unit } } as unknown as ModelCommand
    try {
      const result = await this.#o.controller.submit(command)
      if (!result.ok) this.#o.logger.log('debug', `controller refused ${body.type as string}: ${result.error}`)
    } catch (error) {
      this.#o.logger.log('warning', `cannot send ${body.type as string}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }

  // -------------------------------------------------------------------------------
  // Effects

  #setup (): UnitHookSetup {
    const model = this.#o.controller.model()
    const record = readerOf(model).unit(this.unit)
    return {
      unit: this.unit,
      charmDir: this.charmDir,
      toolsDir: this.#o.tools.toolsDir,
      socketPath: this.#o.tools.socketPath,
      modelUuid: 'cantrip-local',
      modelName: this.#o.modelName ?? 'default',
      apiAddresses: [],
      machineId: this.#o.machineId,
      principalUnit: record?.principal ?? '',
      availabilityZone: '',
      agentPath: this.#o.agentPath ?? defaultAgentPath(),
      jujuVersion: '3.5.0'
    }
  }

  async #deploy (url: string): Promise<DeployOutcome> {
    try {
      await this.#o.fetchCharm(url, this.charmDir)
      return { kind: 'deployed' }
    } catch (error) {
      return { kind: 'conflicted', reason: error instanceof Error ? error.message : String(error) }
    }
  }

  async #runHook (hook: HookInfo, local: LocalState, signal: AbortSignal): Promise<HookOutcome> {
    const name = hookName(hook)
    const contextId = `${this.unit}-${name}-${randomUUID()}`
    const relation = hook.relationId === undefined
      ? undefined
      : {
          id: hook.relationId,
          endpoint: hook.endpoint ?? '',
          remoteUnit: hook.kind === 'relation-created' || hook.kind === 'relation-broken' ? '' : hook.remoteUnit ?? '',
          remoteApplication: hook.remoteApplication ?? local.relations[String(hook.relationId)]?.remoteApplication ?? '',
          ...(hook.kind === 'relation-departed' && hook.departee !== undefined ? { departingUnit: hook.departee } : {})
        }
    const storage = hook.storageId === undefined ? undefined : readerOf(this.#o.controller.model()).unit(this.unit)?.storage[hook.storageId]
    const commitKey = hookCommitKey(local)
    const context = new UnitHookContext({
      controller: this.#o.controller, unit: this.unit, kind: 'hook', name, local, logger: this.#o.logger, contextId,
      ...(commitKey === undefined ? {} : { commitKey }),
      ...(relation === undefined ? {} : { relation }),
      ...(hook.storageId === undefined ? {} : { storageId: hook.storageId })
    })
    const run: HookRunSpec = {
      kind: 'hook', name, contextId,
      ...(relation === undefined ? {} : { relation }),
      ...(storage === undefined ? {} : { storage: { id: storage.id, location: storage.location, kind: storage.kind } })
    }
    const close = this.#o.tools.open(contextId, context)
    let outcome: HookOutcome
    try {
      outcome = await this.#runner.run(this.#setup(), run, signal)
    } finally {
      close()
    }
    if (outcome.kind !== 'succeeded') return outcome
    try {
      await context.flush()
      return outcome
    } catch (error) {
      return { kind: 'failed', exitCode: 0, reason: `hook "${name}": cannot commit its changes: ${error instanceof Error ? error.message : String(error)}` }
    }
  }

  /**
   * Juju §7.3: the parameters are checked against the action's schema in the deployed
   * charm's actions.yaml and its defaults filled in; an action the charm does not define,
   * or parameters that do not validate, fail the action without running anything.
   */
  async #actionParams (action: RemoteAction): Promise<{ ok: true, params: Record<string, unknown> } | { ok: false, error: string }> {
    let charm
    try {
      charm = await loadCharmDir(this.charmDir)
    } catch (error) {
      return { ok: false, error: `cannot run "${action.name}" action: ${error instanceof Error ? error.message : String(error)}` }
    }
    const spec = charm.actions[action.name]
    if (spec === undefined) return { ok: false, error: `cannot run "${action.name}" action: not defined` }
    const checked = validateActionParams(action.name, spec.schema, action.parameters)
    return checked.ok ? { ok: true, params: checked.params as Record<string, unknown> } : checked
  }

  async #runAction (action: RemoteAction, local: LocalState, signal: AbortSignal): Promise<ActionOutcome> {
    const contextId = `${this.unit}-action-${action.id}-${randomUUID()}`
    const checked = await this.#actionParams(action)
    if (!checked.ok) return { status: 'failed', message: checked.error, results: {} }
    const params = checked.params
    const context = new UnitHookContext({
      controller: this.#o.controller, unit: this.unit, kind: 'action', name: action.name, local, logger: this.#o.logger, contextId,
      action: { name: action.name, id: action.id, params }
    })
    const close = this.#o.tools.open(contextId, context)
    let outcome: HookOutcome
    try {
      outcome = await this.#runner.run(this.#setup(), { kind: 'action', name: action.name, contextId, action: { id: action.id } }, signal)
    } finally {
      close()
    }
    const results = { ...context.actionResults }
    if (outcome.kind === 'missing') return { status: 'failed', message: `action not implemented on unit "${this.unit}"`, results }
    if (outcome.kind !== 'succeeded') return { status: 'failed', message: outcome.kind === 'failed' ? outcome.reason : `action "${action.name}" was terminated`, results }
    if (context.actionFailure !== undefined) return { status: 'failed', message: context.actionFailure, results }
    return { status: 'completed', results }
  }

  async #runCommand (command: RemoteCommand, local: LocalState, signal: AbortSignal): Promise<CommandOutcome> {
    const contextId = `${this.unit}-exec-${command.id}-${randomUUID()}`
    const context = new UnitHookContext({ controller: this.#o.controller, unit: this.unit, kind: 'command', name: 'juju-exec', local, logger: this.#o.logger, contextId })
    const close = this.#o.tools.open(contextId, context)
    const stdout: string[] = []
    const stderr: string[] = []
    try {
      const running = this.#o.processRunner.start({
        command: '/bin/bash',
        args: ['-c', command.commands],
        env: { ...hookEnvironment(this.#setup(), { kind: 'hook', name: 'juju-exec', contextId }), JUJU_HOOK_NAME: '' },
        cwd: existsSync(this.charmDir) ? this.charmDir : this.#o.agentDir,
        timeoutMs: this.#o.hookTimeoutMs ?? limits.hookTimeoutMs,
        outputBytesMax: limits.hookOutputBytesMax,
        onOutput: (stream, line) => { (stream === 'stdout' ? stdout : stderr).push(line) }
      })
      const kill = (): void => { running.kill(limits.processKillGraceMs) }
      signal.addEventListener('abort', kill, { once: true })
      const exit = await running.exit
      signal.removeEventListener('abort', kill)
      const exitCode = exit.kind === 'exited' ? exit.exitCode : 1
      if (exitCode === 0) await context.flush()
      return { exitCode, stdout: joinLines(stdout), stderr: joinLines(stderr) }
    } finally {
      close()
    }
  }
}

function joinLines (lines: string[]): string {
  return lines.length === 0 ? '' : lines.join('\n') + '\n'
}

/** Copies a charm directory into place: the stand-in for fetching and unpacking the archive. */
export async function copyCharmDir (source: string, dir: string): Promise<void> {
  if (!existsSync(join(source, 'metadata.yaml'))) throw new Error(`charm at ${source}: metadata.yaml missing`)
  rmSync(dir, { recursive: true, force: true })
  cpSync(source, dir, { recursive: true, preserveTimestamps: true })
}

/**
 * The unit's stored state, or a new one, with the id that makes its hook commits' keys
 * unique (LocalState.stateId); a state saved before there were ids gets one now.
 */
function withStateId (stored: LocalState | undefined): LocalState {
  const local = stored ?? initialLocalState()
  return local.stateId === undefined ? { ...local, stateId: randomUUID() } : local
}
