/**
 * One unit's effects for real (actors/unit/unit-host-effects.ts): hooks and actions as
 * processes through the HookRunner with the hook tools served on the unit's socket (each
 * run's changes through a UnitHookContext, committed when it exits 0), `juju exec`
 * commands through bash, and the charm deployed into the unit's agent directory
 * (`<data dir>/agents/unit-<app>-<n>`). The unit host above it is the simulator's too.
 */
import { randomUUID } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { hookContextLocal } from '../../actors/unit/hook-context-local.ts'
import { hookName, type HookInfo } from '../../actors/unit/hook-info.ts'
import type { LocalState } from '../../actors/unit/local-state.ts'
import { hookCommitKey } from '../../actors/unit/operation-steps.ts'
import type { ActionOutcome, CommandOutcome, DeployOutcome, HookOutcome } from '../../actors/unit/operation.ts'
import { actionProcessResults } from './action-process-results.ts'
import type { UnitWorkspace } from '../../actors/unit/unit-host-effects.ts'
import type { DeployCharmInput, RunActionInput, RunCommandInput, RunHookInput } from '../../actors/unit/unit-machine.ts'
import { limits } from '../../runtime/limits.ts'
import type { Logger } from '../../runtime/logger.ts'
import { readerOf } from '../../runtime/model/model-draft.ts'
import { secretUri } from '../../runtime/model/secret-types.ts'
import type { ProcessRunner } from '../../runtime/process-runner.ts'
import type { RemoteAction, RemoteCommand } from '../../runtime/unit-remote-state.ts'
import { validateActionParams } from '../../runtime/charm/action-params.ts'
import { loadCharmDir } from '../charm/load-charm.ts'
import { HookRunner, hookEnvironment, type HookRunSpec, type UnitHookSetup } from './hook-runner.ts'
import type { HookContext } from '../hook-tools/hook-context.ts'
import { UnitHookContext, type UnitControllerApi } from './unit-hook-context.ts'
import { providedJujuVersion } from '../../runtime/charm/charm-requirements.ts'

/** The hook-tool server as a unit uses it (agent/hook-tools/transport). */
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

export interface ProcessUnitWorkspaceOptions {
  unit: string
  machineId: string
  /** `<data dir>/agents/unit-<app>-<n>`: charm/ and the socket live here. */
  agentDir: string
  controller: UnitControllerApi
  processRunner: ProcessRunner
  tools: HookToolService
  logger: Logger
  /** Copies the charm with this URL into `dir` (replacing what is there). */
  fetchCharm: (url: string, dir: string) => Promise<void>
  hookTimeoutMs?: number
  modelName?: string
  /** The PATH after the tools directory in hooks; default `defaultAgentPath()`. */
  agentPath?: string
}

export class ProcessUnitWorkspace implements UnitWorkspace {
  readonly #o: ProcessUnitWorkspaceOptions
  readonly #runner: HookRunner

