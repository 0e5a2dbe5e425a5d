/**
 * Operations and their tasks as Juju 3.6's CLI shows them (cmd/juju/action/
 * listoperations.go, showoperation.go, showtask.go, common.go): an operation groups the
 * tasks one `run` or `exec` queued, its status is the worst of theirs, times are shown as
 * times in UTC (never a raw epoch). The model keeps tasks (ActionRecord) with their
 * operation's id; an operation is rebuilt from them here.
 */
import type { ActionRecord, ActionStatus, ModelContext } from '../../runtime/model/model-types.ts'
import { tableValues } from '../../runtime/model/table.ts'

export interface OperationView {
  readonly id: string
  readonly tasks: readonly ActionRecord[]
  readonly status: ActionStatus
  readonly summary: string
  readonly enqueuedAtMs?: number
  readonly startedAtMs?: number
  readonly completedAtMs?: number
}

/** A task (or operation) that will not change any more: neither pending nor running. */
export function isFinished (status: ActionStatus): boolean {
  return status !== 'pending' && status !== 'running'
}

/** Every operation the model still keeps, by id (numeric order); a lone action of before operations is its own. */
export function operationsOf (model: ModelContext): OperationView[] {
  const groups = new Map<string, ActionRecord[]>()
  for (const task of tableValues(model.actions)) {
    const id = task.operation ?? task.id
    groups.set(id, [...(groups.get(id) ?? []), task])
  }
  return [...groups.entries()]
    .map(([id, tasks]) => operationView(id, tasks.sort((a, b) => Number(a.id) - Number(b.id))))
    .sort((a, b) => Number(a.id) - Number(b.id))
}

function operationView (id: string, tasks: readonly ActionRecord[]): OperationView {
  const first = tasks[0]!
  const pending = tasks.filter(t => t.status === 'pending').length
  const unfinished = pending + tasks.filter(t => t.status === 'running').length
  // Juju's operation status: pending until a task runs, running while any task runs or
  // some finished and some not, then the worst outcome.
  const status: ActionStatus = pending === tasks.length ? 'pending'
    : unfinished > 0 ? 'running'
      : tasks.some(t => t.status === 'failed') ? 'failed' : tasks.some(t => t.status === 'cancelled') ? 'cancelled' : 'completed'
  const summary = first.name === 'juju-exec'
    ? `exec ${String(first.parameters['command'] ?? '')}`
    : `${first.name} run on ${tasks.map(t => `unit-${t.unit.replace('/', '-')}`).join(',')}`
  const completed = unfinished > 0 ? [] : tasks.map(t => t.completedAtMs).filter((t): t is number => t !== undefined)
  const started = tasks.map(t => t.startedAtMs).filter((t): t is number => t !== undefined)
  return {
    id, tasks, status, summary,
    ...(first.enqueuedAtMs === undefined ? {} : { enqueuedAtMs: first.enqueuedAtMs }),
    // The operation started when its first task did, and finished with its last.
    ...(started.length === 0 ? {} : { startedAtMs: Math.min(...started) }),
    ...(completed.length === 0 ? {} : { completedAtMs: Math.max(...completed) })
  }
}

/** Juju's plain time (`2006-01-02T15:04:05`), in UTC; '' when unknown. */
export function plainTime (ms: number | undefined): string {
  return ms === undefined ? '' : new Date(ms).toISOString().slice(0, 19)
}

/** Juju's document time (Go's time.String() in UTC: `2026-11-27 01:02:03 +0000 UTC`). */
export function documentTime (ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} +0000 UTC`
}

interface Times { readonly enqueuedAtMs?: number, readonly startedAtMs?: number, readonly completedAtMs?: number }

/** Juju's timing struct (operationInfo, taskInfo): enqueued, started, completed, each when known. */
function timing (times: Times): Record<string, string> {
  return {
    ...(times.enqueuedAtMs === undefined ? {} : { enqueued: documentTime(times.enqueuedAtMs) }),
    ...(times.startedAtMs === undefined ? {} : { started: documentTime(times.startedAtMs) }),
    ...(times.completedAtMs === undefined ? {} : { completed: documentTime(times.completedAtMs) })
  }
}

/** show-task's and run's timing is a map, which Juju prints with its keys sorted. */
function sortedTiming (times: Times): Record<string, string> {
  const t = timing(times)
  return Object.fromEntries(Object.keys(t).sort().map(k => [k, t[k]!]))
}

/**
 * A task's results as Juju shows them: stdout and stderr only when not empty, return-code
 * as a number, and every map's keys sorted, as Go's YAML and JSON encoders write a map.
 */
export function taskResults (task: ActionRecord): Record<string, unknown> {
  const results: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(task.results).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)) {
    if ((key === 'stdout' || key === 'stderr') && value === '') continue
    results[key] = sortedMaps(value)
  }
  return results
}

/** A value with the keys of every map in it sorted (arrays keep their order). */
function sortedMaps (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedMaps)
  if (value === null || typeof value !== 'object') return value
  const entries = Object.entries(value).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
  return Object.fromEntries(entries.map(([k, v]) => [k, sortedMaps(v)]))
}

/** `show-task --format yaml|json` and an `exec`/`run` result entry. */
export function taskDocument (task: ActionRecord): Record<string, unknown> {
  const results = taskResults(task)
  const times = sortedTiming(task)
  return {
    id: task.id,
    ...(task.message === '' ? {} : { message: task.message }),
    ...(Object.keys(results).length === 0 ? {} : { results }),
    status: task.status,
    ...(Object.keys(times).length === 0 ? {} : { timing: times }),
    unit: task.unit
  }
}

/** `show-operation` and `operations --format yaml|json`: Juju's operationInfo. */
export function operationDocument (op: OperationView): Record<string, unknown> {
  const first = op.tasks[0]!
  const single = op.tasks.every(t => t.name === first.name && JSON.stringify(t.parameters) === JSON.stringify(first.parameters))
  const tasks: Record<string, unknown> = {}
  for (const task of op.tasks) {
    const results = taskResults(task)
    const times = timing(task)
    tasks[task.id] = {
      ...(single ? {} : { name: task.name }),
      host: task.unit,
      status: task.status,
      ...(Object.keys(times).length === 0 ? {} : { timing: times }),
      ...(task.message === '' ? {} : { message: task.message }),
      ...(Object.keys(results).length === 0 ? {} : { results })
    }
  }
  const times = timing(op)
  return {
    summary: op.summary,
    status: op.status,
    ...(single ? { action: { name: first.name, parameters: first.parameters } } : {}),
    ...(Object.keys(times).length === 0 ? {} : { timing: times }),
    tasks
  }
}
