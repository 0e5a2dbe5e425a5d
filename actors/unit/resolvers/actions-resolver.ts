import type { Operation } from '../operation.ts'
import type { ResolverInput } from '../resolver-types.ts'

/**
 * Actions and `juju exec` commands (§1.4 items 10–11): allowed when idle or while a hook
 * is in error (they do not clear it), only once installed. An action found running at
 * start-up died with the agent: it is failed, not re-run; one whose result was recorded
 * is only committed.
 */
export function actionsOp ({ local, memory, remote }: ResolverInput): Operation | undefined {
  const op = local.operation
  if (op.kind === 'run-action' && op.actionId !== undefined) {
    if (op.step === 'done') return { kind: 'commit-action', actionId: op.actionId }
    return { kind: 'fail-action', actionId: op.actionId, message: 'action terminated: the unit agent stopped while it ran' }
  }
  if (!local.installed || !canInterleave(local.operation)) return undefined
  const next = remote.actions.find(action => !memory.completedActions.includes(action.id))
  return next === undefined ? undefined : { kind: 'run-action', action: next }
}

export function commandsOp ({ local, memory, remote }: ResolverInput): Operation | undefined {
  if (!local.installed || !canInterleave(local.operation)) return undefined
  const next = remote.commands.find(command => !memory.completedCommands.includes(command.id))
  return next === undefined ? undefined : { kind: 'run-command', command: next }
}

function canInterleave (op: ResolverInput['local']['operation']): boolean {
  return op.kind === 'continue' || (op.kind === 'run-hook' && op.step === 'pending')
}