  constructor (options: ProcessUnitWorkspaceOptions) {
    this.#o = options
    mkdirSync(join(options.agentDir, 'state'), { recursive: true })
    this.#runner = new HookRunner({
      runner: options.processRunner,
      logger: options.logger,
      ...(options.hookTimeoutMs === undefined ? {} : { timeoutMs: options.hookTimeoutMs })
    })
  }

  get #charmDir (): string {
    return join(this.#o.agentDir, 'charm')
  }

  /** resource-get's copies: `<agent dir>/resources/<name>/<filename>`, as Juju keeps them. */
  get #resourcesDir (): string {
    return join(this.#o.agentDir, 'resources')
  }

  async close (): Promise<void> {
    await this.#o.tools.close?.()
  }

  async deployCharm ({ charm }: DeployCharmInput): Promise<DeployOutcome> {
    return await this.#deploy(charm.url)
  }

  async runHook ({ hook, local }: RunHookInput, signal: AbortSignal): Promise<HookOutcome> {
    return await this.#runHook(hook, local, signal)
  }

  async runAction ({ action, local }: RunActionInput, signal: AbortSignal): Promise<ActionOutcome> {
    return await this.#runAction(action, local, signal)
  }

  async runCommand ({ command, local }: RunCommandInput, signal: AbortSignal): Promise<CommandOutcome> {
    return await this.#runCommand(command, local, signal)
  }

  #setup (): UnitHookSetup {
    const model = this.#o.controller.model()
    const record = readerOf(model).unit(this.#o.unit)
    return {
      unit: this.#o.unit,
      charmDir: this.#charmDir,
      toolsDir: this.#o.tools.toolsDir,
      socketPath: this.#o.tools.socketPath,
      modelUuid: model.uuid,
      modelName: this.#o.modelName ?? 'default',
      apiAddresses: [],
      machineId: this.#o.machineId,
      principalUnit: record?.principal ?? '',
      availabilityZone: '',
      agentPath: this.#o.agentPath ?? defaultAgentPath(),
      jujuVersion: providedJujuVersion
    }
  }

  async #deploy (url: string): Promise<DeployOutcome> {
    try {
      await this.#o.fetchCharm(url, this.#charmDir)
      return { kind: 'deployed' }
    } catch (error) {
      // Not a conflict of files (the new charm replaces the directory whole): the fetch or unpack failed, retried after a restart delay.
      return { kind: 'failed', reason: error instanceof Error ? error.message : String(error) }
    }
  }

  async #runHook (hook: HookInfo, local: LocalState, signal: AbortSignal): Promise<HookOutcome> {
    const name = hookName(hook)
    const contextId = `${this.#o.unit}-${name}-${randomUUID()}`
    const relation = hook.relationId === undefined
      ? undefined
      : {
          id: hook.relationId,
          endpoint: hook.endpoint ?? '',
          remoteUnit: hook.kind === 'relation-created' || hook.kind === 'relation-broken' ? '' : hook.remoteUnit ?? '',
          remoteApplication: hook.remoteApplication ?? local.relations[String(hook.relationId)]?.remoteApplication ?? '',
          ...(hook.kind === 'relation-departed' && hook.departee !== undefined ? { departingUnit: hook.departee } : {})
        }
    const storage = hook.storageId === undefined ? undefined : readerOf(this.#o.controller.model()).unit(this.#o.unit)?.storage[hook.storageId]
    const commitKey = hookCommitKey(local)
    // `juju-reboot --now` aborts the run like an agent stop does; the tool waits for its end.
    const rebootNow = new AbortController()
    let ended = (): void => {}
    const ran = new Promise<void>(resolve => { ended = resolve })
    const context = new UnitHookContext({
      controller: this.#o.controller, unit: this.#o.unit, resourcesDir: this.#resourcesDir, kind: 'hook', name, local: hookContextLocal(local, hook), logger: this.#o.logger, contextId,
      rebootNow: async () => { rebootNow.abort(); await ran },
      ...(commitKey === undefined ? {} : { commitKey }),
      ...(relation === undefined ? {} : { relation }),
      ...(hook.storageId === undefined ? {} : { storageId: hook.storageId })
    })
    const run: HookRunSpec = {
      kind: 'hook', name, contextId,
      ...(relation === undefined ? {} : { relation }),
      ...(storage === undefined ? {} : { storage: { id: storage.id, location: storage.location, kind: storage.kind } }),
      ...(hook.secretId === undefined ? {} : { secret: { uri: secretUri(hook.secretId), label: hook.secretLabel ?? '', ...(hook.secretRevision === undefined ? {} : { revision: hook.secretRevision }) } })
    }
    const close = this.#o.tools.open(contextId, context)
    let outcome: HookOutcome
    try {
      outcome = await this.#runner.run(this.#setup(), run, AbortSignal.any([signal, rebootNow.signal]))
    } finally {
      ended()
      close()
    }
    // Killed for `--now` (not for an agent stop): re-queued, and the machine reboots.
    if (context.rebootRequested === 'now' && !signal.aborted) return { kind: 'reboot-now' }
    if (outcome.kind !== 'succeeded') return outcome
    try {
      await context.flush()
      // Without --now the reboot happens only once the hook has succeeded (juju-semantics §4.3).
      const withStatus = context.unitStatusSet ? { ...outcome, statusSet: true } : outcome
      return context.rebootRequested === 'after' ? { ...withStatus, kind: 'succeeded', reboot: true } : withStatus
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
      charm = await loadCharmDir(this.#charmDir)
    } catch (error) {
      return { ok: false, error: `cannot run "${action.name}" action: ${error instanceof Error ? error.message : String(error)}` }
    }
    const spec = charm.actions[action.name]
    if (spec === undefined) return { ok: false, error: `cannot run "${action.name}" action: not defined` }
    const checked = validateActionParams(action.name, spec.schema, action.parameters)
    return checked.ok ? { ok: true, params: checked.params as Record<string, unknown> } : checked
  }

  async #runAction (action: RemoteAction, local: LocalState, signal: AbortSignal): Promise<ActionOutcome> {
    const contextId = `${this.#o.unit}-action-${action.id}-${randomUUID()}`
    const checked = await this.#actionParams(action)
    if (!checked.ok) return { status: 'failed', message: checked.error, results: {} }
    const params = checked.params
    const context = new UnitHookContext({
      controller: this.#o.controller, unit: this.#o.unit, resourcesDir: this.#resourcesDir, kind: 'action', name: action.name, local, logger: this.#o.logger, contextId,
      action: { name: action.name, id: action.id, params }
    })
    const close = this.#o.tools.open(contextId, context)
    const output = { stdout: [] as string[], stderr: [] as string[] }
    let outcome: HookOutcome
    try {
      const onOutput = (stream: 'stdout' | 'stderr', line: string): void => { output[stream].push(line) }
      outcome = await this.#runner.run(this.#setup(), { kind: 'action', name: action.name, contextId, action: { id: action.id }, onOutput }, signal)
    } finally {
      close()
    }
    // As after a hook, an action that exited 0 commits what it changed (relation settings,
    // ports, charm state, storage-add), whether or not it called action-fail; a refused
    // commit fails the action (Juju's HookContext.Flush, runner/context/context.go).
    let flushError: string | undefined
    if (outcome.kind === 'succeeded') {
      try {
        await context.flush()
      } catch (error) {
        flushError = error instanceof Error ? error.message : String(error)
      }
    }
    const results = { ...context.actionResults, ...actionProcessResults(outcome, output) }
    if (flushError !== undefined) return { status: 'failed', message: flushError, results }
    if (outcome.kind === 'missing') return { status: 'failed', message: `action not implemented on unit "${this.#o.unit}"`, results }
    if (outcome.kind !== 'succeeded') return { status: 'failed', message: outcome.kind === 'failed' ? outcome.reason : `action "${action.name}" was terminated`, results }
    if (context.actionFailure !== undefined) return { status: 'failed', message: context.actionFailure, results }
    return { status: 'completed', results }
  }

  async #runCommand (command: RemoteCommand, local: LocalState, signal: AbortSignal): Promise<CommandOutcome> {
    const contextId = `${this.#o.unit}-exec-${command.id}-${randomUUID()}`
    const context = new UnitHookContext({ controller: this.#o.controller, unit: this.#o.unit, resourcesDir: this.#resourcesDir, kind: 'command', name: 'juju-exec', local, logger: this.#o.logger, contextId })
    const close = this.#o.tools.open(contextId, context)
    const stdout: string[] = []
    const stderr: string[] = []
    try {
      const running = this.#o.processRunner.start({
        command: '/bin/bash',
        args: ['-c', command.commands],
        env: { ...hookEnvironment(this.#setup(), { kind: 'hook', name: 'juju-exec', contextId }), JUJU_HOOK_NAME: '' },
        cwd: existsSync(this.#charmDir) ? this.#charmDir : this.#o.agentDir,
        timeoutMs: command.timeoutMs ?? this.#o.hookTimeoutMs ?? limits.hookTimeoutMs,
        outputBytesMax: limits.hookOutputBytesMax,
        onOutput: (stream, line) => { (stream === 'stdout' ? stdout : stderr).push(line) }
      })
      const kill = (): void => { running.kill(limits.processKillGraceMs) }
      signal.addEventListener('abort', kill, { once: true })
      const exit = await running.exit
      signal.removeEventListener('abort', kill)
      const exitCode = exit.kind === 'exited' ? exit.exitCode : 1
      if (exitCode === 0) await context.flush()
      const kept = (lines: string[]): string => joinLines(lines).slice(0, limits.execOutputCharsMax)
      return { exitCode, stdout: kept(stdout), stderr: kept(stderr), ...(exit.kind === 'timed-out' ? { timedOut: true } : {}) }
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
