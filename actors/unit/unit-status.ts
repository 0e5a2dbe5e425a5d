import { hookName, type HookInfo } from './hook-info.ts'
import type { LocalState } from './local-state.ts'
import type { Operation } from './operation.ts'
import type { UnitStatus } from './unit-effects.ts'

/**
 * The statuses the uniter itself sets around operations (juju-semantics §8): the agent
 * is `executing` while operations run and `idle` once none is left (update-status does not
 * show), a failed hook records agent `error` with `hook failed: "<hook>"`, and the
 * workload gets the uniter's own messages around install, start, stop and remove.
 *
 * The workload rules are Juju's runHook.beforeHook/afterHook
 * (internal/worker/uniter/operation/runhook.go): before install `maintenance` "installing
 * charm software" unless the charm ever set its status (StatusSet, kept for good once a
 * hook ran `status-set`, so it survives upgrades); after a start in which the charm never
 * set it, `unknown`; before stop `maintenance` "stopping charm software" and after it
 * `maintenance` with no message; before remove `maintenance` "cleaning up prior to charm
 * deletion" and after it `terminated`. Only a hook that ran has an after: a hook skipped
 * by `resolved --no-retry` sets nothing. A function returns the same `workload` object
 * when it leaves the workload alone, so the host sends only what the uniter set
 * (`uniterSetWorkload`).
 */
export const initialUnitStatus: UnitStatus = {
  agent: { status: 'allocating', message: '' },
  workload: { status: 'waiting', message: 'agent initialising' }
}

export function statusOnOperationStart (status: UnitStatus, op: Operation, local: LocalState): UnitStatus {
  switch (op.kind) {
    case 'run-hook': {
      const hook = op.hook
      const agent = hook.kind === 'update-status' ? status.agent : { status: 'executing' as const, message: `running ${hookName(hook)} hook` }
      let workload = status.workload
      if (hook.kind === 'install' && !local.statusSet) workload = { status: 'maintenance', message: 'installing charm software' }
      if (hook.kind === 'stop') workload = { status: 'maintenance', message: 'stopping charm software' }
      if (hook.kind === 'remove') workload = { status: 'maintenance', message: 'cleaning up prior to charm deletion' }
      return { agent, workload }
    }
    case 'run-action':
      return { ...status, agent: { status: 'executing', message: `running action ${op.action.name}` } }
    case 'run-command':
      return { ...status, agent: { status: 'executing', message: 'running commands' } }
    case 'deploy':
      return { ...status, agent: { status: 'executing', message: op.mode === 'install' ? 'installing charm' : 'upgrading charm' } }
    default:
      return status
  }
}

/**
 * The agent keeps showing the operation that just committed: Juju's resolver loop
 * (internal/worker/uniter/resolver/loop.go) runs operation after operation and calls
 * OnIdle, which sets the agent `idle`, only when the resolver has nothing more to do
 * (`statusOnIdle`), so a unit with hooks queued goes from one `executing` to the next.
 */
export function statusOnCommit (status: UnitStatus, op: Operation, local: LocalState): UnitStatus {
  // A hook found done after a restart had run (and set its after-status, which is set again: idempotent).
  const ran = op.kind === 'run-hook' || (op.kind === 'skip-hook' && op.reason === 'done')
  const hook = ran ? op.hook : undefined
  let workload = status.workload
  if (hook?.kind === 'start' && !local.statusSet) workload = { status: 'unknown', message: '' }
  if (hook?.kind === 'stop') workload = { status: 'maintenance', message: '' }
  if (hook?.kind === 'remove') workload = { status: 'terminated', message: '' }
  return workload === status.workload ? status : { agent: status.agent, workload }
}

export function statusOnHookError (status: UnitStatus, hook: HookInfo): UnitStatus {
  const data: Record<string, string | number> = { hook: hookName(hook) }
  if (hook.relationId !== undefined) data['relation-id'] = hook.relationId
  if (hook.remoteUnit !== undefined) data['remote-unit'] = hook.remoteUnit
  return { ...status, agent: { status: 'error', message: `hook failed: "${hookName(hook)}"`, data } }
}

export function statusOnIdle (status: UnitStatus): UnitStatus {
  return status.agent.status === 'idle' ? status : { ...status, agent: { status: 'idle', message: '' } }
}

/**
 * The unit waits, before install, for storage it was deployed with (storage resolver's
 * ErrWaiting in Juju's internal/worker/uniter/storage/resolver.go). Juju's resolver loop
 * (resolver/loop.go) does not call OnIdle while a resolver waits, so the agent never
 * shows `idle`: it is still `allocating`, and the workload shows the `waiting` /
 * `agent initialising` the uniter set when it started (uniter.go, init), which is what
 * `juju status` shows for a unit whose storage is not yet attached.
 */
export function statusOnWaitingForInstall (status: UnitStatus): UnitStatus {
  const agent = status.agent.status === 'allocating' && status.agent.message === '' ? status.agent : { status: 'allocating' as const, message: '' }
  const workload = status.workload.status === 'waiting' && status.workload.message === 'agent initialising' ? status.workload : { status: 'waiting' as const, message: 'agent initialising' }
  return agent === status.agent && workload === status.workload ? status : { agent, workload }
}

/**
 * The uniter's loop failed (a charm it could not fetch): Juju's agent status `failed`
 * "resolver loop error" (uniter.go, reportAgentError) until its restart runs the deploy
 * again; the workload keeps what it showed.
 */
export function statusOnLoopError (status: UnitStatus, message: string): UnitStatus {
  return status.agent.status === 'failed' && status.agent.message === message ? status : { ...status, agent: { status: 'failed', message } }
}

export function statusOnUpgradeConflict (status: UnitStatus): UnitStatus {
  return { agent: { status: 'idle', message: '' }, workload: { status: 'error', message: 'upgrade failed' } }
}

/** The workload status the uniter itself set between two statuses, if it set one. */
export function uniterSetWorkload (before: UnitStatus, after: UnitStatus): UnitStatus['workload'] | undefined {
  return after.workload === before.workload ? undefined : after.workload
}
