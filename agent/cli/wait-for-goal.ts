/**
 * What `cantrip wait-for KIND NAME` waits for, and one step of the wait. Juju's default
 * query per kind (cmd/juju/waitfor/*.go SetFlags) applies when neither `--query` nor
 * `--status` is given; `--status S` is cantrip's older shorthand, kept as the query it
 * means (for a machine, the agent's or the instance's status, so `provisioning error`
 * counts), and `--status missing` waits for the entity to be gone. Each model read is one
 * step, as Juju runs its query on each batch of watcher deltas: not found (wait), found
 * and the query false (wait), the query true or the entity dead (done, as Juju's waitFor
 * returns on life dead), or gone after it was seen (an error, as Juju's "removed").
 */
import { CantripError, InvalidInputError } from '../../runtime/errors.ts'
import type { QueryNode } from '../../runtime/query/query-ast.ts'
import { evaluateQuery, type QueryRead } from '../../runtime/query/query-evaluator.ts'
import { parseQuery } from '../../runtime/query/query-parser.ts'
import type { WaitForKind, WaitForTarget } from './wait-for-scopes.ts'

export const waitForComponent = 'cantrip wait-for'

export const defaultQueries: Record<WaitForKind, string> = {
  application: 'life=="alive" && status=="active"',
  unit: 'life=="alive" && workload-status=="active"',
  machine: 'life=="alive" && status=="started"',
  model: 'life=="alive" && status=="available"'
}

export type WaitForGoal = { readonly kind: 'query', readonly source: string, readonly query: QueryNode } | { readonly kind: 'absent' }

/** The goal from the flags; a query that does not parse is refused here, before anything is sent. */
export function waitForGoal (kind: WaitForKind, flags: { query?: string | undefined, status?: string | undefined }): WaitForGoal {
  if (flags.query !== undefined && flags.status !== undefined) {
    throw new InvalidInputError(waitForComponent, '--query or --status, not both', `--status ${flags.status}`)
  }
  if (flags.status === 'missing') {
    if (kind === 'model') throw new InvalidInputError(waitForComponent, 'a status a model can reach (--status missing is for applications, units and machines)', flags.status)
    return { kind: 'absent' }
  }
  const source = flags.query ?? (flags.status === undefined ? defaultQueries[kind] : statusQuery(kind, flags.status))
  return { kind: 'query', source, query: parseQuery(waitForComponent, source) }
}

function statusQuery (kind: WaitForKind, status: string): string {
  if (!/^[a-z][a-z -]*$/.test(status)) throw new InvalidInputError(waitForComponent, 'a status like active, blocked or started for --status', status)
  const quoted = JSON.stringify(status)
  if (kind === 'unit') return `workload-status==${quoted}`
  if (kind === 'machine') return `status==${quoted} || instance-status==${quoted}`
  return `status==${quoted}`
}

export type WaitForStep =
  | { readonly done: true, readonly life: string, readonly reads: readonly QueryRead[] }
  | { readonly done: false, readonly progress: string }

/** One read of the model: done, or the progress line to show while waiting. Throws when the target went away. */
export function waitForStep (kind: WaitForKind, name: string, goal: WaitForGoal, target: WaitForTarget | undefined, seen: boolean): WaitForStep {
  if (target === undefined) {
    if (goal.kind === 'absent') return { done: true, life: 'dead', reads: [] }
    if (seen) throw new CantripError(`${waitForComponent}: ${kind} ${JSON.stringify(name)} removed`)
    return { done: false, progress: `${kind} ${JSON.stringify(name)} not found, waiting...` }
  }
  if (goal.kind === 'query') {
    const outcome = evaluateQuery(waitForComponent, goal.query, target.scope)
    if (outcome.reached) return { done: true, life: target.life, reads: outcome.reads }
  }
  if (target.life === 'dead') return { done: true, life: 'dead', reads: [] }
  const found = target.status === undefined ? 'found' : `found with ${JSON.stringify(target.status)}`
  return { done: false, progress: `${kind} ${JSON.stringify(name)} ${found}, waiting...` }
}

/** Juju's Strategy.run message when the timeout passes first. */
export function timedOut (name: string): CantripError {
  return new CantripError(`timed out waiting for ${JSON.stringify(name)} to reach goal state`)
}
