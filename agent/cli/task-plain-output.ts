/**
 * One task's plain output, the default of `run` and of `show-task`, as Juju 3.6 prints it
 * (cmd/juju/action/common.go printPlainOutput, which run.go and showtask.go share):
 * a failed task first says `Action id N failed: MESSAGE`; then the results the charm set
 * (action-set) as YAML, or `Task N STATUS` when the task has no results at all; then a
 * blank line; then the action's own stdout and stderr as text. The keys the runner adds
 * (`return-code`, `stdout`, `stderr` and their encodings) are not in the YAML: `--format
 * yaml|json` shows them. On a terminal a failure is red and the results green, as Juju's
 * ErrorHighlight/GoodHighlight.
 */
import { createColors } from 'picocolors'
import { stringify } from 'yaml'
import type { ActionRecord } from '../../runtime/model/model-types.ts'
import { taskResults } from './operation-view.ts'

/** What Juju's runner adds to a task's results; plain output prints the streams as text instead. */
const runnerKeys = new Set(['return-code', 'stdout', 'stderr', 'stdout-encoding', 'stderr-encoding'])

/** The charm's own results as YAML (Juju marshals a Go map: keys sorted), or `Task N STATUS` when there are none at all. */
function resultsText (task: ActionRecord): string {
  const results = taskResults(task)
  const own = Object.fromEntries(Object.entries(results).filter(([key]) => !runnerKeys.has(key.toLowerCase())))
  return Object.keys(results).length === 0
    ? `Task ${task.id} ${task.status}\n`
    : Object.keys(own).length === 0 ? '' : stringify(own, { sortMapEntries: true })
}

/** The exact text, ending in a newline; `colour` paints it for a terminal. */
export function plainTaskOutput (task: ActionRecord, colour = false): string {
  const paint = createColors(colour)
  const results = taskResults(task)
  const body = resultsText(task)
  const painted = (text: string, failed: boolean): string => text === '' ? '' : failed ? paint.red(text) : paint.green(text)
  const failed = task.status === 'failed'
  // Juju's task has no message key when the message is empty; Go prints the missing value as <nil>.
  let text = failed ? painted(`Action id ${task.id} failed: ${task.message === '' ? '<nil>' : task.message}\n`, true) : ''
  // Println of the YAML, which ends in a newline already: the blank line before the streams.
  text += `${painted(body, failed)}\n`
  for (const key of ['stdout', 'stderr']) {
    const stream = results[key]
    if (stream !== undefined && stream !== '') text += `${String(stream).replace(/^\n+|\n+$/g, '')}\n`
  }
  return text
}

/**
 * Several tasks' plain output (`run` on several units): Juju prints a YAML map of each
 * unit's task id, failure message, results text and status, keys sorted, and no streams.
 */
export function plainTasksOutput (tasks: readonly ActionRecord[]): string {
  const byUnit = Object.fromEntries(tasks.map(task => [task.unit, {
    id: task.id,
    ...(task.message === '' ? {} : { message: task.message }),
    output: resultsText(task),
    status: task.status
  }]))
  return stringify(byUnit, { sortMapEntries: true })
}
