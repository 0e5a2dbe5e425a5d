import { hookName, type HookInfo } from '../../../actors/unit/hook-info.ts'
import { actorKey, type InspectMessage } from './inspect-message.ts'

/**
 * A unit's hooks and their results, derived from the unit actor's snapshots: a hook
 * starts when the uniter's current operation is a `run-hook` not yet executed, and ends
 * when the operation records where it goes after execute (`commit` → ok, `error`,
 * `requeued`, `conflict`) or is gone.
 */

export type HookResult = 'running' | 'ok' | 'error' | 'requeued' | 'conflict' | 'unknown'

export interface HookRun {
  hook: string
  start: number
  end: number | undefined
  result: HookResult
  /** Log index of the snapshot that started it. */
  startIndex: number
}

/** Hook runs kept per unit in a timeline (the newest ones). */
export const hookRunsMax = 2_000

interface UnitOperationView {
  current?: { op?: { kind?: string, hook?: HookInfo } }
  afterExecute?: string
}

function resultOf (afterExecute: string | undefined): HookResult {
  switch (afterExecute) {
    case 'commit': return 'ok'
    case 'error': return 'error'
    case 'requeued': return 'requeued'
    case 'conflict': return 'conflict'
    default: return 'unknown'
  }
}

function runningHook (context: UnitOperationView): string | undefined {
  const op = context.current?.op
  if (op?.kind !== 'run-hook' || op.hook === undefined || typeof op.hook.kind !== 'string') return undefined
  return hookName(op.hook)
}

/** The hook timeline of the unit actor `unitKey` from messages[0..upTo] (inclusive). */
export function hookTimeline (messages: readonly InspectMessage[], unitKey: string, upTo = messages.length - 1): HookRun[] {
  const runs: HookRun[] = []
  let open: HookRun | undefined
  const last = Math.min(upTo, messages.length - 1)
  for (let i = 0; i <= last; i++) {
    const message = messages[i]!
    // Snapshots only: an @xstate.actor carries the actor as it is when a client connects, not when a hook began.
    if (message.type !== '@xstate.snapshot') continue
    if (actorKey(message.agent, message.sessionId) !== unitKey) continue
    const context = (message.snapshot.context ?? {}) as UnitOperationView
    const hook = runningHook(context)
    if (open !== undefined && (context.afterExecute !== undefined || hook !== open.hook)) {
      open.end = message.at
      open.result = hook === open.hook ? resultOf(context.afterExecute) : 'unknown'
      open = undefined
    }
    if (open === undefined && hook !== undefined && context.afterExecute === undefined) {
      open = { hook, start: message.at, end: undefined, result: 'running', startIndex: i }
      runs.push(open)
      if (runs.length > hookRunsMax) runs.shift()
    }
  }
  return runs
}
