/**
 * goal-state (juju-semantics §5.3): the units and relations the model intends for the
 * unit's application, with their statuses (runtime/model/goal-state.ts says which). As
 * Juju's internal/worker/uniter/runner/jujuc/goal-state.go: `--format yaml|json`, yaml by
 * default, `-o` to a file, no arguments; the document is a struct, `units` before
 * `relations` and `status` before `since`, with `since` in common.FormatTime's ISO form
 * (`2006-01-02 15:04:05Z`, UTC).
 */
import type { GoalState, GoalStatus } from '../hook-context.ts'
import { checkEmpty } from './args.ts'
import { outputFlagsOf, writeOutput } from './format.ts'
import type { HookTool } from './hook-tool.ts'

/** Juju's common.FormatTime(t, true): RFC 3339 with a space for the "T", always UTC. */
export function isoTime (ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z')
}

function entry (goal: GoalStatus): Map<string, string> {
  return new Map([['status', goal.status], ['since', isoTime(goal.since)]])
}

function entries (goals: Readonly<Record<string, GoalStatus>>): Record<string, Map<string, string>> {
  return Object.fromEntries(Object.entries(goals).map(([name, goal]) => [name, entry(goal)]))
}

/** The printed document: Go structs are Maps (their order kept), Go maps plain objects (sorted). */
export function goalStateDocument (state: GoalState): Map<string, unknown> {
  const relations = Object.fromEntries(Object.entries(state.relations).map(([endpoint, goals]) => [endpoint, entries(goals)]))
  return new Map<string, unknown>([['units', entries(state.units)], ['relations', relations]])
}

export const goalState: HookTool = {
  name: 'goal-state',
  args: '',
  purpose: 'print the status of the charm\'s peers and related units',
  doc: '\'goal-state\' command will list the charm units and relations, specifying their status and their relations to other units in different charms.',
  flags: () => outputFlagsOf(['yaml', 'json']),
  async run (call, parsed) {
    checkEmpty(parsed.args)
    await writeOutput(call, parsed, goalStateDocument(await call.context.goalState()), 'yaml')
  }
}
