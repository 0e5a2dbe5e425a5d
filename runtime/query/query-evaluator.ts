/**
 * Evaluates a parsed wait-for query against a scope, with the semantics of Juju's
 * cmd/juju/waitfor/query (query.go, box.go, funcs.go): `&&` and `||` take booleans and
 * stop early; `==` and `!=` compare a value with one of the same type (a string never
 * equals a number); `<` `<=` `>` `>=` order two numbers or two strings and are false
 * otherwise; the query holds when its value is true, a non-empty string or list, or a
 * non-zero number. Built-in functions, as Juju's GlobalFuncScope: forEach (true when the
 * list is non-empty and the lambda holds for every item), len, startsWith, endsWith, int.
 * `!` is cantrip's own addition (Juju's parser has no prefix operators).
 *
 * Every value read is recorded so the command can print what the query looked at, as
 * Juju's summary does.
 */
import type { QueryNode } from './query-ast.ts'
import { QueryEvaluationError, unknownName } from './query-errors.ts'
import type { QueryList, QueryScope, QueryValue } from './query-scope.ts'

export interface QueryRead {
  readonly scope: QueryScope
  readonly name: string
  readonly value: string | number | boolean
}

export interface QueryOutcome {
  readonly reached: boolean
  readonly reads: readonly QueryRead[]
}

interface Lambda { readonly kind: 'lambda', readonly parameter: string, readonly body: QueryNode }
type Value = QueryValue | Lambda
type Bindings = ReadonlyMap<string, QueryValue>

const noBindings: Bindings = new Map()

export function evaluateQuery (component: string, query: QueryNode, scope: QueryScope): QueryOutcome {
  const evaluator = new Evaluator(component, scope)
  const value = evaluator.value(query, noBindings)
  return { reached: truthy(value), reads: evaluator.reads }
}

function truthy (value: Value): boolean {
  if (typeof value === 'string') return value !== ''
  if (typeof value === 'number') return value !== 0
  if (typeof value === 'boolean') return value
  if (value.kind === 'list') return value.items.length > 0
  return true
}

function describe (value: Value): unknown {
  if (typeof value !== 'object') return value
  if (value.kind === 'scope') return value.what
  return value.kind === 'list' ? `a list of ${value.items.length}` : 'a lambda'
}

type Builtin = (call: { args: Value[], column: number, evaluator: Evaluator, bindings: Bindings }) => Value

const builtins: Record<string, { arity: number, run: Builtin }> = {
  forEach: { arity: 2, run: ({ args, column, evaluator, bindings }) => evaluator.forEach(args[0]!, args[1]!, column, bindings) },
  len: {
    arity: 1,
    run: ({ args, column, evaluator }) => {
      const [value] = args
      if (typeof value === 'string') return value.length
      if (typeof value === 'object' && value.kind === 'list') return value.items.length
      throw evaluator.expected(column, 'a list or a string for len', value!)
    }
  },
  startsWith: { arity: 2, run: ({ args, column, evaluator }) => evaluator.strings('startsWith', args, column, (s, p) => s.startsWith(p)) },
  endsWith: { arity: 2, run: ({ args, column, evaluator }) => evaluator.strings('endsWith', args, column, (s, p) => s.endsWith(p)) },
  int: {
    arity: 1,
    run: ({ args, column, evaluator }) => {
      const [value] = args
      if (typeof value !== 'string' || !/^-?\d+$/.test(value)) throw evaluator.expected(column, 'a string of digits for int', value!)
      return Number(value)
    }
  }
}

class Evaluator {
  readonly reads: QueryRead[] = []
  constructor (private readonly component: string, private readonly scope: QueryScope) {}

  value (node: QueryNode, bindings: Bindings): Value {
    switch (node.type) {
      case 'literal': return node.value
      case 'name': return this.name(node.name, node.column, bindings)
      case 'member': return this.member(this.value(node.object, bindings), node.name, node.column)
      case 'not': return !this.boolean(this.value(node.operand, bindings), node.column, '"!"')
      case 'binary': return this.binary(node, bindings)
      case 'call': return this.call(node, bindings)
      case 'lambda': return { kind: 'lambda', parameter: node.parameter, body: node.body }
    }
  }

