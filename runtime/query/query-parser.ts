/**
 * Parses a wait-for query into a QueryNode, with the precedence of Juju's
 * cmd/juju/waitfor/query/parser.go: `||` binds loosest, then `&&`, then `==` `!=`, then
 * `<` `<=` `>` `>=`, then the prefix `!`, then calls and `.` member access. A lambda
 * (`x => expr`) is read only as a function argument, as forEach takes it. The input's
 * length and nesting are bounded (limits.queryLengthMax, queryDepthMax), so the
 * recursion here and in the evaluator is bounded too.
 */
import { limits } from '../limits.ts'
import type { QueryBinaryOperator, QueryNode } from './query-ast.ts'
import { QuerySyntaxError } from './query-errors.ts'
import { lexQuery, type QueryToken } from './query-lexer.ts'

const precedence: Record<string, number> = {
  '||': 1, '&&': 2, '==': 3, '!=': 3, '<': 4, '<=': 4, '>': 4, '>=': 4
}
const notPrecedence = 5

export function parseQuery (component: string, source: string): QueryNode {
  if (source.length > limits.queryLengthMax) {
    throw new QuerySyntaxError(component, limits.queryLengthMax + 1, `a query of at most ${limits.queryLengthMax} characters`, `${source.length}`)
  }
  const parser = new Parser(component, lexQuery(component, source))
  const node = parser.expression(0, 0)
  parser.expectEnd()
  return node
}

class Parser {
  private at = 0
  constructor (private readonly component: string, private readonly tokens: readonly QueryToken[]) {}

  expression (minPrecedence: number, depth: number): QueryNode {
    this.checkDepth(depth)
    let left = this.prefix(depth)
    for (;;) {
      const token = this.peek()
      const bound = token.type === 'operator' ? precedence[token.text] : undefined
      if (bound === undefined || bound <= minPrecedence) return left
      this.at++
      // A chain (`a && b && c`) nests to the left: count each link against the bound too.
      this.checkDepth(++depth)
      const right = this.expression(bound, depth)
      left = { type: 'binary', operator: token.text as QueryBinaryOperator, left, right, column: token.column }
    }
  }

  expectEnd (): void {
    const token = this.peek()
    if (token.type !== 'end') this.fail(token, 'an operator ("&&", "||", "==" …) or the end of the query')
  }

  private prefix (depth: number): QueryNode {
    const token = this.next()
    if (token.type === 'operator' && token.text === '!') {
      return { type: 'not', operand: this.expression(notPrecedence, depth + 1), column: token.column }
    }
    return this.postfix(this.primary(token, depth), depth)
  }

  private primary (token: QueryToken, depth: number): QueryNode {
    switch (token.type) {
      case 'string': return { type: 'literal', value: token.text, column: token.column }
      case 'number': return { type: 'literal', value: Number(token.text), column: token.column }
      case 'bool': return { type: 'literal', value: token.text === 'true', column: token.column }
      case 'name': return this.nameOrCall(token, depth)
      case 'operator':
        if (token.text === '(') {
          const inner = this.expression(0, depth + 1)
          this.expect(')', 'a closing ")"')
          return inner
        }
    }
    return this.fail(token, 'a value (a name, a "string", a number, true, false, "(" or "!")')
  }

  private nameOrCall (token: QueryToken, depth: number): QueryNode {
    if (!this.isOperator('(')) return { type: 'name', name: token.text, column: token.column }
    this.at++
    const args: QueryNode[] = []
    if (!this.isOperator(')')) {
      do args.push(this.argument(depth + 1))
      while (this.take(','))
    }
    this.expect(')', 'a "," or a closing ")" after the argument')
    return { type: 'call', callee: token.text, args, column: token.column }
  }

  private argument (depth: number): QueryNode {
    const token = this.peek()
    const arrow = this.tokens[this.at + 1]
    if (token.type === 'name' && arrow?.type === 'operator' && arrow.text === '=>') {
      this.at += 2
      return { type: 'lambda', parameter: token.text, body: this.expression(0, depth + 1), column: token.column }
    }
    return this.expression(0, depth)
  }

  private postfix (node: QueryNode, depth: number): QueryNode {
    let out = node
    while (this.isOperator('.')) {
      this.at++
      const name = this.next()
      if (name.type !== 'name') this.fail(name, 'a name after "."')
      this.checkDepth(++depth)
      out = { type: 'member', object: out, name: name.text, column: name.column }
    }
    return out
  }

  private checkDepth (depth: number): void {
    if (depth > limits.queryDepthMax) this.fail(this.peek(), `a query nested at most ${limits.queryDepthMax} deep`)
  }

  private expect (text: string, expected: string): void {
    if (!this.take(text)) this.fail(this.peek(), expected)
  }

  private take (text: string): boolean {
    if (!this.isOperator(text)) return false
    this.at++
    return true
  }

  private isOperator (text: string): boolean {
    const token = this.peek()
    return token.type === 'operator' && token.text === text
  }

  private peek (): QueryToken { return this.tokens[this.at]! }

  private next (): QueryToken {
    const token = this.peek()
    if (token.type !== 'end') this.at++
    return token
  }

  private fail (token: QueryToken, expected: string): never {
    throw new QuerySyntaxError(this.component, token.column, expected, describeToken(token))
  }
}

function describeToken (token: QueryToken): string {
  if (token.type === 'end') return 'the end of the query'
  if (token.type === 'string') return `the string ${JSON.stringify(token.text)}`
  return JSON.stringify(token.text)
}
