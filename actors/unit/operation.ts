import type { HookInfo } from './hook-info.ts'
import type { DeployedCharm } from './local-state.ts'
import type { RemoteAction, RemoteCommand } from './remote-state.ts'

/**
 * One thing the uniter does next, as decided by the resolver. Operations with an
 * `execute` phase run a process or fetch a charm and take the machine-wide hook lock;
 * the others only change local state.
 */
export type Operation =
  /** Fetch and unpack a charm: first install, or an upgrade (possibly interrupting a hook error). */
  | { kind: 'deploy', mode: 'install' | 'upgrade', charm: DeployedCharm, resolvedRetry?: boolean }
  | { kind: 'run-hook', hook: HookInfo, source: 'resolver' | 'queued' | 'retry-timer' | 'resolved-retry' }
  /** Commit a hook without running it: a hook found `done`, `resolved --no-retry`, or an implicit relation. */
  | { kind: 'skip-hook', hook: HookInfo, reason: 'done' | 'resolved-no-hooks' | 'implicit' }
  | { kind: 'accept-leadership' }
  | { kind: 'resign-leadership' }
  | { kind: 'run-action', action: RemoteAction }
  /** An action that was running when the agent died: it is failed, not re-run. */
  | { kind: 'fail-action', actionId: string, message: string }
  /** An action whose result was recorded before the agent died: only its commit is left. */
  | { kind: 'commit-action', actionId: string }
  | { kind: 'run-command', command: RemoteCommand }

export type OperationKind = Operation['kind']

export function needsHookLock (op: Operation): boolean {
  return op.kind === 'deploy' || op.kind === 'run-hook' || op.kind === 'run-action' || op.kind === 'run-command'
}

/** Results of the execute phase, as reported by the injected side-effect actors. */
export type HookOutcome =
  /**
   * `statusSet`: the hook ran `status-set` for the unit (Juju's HasExecutionSetUnitStatus),
   * so the uniter stops setting the workload status it would set for a silent charm.
   * `reboot`: the hook called `juju-reboot` (no `--now`): the machine reboots once it is committed.
   */
  | { kind: 'succeeded', statusSet?: boolean, reboot?: boolean }
  /** No hook file and no dispatch: skipped, commit effects still apply. */
  | { kind: 'missing' }
  | { kind: 'failed', exitCode: number | null, reason: string }
  /** Killed by SIGTERM/SIGKILL because the agent is stopping: re-queued, not an error. */
  | { kind: 'terminated', signal: string }
  /** `juju-reboot --now`: the hook was killed; it is re-queued and the machine reboots (juju-semantics §4.3). */
  | { kind: 'reboot-now' }

export type DeployOutcome =
  | { kind: 'deployed' }
  /** The new charm's files could not be merged with the unit's (Juju's deploy conflict): "upgrade failed" until resolved. */
  | { kind: 'conflicted', reason: string }
  /**
   * The charm could not be fetched or unpacked: Juju's uniter ends its loop with
   * "resolver loop error" and its agent restarts it after a delay, which tries again.
   */
  | { kind: 'failed', reason: string }

export interface ActionOutcome {
  status: 'completed' | 'failed'
  message?: string
  results: Record<string, unknown>
}

/** `timedOut`: killed at the command's timeout (the task fails, as Juju's juju-exec does). */
export type CommandOutcome = { exitCode: number, stdout: string, stderr: string, timedOut?: boolean }

export type ExecuteOutcome =
  | { type: 'hook', outcome: HookOutcome }
  | { type: 'deploy', outcome: DeployOutcome }
  | { type: 'action', outcome: ActionOutcome }
  | { type: 'command', outcome: CommandOutcome }

export function describeOperation (op: Operation): string {
  switch (op.kind) {
    case 'deploy': return `${op.mode} charm ${op.charm.url}`
    case 'run-hook': return `run ${op.hook.kind} hook`
    case 'skip-hook': return `skip ${op.hook.kind} hook (${op.reason})`
    case 'accept-leadership': return 'accept leadership'
    case 'resign-leadership': return 'resign leadership'
    case 'run-action': return `run action ${op.action.name} (${op.action.id})`
    case 'fail-action': return `fail action ${op.actionId}`
    case 'commit-action': return `commit action ${op.actionId}`
    case 'run-command': return `run command ${op.command.id}`
  }
}