  forEach (list: Value, lambda: Value, column: number, bindings: Bindings): boolean {
    if (typeof list !== 'object' || list.kind !== 'list') throw this.expected(column, 'a list (units, machines or applications) as forEach\'s first argument', list)
    if (typeof lambda !== 'object' || lambda.kind !== 'lambda') throw this.expected(column, 'a lambda like `unit => unit.workload-status == "active"` as forEach\'s second argument', lambda)
    if (list.items.length === 0) return false
    for (const item of list.items) {
      const inner = new Map(bindings).set(lambda.parameter, item)
      if (!truthy(this.value(lambda.body, inner))) return false
    }
    return true
  }

  strings (name: string, args: Value[], column: number, test: (s: string, part: string) => boolean): boolean {
    const [text, part] = args
    if (typeof text !== 'string') throw this.expected(column, `a string as ${name}'s first argument`, text!)
    if (typeof part !== 'string') throw this.expected(column, `a string as ${name}'s second argument`, part!)
    return test(text, part)
  }

  expected (column: number, what: string, got: Value): QueryEvaluationError {
    return new QueryEvaluationError(this.component, column, what, describe(got))
  }

  private name (name: string, column: number, bindings: Bindings): Value {
    const bound = bindings.get(name)
    if (bound !== undefined) return bound
    return this.read(this.scope, name, column)
  }

  private member (object: Value, name: string, column: number): Value {
    if (typeof object !== 'object' || object.kind !== 'scope') throw this.expected(column, `an application, unit, machine or model before ".${name}"`, object)
    return this.read(object, name, column)
  }

  private read (scope: QueryScope, name: string, column: number): Value {
    if (!Object.hasOwn(scope.values, name)) throw unknownName(this.component, column, scope.what, name, Object.keys(scope.values))
    const value = scope.values[name]!
    if (typeof value !== 'object') this.reads.push({ scope, name, value })
    return value
  }

  private binary (node: Extract<QueryNode, { type: 'binary' }>, bindings: Bindings): Value {
    const left = this.value(node.left, bindings)
    if (node.operator === '&&' || node.operator === '||') {
      const stopAt = node.operator === '||'
      if (this.boolean(left, node.left.column, `"${node.operator}"`) === stopAt) return stopAt
      return this.boolean(this.value(node.right, bindings), node.right.column, `"${node.operator}"`)
    }
    const right = this.value(node.right, bindings)
    switch (node.operator) {
      case '==': return same(left, right)
      case '!=': return !same(left, right)
      case '<': return less(left, right)
      case '<=': return less(left, right) || same(left, right)
      case '>': return less(right, left)
      case '>=': return less(right, left) || same(left, right)
    }
  }

  private boolean (value: Value, column: number, operator: string): boolean {
    if (typeof value !== 'boolean') throw this.expected(column, `true or false for ${operator}`, value)
    return value
  }

  private call (node: Extract<QueryNode, { type: 'call' }>, bindings: Bindings): Value {
    const builtin = Object.hasOwn(builtins, node.callee) ? builtins[node.callee] : undefined
    if (builtin === undefined) throw unknownName(this.component, node.column, 'a function', node.callee, Object.keys(builtins))
    if (node.args.length !== builtin.arity) {
      throw new QueryEvaluationError(this.component, node.column, `${builtin.arity} arguments for ${node.callee}`, node.args.length)
    }
    const args = node.args.map(arg => this.value(arg, bindings))
    return builtin.run({ args, column: node.column, evaluator: this, bindings })
  }
}

function same (left: Value, right: Value): boolean {
  return typeof left !== 'object' && typeof left === typeof right && left === right
}

function less (left: Value, right: Value): boolean {
  const comparable = (typeof left === 'number' && typeof right === 'number') || (typeof left === 'string' && typeof right === 'string')
  return comparable && left < right
}

