/**
 * The parsed form of a wait-for query. Every node keeps the column it starts at, so an
 * evaluation error points at the part of the query that failed.
 */
export type QueryBinaryOperator = '==' | '!=' | '<' | '<=' | '>' | '>=' | '&&' | '||'

export type QueryNode =
  | { readonly type: 'literal', readonly value: string | number | boolean, readonly column: number }
  | { readonly type: 'name', readonly name: string, readonly column: number }
  | { readonly type: 'member', readonly object: QueryNode, readonly name: string, readonly column: number }
  | { readonly type: 'not', readonly operand: QueryNode, readonly column: number }
  | { readonly type: 'binary', readonly operator: QueryBinaryOperator, readonly left: QueryNode, readonly right: QueryNode, readonly column: number }
  | { readonly type: 'call', readonly callee: string, readonly args: readonly QueryNode[], readonly column: number }
  /** `unit => unit.workload-status == "active"`: only as a function's argument. */
  | { readonly type: 'lambda', readonly parameter: string, readonly body: QueryNode, readonly column: number }
