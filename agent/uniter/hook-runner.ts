/**
 * The real hook runner (juju-semantics §4.1–4.2): finds `dispatch` or `hooks/<name>` (or
 * `actions/<name>`) in the charm directory, runs it directly (no shell, no arguments)
 * with the charm directory as working directory and exactly the Juju environment —
 * nothing of the agent's own environment but its PATH behind the tools directory — and
 * sends stdout to the unit log at DEBUG and stderr at WARNING. The process runs in its
 * own process group with a timeout and an output cap (agent/child-process-runner.ts), so
 * a hang or a kill reaches its children too and endless output costs no memory.
 */
import { accessSync, constants, existsSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { hookOutcomeOf } from '../../actors/unit/hook-process.ts'
import type { HookOutcome } from '../../actors/unit/operation.ts'
import { limits } from '../../runtime/limits.ts'
import type { Logger } from '../../runtime/logger.ts'
import type { ProcessRunner } from '../../runtime/process-runner.ts'

/** What stays the same for every hook of one unit. */
export interface UnitHookSetup {
  unit: string
  charmDir: string
  /** Directory of the hook-tool links; first on PATH. */
  toolsDir: string
  socketPath: string
  modelUuid: string
  modelName: string
  apiAddresses: readonly string[]
  machineId: string
  /** For a subordinate: its principal unit; '' otherwise. */
  principalUnit: string
  availabilityZone: string
  /** The agent's PATH, placed after the tools directory. */
  agentPath: string
  jujuVersion: string
  proxies?: Readonly<Partial<Record<'http' | 'https' | 'ftp' | 'no', string>>>
}

/** One run: a hook, or an action. */
export interface HookRunSpec {
  kind: 'hook' | 'action'
  /** Hook name (`db-relation-joined`) or action name. */
  name: string
  contextId: string
  relation?: { endpoint: string, id: number, remoteUnit: string, remoteApplication: string, departingUnit?: string }
  storage?: { id: string, location: string, kind: 'filesystem' | 'block' }
  /** Secret hooks: JUJU_SECRET_ID (the URI), JUJU_SECRET_LABEL and, when known, JUJU_SECRET_REVISION. */
  secret?: { uri: string, label: string, revision?: number }
  action?: { id: string }
  /** Also receives each line of output (an action keeps its stdout and stderr as results). */
  onOutput?: (stream: 'stdout' | 'stderr', line: string) => void
}

/** The environment of §4.2, and nothing else. */
export function hookEnvironment (setup: UnitHookSetup, run: HookRunSpec): Record<string, string> {
  const dispatchPath = `${run.kind === 'action' ? 'actions' : 'hooks'}/${run.name}`
  const env: Record<string, string> = {
    CHARM_DIR: setup.charmDir,
    JUJU_CHARM_DIR: setup.charmDir,
    JUJU_CONTEXT_ID: run.contextId,
    JUJU_HOOK_NAME: run.kind === 'hook' ? run.name : '',
    JUJU_DISPATCH_PATH: dispatchPath,
    JUJU_AGENT_SOCKET_ADDRESS: setup.socketPath,
    JUJU_AGENT_SOCKET_NETWORK: 'unix',
    JUJU_UNIT_NAME: setup.unit,
    JUJU_MODEL_UUID: setup.modelUuid,
    JUJU_MODEL_NAME: setup.modelName,
    JUJU_API_ADDRESSES: setup.apiAddresses.join(' '),
    JUJU_MACHINE_ID: setup.machineId,
    JUJU_PRINCIPAL_UNIT: setup.principalUnit,
    JUJU_AVAILABILITY_ZONE: setup.availabilityZone,
    JUJU_VERSION: setup.jujuVersion,
    CLOUD_API_VERSION: '',
    JUJU_CHARM_HTTP_PROXY: setup.proxies?.http ?? '',
    JUJU_CHARM_HTTPS_PROXY: setup.proxies?.https ?? '',
    JUJU_CHARM_FTP_PROXY: setup.proxies?.ftp ?? '',
    JUJU_CHARM_NO_PROXY: setup.proxies?.no ?? '',
    PATH: `${setup.toolsDir}:${setup.agentPath}`,
    APT_LISTCHANGES_FRONTEND: 'none',
    DEBIAN_FRONTEND: 'noninteractive',
    LANG: 'C.UTF-8',
    TERM: 'tmux-256color'
  }
  // Legacy proxy variables only when configured, as Juju sets them.
  for (const [kind, value] of Object.entries(setup.proxies ?? {})) {
    if (value === undefined || value === '') continue
    env[`${kind}_proxy`] = value
    env[`${kind.toUpperCase()}_PROXY`] = value
  }
  if (run.relation !== undefined) {
    env.JUJU_RELATION = run.relation.endpoint
    env.JUJU_RELATION_ID = `${run.relation.endpoint}:${run.relation.id}`
    env.JUJU_REMOTE_UNIT = run.relation.remoteUnit
    env.JUJU_REMOTE_APP = run.relation.remoteApplication
    if (run.relation.departingUnit !== undefined) env.JUJU_DEPARTING_UNIT = run.relation.departingUnit
  }
  if (run.storage !== undefined) {
    env.JUJU_STORAGE_ID = run.storage.id
    env.JUJU_STORAGE_LOCATION = run.storage.location
    env.JUJU_STORAGE_KIND = run.storage.kind
  }
  if (run.secret !== undefined) {
    env.JUJU_SECRET_ID = run.secret.uri
    env.JUJU_SECRET_LABEL = run.secret.label
    if (run.secret.revision !== undefined && run.secret.revision > 0) env.JUJU_SECRET_REVISION = String(run.secret.revision)
  }
  if (run.kind === 'action' && run.action !== undefined) {
    env.JUJU_ACTION_NAME = run.name
    env.JUJU_ACTION_UUID = run.action.id
    env.JUJU_ACTION_TAG = `action-${run.action.id}`
  }
  return env
}

export type LocatedHook =
  | { kind: 'executable', path: string }
  /** Neither dispatch nor the hook file: skipped, its commit still applies. */
  | { kind: 'missing' }
  /** Present but not runnable: a hook failure. */
  | { kind: 'not-executable', path: string }

/** `dispatch` if the charm has an executable one, else `hooks/<name>` / `actions/<name>`. */
export function locateHook (charmDir: string, run: Pick<HookRunSpec, 'kind' | 'name'>): LocatedHook {
  const dispatch = join(charmDir, 'dispatch')
  if (isExecutableFile(dispatch)) return { kind: 'executable', path: dispatch }
  const path = join(charmDir, run.kind === 'action' ? 'actions' : 'hooks', run.name)
  if (!existsSync(path)) return { kind: 'missing' }
  return isExecutableFile(path) ? { kind: 'executable', path } : { kind: 'not-executable', path }
}

function isExecutableFile (path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

export interface HookRunnerOptions {
  runner: ProcessRunner
  /** The unit's log (module `unit.<unit>`); hook lines go out as `unit.<unit>.<hook>`. */
  logger: Logger
  /** Default limits.hookTimeoutMs. */
  timeoutMs?: number
  /** Default limits.hookOutputBytesMax. */
  outputBytesMax?: number
}

export class HookRunner {
  readonly #options: HookRunnerOptions

  constructor (options: HookRunnerOptions) {
    this.#options = options
  }

  /**
   * Runs one hook or action and says how it ended. A missing metadata.yaml is a failure
   * ("charm missing from disk"); a missing hook is `missing`; `signal` aborting (the agent
   * stops) kills the process group and reports `terminated`, so the hook is re-queued.
   */
  async run (setup: UnitHookSetup, run: HookRunSpec, signal: AbortSignal): Promise<HookOutcome> {
    if (!existsSync(join(setup.charmDir, 'metadata.yaml'))) {
      return { kind: 'failed', exitCode: null, reason: `charm missing from disk: ${setup.charmDir}` }
    }
    const located = locateHook(setup.charmDir, run)
    if (located.kind === 'missing') return { kind: 'missing' }
    if (located.kind === 'not-executable') {
      // Juju finds the hook with Go's exec.LookPath, which refuses a file without the
      // execute bit as `exec: "<path>": permission denied` (runner/exec.go lookPath).
      return { kind: 'failed', exitCode: null, reason: `exec: ${JSON.stringify(located.path)}: permission denied` }
    }
    const log = this.#options.logger.child(run.name)
    const running = this.#options.runner.start({
      command: located.path,
      args: [],
      env: hookEnvironment(setup, run),
      cwd: setup.charmDir,
      timeoutMs: this.#options.timeoutMs ?? limits.hookTimeoutMs,
      outputBytesMax: this.#options.outputBytesMax ?? limits.hookOutputBytesMax,
      onOutput: (stream, line) => {
        log.log(stream === 'stdout' ? 'debug' : 'warning', line)
        run.onOutput?.(stream, line)
      }
    })
    const kill = (): void => { running.kill(limits.processKillGraceMs) }
    if (signal.aborted) kill()
    else signal.addEventListener('abort', kill, { once: true })
    try {
      const exit = await running.exit
      if (exit.kind !== 'spawn-failed' && exit.outputTruncated) {
        log.log('warning', `output beyond ${this.#options.outputBytesMax ?? limits.hookOutputBytesMax} bytes was dropped (${exit.outputBytes} bytes in all)`)
      }
      return hookOutcomeOf(exit, run.name)
    } finally {
      signal.removeEventListener('abort', kill)
    }
  }
}
