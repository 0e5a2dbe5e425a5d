/**
 * What a bad `--query` tells the user: one line naming the command, where in the query
 * (a column, 1-based), what was expected there and what arrived. Juju prints a
 * multi-line help block (cmd/juju/waitfor/errors.go); cantrip keeps every error to one
 * line, so the same facts (position, expectation, the scope's names, the closest name)
 * go on that line.
 */
import { CantripError, describeValue } from '../errors.ts'
import { closestName } from './closest-name.ts'

/** The query does not parse (Juju's SyntaxError). */
export class QuerySyntaxError extends CantripError {
  override name = 'QuerySyntaxError'
  constructor (component: string, column: number, expected: string, got: string) {
    super(`${component}: cannot parse query at column ${column}: expected ${expected}, got ${got}`)
  }
}

/** The query parsed but cannot be evaluated against the scope (Juju's InvalidIdentifier and Runtime errors). */
export class QueryEvaluationError extends CantripError {
  override name = 'QueryEvaluationError'
  constructor (component: string, column: number, expected: string, got: unknown, hint = '') {
    super(`${component}: cannot run query at column ${column}: expected ${expected}, got ${describeValue(got)}${hint}`)
  }
}

/** An unknown name, listing the names that `where` has and the closest of them, as Juju's "Did you mean". */
export function unknownName (component: string, column: number, where: string, name: string, names: readonly string[]): QueryEvaluationError {
  const sorted = [...names].sort()
  const closest = closestName(name, sorted)
  const hint = closest === undefined ? '' : ` (did you mean "${closest}"?)`
  return new QueryEvaluationError(component, column, `a name of ${where} (${sorted.join(', ')})`, name, hint)
}
