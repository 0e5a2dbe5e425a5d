/**
 * What a wait-for query reads: a scope of named values (an application, a unit, a
 * machine, the model), where a value is a string, number or boolean, another scope, or a
 * list of scopes (an application's `units`) that forEach and len walk. Scopes are plain
 * data built from what `cantrip status` reads, so evaluating a query has no effects.
 */
export interface QueryScope {
  readonly kind: 'scope'
  /** What it is, for errors: `application "kv"`. */
  readonly what: string
  /** Where a summary lists it (`units`, `kv/0`); the scope the query starts in has none. */
  readonly entry?: { readonly collection: string, readonly key: string }
  readonly values: Readonly<Record<string, QueryValue>>
}

export interface QueryList {
  readonly kind: 'list'
  readonly items: readonly QueryScope[]
}

export type QueryValue = string | number | boolean | QueryScope | QueryList

export function queryScope (what: string, values: Record<string, QueryValue>, entry?: QueryScope['entry']): QueryScope {
  return entry === undefined ? { kind: 'scope', what, values } : { kind: 'scope', what, values, entry }
}

export function queryList (items: readonly QueryScope[]): QueryList {
  return { kind: 'list', items }
}
