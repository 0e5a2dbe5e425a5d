/**
 * What `run` and `exec` say about the operation they queued, as Juju 3.6's
 * cmd/juju/action/common.go processOperationResults does: waiting, `run` first lists the
 * operation and its tasks and names each task it waits for (progress, on stderr; `exec`
 * keeps it quiet); with `--background` both say what was scheduled and how to look at it
 * later, and return without waiting.
 */
import { stringify } from 'yaml'
import type { Out } from './commands/model-common.ts'

export interface QueuedTask {
  readonly unit: string
  readonly id: string
}

/** Juju's receiver tag of a unit: `unit-kv-0`. */
function unitTag (unit: string): string {
  return `unit-${unit.replace('/', '-')}`
}

/** `Running operation 1 with 2 tasks`, a line per task, and a blank line (stderr). */
export function reportRunning (operationId: string, tasks: readonly QueuedTask[], err: Out): void {
  err(`Running operation ${operationId} with ${tasks.length} task${tasks.length > 1 ? 's' : ''}`)
  for (const task of tasks) err(`  - task ${task.id} on ${unitTag(task.unit)}`)
  err('')
}

/** `Waiting for task 2...` (stderr), before each task's result is awaited. */
export function reportWaiting (task: QueuedTask, err: Out): void {
  err(`Waiting for task ${task.id}...`)
}

/**
 * `--background`: the operation and its one task and where to look (stderr); with several
 * tasks, their ids by unit as YAML on stdout between the lines.
 */
export function reportScheduled (operationId: string, tasks: readonly QueuedTask[], out: Out, err: Out): void {
  if (tasks.length === 1) {
    err(`Scheduled operation ${operationId} with task ${tasks[0]!.id}`)
    err(`Check operation status with 'cantrip show-operation ${operationId}'`)
    err(`Check task status with 'cantrip show-task ${tasks[0]!.id}'`)
    return
  }
  err(`Scheduled operation ${operationId} with ${tasks.length} tasks`)
  out(stringify(Object.fromEntries(tasks.map(t => [t.unit, { id: t.id }]))).trimEnd())
  err(`Check operation status with 'cantrip show-operation ${operationId}'`)
  err('Check task status with \'cantrip show-task <id>\'')
}
