import { hookName, type HookInfo } from './hook-info.ts'
import type { LocalState } from './local-state.ts'
import type { Operation } from './operation.ts'
import type { UnitStatus } from './unit-effects.ts'

/**
 * The statuses the uniter itself sets around operations (juju-semantics §8): the agent
 * is `executing` while an operation runs and `idle` otherwise (update-status does not
 * show), a failed hook records agent `error` with `hook failed: "<hook>"`, and the
 * workload gets the uniter's own messages around install, start, stop and remove.
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

export function statusOnCommit (status: UnitStatus, op: Operation, local: LocalState): UnitStatus {
  const hook = op.kind === 'run-hook' || op.kind === 'skip-hook' ? op.hook : undefined
  let workload = status.workload
  if (hook?.kind === 'start' && !local.statusSet && status.workload.status === 'maintenance') workload = { status: 'unknown', message: '' }
  if (hook?.kind === 'stop') workload = { status: 'maintenance', message: '' }
  if (hook?.kind === 'remove') workload = { status: 'terminated', message: '' }
  return { agent: { status: 'idle', message: '' }, workload }
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

export function statusOnUpgradeConflict (status: UnitStatus): UnitStatus {
  return { agent: { status: 'idle', message: '' }, workload: { status: 'error', message: 'upgrade failed' } }
}
